"""The token-classification head: one linear layer that scores every label at every piece.

:class:`BertForTokenClassification` is Hugging Face's model of the same name: the encoder,
dropout, and a linear layer from the hidden size to the labels, trained with cross-entropy over
the pieces whose label is not ``IGNORE_INDEX``. It starts from a pretrained encoder
(:meth:`~BertForTokenClassification.from_encoder`,
:meth:`~BertForTokenClassification.from_pretrained`); only the classifier starts at random.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.heads.base import (
    ClassifierHead,
    Labels,
    encoder_state,
    label_names,
    load_encoder_state,
)
from mlmcourse.masking import IGNORE_INDEX
from mlmcourse.model import BertModel, EncoderConfig
from mlmcourse.model.bert import reads_back
from mlmcourse.utils.checks import check_number, check_positive_int

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
    drowned by ``O``. Dropout is an ``nn.Dropout``, so ``model.eval()`` switches it off (the
    seed chapter kept it on at inference, and its predictions changed from run to run).
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
        self.bert = BertModel(config)
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

    @classmethod
    def from_encoder(
        cls,
        encoder: nn.Module | Mapping[str, torch.Tensor],
        num_labels: int,
        *,
        config: EncoderConfig | None = None,
        class_weights: Sequence[float] | torch.Tensor | None = None,
        classifier_dropout: float | None = None,
        id2label: Labels | None = None,
    ) -> BertForTokenClassification:
        """Start from pretrained encoder weights; only the classifier starts at random.

        ``encoder`` is a :class:`BertModel` (or a model holding one as ``.bert``, such as an
        MLM model), whose weights are copied, or a state dict with ``transformers`` names,
        either bare (``embeddings.…``) or prefixed ``bert.`` as in a whole MLM checkpoint (its
        ``cls.*`` head is then left out). A state dict needs ``config``.
        """
        config, state = encoder_state(encoder, config)
        model = cls(config, num_labels, class_weights, classifier_dropout, id2label=id2label)
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
    ) -> TokenClassifierOutput:
        """Logits (B, T, num_labels); with ``labels`` (B, T, ``-100`` = skip), the loss too."""
        out = self.encode(
            input_ids,
            attention_mask,
            token_type_ids,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            unpad=unpad,
        )
        logits = self.classifier(self.dropout(out.last_hidden_state))  # (B, T, L)
        loss = None if labels is None else self._loss(logits, labels, input_ids)
        return TokenClassifierOutput(loss, logits, out.hidden_states, out.attentions)

    def _loss(
        self, logits: torch.Tensor, labels: torch.Tensor, input_ids: torch.Tensor
    ) -> torch.Tensor:
        if labels.shape != input_ids.shape:
            raise ValueError(
                f"labels must have the shape of input_ids {tuple(input_ids.shape)}, got {tuple(labels.shape)}"
            )
        if labels.dtype.is_floating_point:
            raise ValueError(f"labels must be integer label ids, got dtype {labels.dtype}")
        scored = labels != IGNORE_INDEX
        bad = scored & ((labels < 0) | (labels >= self.num_labels))
        if reads_back(labels) and bad.any():
            raise ValueError(
                f"labels must be in [0, {self.num_labels}) or {IGNORE_INDEX}, found {int(labels[bad][0])}"
            )
        if not scored.any():  # nothing to learn from; a zero that still has a graph
            return logits.sum() * 0.0
        return F.cross_entropy(
            logits.reshape(-1, self.num_labels),
            labels.reshape(-1),
            weight=self.class_weights,
            ignore_index=IGNORE_INDEX,
        )
