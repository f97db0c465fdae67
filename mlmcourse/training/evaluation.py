"""Evaluation on a fixed validation set: loss, accuracy and perplexity, weighted by token.

Each batch's mean loss counts in proportion to its number of labelled tokens, so a batch with
3 masked tokens does not weigh as much as one with 300 (averaging per-batch accuracies is a
classic bug), and perplexity is ``exp`` of the mean loss per labelled token.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from inspect import signature

import torch
from torch import nn

from mlmcourse.model.inputs import check_batch_for
from mlmcourse.training.hardware import autocast_context, unwrap_model
from mlmcourse.utils.labels import IGNORE_INDEX
from mlmcourse.utils.runtime import evaluating

__all__ = ["evaluate", "to_device", "targets", "count_targets"]


def to_device(batch: Mapping[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """Move a batch to ``device``; for a GPU through pinned (page-locked) host memory, which
    lets the copy run asynchronously (``non_blocking``) instead of through a staging buffer."""
    if device.type == "cuda":
        batch = {k: v.pin_memory() if v.device.type == "cpu" else v for k, v in batch.items()}
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def targets(model: nn.Module, labels: torch.Tensor) -> torch.Tensor:
    """The labels as the model scores them: its ``targets(labels)`` hook (a causal LM shifts
    them by one), or the labels themselves for a model without one (``transformers``')."""
    hook = getattr(unwrap_model(model), "targets", None)
    return hook(labels) if callable(hook) else labels


def count_targets(model: nn.Module, batch: Mapping[str, torch.Tensor]) -> int:
    """How many targets ``batch`` asks the model to predict: labelled tokens (or one per
    sequence for a sentence label), or for question answering one answer span per row."""
    if "labels" in batch:
        return int((targets(model, batch["labels"]) != IGNORE_INDEX).sum())
    if "start_positions" in batch:
        return int(batch["start_positions"].numel())
    raise KeyError(
        f"a training batch needs labels (or start_positions and end_positions); it has "
        f"{', '.join(sorted(batch))}"
    )


def ask_logits_at_labels(model: nn.Module) -> dict[str, bool]:
    """``{"logits_at_labels": True}`` for a model that can score the labelled positions alone
    (our masked and causal LMs: logits (N, V), the read-out on N rows instead of B x T), and
    ``{}`` for one that cannot (``transformers``' models, a tagger), whose logits are (B, T, V)."""
    forward = unwrap_model(model).forward
    return {"logits_at_labels": True} if "logits_at_labels" in signature(forward).parameters else {}


@torch.no_grad()
def evaluate(
    model: nn.Module,
    batches: Iterable[Mapping[str, torch.Tensor]],
    *,
    device: torch.device | str | None = None,
    precision: str = "auto",
) -> dict[str, float]:
    """Masked-token loss, accuracy and perplexity over ``batches``, weighted by token: a batch's
    mean loss counts once per labelled token, so a batch with 3 masked tokens weighs less than
    one with 300; ``perplexity`` is ``exp(loss)``. Dropout is off (eval mode)."""
    device = torch.device(device) if device is not None else next(model.parameters()).device
    sums = torch.zeros(3, dtype=torch.float64, device=device)  # loss, correct, tokens
    at_labels = ask_logits_at_labels(model)  # the scores at the targets only, if it can
    with evaluating(model):
        for i, batch in enumerate(batches):
            if i == 0:  # the data, once, where it comes in
                check_batch_for(unwrap_model(model), batch)
            batch = to_device(batch, device)
            labels = targets(model, batch["labels"])
            selected = labels != IGNORE_INDEX  # (B, T): the positions with a target
            n = selected.sum()
            if n.item() == 0:
                continue
            with autocast_context(device, precision):
                out = model(**batch, **at_labels)
            logits = out.logits if at_labels else out.logits[selected]  # (N, V)
            hits = (logits.argmax(-1) == labels[selected]).sum()
            sums += torch.stack([out.loss.double() * n, hits.double(), n.double()])
    return _metrics(*sums.tolist())


def _metrics(loss_sum: float, correct: float, total: float) -> dict[str, float]:
    if total == 0:
        raise ValueError("evaluate() found no labelled (masked) tokens in the given batches")
    loss = loss_sum / total
    return {
        "loss": loss,
        "accuracy": correct / total,
        "perplexity": math.exp(min(loss, 700.0)),
        "tokens": int(total),
    }
