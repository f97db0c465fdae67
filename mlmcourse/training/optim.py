"""AdamW with weight decay on weight matrices only, and a warmup-then-decay schedule.

Decay pulls weights towards zero, a useful prior for matrices; for a bias or a LayerNorm gain
zero is no sensible default, so they are left alone, as BERT does. Adam's second-moment
estimates are noise in its first steps, so the learning rate ramps up before it decays.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from mlmcourse.training.config import SCHEDULES, TrainingConfig
from mlmcourse.utils.checks import check_choice

__all__ = [
    "param_groups",
    "LeanAdamW",
    "build_optimizer",
    "lr_multiplier",
    "get_scheduler",
    "build_scheduler",
]


def _no_decay(name: str, param: nn.Parameter) -> bool:
    """Biases and normalisation weights are not decayed: shrinking them towards 0 only hurts."""
    return param.ndim < 2 or name.endswith(".bias") or "LayerNorm" in name or "norm" in name


def param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Split parameters into a decayed group (weight matrices, embeddings) and a non-decayed one.

    Tied parameters (the MLM decoder sharing the embedding matrix) appear once, because
    ``named_parameters`` skips duplicates.
    """
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (no_decay if _no_decay(name, param) else decay).append(param)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


def _dynamo_only_when_loaded(name: str) -> Callable[..., Any]:
    """``torch.optim.Optimizer.<name>`` without torch's ``_disable_dynamo`` wrapper until
    ``torch._dynamo`` is imported.

    The wrapper imports ``torch._dynamo`` (sympy and all) at its first call, so every process
    that builds an optimizer paid for it (``python -X importtime -c "import torch._dynamo"``
    measures the import). No code can be compiling before
    ``torch._dynamo`` is imported, so until then the method runs as written; after, wrapped."""
    wrapped = getattr(torch.optim.Optimizer, name)
    plain = getattr(wrapped, "__wrapped__", wrapped)

    @functools.wraps(plain)
    def method(self: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        return (wrapped if "torch._dynamo" in sys.modules else plain)(self, *args, **kwargs)

    return method


# The arguments of ``torch.optim.AdamW._init_group`` that the lean step passes, as torch 2.13
# names them (a private method, so other versions may differ): anything else takes torch's step.
_INIT_GROUP_ARGS = (
    "self", "group", "params_with_grad", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs",
    "state_steps",
)  # fmt: skip


def lean_step_supported() -> bool:
    """Whether this torch's ``AdamW._init_group`` takes the arguments the lean step passes
    (a private method: another torch may change it, and :class:`LeanAdamW` then steps as
    torch's ``AdamW`` does)."""
    init_group = getattr(torch.optim.AdamW, "_init_group", None)
    try:
        return tuple(inspect.signature(init_group).parameters) == _INIT_GROUP_ARGS
    except (TypeError, ValueError):
        return False


class LeanAdamW(torch.optim.AdamW):
    """torch's AdamW, value for value, whose CPU step makes no tensor as large as a parameter.

    torch's step on a CPU computes each update's denominator into two new tensors the size of
    the parameter. A new tensor of tens of MB (MiniLM's word embeddings: 47 MB) is fresh
    memory from the kernel, zeroed page by page, which can take longer than the arithmetic
    (``benchmarks/profile_step.py`` prints the optimizer step's share of a training step).
    Here the denominator goes into one reused buffer, by the same operations in
    the same order, so every value is bit for bit torch's (``tests/training/test_optim.py``).
    Other devices, complex parameters and torch's other options (amsgrad, maximize,
    capturable, differentiable, foreach, fused) take torch's step, and so does a torch whose
    private ``_init_group`` differs from the one this step was written for
    (:func:`lean_step_supported`). Building, zeroing and
    saving it import nothing more (:func:`_dynamo_only_when_loaded`).
    """

    add_param_group = _dynamo_only_when_loaded("add_param_group")
    zero_grad = _dynamo_only_when_loaded("zero_grad")
    state_dict = _dynamo_only_when_loaded("state_dict")
    load_state_dict = _dynamo_only_when_loaded("load_state_dict")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._scratch: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}
        self._lean = lean_step_supported()  # once: torch does not change under a running step

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        options = ("amsgrad", "maximize", "capturable", "differentiable", "foreach", "fused")
        params = [p for group in self.param_groups for p in group["params"]]
        if (
            closure is not None
            or any(g[o] for g in self.param_groups for o in options)
            or any(torch.is_tensor(g["betas"][0]) for g in self.param_groups)
            or any(p.device.type != "cpu" or p.is_complex() for p in params)
            or not self._lean
        ):
            return super().step(closure)
        for group in self.param_groups:
            self._lean_step(group)
        return None

    def _lean_step(self, group: dict[str, Any]) -> None:
        """``torch.optim.adam._single_tensor_adam``'s arithmetic, the denominator in a buffer."""
        params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
        self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, [], steps)
        (beta1, beta2), lr = group["betas"], float(group["lr"])
        for param, grad, exp_avg, exp_avg_sq, step_t in zip(
            params, grads, exp_avgs, exp_avg_sqs, steps, strict=True
        ):
            step_t += 1
            if group["weight_decay"] != 0:
                param.mul_(1 - lr * group["weight_decay"])
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = step_t.item()
            denom = torch.sqrt(exp_avg_sq, out=self._buffer(exp_avg_sq))
            denom.div_((1 - beta2**step) ** 0.5).add_(group["eps"])
            param.addcdiv_(exp_avg, denom, value=-(lr / (1 - beta1**step)))

    def _buffer(self, like: torch.Tensor) -> torch.Tensor:
        """A tensor shaped like ``like``, in storage shared by every parameter of its dtype."""
        key = (like.device, like.dtype)
        if key not in self._scratch or self._scratch[key].numel() < like.numel():
            self._scratch[key] = torch.empty(like.numel(), dtype=like.dtype, device=like.device)
        return self._scratch[key][: like.numel()].view_as(like)


def build_optimizer(model: nn.Module, config: TrainingConfig) -> torch.optim.AdamW:
    """AdamW over :func:`param_groups` (:class:`LeanAdamW`: torch's values, less memory traffic)."""
    return LeanAdamW(
        param_groups(model, config.weight_decay),
        lr=config.learning_rate,
        betas=(config.adam_beta1, config.adam_beta2),
        eps=config.adam_epsilon,
    )


def lr_multiplier(
    step: int, *, warmup_steps: int, total_steps: int, schedule: str, min_lr_ratio: float = 0.0
) -> float:
    """The factor applied to the peak learning rate at ``step`` (0-based optimiser steps).

    Linear warmup from ~0 to 1 over ``warmup_steps``, then ``schedule`` decays it to
    ``min_lr_ratio`` at ``total_steps``: ``cosine`` (half a cosine), ``linear`` or ``constant``.
    Warmup matters for Adam: its second-moment estimates are noise in the first steps.
    """
    check_choice(schedule, "schedule", SCHEDULES)
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    decay = 0.5 * (1.0 + math.cos(math.pi * progress)) if schedule == "cosine" else 1.0 - progress
    return min_lr_ratio + (1.0 - min_lr_ratio) * decay


def get_scheduler(
    optimizer: torch.optim.Optimizer,
    schedule: str,
    *,
    warmup_steps: int,
    total_steps: int,
    min_lr_ratio: float = 0.0,
) -> torch.optim.lr_scheduler.LambdaLR:
    """A ``LambdaLR`` following :func:`lr_multiplier` (its state goes into checkpoints)."""
    check_choice(schedule, "schedule", SCHEDULES)

    def factor(step: int) -> float:
        return lr_multiplier(
            step,
            warmup_steps=warmup_steps,
            total_steps=total_steps,
            schedule=schedule,
            min_lr_ratio=min_lr_ratio,
        )

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def build_scheduler(
    optimizer: torch.optim.Optimizer, config: TrainingConfig
) -> torch.optim.lr_scheduler.LambdaLR:
    """The schedule ``config`` asks for, over ``config.max_steps`` steps."""
    return get_scheduler(
        optimizer,
        config.lr_scheduler_type,
        warmup_steps=config.warmup_steps,
        total_steps=config.max_steps,
        min_lr_ratio=config.min_lr_ratio,
    )
