"""The keys of a file: a small schema language, and one check that names the file and key.

A reader of a JSON, YAML or ``torch.save`` file checks what it parsed with :func:`check_keys`
before it uses a key, so a file that lost a key, or holds a value of the wrong type, gives a
:class:`~mlmcourse.utils.checks.FileFormatError` that names the file, the key path
(``history.eval[0].eval_loss``) and what to do, never a ``KeyError`` from deep inside.

A schema is a type name (``"int"``, ``"number"``, ``"string"``, ``"bool"``, ``"object"``,
``"list"``, ``"tensor"``, ``"null"``, ``"any"``, or several joined by ``|``), a dict of keys
(a key ending in ``?`` may be missing; ``"*"`` gives the schema of every other key) or a
one-item list (every item of a list). It is plain JSON, so a file's shape can be stored
(:func:`shape_of` computes it from a good file).
"""

from __future__ import annotations

import sys
from typing import Any

from mlmcourse.utils.checks import FileFormatError, is_int, is_number, shown

__all__ = ["check_keys", "describe", "key_path", "shape_of"]


_TYPES = {
    "int": is_int,
    "number": is_number,
    "string": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list | tuple),
    "tensor": lambda v: "torch" in sys.modules and isinstance(v, sys.modules["torch"].Tensor),
    "null": lambda v: v is None,
    "any": lambda v: True,
}
_NAMES = {"int": "an int", "number": "a number", "string": "a string", "bool": "true or false",
          "object": "an object", "list": "a list", "tensor": "a tensor", "null": "null",
          "any": "anything"}  # fmt: skip


def key_path(keys: tuple[Any, ...]) -> str:
    """``("history", "eval", 0, "eval_loss")`` as ``history.eval[0].eval_loss``."""
    text = ""
    for key in keys:
        if isinstance(key, int):
            text += f"[{key}]"
        elif isinstance(key, str) and key.isidentifier():
            text += f".{key}" if text else key
        else:
            text += f"[{key!r}]"
    return text or "(the whole file)"


def describe(schema: Any) -> str:
    """What a schema asks for, in words: ``an int``, ``an object with the keys a, b``."""
    if isinstance(schema, dict):
        keys = [k.rstrip("?") for k in schema if k != "*"]
        return f"an object with the keys {', '.join(keys)}" if keys else "an object"
    if isinstance(schema, list):
        return f"a list, each item {describe(schema[0])}"
    return " or ".join(_NAMES[name] for name in schema.split("|"))


def _fits(value: Any, schema: Any) -> bool:
    if isinstance(schema, dict):
        return isinstance(value, dict)
    if isinstance(schema, list):
        return isinstance(value, list | tuple)
    return any(_TYPES[name](value) for name in schema.split("|"))


def check_keys(data: Any, schema: Any, source: str, *, fix: str, at: tuple = ()) -> None:
    """Refuse ``data`` (a file's parsed content) unless it has ``schema``'s keys and types.

    The error names ``source`` (the file), the key (``history.eval[0].eval_loss``), what it
    should be and what it is, and ends with ``fix``: what to do about it.
    """
    if not _fits(data, schema):
        where = f"key {key_path(at)}" if at else "the file"
        raise FileFormatError(
            f"{source}: {where} must be {describe(schema)}, got {_kind(data)}; {fix}"
        )
    if isinstance(schema, list):
        for index, item in enumerate(data):
            check_keys(item, schema[0], source, fix=fix, at=(*at, index))
    elif isinstance(schema, dict):
        for key, inner in schema.items():
            name = key.rstrip("?")
            if key == "*":
                for other in (k for k in data if k not in schema and f"{k}?" not in schema):
                    check_keys(data[other], inner, source, fix=fix, at=(*at, other))
            elif name in data:
                check_keys(data[name], inner, source, fix=fix, at=(*at, name))
            elif not key.endswith("?"):
                raise FileFormatError(
                    f"{source}: key {key_path((*at, name))} is missing (it should be "
                    f"{describe(inner)}); {fix}"
                )


def _kind(value: Any) -> str:
    """What a file held, in words: ``a string: 'x'``, ``an object``, ``nothing (empty)``."""
    if isinstance(value, dict | list | tuple):
        return f"a {'object' if isinstance(value, dict) else 'list'} of {len(value)} item(s)"
    return "null" if value is None else shown(value)


def shape_of(data: Any) -> Any:
    """The schema that ``data`` has (see :func:`check_keys`): every key it holds is required,
    with its type; a list's items share one schema (a key some items lack is optional)."""
    if isinstance(data, dict):
        return {str(k): shape_of(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        items = [shape_of(item) for item in data]
        return [_merge(items) if items else "any"]
    if data is None:
        return "any"  # a value not measured in this run may be one in the next
    return "bool" if isinstance(data, bool) else "number" if is_number(data) else "string"


def _merge(shapes: list[Any]) -> Any:
    """One schema that every schema in ``shapes`` fits (items of one list)."""
    if all(isinstance(s, dict) for s in shapes):
        names = [k for s in shapes for k in s]
        keys = list(dict.fromkeys(names))
        return {
            (k if all(k in s for s in shapes) else f"{k}?"): _merge(
                [s[k] for s in shapes if k in s]
            )
            for k in keys
        }
    if all(isinstance(s, list) for s in shapes):
        return [_merge([s[0] for s in shapes])]
    if all(s == shapes[0] for s in shapes):
        return shapes[0]
    return "any"
