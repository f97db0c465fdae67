"""Measured results of long runs, shipped with the package so every chapter can show them.

A chapter that shows a table from a benchmark or an experiment reads it here, not from the
repository: a learner who opens the notebook in Colab or in an empty folder has only the
installed package. Each file is the JSON the script named in its chapter wrote.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["available_results", "load_results", "mean_sd", "provenance", "save_results"]


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


def provenance(argv: Sequence[str] | None, seeds: Sequence[int], started: float) -> dict:
    """What every results file records of the run that wrote it: the command, the seeds, the
    versions, the machine and the minutes since ``started`` (a ``time.perf_counter()``)."""
    import platform
    import sys
    from importlib.metadata import version

    import tokenizers
    import torch

    args = list(argv) if argv else sys.argv[1:]
    return {
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *args]),
        "seeds": list(seeds),
        "versions": {
            "mlmcourse": version("mlmcourse"),
            "torch": torch.__version__,
            "tokenizers": tokenizers.__version__,
            "python": platform.python_version(),
        },
        "machine": f"{platform.machine()}, {torch.get_num_threads()} torch thread(s)",
        "minutes": (time.perf_counter() - started) / 60,
    }


def mean_sd(rows: Sequence[dict], keys: Sequence[str]) -> dict[str, dict[str, float]]:
    """``{key: {"mean", "sd"}}`` over ``rows``: the sample standard deviation (0 for one row),
    which is what the chapters quote as "mean ± sd" over seeds."""
    import statistics

    return {
        key: {
            "mean": statistics.fmean(row[key] for row in rows),
            "sd": statistics.stdev(row[key] for row in rows) if len(rows) > 1 else 0.0,
        }
        for key in keys
    }


def save_results(path: str | Path, results: dict) -> Path:
    """Write ``results`` as indented JSON (the form committed under ``mlmcourse/course/results``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return path
