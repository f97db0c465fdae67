"""Classroom exercises: run a learner's function against reference cases and say what went wrong.

A chapter defines a list of :class:`Case` objects and calls :func:`check` on the learner's
function. The feedback names the first failing case with its input, the expected value and what
the function returned (or raised), which is what a learner needs to fix it, and never a
traceback from deep inside the checker.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Case", "check", "values_equal"]

_repr = reprlib.Repr()
_repr.maxstring = 120
_repr.maxother = 200
_repr.maxlist = 12


@dataclass(frozen=True)
class Case:
    """One reference case: call ``fn(*args, **kwargs)`` and expect ``expected``.

    ``expected`` may also be an exception class, for cases where the right answer is an error.
    """

    args: tuple = ()
    expected: Any = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""

    def describe_input(self) -> str:
        parts = [_short(a) for a in self.args] + [
            f"{k}={_short(v)}" for k, v in self.kwargs.items()
        ]
        return ", ".join(parts)


def _short(value: Any) -> str:
    try:
        import torch

        if isinstance(value, torch.Tensor) and value.numel() > 24:
            return f"tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return _repr.repr(value)


def values_equal(expected: Any, got: Any, *, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Compare answers the way a teacher would: floats and tensors approximately, containers deeply."""
    try:
        import torch
    except ImportError:  # pragma: no cover
        torch = None
    if torch is not None and (isinstance(expected, torch.Tensor) or isinstance(got, torch.Tensor)):
        if not (isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor)):
            return False
        if expected.shape != got.shape:
            return False
        if expected.is_floating_point() or got.is_floating_point():
            return torch.allclose(got.double().cpu(), expected.double().cpu(), rtol=rtol, atol=atol)
        return torch.equal(got.cpu(), expected.cpu())
    if (
        hasattr(expected, "__array__")
        and hasattr(got, "__array__")
        and not isinstance(expected, str)
    ):
        import numpy as np

        e, g = np.asarray(expected), np.asarray(got)
        if e.shape != g.shape:
            return False
        if np.issubdtype(e.dtype, np.floating) or np.issubdtype(g.dtype, np.floating):
            return bool(np.allclose(g, e, rtol=rtol, atol=atol))
        return bool(np.array_equal(g, e))
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, float) or isinstance(got, float):
        if not isinstance(got, int | float) or not isinstance(expected, int | float):
            return False
        return math.isclose(got, expected, rel_tol=rtol, abs_tol=atol)
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping) or set(expected) != set(got):
            return False
        return all(values_equal(expected[k], got[k], rtol=rtol, atol=atol) for k in expected)
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        if not isinstance(got, Sequence) or isinstance(got, str) or len(got) != len(expected):
            return False
        return all(
            values_equal(e, g, rtol=rtol, atol=atol) for e, g in zip(expected, got, strict=True)
        )
    return expected == got


def _run_case(fn: Callable[..., Any], case: Case) -> tuple[bool, str]:
    """Run one case; return (passed, what the function produced, in words)."""
    expects_error = isinstance(case.expected, type) and issubclass(case.expected, BaseException)
    try:
        got = fn(*case.args, **dict(case.kwargs))
    except Exception as exc:  # the learner's error is feedback, not a crash
        if expects_error and isinstance(exc, case.expected):
            return True, f"raised {type(exc).__name__}"
        return False, f"raised {type(exc).__name__}: {exc}"
    if expects_error:
        return False, f"returned {_short(got)} instead of raising"
    return values_equal(case.expected, got), _short(got)


def check(fn: Callable[..., Any], cases: Sequence[Case], *, quiet: bool = False) -> bool:
    """Run ``fn`` on every case, print friendly feedback, and return whether all passed.

    Stops at the first failing case, since later ones usually fail for the same reason.
    """
    if not callable(fn):
        raise TypeError(f"check() needs the function to test, got {type(fn).__name__}")
    if not cases:
        raise ValueError("check() needs at least one Case")
    name = getattr(fn, "__name__", "your function")
    for i, case in enumerate(cases, start=1):
        passed, got = _run_case(fn, case)
        if not passed:
            if not quiet:
                label = f" ({case.name})" if case.name else ""
                expected = (
                    f"raises {case.expected.__name__}"
                    if isinstance(case.expected, type) and issubclass(case.expected, BaseException)
                    else _short(case.expected)
                )
                print(
                    f"✗ {name}: case {i} of {len(cases)}{label} failed.\n"
                    f"  input:    {case.describe_input()}\n"
                    f"  expected: {expected}\n"
                    f"  got:      {got}"
                )
            return False
    if not quiet:
        print(f"✓ {name}: all {len(cases)} cases passed.")
    return True
