"""Sentence classification: one label (or one number) for a whole text.

:class:`BertForSequenceClassification` is Hugging Face's model of the same name: the encoder,
BERT's pooler (``tanh(Dense(h_[CLS]))``, a vector for the whole sequence), dropout, and a linear
layer to the labels. With ``num_labels > 1`` it is trained with cross-entropy; with
``num_labels=1`` it predicts one number (a similarity or a rating) with mean squared error, as
``transformers`` does for regression. :func:`fine_tune_classifier` trains it,
:func:`classify` is the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.checks import check_bool, check_number, check_positive_int
from mlmcourse.heads import EncoderHead, encoder_state, load_encoder_state
from mlmcourse.model import BertModel, EncoderConfig
from mlmcourse.tokenization.base import as_text_list
from mlmcourse.training import EpochPlan, fine_tuning_config, train

__all__ = [
    "SST2_RECIPE",
    "BertForSequenceClassification",
    "SequenceClassifierOutput",
    "classify",
    "evaluate_classifier",
    "fine_tune_classifier",
    "predict_logits",
]

SST2_RECIPE = {
    "max_steps": 800,
    "batch_size": 32,
    "learning_rate": 1e-4,
    "lr_scheduler_type": "linear",
    "freeze_word_embeddings": True,
}
"""Fine-tuning MiniLM on SST-2 within 10 CPU-minutes: the learning rate chosen on 2,000
sentences held out of SST-2's training split by ``experiments/sst2_minilm.py`` (see
``results/sst2_minilm.json``)."""


@dataclass
class SequenceClassifierOutput:
    """Hugging Face's output shape: ``loss`` (when labels are given) and ``logits`` (B, L)."""

    loss: torch.Tensor | None
    logits: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class BertForSequenceClassification(EncoderHead):
    """The encoder, its pooler over ``[CLS]``, dropout, and a linear layer to the labels.

    Fine-tuning trains all of it: the pooler's ``[CLS]`` vector has no meaning of its own until
    the loss gives it one. ``id2label`` names the labels for :func:`classify`.
    """

    def __init__(
        self,
        config: EncoderConfig,
        num_labels: int,
        classifier_dropout: float | None = None,
        *,
        id2label: Mapping[int, str] | Sequence[str] | None = None,
    ) -> None:
        super().__init__()
        self.num_labels = check_positive_int(num_labels, "num_labels")
        dropout = config.hidden_dropout_prob if classifier_dropout is None else classifier_dropout
        dropout = check_number(dropout, "classifier_dropout", low=0, high=1, high_open=True)
        self.id2label = _label_names(id2label, num_labels)
        self.bert = BertModel(config, add_pooling_layer=True)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, num_labels)
        nn.init.normal_(self.classifier.weight, std=config.initializer_range)
        nn.init.zeros_(self.classifier.bias)

    @classmethod
    def from_encoder(
        cls,
        encoder: nn.Module | Mapping[str, torch.Tensor],
        num_labels: int,
        *,
        config: EncoderConfig | None = None,
        classifier_dropout: float | None = None,
        id2label: Mapping[int, str] | Sequence[str] | None = None,
    ) -> BertForSequenceClassification:
        """Start from pretrained encoder weights (see :func:`mlmcourse.heads.encoder_state`);
        the classifier, and the pooler when the encoder has none, start at random."""
        config, state = encoder_state(encoder, config)
        model = cls(config, num_labels, classifier_dropout, id2label=id2label)
        load_encoder_state(model.bert, state)
        return model

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        unpad: bool = False,
    ) -> SequenceClassifierOutput:
        """Logits (B, num_labels); with ``labels`` (B,), the loss too."""
        out = self.encode(
            input_ids,
            attention_mask,
            token_type_ids,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            unpad=unpad,
        )
        logits = self.classifier(self.dropout(out.pooler_output))  # (B, L)
        loss = None if labels is None else self._loss(logits, labels)
        return SequenceClassifierOutput(loss, logits, out.hidden_states, out.attentions)

    def _loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if labels.shape != logits.shape[:1]:
            raise ValueError(
                f"labels must be one per sequence, shape ({logits.shape[0]},), "
                f"got {tuple(labels.shape)}"
            )
        if self.num_labels == 1:  # regression: one number per sequence
            return F.mse_loss(logits.squeeze(-1), labels.to(logits.dtype))
        if labels.dtype.is_floating_point:
            raise ValueError(f"labels must be integer class ids, got dtype {labels.dtype}")
        if bool(((labels < 0) | (labels >= self.num_labels)).any()):
            bad = labels[(labels < 0) | (labels >= self.num_labels)][0]
            raise ValueError(f"labels must be in [0, {self.num_labels}), found {int(bad)}")
        return F.cross_entropy(logits, labels)


def _label_names(id2label: Mapping[int, str] | Sequence[str] | None, num_labels: int) -> dict:
    """``{id: name}``; ``LABEL_<id>`` (``transformers``' default) when no names are given."""
    if id2label is None:
        return {i: f"LABEL_{i}" for i in range(num_labels)}
    names = dict(id2label) if isinstance(id2label, Mapping) else dict(enumerate(id2label))
    if sorted(names) != list(range(num_labels)):
        raise ValueError(f"id2label must name labels 0..{num_labels - 1}, got {names!r}")
    return {int(i): str(name) for i, name in names.items()}


# --- training and evaluation -------------------------------------------------------------------


def _batch(
    tokenizer: Any, texts: Sequence[str], labels: Sequence[float] | None, max_length: int
) -> dict[str, torch.Tensor]:
    enc = tokenizer(list(texts), max_length=max_length)
    batch = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    if labels is not None:
        batch["labels"] = torch.tensor(labels)
    return batch


def fine_tune_classifier(
    model: BertForSequenceClassification,
    examples: Sequence[tuple[str, int | float]],
    tokenizer: Any,
    *,
    epochs: int = 1,
    max_steps: int | None = None,
    batch_size: int = 32,
    learning_rate: float = 1e-4,
    lr_scheduler_type: str = "linear",
    freeze_word_embeddings: bool = False,
    max_length: int = 128,
    seed: int = 0,
    device: torch.device | str | None = None,
    progress: bool = False,
) -> float:
    """Train ``model`` on ``(text, label)`` pairs; return the last logged training loss.

    Each epoch visits every example once in batches of similar length
    (:class:`~mlmcourse.training.EpochPlan`): SST-2's phrases run from one word to fifty, and
    batching them at random would spend most of each batch on padding. Warmup is 10% of the
    steps. ``max_steps`` stops earlier (a CPU budget): the first ``max_steps`` batches of that
    order. ``freeze_word_embeddings`` keeps the word embeddings as they are: they are half of
    MiniLM's weights, so each step then updates half as many numbers, and the words a small
    training set never shows keep their pretrained vectors (as the words it does show).
    Batch ``i`` depends only on ``(seed, i)``, so a run is reproducible.
    """
    if not examples:
        raise ValueError("fine_tune_classifier needs at least one (text, label) example")
    check_positive_int(epochs, "epochs")
    check_bool(freeze_word_embeddings, "freeze_word_embeddings")
    model.bert.embeddings.word_embeddings.weight.requires_grad_(not freeze_word_embeddings)
    max_length = min(max_length, model.config.max_position_embeddings)
    texts, labels = [text for text, _ in examples], [label for _, label in examples]
    lengths = [len(tokenizer.encode(text)) for text in texts]
    plan = EpochPlan(lengths, batch_size, seed)
    steps = epochs * plan.per_epoch
    if max_steps is not None:
        steps = min(steps, check_positive_int(max_steps, "max_steps"))

    def get_batch(i: int) -> dict[str, torch.Tensor]:
        rows = plan.rows(i)
        return _batch(tokenizer, [texts[r] for r in rows], [labels[r] for r in rows], max_length)

    config = fine_tuning_config(
        steps, learning_rate=learning_rate, lr_scheduler_type=lr_scheduler_type, seed=seed
    )
    result = train(model, get_batch, config, device=device, progress=progress, log=None)
    return result.history["train"][-1]["loss"]


@torch.no_grad()
def predict_logits(
    model: BertForSequenceClassification,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    batch_size: int = 64,
    max_length: int | None = None,
) -> torch.Tensor:
    """Logits (N, num_labels) for ``texts``, in their order; batched by length for speed."""
    texts = as_text_list(texts, "texts")
    max_length = max_length or model.config.max_position_embeddings
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    out = torch.empty(len(texts), model.num_labels)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        batch = _batch(tokenizer, [texts[r] for r in rows], None, max_length)
        logits = model(**{k: v.to(device) for k, v in batch.items()}).logits
        out[rows] = logits.float().cpu()
    model.train(was_training)
    return out


def evaluate_classifier(
    model: BertForSequenceClassification,
    tokenizer: Any,
    examples: Sequence[tuple[str, int]],
    *,
    batch_size: int = 64,
) -> dict[str, float]:
    """Accuracy on ``(text, label)`` pairs, and how many there were."""
    if not examples:
        raise ValueError("evaluate_classifier needs at least one (text, label) example")
    logits = predict_logits(model, tokenizer, [t for t, _ in examples], batch_size=batch_size)
    gold = torch.tensor([label for _, label in examples])
    return {"accuracy": int((logits.argmax(-1) == gold).sum()) / len(examples), "n": len(examples)}


# --- the pipeline ------------------------------------------------------------------------------


def classify(
    model: BertForSequenceClassification,
    tokenizer: Any,
    texts: str | Sequence[str],
    *,
    top_k: int | None = 1,
    truncation: bool = False,
) -> list:
    """Labels and probabilities, in the ``transformers`` text-classification pipeline's format.

    One dict ``{"label", "score"}`` per text with ``top_k=1`` (a list of them, one per text);
    with ``top_k=k`` (or ``None``: every label) a list of the ``k`` best dicts per text (for a
    single string, just that list). The score is the softmax probability; a regression model
    (``num_labels=1``) gives its number unchanged. A text longer than the model allows is an
    error unless ``truncation=True`` (as in ``transformers``, where it would crash in the model).
    """
    single = isinstance(texts, str)
    batch = as_text_list(texts, "texts")
    limit = model.config.max_position_embeddings
    for i, text in enumerate(batch):  # as_text_list has refused empty texts already
        n = len(tokenizer.encode(text))
        if n > limit and not truncation:
            raise ValueError(
                f"texts[{i}] is {n} tokens long, but the model reads at most {limit}; "
                "shorten it or pass truncation=True to keep its first tokens"
            )
    k = model.num_labels if top_k is None else check_positive_int(top_k, "top_k")
    logits = predict_logits(model, tokenizer, batch, max_length=limit)
    scores = logits if model.num_labels == 1 else logits.softmax(-1)
    out = []
    for row in scores:
        best = row.argsort(descending=True)[: min(k, model.num_labels)].tolist()
        ranked = [{"label": model.id2label[j], "score": float(row[j])} for j in best]
        out.append(ranked[0] if top_k == 1 else ranked)
    return out[0] if single and top_k != 1 else out
