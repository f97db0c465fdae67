"""The token-classification head: one linear layer that scores every label at every piece.

:class:`BertForTokenClassification` is Hugging Face's model of the same name: the encoder,
dropout, and a linear layer from the hidden size to the labels, trained with cross-entropy over
the pieces whose label is not ``IGNORE_INDEX``. It starts from a pretrained encoder
(:meth:`~BertForTokenClassification.from_encoder`,
:meth:`~BertForTokenClassification.from_checkpoint`); only the classifier starts at random.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.heads.base import ClassifierHead, Labels, label_names
from mlmcourse.model import EncoderConfig, encoder_for
from mlmcourse.utils.checks import check_number, check_positive_int
from mlmcourse.utils.labels import IGNORE_INDEX

__all__ = ["BertForTokenClassification", "TokenClassifierOutput"]


@dataclass
class TokenClassifierOutput:
    """Hugging Face's output shape: ``loss`` (when labels are given) and ``logits`` (B, T, L)."""

    loss: torch.Tensor | None
    logits: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class BertForTokenClassification(ClassifierHead):
    """The encoder, dropout, and one linear layer that scores every label at every piece.

    ``class_weights`` (one per label) scale the cross-entropy so rare entity labels are not
    drowned by ``O``. Dropout is an ``nn.Dropout``, so ``model.eval()`` switches it off (left
    on at inference, it makes predictions change from run to run).
    ``id2label`` names the labels, which decoding into entities needs.
    """

    def __init__(
        self,
        config: EncoderConfig,
        num_labels: int,
        class_weights: Sequence[float] | torch.Tensor | None = None,
        classifier_dropout: float | None = None,
        *,
        id2label: Labels | None = None,
    ) -> None:
        super().__init__()
        num_labels = check_positive_int(num_labels, "num_labels")
        dropout = config.hidden_dropout_prob if classifier_dropout is None else classifier_dropout
        dropout = check_number(dropout, "classifier_dropout", low=0, high=1, high_open=True)
        self.num_labels = num_labels
        self.id2label = None
        if id2label is not None:
            names = label_names(id2label)
            if len(names) != num_labels:
                raise ValueError(f"id2label has {len(names)} labels but num_labels={num_labels}")
            self.id2label = dict(enumerate(names))
        self.bert = encoder_for(config)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, num_labels)
        nn.init.normal_(self.classifier.weight, std=config.initializer_range)
        nn.init.zeros_(self.classifier.bias)
        weights = None
        if class_weights is not None:
            weights = torch.as_tensor(class_weights, dtype=torch.float).flatten()
            if weights.numel() != num_labels or not bool((weights > 0).all()):
                raise ValueError(
                    f"class_weights must be {num_labels} positive numbers (one per label), "
                    f"got {class_weights!r}"
                )
        # a buffer moves with .to(device) but is not saved: it is a training choice, not a weight
        self.register_buffer("class_weights", weights, persistent=False)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        **encoder_options: Any,
    ) -> TokenClassifierOutput:
        """Logits (B, T, num_labels); with ``labels`` (B, T, ``-100`` = skip), the loss too."""
        out = self.encode(input_ids, attention_mask, token_type_ids, **encoder_options)
        logits = self.classifier(self.dropout(out.last_hidden_state))  # (B, T, L)
        loss = None
        if labels is not None:
            loss = token_classification_loss(logits, labels, self.class_weights)
        return TokenClassifierOutput(loss, logits, out.hidden_states, out.attentions)


def token_classification_loss(
    logits: torch.Tensor, labels: torch.Tensor, class_weights: torch.Tensor | None = None
) -> torch.Tensor:
    """Cross-entropy over the labelled tokens (``-100``: skipped), (B, T, L), (B, T) -> ().

    A batch with no labelled token gives a zero that still has a graph, instead of the NaN of
    a mean over nothing.
    """
    num_labels = logits.shape[-1]
    if labels.numel() == 0:
        return logits.sum() * 0.0
    loss = F.cross_entropy(
        logits.reshape(-1, num_labels), labels.reshape(-1), weight=class_weights,
        ignore_index=IGNORE_INDEX, reduction="sum",
    )  # fmt: skip
    weights = (labels != IGNORE_INDEX).to(logits.dtype)
    if class_weights is not None:  # the weighted mean, as cross_entropy's own
        weights = class_weights[labels.clamp(min=0)] * weights
    return loss / weights.sum().clamp(min=torch.finfo(logits.dtype).tiny)
