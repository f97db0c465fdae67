"""Classroom exercises: run a learner's function against reference cases and say what went wrong.

A chapter defines a list of :class:`Case` objects and calls :func:`check` on the learner's
function. The feedback names the first failing case with its input, the expected value and what
the function returned (or raised), which is what a learner needs to fix it, and never a
traceback from deep inside the checker.

An experiment exercise (predict, change one thing, run, measure, explain) has no single right
value: the learner's function runs the experiment and returns what it measured, and the case
expects a :class:`Satisfies`, a property of the outcome in words (the direction of an effect,
a bound) with the test that decides it.

Each exercise ends with a graded cell, ``grade(fn, CASES, points=N)``: it gives the same
feedback and evaluates to the points earned. That number is what nbgrader's autograder reads as
the cell's score, and a student notebook whose exercises are still the stubs nbgrader writes
(``raise NotImplementedError()``) runs top to bottom: the check says "not solved yet" and
scores 0 instead of stopping the notebook with an error. Where the reference solutions must
pass (the book build, CI's run of the instructor notebooks), ``MLMCOURSE_STRICT_EXERCISES=1``
turns a score below full marks into an error.

A graded cell reloads this module before it grades (``importlib.reload``), so a submission that
replaced ``grade``, ``check`` or ``values_equal`` is graded by the originals, and an answer
counts only when it is of the expected kind: a number for a number, a string for a string,
plain data for an experiment. An object that claims to equal anything is not an answer.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import reprlib
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from mlmcourse.utils.checks import check_number

__all__ = ["Case", "ExerciseNotPassed", "Satisfies", "check", "grade", "values_equal"]

STRICT_ENV = "MLMCOURSE_STRICT_EXERCISES"


class ExerciseNotPassed(AssertionError):
    """A graded check fell short in strict mode (a reference solution that no longer passes)."""


class _NotSolvedYet(Exception):
    """The learner's function is still the stub: it raised NotImplementedError."""


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


@dataclass(frozen=True)
class Satisfies:
    """An expected outcome that is a property, not a value: ``test(got)`` must be true.

    ``description`` says the property in words ("fewer pieces per word with the larger
    vocabulary"); the feedback prints it as what was expected, next to what was measured.
    """

    description: str
    test: Callable[[Any], bool]

    def __post_init__(self) -> None:
        if not isinstance(self.description, str) or not self.description.strip():
            raise ValueError("Satisfies needs a description of the property, in words")
        if not callable(self.test):
            raise TypeError(f"Satisfies needs a test function, got {type(self.test).__name__}")

    def holds(self, got: Any) -> tuple[bool, str]:
        """Whether the measured outcome has the property, and a note when it cannot be tested."""
        return _holds(self.test, got)


def _holds(test: Callable[[Any], bool], got: Any) -> tuple[bool, str]:
    """``test`` on a plain copy of ``got``: an object that says yes to every comparison fails."""
    try:
        plain = _plain_data(got)
    except TypeError as exc:
        return False, f" (not a result: {exc})"
    try:
        return bool(test(plain)), ""
    except Exception as exc:  # a result of the wrong shape: feedback, not a crash
        return False, f" (could not test it: {type(exc).__name__}: {exc})"


def _is_property(expected: Any) -> bool:
    """A :class:`Satisfies`, also one made before this module was reloaded (a graded cell
    reloads it, and the cases defined earlier keep the class they were made with)."""
    kind = type(expected)
    return isinstance(expected, Satisfies) or (
        kind.__name__ == "Satisfies" and kind.__module__ == __name__ and callable(expected.test)
    )


def _plain_data(value: Any) -> Any:
    """``value`` rebuilt from plain Python values (numbers, strings, lists, tuples, dicts, sets,
    None), torch tensors and numpy arrays; a ``TypeError`` for anything else.

    What an experiment returns is tested on this copy, so a result is what it holds, and an
    object that overrides ``==`` or ``<`` to agree with every test is refused.
    """
    if value is None or type(value) in (bool, int, float, str):
        return value
    if _is_plain_tensor(value) or _is_plain_array(value):
        return value
    if type(value).__name__ == "bool_" and type(value).__module__ == "numpy":
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, Mapping):
        return {_plain_data(k): _plain_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_plain_data(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, AbstractSet):
        items = {_plain_data(v) for v in value}
        return items if isinstance(value, set) else frozenset(items)
    raise TypeError(f"a {type(value).__name__}, not plain data (numbers, strings, lists, dicts)")


def _is_plain_tensor(value: Any) -> bool:
    """A torch tensor, not a subclass that could redefine what comparing it means."""
    torch = sys.modules.get("torch")
    return torch is not None and type(value) in (torch.Tensor, torch.nn.Parameter)


def _is_plain_array(value: Any) -> bool:
    """A numpy array of numbers (not of objects, whose comparisons are theirs to decide)."""
    np = sys.modules.get("numpy")
    return np is not None and type(value) is np.ndarray and not value.dtype.hasobject


def _short(value: Any) -> str:
    """One line for a case's input or result: big tensors by shape, models by class name."""
    try:
        import torch

        if isinstance(value, torch.Tensor) and value.numel() > 24:
            return f"tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
        if isinstance(value, torch.nn.Module):  # its repr is one line per layer
            return f"<{type(value).__name__}>"
        if isinstance(value, Mapping) and any(isinstance(v, torch.Tensor) for v in value.values()):
            return "{" + ", ".join(f"{k!r}: {_short(v)}" for k, v in value.items()) + "}"  # a batch
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return _repr.repr(value)


def values_equal(expected: Any, got: Any, *, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Compare answers the way a teacher would: floats and tensors approximately, containers
    deeply, and only answers of the expected kind (a tensor for a tensor, a number for a number,
    a string for a string), so an object whose ``==`` says yes to anything is refused."""
    torch = sys.modules.get("torch")
    if torch is not None and (isinstance(expected, torch.Tensor) or isinstance(got, torch.Tensor)):
        if not (_is_plain_tensor(expected) and _is_plain_tensor(got)):
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
        if e.shape != g.shape or e.dtype.hasobject or g.dtype.hasobject:
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
    return _same_value(expected, got)


def _same_value(expected: Any, got: Any) -> bool:
    """``expected == got`` decided by the expected value's kind, never by ``got``'s ``__eq__``."""
    if expected is None:
        return got is None
    if isinstance(expected, str):
        return isinstance(got, str) and str.__eq__(expected, got) is True
    if isinstance(expected, numbers.Number):
        if not isinstance(got, numbers.Number) or type(got).__name__ == "bool_":
            return False
        return _plain_number(expected) == _plain_number(got)
    if isinstance(expected, AbstractSet):
        if not isinstance(got, AbstractSet):
            return False
        try:
            return _plain_data(set(expected)) == _plain_data(set(got))
        except TypeError:  # an element that is not plain data
            return False
    return type(got) is type(expected) and bool(expected == got)


def _plain_number(value: numbers.Number) -> int | float | complex:
    """A number as the builtin it converts to: its own ``==`` plays no part."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return complex(value)


def _call_quietly(fn: Callable[..., Any], case: Case) -> Any:
    """Call the learner's function with its warnings and stderr sent to stdout.

    nbgrader gives 0 points to a graded cell that wrote anything to stderr, whatever its
    score; a harmless warning from torch must not cost a correct answer its points.
    """
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(sys.stdout):
        warnings.simplefilter("always")
        try:
            return fn(*case.args, **dict(case.kwargs))
        finally:
            for warning in caught:
                print(f"  (warning from {case.describe_input()}: {warning.message})")


def _run_case(
    fn: Callable[..., Any], case: Case, equal=values_equal, holds=_holds
) -> tuple[bool, str]:
    """Run one case; return (passed, what the function produced, in words).

    What decides the outcome is bound before the learner's function runs (the comparisons as
    default arguments, when this module loads): a function that replaces them while it runs
    changes nothing here.
    """
    expects_error = isinstance(case.expected, type) and issubclass(case.expected, BaseException)
    is_property = _is_property(case.expected)
    try:
        got = _call_quietly(fn, case)
    except NotImplementedError as exc:  # the stub that nbgrader leaves in a student notebook
        if expects_error and isinstance(exc, case.expected):
            return True, "raised NotImplementedError"
        raise _NotSolvedYet from exc
    except Exception as exc:  # the learner's error is feedback, not a crash
        if expects_error and isinstance(exc, case.expected):
            return True, f"raised {type(exc).__name__}"
        return False, f"raised {type(exc).__name__}: {exc}"
    if expects_error:
        return False, f"returned {_short(got)} instead of raising"
    if is_property:
        passed, note = holds(case.expected.test, got)
        return passed, _short(got) + note
    return equal(case.expected, got), _short(got)


def check(fn: Callable[..., Any], cases: Sequence[Case], *, quiet: bool = False) -> bool:
    """Run ``fn`` on every case, print friendly feedback, and return whether all passed.

    Stops at the first failing case, since later ones usually fail for the same reason. A
    function that raises ``NotImplementedError`` (an exercise stub) is reported as not solved
    yet rather than as a failure with an error message.
    """
    if not callable(fn):
        raise TypeError(f"check() needs the function to test, got {type(fn).__name__}")
    if not cases:
        raise ValueError("check() needs at least one Case")
    name = getattr(fn, "__name__", "your function")
    run_case, report = _run_case, _print_failure  # bound now: the learner's code runs next
    for i, case in enumerate(cases, start=1):
        try:
            passed, got = run_case(fn, case)
        except _NotSolvedYet:
            if not quiet:
                print(
                    f"… {name}: not solved yet. Replace `raise NotImplementedError()` in its "
                    "cell with your code, run that cell, then run this one again."
                )
            return False
        if not passed:
            if not quiet:
                report(name, i, case, got, len(cases))
            return False
    if not quiet:
        print(f"✓ {name}: all {len(cases)} cases passed.")
    return True


def _print_failure(name: str, i: int, case: Case, got: str, n_cases: int) -> None:
    label = f" ({case.name})" if case.name else ""
    if isinstance(case.expected, type) and issubclass(case.expected, BaseException):
        expected = f"raises {case.expected.__name__}"
    elif _is_property(case.expected):
        expected = case.expected.description
    else:
        expected = _short(case.expected)
    print(
        f"✗ {name}: case {i} of {n_cases}{label} failed.\n"
        f"  input:    {case.describe_input()}\n"
        f"  expected: {expected}\n"
        f"  got:      {got}"
    )


def grade(fn: Callable[..., Any], cases: Sequence[Case], *, points: float = 1) -> float:
    """The graded check of an exercise: :func:`check`'s feedback, then the points earned.

    All points when every case passes, else 0. Used as the last line of a graded cell, the
    returned number is the cell's output, which nbgrader's autograder takes as the score.
    With ``MLMCOURSE_STRICT_EXERCISES=1`` in the environment, anything short of full marks
    raises :class:`ExerciseNotPassed`, so a reference solution that breaks fails the build.
    """
    points = check_number(points, "points", low=0, low_open=True)
    earned = float(points) if check(fn, cases) else 0.0
    if earned < points and os.environ.get(STRICT_ENV, "") not in ("", "0"):
        name = getattr(fn, "__name__", "the function")
        raise ExerciseNotPassed(
            f"{name} scored {earned:g} of {points:g} points, and {STRICT_ENV} is set: the "
            "reference solution of this exercise must pass all its cases"
        )
    return earned
