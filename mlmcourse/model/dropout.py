"""Dropout with fewer random draws, for the speed path on a CPU.

Dropout only needs a yes or no per element, kept with chance ``1 - p``. torch's CPU dropout
draws a random float for each element, a visible share of a small BERT's training step on one
thread (``benchmarks/profile_step.py`` prints it). Here 16 random bits decide each element, and
one 64-bit draw gives four elements their bits, so a mask costs a quarter of the draws.

The drop chance is ``p`` rounded to a multiple of 1/65,536 (0.1 becomes 0.100006), and kept
values are scaled by one over the exact keep chance, so the expected output is the input, as
with ``F.dropout``. The distribution is dropout's; the draws are not torch's, so a run with it
is not bit-identical to one without. On a GPU torch's dropout is a fused kernel already, and
:func:`fast_dropout` is ``F.dropout`` there.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["FastDropout", "drop_threshold", "fast_dropout", "keep_mask", "keep_probability"]

LEVELS = 1 << 16  # a 16-bit integer takes this many values, -32,768 to 32,767


def drop_threshold(p: float) -> int:
    """The signed 16-bit value below which an element is dropped: ``round(p * 65536)`` of the
    65,536 values lie below it."""
    return round(p * LEVELS) - LEVELS // 2


def keep_probability(p: float) -> float:
    """The exact chance that :func:`keep_mask` keeps an element: ``1 - p``, ``p`` rounded to
    a multiple of 1/65,536."""
    return 1 - round(p * LEVELS) / LEVELS


def keep_mask(
    shape: torch.Size, p: float, device: torch.device, generator: torch.Generator | None = None
) -> torch.Tensor:
    """A bool tensor of ``shape``, each element True with chance :func:`keep_probability`.

    Four elements share one 64-bit draw: its bytes read as four signed 16-bit integers. The
    draw spans all 64 bits (``random_()`` without bounds leaves the sign bit 0).
    """
    numel = shape.numel()
    bits = torch.empty((numel + 3) // 4, dtype=torch.int64, device=device)
    bits.random_(-(2**63), 2**63 - 1, generator=generator)
    return (bits.view(torch.int16)[:numel] >= drop_threshold(p)).view(shape)


def fast_dropout(
    x: torch.Tensor, p: float, training: bool = True, generator: torch.Generator | None = None
) -> torch.Tensor:
    """``F.dropout(x, p, training)`` with 16 random bits an element on a CPU; torch's own on
    other devices. Gradients flow through the kept elements, scaled as the values are."""
    if not training or p == 0.0 or p >= 1.0 or x.device.type != "cpu":
        return F.dropout(x, p, training)
    scaled_mask = keep_mask(x.shape, p, x.device, generator).to(x.dtype)  # 1 kept, 0 dropped
    return x * scaled_mask.mul_(1.0 / keep_probability(p))  # backward: one multiply by the mask


class FastDropout(nn.Dropout):
    """``nn.Dropout`` whose forward is :func:`fast_dropout`: the same ``p``, no parameters, so a
    model's ``nn.Dropout`` modules become one inside ``with speed_path(model):`` and switch back
    when the block ends (:func:`~mlmcourse.model.speed.speed_path`)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fast_dropout(x, self.p, self.training)
