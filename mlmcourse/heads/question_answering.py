"""The question-answering head: two scores per token, "the answer starts here" and "ends here".

:class:`BertForQuestionAnswering` is Hugging Face's model of the same name: the encoder (no
pooler) and one linear layer from the hidden size to 2, read as a start logit and an end logit
at every position. Training is two classifications over the positions of a window, one for the
answer's first token and one for its last; the loss is the mean of the two cross-entropies.
It starts from a pretrained encoder (:meth:`~BertForQuestionAnswering.from_encoder`,
:meth:`~BertForQuestionAnswering.from_checkpoint`); only ``qa_outputs`` starts at random.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.heads.base import EncoderHead
from mlmcourse.model import EncoderConfig, encoder_for

__all__ = ["BertForQuestionAnswering", "QuestionAnsweringModelOutput", "span_loss"]


@dataclass
class QuestionAnsweringModelOutput:
    """Hugging Face's output shape: ``loss`` (with positions), ``start_logits``/``end_logits`` (B, T)."""

    loss: torch.Tensor | None
    start_logits: torch.Tensor
    end_logits: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class BertForQuestionAnswering(EncoderHead):
    """The encoder and ``qa_outputs``, a linear layer that gives each token a start and an end logit.

    There is no dropout before ``qa_outputs`` (``transformers`` has none either), and no
    pooler: a span is read from the token vectors, not from a sentence vector. Parameter names
    are ``transformers``' (``bert.*``, ``qa_outputs.*``), so a state dict of its
    ``BertForQuestionAnswering`` loads with ``load_state_dict``.
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.bert = encoder_for(config)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)
        nn.init.normal_(self.qa_outputs.weight, std=config.initializer_range)
        nn.init.zeros_(self.qa_outputs.bias)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        start_positions: torch.Tensor | None = None,
        end_positions: torch.Tensor | None = None,
        **encoder_options: Any,
    ) -> QuestionAnsweringModelOutput:
        """Start and end logits (B, T); with ``start_positions`` and ``end_positions`` (B,), the
        loss. Every position of a row is scored, padding included, as ``transformers`` does; on
        the speed path (``unpad=True``) padding has no hidden state and gets the lowest logit."""
        out = self.encode(input_ids, attention_mask, token_type_ids, **encoder_options)
        logits = self.qa_outputs(out.last_hidden_state)  # (B, T, 2)
        if encoder_options.get("unpad") and attention_mask is not None:
            logits = logits.masked_fill(
                attention_mask[..., None] == 0, torch.finfo(logits.dtype).min
            )
        start_logits, end_logits = logits.unbind(-1)  # (B, T) each
        loss = None
        if start_positions is not None or end_positions is not None:
            loss = span_loss(start_logits, end_logits, start_positions, end_positions)
        return QuestionAnsweringModelOutput(
            loss, start_logits.contiguous(), end_logits.contiguous(), out.hidden_states,
            out.attentions,
        )  # fmt: skip


def span_loss(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    start_positions: torch.Tensor | None,
    end_positions: torch.Tensor | None,
) -> torch.Tensor:
    """The mean of the start and end cross-entropies over the positions of each row, (B, T) -> ().

    As in ``transformers``, a position beyond the sequence (``>= T``) means "the answer is not
    in this input" and its term is ignored, and a negative one is clamped to 0 (``[CLS]``).
    When *every* position is ignored, ``transformers`` returns NaN (a mean over nothing); we
    return a zero that still has a graph, so a training loop does not stop on it.
    """
    if start_positions is None or end_positions is None:
        raise ValueError("give both start_positions and end_positions, or neither")
    batch, seq_len = start_logits.shape
    for name, positions in (("start_positions", start_positions), ("end_positions", end_positions)):
        if positions.dtype.is_floating_point or positions.dtype == torch.bool:
            raise ValueError(
                f"{name} must hold integer token positions, got dtype {positions.dtype}"
            )
        if positions.numel() != batch:
            raise ValueError(
                f"{name} must be one position per row, shape ({batch},), got {tuple(positions.shape)}"
            )
    ignored = seq_len  # the index cross_entropy skips: "not in this input"
    starts = start_positions.reshape(batch).clamp(0, ignored)  # (B,)
    ends = end_positions.reshape(batch).clamp(0, ignored)  # (B,)
    if bool((starts == ignored).all() and (ends == ignored).all()):
        return (start_logits.sum() + end_logits.sum()) * 0.0
    start_loss = F.cross_entropy(start_logits, starts, ignore_index=ignored)
    end_loss = F.cross_entropy(end_logits, ends, ignore_index=ignored)
    return (start_loss + end_loss) / 2
