"""Batching inputs by length, and putting the results back in the caller's order.

Inference puts inputs of similar length in one batch, so that a batch is little padding; the
caller still gets one result per input, in the order it gave them. :class:`LengthOrder` is
that order and the way back. Each caller says which end comes first: shortest first, or
longest first (the widest batch runs first, so an input too long for the model, or a batch too
large for memory, fails before any other work is done).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence, Sized
from typing import Any

import torch

__all__ = ["LengthOrder"]


class LengthOrder:
    """The indices of ``items`` sorted by ``len``, shortest or longest first, and the way back.

    Items of the same length keep their order (Python's sort is stable, reversed too), so a
    batch holds the same items whichever direction's ties come first.
    """

    def __init__(self, items: Sequence[Sized], *, longest_first: bool) -> None:
        self.order = sorted(range(len(items)), key=lambda i: len(items[i]), reverse=longest_first)

    def batches(self, batch_size: int) -> Iterator[list[int]]:
        """The indices of each batch of ``batch_size`` items (the last may be smaller)."""
        for start in range(0, len(self.order), batch_size):
            yield self.order[start : start + batch_size]

    def restore(self, results: Any) -> Any:
        """``results`` computed in this order (a tensor of rows or a list, one per item, batch
        after batch) put back in the order of the items."""
        if len(results) != len(self.order):
            raise ValueError(
                f"expected {len(self.order)} results, one per item, got {len(results)}"
            )
        if isinstance(results, torch.Tensor):
            return results[torch.argsort(torch.tensor(self.order))]
        restored: list[Any] = [None] * len(self.order)
        for i, result in zip(self.order, results, strict=True):
            restored[i] = result
        return restored
