"""The speed path: the same BERT encoder, run on the real tokens only and on packed rows.

Two things make a batch of short, uneven texts (tweets, sentences, WikiText-2 lines) cheaper
than its padded shape suggests, and neither changes a real token's result:

- **Unpadding.** Everything in a BERT layer except attention works on each token alone: the
  embeddings, the query/key/value and output projections, the feed-forward block, every
  LayerNorm and dropout. So gather the real tokens once per batch, (B, T) -> (N,), run all of
  that on an (N, H) matrix, and put the tokens back into rows of T only for the one step that
  needs rows, attention, taking them out again at once (:func:`unpadded_layer`). The matrix
  multiplies then cost N tokens instead of B x T. This is what ``flash-attn``'s
  ``unpad_input`` / ``pad_input`` and ModernBERT do on GPUs.
- **Packing.** Several short texts share one row (:mod:`mlmcourse.training.packing`); their
  positions restart at 0 with each text (``transformers``' ``DataCollatorWithFlattening``
  convention), and each attends only within itself: a block-diagonal mask
  (:func:`packed_allowed`).

:class:`SpeedBertModel` is :class:`~mlmcourse.model.bert.BertModel` with those two added to its
``forward`` (``position_ids``, ``unpad=True``): the same modules, weights and names, so a model
takes it for the length of a ``with speed_path(model):`` block and is given its own classes
back at the end, without a copy (:func:`speed_path`); its checkpoints are BERT's. Real tokens'
hidden states are those of the padded path; padded positions come out as zeros, which nothing
should read (losses and heads skip them). Training on a CPU, the speed path's dropout draws 16
random bits an element instead of a float (:mod:`mlmcourse.model.dropout`): the same
distribution, not the same draws. ``benchmarks/packing.py`` and ``benchmarks/fine_tuning.py``
measure the gain against ``transformers``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

import torch
from torch import nn

from mlmcourse.model.bert import (
    BertLayer,
    BertModel,
    BertSelfAttention,
    attention_allowed,
    check_input_shape,
    project_qkv,
)
from mlmcourse.model.config import EncoderOutput
from mlmcourse.model.dropout import FastDropout, fast_dropout
from mlmcourse.utils.runtime import is_compiling

__all__ = [
    "SpeedBertModel",
    "SpeedSelfAttention",
    "Unpadding",
    "document_ids",
    "has_speed_path",
    "packed_allowed",
    "speed_path",
    "unpadded_layer",
]


@dataclass(frozen=True)
class Unpadding:
    """Where the real tokens of a padded (B, T) batch are: ``unpad`` gathers them, ``pad``
    scatters them back into rows (zeros at the padding)."""

    indices: torch.Tensor  # (N,) flat positions b * T + t of the real tokens, in order
    batch_size: int
    seq_len: int

    @classmethod
    def from_mask(cls, attention_mask: torch.Tensor) -> Unpadding:
        """From the tokenizer's (B, T) mask, 1 for a token and 0 for padding."""
        batch_size, seq_len = attention_mask.shape
        indices = attention_mask.reshape(-1).nonzero().squeeze(1)  # (N,)
        return cls(indices, batch_size, seq_len)

    @property
    def num_tokens(self) -> int:
        return self.indices.numel()

    def unpad(self, padded: torch.Tensor) -> torch.Tensor:
        """(B, T, ...) -> (N, ...): the real tokens, row after row."""
        return padded.reshape(self.batch_size * self.seq_len, *padded.shape[2:])[self.indices]

    def pad(self, tokens: torch.Tensor) -> torch.Tensor:
        """(N, ...) -> (B, T, ...), zeros at the padding (the inverse of :meth:`unpad`)."""
        shape = (self.batch_size * self.seq_len, *tokens.shape[1:])
        padded = tokens.new_zeros(shape).index_copy(0, self.indices, tokens)
        return padded.view(self.batch_size, self.seq_len, *tokens.shape[1:])

    def pad_heads(self, tokens: torch.Tensor, num_heads: int) -> torch.Tensor:
        """(N, k * d) -> (k, B, T, d): each of ``k`` heads' rows, padded, heads first.

        Heads first, each head's (B, T, d) block is contiguous, so attention's matmuls read it
        in place; rows of (B, h, T, d) cut from (B, T, H) would each be copied first.
        """
        heads = tokens.view(self.num_tokens, num_heads, -1).transpose(0, 1)  # (k, N, d)
        shape = (num_heads, self.batch_size * self.seq_len, heads.shape[-1])
        padded = heads.new_zeros(shape).index_copy(1, self.indices, heads)
        return padded.view(num_heads, self.batch_size, self.seq_len, -1)

    def unpad_heads(self, padded: torch.Tensor) -> torch.Tensor:
        """(h, B, T, d) -> (N, h * d): the real tokens, heads side by side (inverse of
        :meth:`pad_heads`)."""
        heads = padded.reshape(padded.shape[0], -1, padded.shape[-1])  # (h, B * T, d)
        return heads.index_select(1, self.indices).transpose(0, 1).reshape(self.num_tokens, -1)


def document_ids(position_ids: torch.Tensor) -> torch.Tensor:
    """Number the documents of packed rows: a new one starts wherever a position is 0.

    ``[[0, 1, 2, 0, 1, 0]]`` -> ``[[1, 1, 1, 2, 2, 3]]``.
    """
    return (position_ids == 0).long().cumsum(dim=-1)  # (B, T)


def packed_allowed(
    attention_mask: torch.Tensor, position_ids: torch.Tensor, *, is_causal: bool
) -> torch.Tensor:
    """BERT's mask (:func:`~mlmcourse.model.bert.attention_allowed`), and each query sees only
    keys of its own document: (B, 1, T, T), block-diagonal for packed rows."""
    documents = document_ids(position_ids)  # (B, T)
    same = documents[:, None, :, None] == documents[:, None, None, :]  # (B, 1, T, T)
    allowed = attention_allowed(attention_mask, is_causal=is_causal) & same
    diagonal = torch.eye(same.shape[-1], dtype=torch.bool, device=same.device)
    return allowed | diagonal  # a padded query sees itself: no softmax over nothing


def unpadded_layer(
    layer: BertLayer, hidden_states: torch.Tensor, bias: torch.Tensor | None, unpadding: Unpadding
) -> torch.Tensor:
    """One BERT layer on the real tokens, (N, H) -> (N, H): only attention sees rows of T."""
    attention = layer.attention.self
    qkv = project_qkv(hidden_states, attention)  # (N, 3H)
    rows = unpadding.pad_heads(qkv, 3 * attention.num_attention_heads).chunk(3)  # (h, B, T, d)
    heads_first = None if bias is None else bias.transpose(0, 1)  # (B, 1, T, T) -> (1, B, T, T)
    context, _ = attention.attend(*rows, heads_first)  # (h, B, T, d)
    context = unpadding.unpad_heads(context)  # (N, H)
    attention_output = layer.attention.output(context, hidden_states)
    return layer.output(layer.intermediate(attention_output), attention_output)  # (N, H)


class SpeedSelfAttention(BertSelfAttention):
    """BERT's self-attention whose training-time dropout on a CPU is :func:`fast_dropout`.

    torch's fused attention (SDPA) has no dropout on a CPU: with ``dropout_p > 0`` it computes
    the probabilities in full and drops them with a float draw each. Written out here, they are
    dropped with the cheaper draws (``benchmarks/profile_step.py`` measures what that saves).
    """

    def attend(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        p = self.dropout_prob if self.training else 0.0
        if p == 0.0 or output_attentions or query.device.type != "cpu":
            return super().attend(query, key, value, bias, output_attentions=output_attentions)
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])  # (B, h, T, T)
        if bias is not None:
            scores = scores + bias
        return fast_dropout(scores.softmax(dim=-1), p) @ value, None  # (B, h, T, d)


class SpeedBertModel(BertModel):
    """BERT's encoder, taking packed rows (``position_ids`` that restart at 0) and, with
    ``unpad=True``, computing on the real tokens only. A model's encoder is one inside
    ``with speed_path(model):`` (:func:`speed_path`)."""

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        *,
        position_ids: torch.Tensor | None = None,
        unpad: bool = False,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> EncoderOutput:
        check_input_shape(input_ids, self.config)
        outputs = {
            "output_attentions": output_attentions,
            "output_hidden_states": output_hidden_states,
        }
        unpad = unpad and not (output_attentions or output_hidden_states or is_compiling())
        if position_ids is None and (not unpad or attention_mask is None):
            return super().forward(input_ids, attention_mask, token_type_ids, **outputs)
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if position_ids is None:  # one text a row: BERT's mask
            position_ids = torch.arange(input_ids.shape[1], device=input_ids.device)
            position_ids = position_ids.expand_as(input_ids)
            allowed = attention_allowed(attention_mask, is_causal=self.config.is_causal)
        else:  # packed rows: each text sees only itself
            allowed = packed_allowed(attention_mask, position_ids, is_causal=self.config.is_causal)
        if not unpad:
            hidden_states = self.embeddings(input_ids, token_type_ids, position_ids)  # (B, T, H)
            return self.encode(hidden_states, allowed, **outputs)
        unpadding = Unpadding.from_mask(attention_mask)
        tokens = [None if x is None else unpadding.unpad(x)[None] for x in
                  (input_ids, token_type_ids, position_ids)]  # fmt: skip
        hidden_states = self.embeddings(*tokens)[0]  # (N, H): the real tokens only
        return self.encode(hidden_states, allowed, stack=partial(self.unpadded_stack, unpadding))

    def unpadded_stack(
        self, unpadding: Unpadding, hidden_states: torch.Tensor, bias: torch.Tensor, **outputs: bool
    ) -> EncoderOutput:
        """The layers on the (N, H) real tokens (:func:`unpadded_layer`), padded back at the end,
        zeros at padding; the stack :meth:`~BertModel.encode` runs when ``unpad=True``. (It is
        never asked for ``outputs``: per-layer attentions and states take the padded path.)"""
        for layer in self.encoder.layer:
            hidden_states = unpadded_layer(layer, hidden_states, bias, unpadding)  # (N, H)
        return EncoderOutput(last_hidden_state=unpadding.pad(hidden_states))  # (B, T, H)


def has_speed_path(model: nn.Module) -> bool:
    """Whether ``model``'s encoder (itself, or its ``.bert``) is BERT's, which has one."""
    return type(getattr(model, "bert", model)) in (BertModel, SpeedBertModel)


# What the speed path swaps, each for a subclass with the same weights and another forward.
SPEED_CLASSES: dict[type[nn.Module], type[nn.Module]] = {
    BertModel: SpeedBertModel,
    BertSelfAttention: SpeedSelfAttention,
    nn.Dropout: FastDropout,
}


@contextmanager
def speed_path(model: nn.Module) -> Iterator[nn.Module]:
    """Put ``model`` (an encoder, or a head with one as ``.bert``) on the speed path for the
    length of a ``with`` block, and give every module its own class back when the block ends,
    also when it raises::

        with speed_path(model) as fast:  # fast is model: the same module, weights and names
            fast(input_ids, attention_mask, unpad=True)

    Inside, the encoder is a :class:`SpeedBertModel` (taking ``position_ids`` and ``unpad``),
    and in training every dropout (the head's too) draws :func:`fast_dropout`'s cheaper random
    bits on a CPU; in eval mode dropout is off, so prediction gets the plain path's numbers.
    Entering again inside the block changes nothing, and leaving the inner block restores
    nothing: each block gives back only what it swapped.

    Only BERT's encoder has one: the modern encoder's switches (rotary positions, local
    windows) would each need their own unpadded and packed versions.
    """
    encoder = getattr(model, "bert", model)
    if not has_speed_path(model):
        raise TypeError(
            f"unpadding and packing run on BERT's encoder; this model's is a "
            f"{type(encoder).__name__}: train it padded (unpad: false, packing: false)"
        )
    swapped = [(m, type(m)) for m in model.modules() if type(m) in SPEED_CLASSES]
    try:
        for module, plain in swapped:  # no new weights: the forward is all that differs
            module.__class__ = SPEED_CLASSES[plain]
        yield model
    finally:
        for module, plain in swapped:
            module.__class__ = plain
