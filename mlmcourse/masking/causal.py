"""The causal-LM collator: nothing is masked, every token is a target (shifted by the model).

The counterpart of :class:`~mlmcourse.masking.MLMCollator` for the CLM-vs-MLM comparison:
the same padding and truncation, so both objectives see exactly the same token rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from mlmcourse.masking.collator import MLMCollator
from mlmcourse.utils.labels import IGNORE_INDEX

__all__ = ["CLMCollator"]


class CLMCollator:
    """Pad a list of texts into a causal-LM batch: ``labels`` are the ``input_ids``, padding -100.

    Nothing is masked: every token is a target (shifted by the model). Padding and truncation
    are the MLM collator's (:meth:`mlmcourse.masking.MLMCollator.pad`), so both objectives see
    exactly the same token rows. ``generator`` is accepted and ignored, so this collator drops
    into :class:`~mlmcourse.training.MLMBatches` and
    :func:`~mlmcourse.training.fixed_eval_batches` in place of an ``MLMCollator``.
    """

    def __init__(self, tokenizer: Any, *, max_length: int = 128) -> None:
        self._padder = MLMCollator(tokenizer, max_length=max_length)  # validates both
        self.tokenizer = tokenizer
        self.max_length = self._padder.max_length  # a Python int

    def __repr__(self) -> str:
        return f"CLMCollator(max_length={self.max_length})"

    def __call__(
        self, examples: Sequence[Any], generator: torch.Generator | None = None
    ) -> dict[str, torch.Tensor]:
        batch = self._padder.pad(examples)
        labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, IGNORE_INDEX)
        return {
            "input_ids": batch["input_ids"],
            "attention_mask": batch["attention_mask"],
            "token_type_ids": batch["token_type_ids"],
            "labels": labels,
        }
