"""Config fields that carry their own help, group and check: one source for every key.

A config is a plain ``@dataclass`` whose fields are made with :func:`option`::

    max_steps: int = option(
        1000, "optimiser steps to train for", check_positive_int, group="optimisation"
    )

From those fields come the validation (:func:`check_options`, :func:`read_kinds`), the
``--help`` text (:func:`options_help`) and the grouping of the keys (:func:`keys_by_group`), so
a key is written down once and the help, the checks and the YAML keys cannot disagree.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import Field, field, fields
from typing import Any

from mlmcourse.utils.checks import ConfigError, as_scalar, is_int, is_number

__all__ = [
    "option",
    "check_options",
    "read_kinds",
    "help_texts",
    "keys_by_group",
    "options_help",
]

Check = Callable[[Any, str], Any]


def option(default: Any, help: str, check: Check | None = None, *, group: str) -> Any:
    """A dataclass field with its help line, its ``--help`` group and its check.

    ``check(value, name)`` raises a clear error for a bad value (see :mod:`mlmcourse.utils.checks`).
    """
    return field(default=default, metadata={"help": help, "group": group, "check": check})


def check_options(config: Any) -> None:
    """Run every field's check, in field order, and keep what it returns (a Python number for
    ``np.float32(0.1)`` or ``torch.tensor(3)``, so the config still writes to JSON and YAML);
    the first bad value raises."""
    for f in fields(config):
        if f.metadata.get("check") is not None:
            setattr(config, f.name, f.metadata["check"](getattr(config, f.name), f.name))


# --- values as YAML gives them ----------------------------------------------------------------

_FLOAT_LITERAL = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _as_float(value: Any) -> float | None:
    if is_number(value):
        try:
            return float(as_scalar(value))  # `learning_rate: 1` is fine
        except OverflowError:  # an int past any float: no number a float key can hold
            return None
    if isinstance(value, str) and _FLOAT_LITERAL.match(value.strip()):
        return float(value)  # PyYAML follows YAML 1.1, where `1e-3` (no dot) is a string
    return None


def _as_bool(value: Any) -> bool | None:
    flag = as_scalar(value)  # NumPy's bools too, never 1 or "yes"
    return flag if flag is True or flag is False else None


def _as_strings(value: Any) -> str | list[str] | None:
    """One string, or a non-empty YAML list of strings (several files, say)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None


# The kind of value each field type takes from YAML: what to call it, and how to read it
# (``None``: not that kind).
_KINDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "bool": ("true or false", _as_bool),
    "int": ("an integer", lambda v: as_scalar(v) if is_int(v) else None),
    "float": ("a number", _as_float),
    "str": ("a string", lambda v: v if isinstance(v, str) else None),
    "str | list[str]": ("a string or a list of strings", _as_strings),
}


def _kind(f: Field) -> str:
    return f.type if isinstance(f.type, str) else f.type.__name__


def read_kinds(config: Any) -> None:
    """Turn each field's value into its field's type, or say which key has the wrong kind.

    YAML gives strings, numbers and booleans: ``1`` for a float key becomes ``1.0`` and the
    string ``1e-3`` a number, but ``"32"`` for an int key or ``1`` for a bool key is an error.
    """
    for f in fields(config):
        value = getattr(config, f.name)
        what, read = _KINDS[_kind(f)]
        converted = read(value)
        if converted is None:
            raise ConfigError(
                f"config key {f.name!r} must be {what}, got {value!r} ({type(value).__name__})"
            )
        setattr(config, f.name, converted)


# --- the documentation ----------------------------------------------------------------------


def help_texts(config_class: type) -> dict[str, str]:
    """Every key of ``config_class`` with its help line."""
    return {f.name: f.metadata["help"] for f in fields(config_class)}


def keys_by_group(config_class: type, groups: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The keys of each group, groups in the order given, keys in field order."""
    grouped: dict[str, list[str]] = {group: [] for group in groups}
    for f in fields(config_class):
        grouped[f.metadata["group"]].append(f.name)
    return {group: tuple(keys) for group, keys in grouped.items()}


def _shown(f: Field) -> str:
    """A default as it is written in YAML: ``true``, ``''``, ``0.0005``."""
    if _kind(f) == "bool":
        return str(f.default).lower()
    return "''" if f.default == "" else str(f.default)


def options_help(config_class: type, groups: Sequence[str]) -> str:
    """Every key with its default and meaning, grouped: the body of ``--help``."""
    by_name = {f.name: f for f in fields(config_class)}
    lines = ["config keys (YAML; default in brackets):"]
    for group, keys in keys_by_group(config_class, groups).items():
        lines.append(f"\n  {group}:")
        for key in keys:
            lines.append(f"    {key} [{_shown(by_name[key])}]")
            indent = " " * 8
            help_line = by_name[key].metadata["help"]
            lines += textwrap.wrap(help_line, 88, initial_indent=indent, subsequent_indent=indent)
    return "\n".join(lines)
