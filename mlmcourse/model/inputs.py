"""Checking a batch for a model where it comes in, not in the model's ``forward``.

A ``forward`` trusts its inputs, as ``transformers``' and nanoGPT's do: it checks only what it
can see without reading a value back from the device (:func:`~mlmcourse.model.bert.check_input_shape`).
The values (ids inside the vocabulary, a mask of 0 and 1, segments the model has) are checked
here, once, where a batch enters the package: the task functions that encode a learner's text
(``fill_mask``, ``predict_entities``, ``classify``, ``answer``, ...), and the first batch of a
training run. A tokenizer that does not belong to the model is then named as such, instead of
an ``IndexError`` from inside an embedding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from mlmcourse.model.bert import check_input_shape
from mlmcourse.model.config import EncoderConfig

__all__ = ["check_model_inputs", "check_batch_for"]


def check_model_inputs(
    config: EncoderConfig, batch: Mapping[str, Any], *, label_classes: int | None = None
) -> None:
    """Every tensor of ``batch`` that the encoder reads, against ``config``, and its ``labels``
    (integers of the batch's shape; ids in ``[0, label_classes)`` or -100 when the head says
    how many classes it scores), with a message that says what was wrong and what to do. Reads
    the values: call it on the CPU batch."""
    input_ids = batch.get("input_ids")
    check_input_shape(input_ids, config)
    if input_ids.dtype.is_floating_point or input_ids.dtype == torch.bool:
        raise ValueError(f"input_ids must hold integer ids, got dtype {input_ids.dtype}")
    for name in ("attention_mask", "token_type_ids", "position_ids"):
        tensor = batch.get(name)
        if tensor is not None and (
            not isinstance(tensor, torch.Tensor) or tensor.shape != input_ids.shape
        ):
            got = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else tensor
            raise ValueError(
                f"{name} must have the shape of input_ids {tuple(input_ids.shape)}, got {got!r:.80}"
            )
    _check_range(input_ids, "input_ids", config.vocab_size, "vocab_size",
                 "; was the tokenizer built with a different vocabulary?")  # fmt: skip
    positions = batch.get("position_ids")
    if positions is not None:
        _check_range(positions, "position_ids", config.max_position_embeddings,
                     "max_position_embeddings")  # fmt: skip
    mask = batch.get("attention_mask")
    if mask is not None and bool(((mask != 0) & (mask != 1)).any()):
        raise ValueError("attention_mask must hold only 0 (padding) and 1 (token)")
    segments = batch.get("token_type_ids")
    if segments is not None and segments.numel():
        if config.type_vocab_size == 0 and bool(segments.any()):
            raise ValueError(
                "this encoder has no segment embeddings (type_vocab_size=0): pass "
                "token_type_ids=None or all zeros"
            )
        _check_range(segments, "token_type_ids", max(1, config.type_vocab_size), "type_vocab_size")
    labels = batch.get("labels")
    if labels is not None:
        _check_labels(labels, input_ids, label_classes)


def check_batch_for(model: Any, batch: Mapping[str, Any]) -> None:
    """``batch`` against one of our models (ids it has, a mask of 0 and 1, labels its head
    scores); any other model is left to itself. The training loop and ``evaluate`` call it on
    their first batch: once, where the data comes in, rather than in every forward."""
    config = getattr(model, "config", None)
    if isinstance(config, EncoderConfig):
        check_model_inputs(config, batch, label_classes=getattr(model, "label_classes", None))


def _check_labels(labels: Any, input_ids: torch.Tensor, label_classes: int | None) -> None:
    """Integer labels of the batch's shape, each a class in ``[0, label_classes)`` or -100
    (the values only when the head says how many classes it scores)."""
    shapes = (tuple(input_ids.shape), tuple(input_ids.shape[:1]))  # per token, per sequence
    if not isinstance(labels, torch.Tensor) or tuple(labels.shape) not in shapes:
        got = tuple(labels.shape) if isinstance(labels, torch.Tensor) else type(labels).__name__
        raise ValueError(
            f"labels must have the shape of input_ids {shapes[0]} (one per token) or "
            f"{shapes[1]} (one per sequence), got {got}"
        )
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError(f"labels must hold integer ids, got dtype {labels.dtype}")
    scored = labels[labels != -100]
    if (
        label_classes is not None
        and scored.numel()
        and (int(scored.min()) < 0 or int(scored.max()) >= label_classes)
    ):
        bad = int(scored.min()) if int(scored.min()) < 0 else int(scored.max())
        raise ValueError(
            f"labels must be in [0, {label_classes}) or -100 (not scored), found {bad}"
        )


def _check_range(values: torch.Tensor, name: str, size: int, field: str, hint: str = "") -> None:
    """Every value in ``[0, size)``; the error names the first one outside."""
    if not values.numel():
        return
    low, high = int(values.min()), int(values.max())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise ValueError(f"{name} must be in [0, {field}={size}), found id {bad}{hint}")
