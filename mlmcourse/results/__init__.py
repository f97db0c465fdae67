"""Measured results of long runs, shipped with the package so every chapter can show them.

A chapter that shows a table from a benchmark or an experiment reads it here, not from the
repository: a learner who opens the notebook in Colab or in an empty folder has only the
installed package. Each file is the JSON the script named in its chapter wrote.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["available_results", "load_results"]


def available_results() -> list[str]:
    """The names of the shipped result files (without ``.json``)."""
    folder = resources.files(__name__)
    return sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))


def load_results(name: str) -> Any:
    """The parsed JSON of one shipped result file, e.g. ``load_results("ddp_cpu")``."""
    path = resources.files(__name__) / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"no shipped results named {name!r}; the package has: {', '.join(available_results())}"
        )
    return json.loads(path.read_text(encoding="utf-8"))
