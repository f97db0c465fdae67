"""Unpadded compute: run the encoder on the real tokens only, and pad only around attention.

A padded batch of short, uneven texts (tweets, sentences, WikiText-2 lines) is often a third
to a half padding. Everything in a BERT layer except attention works on each token alone: the
embeddings, the query/key/value and output projections, the feed-forward block, every
LayerNorm and dropout. So gather the real tokens once per batch, (B, T) -> (N,), run all of
that on an (N, H) matrix, and put the tokens back into rows of T only for the one step that
needs rows, ``softmax(Q K^T / sqrt(d)) V``, taking them out again at once. The matrix
multiplies then cost N tokens instead of B x T.

This is what ``flash-attn``'s ``unpad_input`` / ``pad_input`` and ModernBERT do on GPUs, where
a variable-length attention kernel skips the padding in attention too. ``benchmarks/fine_tuning.py``
measures the gain on WNUT-17 tweets against ``transformers``, which computes every position.

Real tokens' hidden states are those of the padded path (the padding only ever reached them
as hidden keys); the padded positions of the output are zeros, not the padded path's values,
which nothing should read anyway (losses and heads skip them).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Unpadding"]


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
