"""Sentence classification: fine-tuning and using a classifier, one label for a whole text.

The model is :class:`~mlmcourse.heads.BertForSequenceClassification`;
:func:`fine_tune_classifier` trains it (the one recipe, :func:`mlmcourse.training.fine_tune`,
in batches of similar length; :data:`CLASSIFIER_RECIPE` by default, :data:`SST2_RECIPE` for
MiniLM on SST-2), :func:`evaluate_classifier` scores it and :func:`classify` is
``transformers``' text-classification pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from mlmcourse.checkpoint.weights import check_vocab_fits
from mlmcourse.heads import BertForSequenceClassification
from mlmcourse.tokenization.base import as_text_list
from mlmcourse.training import FineTuneRecipe, TrainResult, check_recipe, fine_tune
from mlmcourse.utils.batching import LengthOrder
from mlmcourse.utils.checks import check_number, check_positive_int, is_int
from mlmcourse.utils.runtime import evaluating

__all__ = [
    "CLASSIFIER_RECIPE",
    "SST2_RECIPE",
    "classify",
    "evaluate_classifier",
    "fine_tune_classifier",
    "predict_logits",
]

CLASSIFIER_RECIPE = FineTuneRecipe(epochs=1, batch_size=32, learning_rate=1e-4, max_length=128)
""":func:`fine_tune_classifier`'s default: one epoch, texts cut to 128 tokens."""

SST2_RECIPE = FineTuneRecipe(
    epochs=1,
    steps=800,
    batch_size=32,
    learning_rate=1e-4,
    lr_scheduler_type="linear",
    freeze_word_embeddings=True,
    max_length=128,
)
"""Fine-tuning MiniLM on SST-2 within 10 CPU-minutes (the first 800 batches of an epoch), its
word embeddings frozen: the learning rate chosen on 2,000 sentences held out of SST-2's
training split by ``experiments/sst2_minilm.py`` (see ``results/sst2_minilm.json``)."""


# --- training and evaluation -------------------------------------------------------------------


def _batch(
    tokenizer: Any, texts: Sequence[str], labels: Sequence[float] | None, max_length: int
) -> dict[str, torch.Tensor]:
    enc = tokenizer(list(texts), max_length=max_length)
    batch = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    if labels is not None:
        batch["labels"] = torch.tensor(labels)
    return batch


def check_example_labels(labels: Sequence[Any], num_labels: int) -> None:
    """Class ids in ``[0, num_labels)`` (a number each, for regression): checked once, where
    the examples come in, not by the model at every step."""
    for i, label in enumerate(labels):
        if num_labels == 1:
            check_number(label, f"the label of example {i}")
        elif not is_int(label) or not 0 <= int(label) < num_labels:
            raise ValueError(
                f"labels must be in [0, {num_labels}), found {label!r} (example {i}); give "
                f"class ids, not names"
            )


def fine_tune_classifier(
    model: BertForSequenceClassification,
    examples: Sequence[tuple[str, int | float]],
    tokenizer: Any,
    *,
    recipe: FineTuneRecipe = CLASSIFIER_RECIPE,
    seed: int = 0,
    device: torch.device | str | None = None,
    progress: bool = False,
) -> TrainResult:
    """Train ``model`` on ``(text, label)`` pairs with :func:`mlmcourse.training.fine_tune`.

    With the ``recipe``'s ``epochs``, each epoch visits every example once in batches of
    similar length (:class:`~mlmcourse.training.EpochPlan`): SST-2's phrases run from one word
    to fifty, and batching them at random would spend most of each batch on padding; its
    ``steps`` then stops earlier (a CPU budget): the first ``steps`` batches of that order.
    ``freeze_word_embeddings`` keeps the word embeddings as they are (:data:`SST2_RECIPE`).
    Batch ``i`` depends only on ``(seed, i)``, so a run is reproducible.
    """
    if not examples:
        raise ValueError("fine_tune_classifier needs at least one (text, label) example")
    recipe = check_recipe(recipe, "fine_tune_classifier")
    check_example_labels([label for _, label in examples], model.num_labels)
    max_length = recipe.max_length_for(model)
    lengths = [len(tokenizer.encode(text)) for text, _ in examples]

    def make_batch(rows: list[tuple[str, int | float]], generator: Any) -> dict[str, torch.Tensor]:
        return _batch(
            tokenizer, [text for text, _ in rows], [label for _, label in rows], max_length
        )

    return fine_tune(
        model, examples, make_batch, lengths=lengths, recipe=recipe, seed=seed, device=device,
        progress=progress,
    )  # fmt: skip


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
    check_vocab_fits(tokenizer, model.config.vocab_size, "predict_logits")
    max_length = max_length or model.config.max_position_embeddings
    by_length = LengthOrder(texts, longest_first=False)
    device = next(model.parameters()).device
    chunks = []
    with evaluating(model):
        for rows in by_length.batches(batch_size):
            batch = _batch(tokenizer, [texts[r] for r in rows], None, max_length)
            logits = model(**{k: v.to(device) for k, v in batch.items()}).logits
            chunks.append(logits.float().cpu())  # (B, L)
    return by_length.restore(torch.cat(chunks))


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
