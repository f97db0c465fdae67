"""The masked-LM head: ``BertForMaskedLM``, the encoder plus a read-out tied to its embeddings.

The head turns each encoder vector back into a score for every word of the vocabulary:
dense -> GELU -> LayerNorm, then a decoder whose weight *is* the token-embedding matrix (tied)
plus a per-token bias. Tying means "the vector that reads a word in" and "the vector that
writes it out" are the same, which saves ``vocab_size x hidden_size`` parameters and trains
both from every occurrence.

Names follow ``transformers.BertForMaskedLM`` (``bert.*``, ``cls.predictions.*``), so a
checkpoint of ours loads there unchanged (:func:`mlmcourse.interop.bert.export_hf`).
Using it to fill in blanks is :mod:`mlmcourse.tasks.fill_mask`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.heads.base import EncoderHead
from mlmcourse.model import EncoderConfig, encoder_for
from mlmcourse.model.bert import init_weights
from mlmcourse.model.config import ACTIVATIONS
from mlmcourse.utils.labels import IGNORE_INDEX

__all__ = [
    "BertForMaskedLM",
    "BertLMPredictionHead",
    "BertOnlyMLMHead",
    "BertPredictionHeadTransform",
    "MaskedLMOutput",
    "masked_lm_loss",
]


class BertPredictionHeadTransform(nn.Module):
    """dense -> activation -> LayerNorm: one more non-linear layer before reading out words."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.act = ACTIVATIONS[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.act(self.dense(hidden_states)))  # (..., H)


class BertLMPredictionHead(nn.Module):
    """Transform, then scores over the vocabulary: ``h @ E^T + b`` with ``E`` the embeddings."""

    def __init__(self, config: EncoderConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.decoder.weight = word_embeddings.weight  # tied: one (V, H) matrix, two uses
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.transform(hidden_states)) + self.bias  # (..., V)


class BertOnlyMLMHead(nn.Module):
    """The ``cls`` wrapper Hugging Face uses, kept so parameter names match theirs."""

    def __init__(self, config: EncoderConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(config, word_embeddings)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.predictions(hidden_states)


@dataclass
class MaskedLMOutput:
    """What :class:`BertForMaskedLM` returns (Hugging Face's field names).

    ``logits``: ``(B, T, V)``, a score for every word at every position, with or without
    ``labels``; ``(N, V)`` only when the caller asked for ``logits_at_labels=True``: one row per
    position with a target (``labels != -100``), in row-major order (the order of
    ``labels[labels != -100]``).
    ``loss``: mean cross-entropy over the labelled positions; exactly ``0.0`` (still attached
    to the graph) when nothing is labelled, and ``None`` without ``labels``.
    """

    loss: torch.Tensor | None
    logits: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


def masked_lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of ``logits`` (N, V) against ``targets`` (N,), in fp32; 0 when N == 0.

    ``F.cross_entropy`` over zero targets is ``0/0 = NaN``: its gradient happens
    to be zero, but the NaN loss stops a run that checks for divergence and spoils the logged
    means, and a hand-written masked mean would put NaN into every gradient. An empty batch
    contributes a zero loss that still has a gradient path.
    """
    if targets.numel() == 0:
        return logits.sum() * 0.0
    return F.cross_entropy(logits.float(), targets)


class BertForMaskedLM(EncoderHead):
    """The encoder plus the MLM head tied to its word embeddings; returns a :class:`MaskedLMOutput`.

    The loss is computed from the read-out at the positions with a target only
    (``labels != -100``, about 15% of tokens): the (H x V) read-out is the largest matmul of a
    small model, so training asks for those rows alone (``logits_at_labels=True``) and skips the
    positions that are never scored. A causal LM is this same model with causal attention and
    shifted targets (:meth:`targets`).
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.bert = encoder_for(config)
        self.cls = BertOnlyMLMHead(config, self.bert.get_input_embeddings())
        # BERT's initialisation for the head's transform; the decoder is the (already
        # initialised) embedding matrix and the output bias starts at zero.
        self.cls.predictions.transform.apply(partial(init_weights, std=config.initializer_range))

    @property
    def label_classes(self) -> int:
        """Labels are token ids: one class per row of the vocabulary."""
        return self.config.vocab_size

    def targets(self, labels: torch.Tensor) -> torch.Tensor:
        """The token each position predicts (``-100``: none). MLM: the labels themselves."""
        return labels

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        *,
        logits_at_labels: bool = False,
        **encoder_options: Any,
    ) -> MaskedLMOutput:
        """Logits (B, T, V), and the loss with ``labels``.

        With ``labels``, ``logits_at_labels=True`` returns the logits (N, V) of the N positions
        with a target only: training and evaluation need no other rows. The loss is always
        computed from those N rows, so it is the same, to the bit, either way.
        ``encoder_options`` go to the encoder (:meth:`~mlmcourse.heads.base.EncoderHead.encode`).
        """
        out = self.encode(input_ids, attention_mask, token_type_ids, **encoder_options)
        hidden = out.last_hidden_state  # (B, T, H)
        loss = None
        if labels is not None:
            targets = self.targets(labels)
            selected = targets != IGNORE_INDEX  # (B, T)
            scored = self.cls(hidden[selected])  # (N, V): only the positions that are scored
            loss = masked_lm_loss(scored, targets[selected])
            if logits_at_labels:
                return self.output_type(loss, scored, out.hidden_states, out.attentions)
        logits = self.cls(hidden)  # (B, T, V): every position scored
        return self.output_type(loss, logits, out.hidden_states, out.attentions)

    output_type: type[MaskedLMOutput] = MaskedLMOutput
