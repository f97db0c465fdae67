"""Running the loop on the hardware at hand: bf16 autocast, ``torch.compile``, several processes.

Side effects that must happen once per job (printing, evaluation, checkpoints) go through
:func:`is_main_process`, so the same loop runs under ``torchrun`` as
``DistributedDataParallel`` (see :mod:`mlmcourse.training.distributed` and ``book/scaling.md``).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from mlmcourse.training.config import PRECISIONS
from mlmcourse.utils.checks import check_choice

__all__ = [
    "autocast_context",
    "CompileFallback",
    "is_main_process",
    "on_main_process",
    "unwrap_model",
    "wrap_ddp",
]


def autocast_context(device: torch.device, precision: str = "auto"):
    """bf16 autocast on CUDA (``auto`` or ``bf16``), fp32 elsewhere.

    On CPU bf16 is usually slower than fp32 and autocast would only add casts, so ``auto``
    means fp32 there; asking for ``bf16`` on CPU is honoured (it is useful to test the path).
    """
    check_choice(precision, "precision", PRECISIONS)
    use_bf16 = precision == "bf16" or (precision == "auto" and device.type == "cuda")
    if not use_bf16:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


class CompileFallback:
    """Call ``torch.compile(module)``, or ``module`` itself where compiling is not possible.

    ``torch.compile`` compiles lazily, at the first call, and needs a working backend (Triton
    on GPUs, a C++ compiler on CPUs). If compiling fails, at creation or at the first call,
    this warns once and continues eagerly: slower, never a crashed run. ``enabled=False`` is
    plain eager mode.
    """

    def __init__(self, module: nn.Module, *, enabled: bool = True):
        self.eager = module
        self.module: Callable[..., Any] = module
        self.pending = False  # compiled but not yet called successfully
        if enabled:
            try:
                self.module, self.pending = torch.compile(module), True
            except Exception as exc:  # noqa: BLE001 - any failure means: run eagerly
                self._fall_back(exc)

    def _fall_back(self, exc: Exception) -> None:
        warnings.warn(
            f"torch.compile is not available here ({type(exc).__name__}: {exc}); "
            f"continuing in eager mode",
            RuntimeWarning,
            stacklevel=3,
        )
        self.module, self.pending = self.eager, False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.pending:
            return self.module(*args, **kwargs)
        try:
            out = self.module(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a real error in the batch recurs eagerly
            self._fall_back(exc)
            return self.module(*args, **kwargs)
        self.pending = False
        return out


def is_main_process() -> bool:
    """True unless this is a non-zero rank of an initialised ``torch.distributed`` job."""
    dist = torch.distributed
    return not (dist.is_available() and dist.is_initialized()) or dist.get_rank() == 0


def on_main_process(log: Callable[[str], None] | None) -> Callable[[str], None]:
    """``log`` on rank 0, so a message is printed once per job; elsewhere (or for ``None``) a
    function that says nothing."""
    if log is not None and is_main_process():
        return log
    return lambda _message: None


def unwrap_model(model: nn.Module) -> nn.Module:
    """The model inside a ``DistributedDataParallel`` (or ``torch.compile``) wrapper."""
    model = getattr(model, "module", model)
    return getattr(model, "_orig_mod", model)


def wrap_ddp(model: nn.Module, device: torch.device) -> nn.Module:
    """``DistributedDataParallel``: it copies rank 0's weights to every rank at construction and
    averages the gradients over the ranks during ``backward``, so every rank takes the same step."""
    if isinstance(model, DistributedDataParallel):
        return model
    return DistributedDataParallel(
        model, device_ids=[device.index] if device.type == "cuda" else None
    )


def step_matmul_flops(config: Any, batch: int, seq_len: int, scored: int) -> int:
    """Matmul FLOPs of one MLM training step (forward x 3 for forward + backward).

    Per token and layer: Q, K, V, output projections 8H^2, feed-forward 4HI, attention scores
    and weighted sum 4TH. The LM head adds 2H^2 + 2HV per *scored* position: pass every
    position to count a head that scores them all (``transformers.BertForMaskedLM``), or only
    the masked ones for ours. Model-FLOP utilisation divides this by time and peak FLOP/s.
    """
    h, i, t, v = config.hidden_size, config.intermediate_size, seq_len, config.vocab_size
    encoder = batch * seq_len * config.num_hidden_layers * (8 * h * h + 4 * h * i + 4 * t * h)
    return 3 * (encoder + scored * (2 * h * h + 2 * h * v))
