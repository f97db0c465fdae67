"""mlmcourse: masked language modeling from scratch, checked against the reference.

The package behind the mlmcourse book. Each module matches one chapter's idea. The names a
learner uses first are here, and importing the package is cheap: torch is only loaded when one
of them is used.

    import mlmcourse

    world = mlmcourse.load_checkpoint(mlmcourse.shipped_checkpoint("world"))
    mlmcourse.fill_mask(world.model, world.tokenizer, "Tival is in [MASK] .")
"""

from importlib import import_module
from typing import Any

from mlmcourse.utils.runtime import get_device, set_seed

__version__ = "0.3.0"

# Each name, lazily, from the module that holds it.
_LAZY = {
    "load_checkpoint": "mlmcourse.heads.auto",  # any of our checkpoints, any head
    "shipped_checkpoint": "mlmcourse.checkpoint.files",  # the models the wheel ships
    "from_pretrained": "mlmcourse.interop.pretrained",  # a Hugging Face checkpoint
    "fill_mask": "mlmcourse.tasks.fill_mask",
}

__all__ = ["__version__", "get_device", "set_seed", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'mlmcourse' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
