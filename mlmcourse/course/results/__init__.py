"""Measured results of long runs, shipped with the package so every chapter can show them.

A chapter that shows a table from a benchmark or an experiment reads it here, not from the
repository: a learner who opens the notebook in Colab or in an empty folder has only the
installed package. Each file is the JSON the script named in its chapter wrote.

``_shapes.json`` records each file's keys and their types as committed (its schema: what the
chapters read). :func:`load_results` checks a file against it, so a re-run or an edit that lost
a key, or changed its type, is refused with the file and the key named instead of failing in a
chapter's cell; :func:`write_shapes` records the shapes again after an experiment changes.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from mlmcourse.utils.checks import read_json
from mlmcourse.utils.schema import check_keys, shape_of

__all__ = [
    "available_results",
    "describe_run",
    "load_results",
    "mean_sd",
    "provenance",
    "read_results",
    "save_results",
    "write_shapes",
]

SHAPES_NAME = "_shapes.json"


def _folder() -> Path:
    return Path(str(resources.files(__name__)))


def available_results() -> list[str]:
    """The names of the shipped result files (without ``.json``)."""
    names = (p.name for p in _folder().iterdir() if p.name.endswith(".json"))
    return sorted(name[: -len(".json")] for name in names if not name.startswith("_"))


def load_results(name: str) -> Any:
    """The parsed JSON of one shipped result file, e.g. ``load_results("ddp_cpu")``."""
    path = _folder() / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"no shipped results named {name!r}; the package has: {', '.join(available_results())}"
        )
    return read_results(path)


def read_results(path: str | Path) -> dict[str, Any]:
    """A results file, checked against the shape recorded for its name (the file's stem)."""
    path = Path(path)
    data = read_json(path, f"the results {path.stem} (a JSON object)")
    shape = _shapes().get(path.stem)
    if shape is not None:
        command = data.get("command")
        rerun = f" or re-run `{command}`" if isinstance(command, str) else ""
        fix = f"the chapters read this key: restore the committed file{rerun}"
        check_keys(data, shape, str(path), fix=fix)
    return data


@functools.cache
def _shapes() -> dict[str, Any]:
    return read_json(_folder() / SHAPES_NAME, "the shapes of the results")


def write_shapes() -> Path:
    """Record the shape of every results file (after an experiment wrote new keys)."""
    shapes = {name: shape_of(_unchecked(name)) for name in available_results()}
    _shapes.cache_clear()
    return save_results(_folder() / SHAPES_NAME, shapes)


def _unchecked(name: str) -> Any:
    """A results file as it is (what :func:`write_shapes` records)."""
    return read_json(_folder() / f"{name}.json", f"the results {name} (a JSON object)")


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


def describe_run(results: dict) -> str:
    """One line a reader can rerun: the command that wrote ``results`` (a :func:`load_results`
    dict), its seeds, minutes, machine and ``mlmcourse`` version; what it lacks is left out."""
    parts = [results["command"]]
    if results.get("seeds"):
        parts.append(f"seeds {', '.join(map(str, results['seeds']))}")
    if "minutes" in results:
        parts.append(f"{results['minutes']:.1f} minutes")
    if "machine" in results:
        parts.append(str(results["machine"]))
    if "mlmcourse" in results.get("versions", {}):
        parts.append(f"mlmcourse {results['versions']['mlmcourse']}")
    return "; ".join(parts)


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
