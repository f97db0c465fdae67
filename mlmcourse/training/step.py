"""One optimiser step: forward and backward over the micro-batches, clip, step, schedule.

Gradients of ``gradient_accumulation_steps`` micro-batches are summed before one step, each
weighted by its share of the labelled tokens, so accumulating k micro-batches gives the same
gradient as one batch k times larger, and N processes the same as one (see ``book/scaling.md``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from mlmcourse.training.distributed import all_reduce_sum, get_rank, get_world_size, rank_step_seed
from mlmcourse.training.evaluation import ask_logits_at_labels, count_targets
from mlmcourse.training.hardware import autocast_context

__all__ = ["seed_dropout", "forward_backward", "optimizer_step"]


def seed_dropout(seed: int, step: int) -> None:
    """Under torchrun, give each rank its own dropout stream, a function of (seed, rank, step),
    so the ranks drop different units and a resumed run draws the masks it would have drawn."""
    if get_world_size() > 1:
        torch.manual_seed(rank_step_seed(seed, get_rank(), step))


def forward_backward(
    model: nn.Module,
    forward: Callable[..., object],
    micro: Sequence[dict[str, torch.Tensor]],
    precision: str = "auto",
    ddp: nn.Module | None = None,
) -> tuple[float, int]:
    """Sum the gradients of ``micro`` into ``model``; the global batch's mean loss and tokens.

    ``forward`` runs the model (compiled, or wrapped in ``ddp`` under torchrun); each
    micro-batch's loss is weighted by its labelled tokens over those of the global batch."""
    device, world_size = micro[0]["input_ids"].device, get_world_size()
    counts = [count_targets(model, batch) for batch in micro]
    at_labels = ask_logits_at_labels(model)  # the read-out at the targets only, if it can
    total = int(_over_ranks(sum(counts), device))  # labelled tokens of the global batch
    loss_sum, tokens = torch.zeros((), device=device), 0
    for k, (batch, n) in enumerate(zip(micro, counts, strict=True)):
        # DDP all-reduces gradients during backward; on all but the last micro-batch it need
        # not (the gradients are only summed locally), so skip the communication.
        last = k == len(micro) - 1
        with contextlib.nullcontext() if ddp is None or last else ddp.no_sync():
            with autocast_context(device, precision):
                loss = forward(**batch, **at_labels).loss
            # DDP averages gradients over the ranks, hence the world_size factor.
            (loss * (n * world_size / max(1, total))).backward()
        loss_sum += loss.detach().float() * n
        tokens += int(batch["attention_mask"].sum()) if "attention_mask" in batch else 0
    both = torch.stack([loss_sum.double(), loss_sum.new_tensor(tokens, dtype=torch.float64)])
    loss_sum, tokens = _over_ranks(both, device)  # the global batch's, the same on all ranks
    return (loss_sum.float() / max(1, total)).item(), int(tokens)


def _over_ranks(value: Any, device: torch.device) -> Any:
    """``value`` summed over the ranks of a distributed run (itself in a single process)."""
    if get_world_size() == 1:
        return value
    return all_reduce_sum(torch.as_tensor(value, device=device, dtype=torch.float64))


def optimizer_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    max_grad_norm: float,
) -> tuple[float, float]:
    """Clip the gradient norm (unless ``max_grad_norm`` is 0), step and clear; the norm before
    clipping and the learning rate the step used."""
    grad_norm = (
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm).item()
        if max_grad_norm > 0
        else float("nan")
    )
    lr = scheduler.get_last_lr()[0]
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return grad_norm, lr
