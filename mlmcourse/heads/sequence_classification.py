"""The sequence-classification head: one label (or one number) for a whole text.

:class:`BertForSequenceClassification` is Hugging Face's model of the same name: the encoder,
BERT's pooler (``tanh(Dense(h_[CLS]))``, a vector for the whole sequence), dropout, and a linear
layer to the labels. With ``num_labels > 1`` it is trained with cross-entropy; with
``num_labels=1`` it predicts one number (a similarity or a rating) with mean squared error, as
``transformers`` does for regression. Training and using it: :mod:`mlmcourse.tasks.classification`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.heads.base import ClassifierHead
from mlmcourse.model import EncoderConfig, encoder_for
from mlmcourse.utils.checks import check_number, check_positive_int

__all__ = [
    "BertForSequenceClassification",
    "SequenceClassifierOutput",
    "sequence_classification_loss",
]


@dataclass
class SequenceClassifierOutput:
    """Hugging Face's output shape: ``loss`` (when labels are given) and ``logits`` (B, L)."""

    loss: torch.Tensor | None
    logits: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class BertForSequenceClassification(ClassifierHead):
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
        self.num_labels = num_labels = check_positive_int(num_labels, "num_labels")
        dropout = config.hidden_dropout_prob if classifier_dropout is None else classifier_dropout
        dropout = check_number(dropout, "classifier_dropout", low=0, high=1, high_open=True)
        self.id2label = _label_names(id2label, num_labels)
        self.bert = encoder_for(config, add_pooling_layer=True)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, num_labels)
        nn.init.normal_(self.classifier.weight, std=config.initializer_range)
        nn.init.zeros_(self.classifier.bias)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        **encoder_options: Any,
    ) -> SequenceClassifierOutput:
        """Logits (B, num_labels); with ``labels`` (B,), the loss too."""
        out = self.encode(input_ids, attention_mask, token_type_ids, **encoder_options)
        logits = self.classifier(self.dropout(out.pooler_output))  # (B, L)
        loss = None if labels is None else sequence_classification_loss(logits, labels)
        return SequenceClassifierOutput(loss, logits, out.hidden_states, out.attentions)


def sequence_classification_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over class ids, or, with one output (regression), the squared error.

    ``labels`` must be one per sequence; their values come from the task functions, which check
    them against the labels where a user's data comes in (:mod:`mlmcourse.tasks.classification`).
    """
    if labels.shape != logits.shape[:1]:
        raise ValueError(
            f"labels must be one per sequence, shape ({logits.shape[0]},), "
            f"got {tuple(labels.shape)}"
        )
    if logits.shape[-1] == 1:  # regression: one number per sequence
        return F.mse_loss(logits.squeeze(-1), labels.to(logits.dtype))
    if labels.dtype.is_floating_point:
        raise ValueError(f"labels must be integer class ids, got dtype {labels.dtype}")
    return F.cross_entropy(logits, labels)


def _label_names(id2label: Mapping[int, str] | Sequence[str] | None, num_labels: int) -> dict:
    """``{id: name}``; ``LABEL_<id>`` (``transformers``' default) when no names are given."""
    if id2label is None:
        return {i: f"LABEL_{i}" for i in range(num_labels)}
    names = dict(id2label) if isinstance(id2label, Mapping) else dict(enumerate(id2label))
    if sorted(names) != list(range(num_labels)):
        raise ValueError(f"id2label must name labels 0..{num_labels - 1}, got {names!r}")
    return {int(i): str(name) for i, name in names.items()}
