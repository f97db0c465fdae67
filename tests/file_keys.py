"""Walking the keys of a real file, and corrupting each in turn.

A per-format test takes a real file (the shipped checkpoint's ``config.json``, a
``training_state.pt`` a tiny run wrote, a committed results file), lists every key path with
:func:`key_paths` and, for each, removes it and gives it values of other types
(:func:`wrong_values`). The reader must then either accept the file (the key is optional, and
the test's table says so, with the default it takes) or raise a clear error that names the
file and the key (:func:`assert_names`). A key added to the file later is covered by the same
test.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import torch
import yaml

from tests.clear_errors import clear_error

Path_ = tuple[Any, ...]

# The values a key is replaced by: each of another type than the key's own.
CANDIDATES: tuple[Any, ...] = ("text", 7, 0.5, True, [1], {"x": 1}, None)

# The top-level values a whole file is replaced by (JSON files hold an object).
TOP_LEVEL: tuple[Any, ...] = ([1, 2], "text", 3, None)


def key_paths(data: Any, *, skip: Callable[[Path_], bool] = lambda p: False) -> Iterator[Path_]:
    """Every key path in ``data``: nested dicts' keys, and a list's first item's (``[0]``).

    ``skip(path)`` stops the walk below ``path`` (a value whose insides are data, such as a
    vocabulary, not keys of the format).
    """

    def walk(value: Any, at: Path_) -> Iterator[Path_]:
        if at and skip(at):
            return
        if isinstance(value, dict):
            for key, inner in value.items():
                yield (*at, key)
                yield from walk(inner, (*at, key))
        elif isinstance(value, list | tuple) and value and isinstance(value[0], dict | list):
            yield from walk(value[0], (*at, 0))

    return walk(data, ())


def kind(value: Any) -> str:
    """The JSON type of ``value`` (an int and a float are both numbers; a tuple is a list)."""
    if isinstance(value, bool) or value is None:
        return repr(value) if value is None else "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, torch.Tensor):
        return "tensor"
    return type(value).__name__


def wrong_values(value: Any) -> list[Any]:
    """The :data:`CANDIDATES` of another type than ``value``."""
    return [c for c in CANDIDATES if kind(c) != kind(value)]


def get(data: Any, path: Path_) -> Any:
    for key in path:
        data = data[key]
    return data


def removed(data: Any, path: Path_) -> Any:
    """A deep copy of ``data`` without the key at ``path``."""
    data = copy.deepcopy(data)
    del get(data, path[:-1])[path[-1]]
    return data


def replaced(data: Any, path: Path_, value: Any) -> Any:
    """A deep copy of ``data`` with ``value`` at ``path`` (a tuple on the way becomes a list)."""
    data = copy.deepcopy(data)
    parent = get(data, path[:-1])
    if isinstance(parent, tuple):
        parent = list(parent)
        outer = get(data, path[:-2])
        outer[path[-2]] = parent
    parent[path[-1]] = value
    return data


def assert_names(error: BaseException, file: str, path: Path_) -> None:
    """The message names the file and the key (its last name, or the list it is in)."""
    message = str(error)
    assert file in message, f"the error does not name {file}: {message}"
    names = [str(k) for k in path if not isinstance(k, int)]
    assert names[-1] in message, f"the error does not name the key {path}: {message}"


def accepted_or_named(read: Callable[[], Any], file: str, path: Path_, *, optional: bool) -> str:
    """``read()`` succeeds (only if ``optional``) or raises a clear error naming file and key."""
    try:
        read()
    except Exception:  # noqa: BLE001 - judged below
        error = clear_error(read)
        assert_names(error, file, path)
        return "refused"
    assert optional, f"{file}: {path} was corrupted and the reader accepted it silently"
    return "accepted"


def json_with_key_twice(data: Any, path: Path_) -> str:
    """``data`` as JSON text in which the key at ``path`` is written twice in its object (the
    second time with the same value: a reader must refuse it even then, since it cannot know
    which one the writer meant to keep)."""

    def dump(value: Any, at: Path_) -> str:
        if isinstance(value, dict):
            pairs = [(k, v) for k, v in value.items()]
            if at == path[:-1]:
                pairs.append((path[-1], value[path[-1]]))
            inner = ", ".join(f"{json.dumps(str(k))}: {dump(v, (*at, k))}" for k, v in pairs)
            return "{" + inner + "}"
        if isinstance(value, list | tuple):
            return "[" + ", ".join(dump(v, (*at, i)) for i, v in enumerate(value)) + "]"
        return json.dumps(value)

    return dump(data, ())


def yaml_with_key_twice(data: dict[str, Any], key: str) -> str:
    """A flat YAML mapping with ``key`` written again at the end."""
    return yaml.safe_dump(data, sort_keys=False) + yaml.safe_dump({key: data[key]})
