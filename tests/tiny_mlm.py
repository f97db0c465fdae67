"""A tiny masked-LM stand-in for testing the training loop and checkpoints in milliseconds.

It follows the interface the loop relies on (keyword batch in, ``loss``/``logits`` out, a
``config`` with ``to_dict()``), so the loop's tests do not depend on the real encoder.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from types import SimpleNamespace

import torch
from torch import nn

MASK_ID = 1


@dataclass
class TinyConfig:
    vocab_size: int = 16
    hidden_size: int = 12
    hidden_dropout_prob: float = 0.1

    def to_dict(self) -> dict:
        return asdict(self)


class TinyMLM(nn.Module):
    """Embeddings + one mixing layer + LayerNorm + a decoder tied to the embeddings."""

    def __init__(self, config: TinyConfig):
        super().__init__()
        self.config = config
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.mix = nn.Linear(3 * config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size)
        self.decoder.weight = self.embeddings.weight  # tied

    def forward(self, input_ids, attention_mask=None, labels=None, **_):
        h = self.embeddings(input_ids)  # (B, T, H)
        left = torch.nn.functional.pad(h, (0, 0, 1, 0))[:, :-1]
        right = torch.nn.functional.pad(h, (0, 0, 0, 1))[:, 1:]
        h = self.LayerNorm(torch.tanh(self.mix(torch.cat([left, h, right], -1))))
        logits = self.decoder(self.dropout(h))  # (B, T, V)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(
                logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100
            )
        return SimpleNamespace(loss=loss, logits=logits)


def tiny_batch(index: int, *, batch_size: int = 8, length: int = 10, vocab: int = 16) -> dict:
    """A learnable task: sequences count up by one (mod vocab); 25% of tokens are masked."""
    g = torch.Generator().manual_seed(1000 + index)
    start = torch.randint(2, vocab, (batch_size, 1), generator=g)
    ids = 2 + (start - 2 + torch.arange(length)) % (vocab - 2)  # (B, T), ids in [2, vocab)
    masked = torch.rand(ids.shape, generator=g) < 0.25
    labels = torch.where(masked, ids, torch.full_like(ids, -100))
    inputs = torch.where(masked, torch.full_like(ids, MASK_ID), ids)
    return {"input_ids": inputs, "attention_mask": torch.ones_like(ids), "labels": labels}
