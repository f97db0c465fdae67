"""Reading a pretraining config: a YAML file, a shipped config's name, or a mapping of keys.

Every way a config file can be wrong gets a message that names the file, the line or the key
(a typo silently ignored would train the wrong model).
"""

from __future__ import annotations

import difflib
import importlib.resources
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from mlmcourse.pretraining.config import PretrainConfig, config_keys
from mlmcourse.utils.checks import ConfigError, WrongTypeError, read_text, repeated_key

__all__ = ["load_config", "load_yaml", "read_yaml_mapping"]


def load_config(
    source: str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> PretrainConfig:
    """A :class:`PretrainConfig` from a YAML file, a shipped config's name, or a mapping.

    ``overrides`` (e.g. from ``--set max_steps=10``) win over the file. An unknown key is an
    error that lists the valid ones (a typo silently ignored would train the wrong model).
    """
    where = None  # the file the keys come from, for the errors
    if isinstance(source, Mapping):
        values = dict(source)
    elif isinstance(source, str | Path):
        where = _config_path(source)
        values = read_yaml_mapping(where)
    else:
        raise TypeError(
            f"load_config takes a YAML path, a shipped config's name or a mapping of keys, got "
            f"{type(source).__name__}: {source!r:.60}"
        )
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(
            f"overrides must be a mapping such as {{'max_steps': 10}}, got "
            f"{type(overrides).__name__}: {overrides!r:.60}"
        )
    values.update(overrides or {})
    try:
        _check_known(values)
        return PretrainConfig(**values)
    except (ConfigError, WrongTypeError) as exc:
        if where is None:
            raise
        also = " (or --set)" if overrides else ""
        raise type(exc)(f"{where}{also}: {exc}") from None


def _check_known(keys: Iterable[Any]) -> None:
    """Refuse unknown keys, suggesting the closest valid one and listing them all."""
    valid = config_keys()
    unknown = [k for k in keys if k not in valid]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(str(key), valid, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ConfigError(
            f"unknown config key(s) {', '.join(hints)}; valid keys are: {', '.join(valid)}"
        )


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """The ``key: value`` mapping of a YAML config file; every way it can be wrong is explained.

    A syntax error names the file, line and column (PyYAML's own message follows); an empty
    file (or one of only comments) is an error rather than a silent run on the defaults,
    since it is far more often the wrong file, or one not saved yet, than a wish.
    """
    text = read_text(path, "config file")
    try:
        loaded = load_yaml(text)
    except RepeatedKeyError as exc:
        raise ConfigError(repeated_key(str(path), exc.key, exc.lines)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{_where(path, exc)}: YAML syntax error: {_problem(exc)}. Each line should read "
            f"`key: value`"
        ) from None
    if loaded is None:
        raise ConfigError(
            f"{path} is empty (no keys). Write the keys to change, e.g. `max_steps: 200`; to "
            f"train on the defaults on purpose, write `{{}}` or use --config world"
        )
    if not isinstance(loaded, dict):
        raise ConfigError(
            f"{path} must hold a YAML mapping of key: value, got {type(loaded).__name__}: "
            f"{loaded!r:.60}; write one `key: value` per line, e.g. `max_steps: 200`"
        )
    return loaded


class RepeatedKeyError(yaml.YAMLError):
    """A mapping gives one key twice; ``lines`` are where (1-based)."""

    def __init__(self, key: Any, lines: list[int]) -> None:
        super().__init__(f"the key {key!r} is given twice (lines {lines[0]} and {lines[1]})")
        self.key, self.lines = key, lines


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error (PyYAML
    keeps the last value silently). Keys brought in by a ``<<`` merge may still be overridden:
    that is what a merge is for."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                earlier = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: PyYAML's own error says so below
                break
            if earlier is not key_node:
                lines = [earlier.start_mark.line + 1, key_node.start_mark.line + 1]
                raise RepeatedKeyError(key, lines)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load``, refusing a key given twice (:class:`RepeatedKeyError`)."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def _where(path: Path, exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    return f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)


def _problem(exc: yaml.YAMLError) -> str:
    """PyYAML's problem, and where the construct it belongs to started if on another line."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and start is not None and mark is not None and start.line != mark.line:
        problem += f" ({context} that starts at line {start.line + 1})"
    return problem


def _config_path(source: str | Path) -> Path:
    """``source`` itself if it is a file, else the shipped config of that name."""
    path = Path(source)
    if path.is_file():
        return path
    shipped = Path(str(importlib.resources.files("mlmcourse") / "assets" / "configs"))
    named = shipped / f"{source}.yaml"
    if named.is_file():
        return named
    names = sorted(p.stem for p in shipped.glob("*.yaml")) if shipped.is_dir() else []
    raise FileNotFoundError(
        f"config {str(source)!r} is neither a file nor a shipped config; shipped configs: "
        f"{', '.join(names) or 'none'}"
    )
