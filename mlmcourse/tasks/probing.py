"""Linear probes: how much of a task is already *in* a frozen encoder's vectors?

Fine-tuning (the NER chapter) changes the encoder, so it measures what the encoder can *become*. A
linear probe freezes it and trains one linear layer on top: whatever the probe finds was
already there, linearly readable. That makes it the fair way to compare the representations
two pretraining objectives leave behind (the CLM vs MLM chapter).

Since the encoder is frozen, its vectors are computed once (:func:`token_features`) and the
classifier is trained on them directly, which takes seconds. The trained layer is then placed
into a :class:`~mlmcourse.heads.BertForTokenClassification` with the frozen encoder, so the
evaluation is exactly the NER chapter's :func:`~mlmcourse.tasks.ner.evaluate_ner` (entity F1 as ``seqeval``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.heads import BertForTokenClassification
from mlmcourse.tasks.ner import LabelVocab, evaluate_ner, tokenize_and_align_labels
from mlmcourse.utils.checks import check_positive_int
from mlmcourse.utils.labels import IGNORE_INDEX
from mlmcourse.utils.runtime import evaluating, seeded_generator

__all__ = ["LinearProbeResult", "fit_linear", "linear_probe", "token_features", "unseen_name_probe"]

# The probe's mini-batches and AdamW's rate: one measuring instrument for every encoder.
BATCH_SIZE = 256
LEARNING_RATE = 1e-2


@dataclass
class LinearProbeResult:
    """A trained probe: the frozen encoder with its linear layer, the metrics and the losses."""

    model: BertForTokenClassification
    metrics: dict[str, Any]
    losses: list[float]


def _encoder(model: nn.Module) -> nn.Module:
    encoder = getattr(model, "bert", model)
    if not hasattr(encoder, "config") or not hasattr(encoder, "embeddings"):
        raise TypeError(
            f"linear probes need a BertModel (or a model with .bert, such as BertForMaskedLM "
            f"or BertForCausalLM), got {type(model).__name__}"
        )
    return encoder


@torch.no_grad()
def token_features(
    encoder: nn.Module,
    tokenizer: Any,
    sentences: Sequence[Any],
    label_vocab: LabelVocab,
    *,
    batch_size: int = 128,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The frozen encoder's vector for each labelled piece and its label id: (N, H), (N,).

    Labelled pieces are the first piece of each word (the NER chapter's alignment); the encoder runs
    in eval mode (no dropout), and its mode is restored afterwards.
    """
    encoder = _encoder(encoder)
    device = next(encoder.parameters()).device
    max_length = encoder.config.max_position_embeddings
    features, labels = [], []
    with evaluating(encoder):
        for start in range(0, len(sentences), batch_size):
            batch = tokenize_and_align_labels(
                sentences[start : start + batch_size], tokenizer, label_vocab, max_length=max_length
            )
            batch = {k: v.to(device) for k, v in batch.items()}
            target = batch.pop("labels")  # (B, T)
            hidden = encoder(**batch).last_hidden_state  # (B, T, H)
            keep = target != IGNORE_INDEX
            features.append(hidden[keep].float().cpu())
            labels.append(target[keep].cpu())
    return torch.cat(features), torch.cat(labels)


def fit_linear(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_labels: int,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
) -> tuple[nn.Linear, list[float]]:
    """A linear classifier on frozen ``features`` (N, H) for ``labels`` (N,), and its mean
    loss per epoch: AdamW on mini-batches in a seeded order, from a seeded start."""
    generator = seeded_generator(seed)
    classifier = nn.Linear(features.shape[1], num_labels)
    with torch.no_grad():  # a seeded start, independent of the global RNG
        classifier.weight.normal_(0.0, 0.02, generator=generator)
        classifier.bias.zero_()
    optimizer = torch.optim.AdamW(classifier.parameters(), lr=learning_rate, weight_decay=0.0)
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(labels), generator=generator)  # (N,)
        total = 0.0
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            loss = F.cross_entropy(classifier(features[rows]), labels[rows])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            total += float(loss.detach()) * len(rows)
        losses.append(total / len(labels))
    return classifier, losses


def linear_probe(
    encoder: nn.Module,
    tokenizer: Any,
    train_sentences: Sequence[Any],
    eval_sentences: Sequence[Any],
    *,
    label_vocab: LabelVocab | None = None,
    epochs: int = 20,
    seed: int = 0,
    constrained: bool = False,
) -> LinearProbeResult:
    """Train a linear token classifier on a frozen encoder; return it with its entity metrics.

    ``encoder`` is a ``BertModel`` or any model with ``.bert`` (its weights are copied, never
    changed). The classifier is trained with AdamW on the cached features for ``epochs`` passes
    in a seeded order (batches of :data:`BATCH_SIZE`, rate :data:`LEARNING_RATE`;
    :func:`fit_linear` takes others), then evaluated on ``eval_sentences`` with
    :func:`~mlmcourse.tasks.ner.evaluate_ner`. ``constrained=False`` (default) takes the argmax label
    of each word, so the score reflects the vectors alone, not BIO decoding rules.
    """
    if not train_sentences or not eval_sentences:
        raise ValueError("linear_probe needs training and evaluation sentences, got an empty list")
    check_positive_int(epochs, "epochs")
    encoder = _encoder(encoder)
    label_vocab = label_vocab or LabelVocab.from_sentences(train_sentences)
    features, labels = token_features(encoder, tokenizer, train_sentences, label_vocab)
    classifier, losses = fit_linear(
        features, labels, label_vocab.num_labels, epochs, BATCH_SIZE, LEARNING_RATE, seed
    )
    model = BertForTokenClassification.from_encoder(  # copies the encoder's weights
        encoder,
        label_vocab.num_labels,
        classifier_dropout=0.0,
        id2label=label_vocab,
    )
    model.classifier.load_state_dict(classifier.state_dict())
    model.requires_grad_(False).to(next(encoder.parameters()).device).eval()
    metrics = evaluate_ner(model, tokenizer, eval_sentences, constrained=constrained)
    return LinearProbeResult(model, metrics, losses)


def unseen_name_probe(
    encoder: nn.Module, tokenizer: Any, *, train_size: int = 1000, epochs: int = 20
) -> LinearProbeResult:
    """The CLM vs MLM chapter's probe: entity types on the world's unseen-entity split, from frozen vectors.

    The split's names never occur in pretraining (a word-level tokenizer reads each as
    ``[UNK]``), so a name's type can only come from its context. The first ``train_size``
    sentences train the probe and the rest of the split scores it, with the world's labels.
    """
    check_positive_int(train_size, "train_size")
    unseen = load_world("unseen")
    return linear_probe(
        encoder,
        tokenizer,
        unseen[:train_size],
        unseen[train_size:],
        label_vocab=LabelVocab(WORLD_LABELS),
        epochs=epochs,
    )
