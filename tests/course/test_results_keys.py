"""Every key of every committed results file, removed and retyped in turn.

A results file's schema is what the chapters read: its shape as committed, recorded in
``mlmcourse/course/results/_shapes.json``. Removing a key or changing its type must be refused
by :func:`read_results` with the file and the key named. Optional: a key that only some rows
of a list hold (the shape marks it), and a value committed as null (not measured in that run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlmcourse.course.results import available_results, read_results
from mlmcourse.utils.schema import shape_of
from tests.clear_errors import clear_error
from tests.file_keys import (
    TOP_LEVEL,
    accepted_or_named,
    get,
    key_paths,
    removed,
    replaced,
    wrong_values,
)

FOLDER = Path(__file__).resolve().parents[2] / "mlmcourse" / "course" / "results"
SHAPES = json.loads((FOLDER / "_shapes.json").read_text())


def test_the_recorded_shapes_are_the_committed_files_shapes():
    committed = {
        name: shape_of(json.loads((FOLDER / f"{name}.json").read_text()))
        for name in available_results()
    }
    assert committed == SHAPES, (
        "a results file changed its keys: if that is intended, record the shapes again with "
        "`python -c 'from mlmcourse.course.results import write_shapes; write_shapes()'`"
    )


def _optional_in_shape(name: str, path: tuple) -> bool:
    """Whether the shape marks the key at ``path`` optional (only some rows hold it)."""
    shape = SHAPES[name]
    for key in path[:-1]:
        shape = shape[0] if isinstance(key, int) else shape.get(key, shape.get(f"{key}?"))
    return isinstance(shape, dict) and f"{path[-1]}?" in shape


@pytest.mark.parametrize("name", available_results())
def test_every_key_of_a_results_file(name, tmp_path):
    data = json.loads((FOLDER / f"{name}.json").read_text())
    path = tmp_path / f"{name}.json"
    for number, key in enumerate(key_paths(data)):
        optional = _optional_in_shape(name, key)
        path.write_text(json.dumps(removed(data, key)))
        accepted_or_named(lambda: read_results(path), f"{name}.json", key, optional=optional)
        value = get(data, key)
        wrongs = wrong_values(value) if value is not None else []
        for wrong in wrongs[number % len(wrongs) :][:1]:  # one per key, each type in turn
            path.write_text(json.dumps(replaced(data, key, wrong)))
            accepted_or_named(lambda: read_results(path), f"{name}.json", key, optional=False)


@pytest.mark.parametrize("name", available_results()[:3])
def test_a_whole_results_file_of_the_wrong_kind_is_named(name, tmp_path):
    path = tmp_path / f"{name}.json"
    good = (FOLDER / f"{name}.json").read_bytes()
    for data in [
        b"",
        good[: len(good) // 2],
        b"\xff\xfe",
        *(json.dumps(v).encode() for v in TOP_LEVEL),
    ]:
        path.write_bytes(data)
        assert str(path) in str(clear_error(read_results, path))
