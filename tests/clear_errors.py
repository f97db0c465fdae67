"""What the property tests mean by "a clear error": the package's own, raised by the package.

A user's mistake must surface as a ``ValueError`` or ``TypeError`` (or a subclass, such as
``mlmcourse.utils.checks.ConfigError``; ``FileNotFoundError`` for a missing path) with a message,
raised by mlmcourse's own code, not an ``IndexError``/``KeyError`` or a torch ``RuntimeError``
from deep inside a library, which says nothing about what the user did wrong.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parents[1] / "mlmcourse"
CLEAR = (ValueError, TypeError, FileNotFoundError)


def _raised_in_package(exc: BaseException) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and Path(frames[-1].filename).resolve().is_relative_to(PACKAGE)


def check_clear(exc: BaseException) -> None:
    """Fail unless ``exc`` is a clear error: right type, a message, raised by mlmcourse."""
    where = "".join(traceback.format_exception(exc)[-6:])
    assert isinstance(exc, CLEAR), f"unclear error type {type(exc).__name__}:\n{where}"
    assert len(str(exc)) > 15, f"error without a real message: {exc!r}"
    assert _raised_in_package(exc), f"raised outside mlmcourse:\n{where}"


def valid_or_clear(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, or ``None`` if it raised a clear error."""
    try:
        return function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - judged by check_clear
        check_clear(exc)
        return None


def clear_error(function: Callable[..., Any], *args: Any, **kwargs: Any) -> BaseException:
    """The clear error ``function(*args, **kwargs)`` must raise."""
    try:
        function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - judged by check_clear
        check_clear(exc)
        return exc
    name = getattr(function, "__name__", type(function).__name__)
    raise AssertionError(f"{name} accepted invalid input: {args!r:.200} {kwargs!r:.200}")
