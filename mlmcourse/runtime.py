"""Where code runs and how it is made repeatable: device choice, seeding, compile tracing.

Chapters call these two functions so that the same notebook uses a GPU when there is one and
gives the same numbers on every run.
"""

from __future__ import annotations

import os
import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported lazily so `import mlmcourse` stays fast
    import torch


def get_device(prefer: str | None = None) -> torch.device:
    """Return the best available device: CUDA, then Apple's MPS, then CPU.

    ``prefer`` (or the ``MLMCOURSE_DEVICE`` environment variable) forces a device such as
    ``"cpu"``; asking for one that is not available is an error rather than a silent fallback.
    """
    import torch

    prefer = prefer or os.environ.get("MLMCOURSE_DEVICE")
    if prefer:
        device = torch.device(prefer)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"device {prefer!r} was requested but CUDA is not available")
        if device.type == "mps" and not _mps_available():
            raise RuntimeError(f"device {prefer!r} was requested but MPS is not available")
        return device
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def _mps_available() -> bool:
    import torch

    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def set_seed(seed: int) -> None:
    """Seed Python's, NumPy's and torch's generators (all devices) so a run can be repeated.

    Code that needs its own stream of randomness should still take a ``torch.Generator``;
    this only fixes the global state that layers such as dropout draw from.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device


def is_compiling() -> bool:
    """True while ``torch.compile`` traces our code.

    Input checks that read tensor values back (``int(ids.max())``) break the compiled graph,
    so the models skip them while tracing; eager mode, where users make mistakes, keeps them.
    """
    import torch

    compiler = getattr(torch, "compiler", None)  # torch.compiler.is_compiling: torch >= 2.3
    return bool(getattr(compiler, "is_compiling", lambda: False)())
