import pytest
import torch

from mlmcourse.course.exercises import (
    Case,
    ExerciseNotPassed,
    Satisfies,
    check,
    grade,
    values_equal,
)

CASES = [Case(args=(2, 3), expected=5), Case(args=(-1, 1), expected=0, name="opposites")]


def test_all_passed_message(capsys):
    assert check(lambda a, b: a + b, CASES) is True
    assert "all 2 cases passed" in capsys.readouterr().out


def test_first_failing_case_is_reported_with_input_expected_and_got(capsys):
    def add(a, b):
        return a - b

    assert check(add, CASES) is False
    out = capsys.readouterr().out
    assert "case 1 of 2" in out
    assert "input:    2, 3" in out
    assert "expected: 5" in out
    assert "got:      -1" in out


def test_an_exception_in_the_learners_code_is_feedback_not_a_crash(capsys):
    def broken(a, b):
        raise KeyError("oops")

    assert check(broken, CASES) is False
    assert "raised KeyError" in capsys.readouterr().out


def test_expected_exceptions():
    def strict(x):
        if x < 0:
            raise ValueError("negative")
        return x

    cases = [Case(args=(1,), expected=1), Case(args=(-1,), expected=ValueError)]
    assert check(strict, cases, quiet=True)
    assert not check(lambda x: x, cases, quiet=True)


def test_values_equal_handles_tensors_floats_and_containers():
    assert values_equal(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-8]))
    assert not values_equal(torch.tensor([1, 2]), torch.tensor([1, 3]))
    assert not values_equal(torch.tensor([1, 2]), [1, 2])
    assert values_equal({"a": [0.1 + 0.2]}, {"a": [0.3]})
    assert not values_equal([1, 2], [1, 2, 3])
    assert not values_equal(True, 1)


def test_check_rejects_misuse():
    with pytest.raises(TypeError):
        check("not a function", CASES)
    with pytest.raises(ValueError):
        check(lambda: None, [])


def _stub(a, b):
    raise NotImplementedError()


def test_a_stub_is_not_solved_yet_rather_than_an_error(capsys):
    assert check(_stub, CASES) is False
    out = capsys.readouterr().out
    assert "not solved yet" in out and "raised" not in out


def test_an_expected_not_implemented_error_still_counts_as_a_pass():
    def refuses(x):
        raise NotImplementedError("no")

    assert check(refuses, [Case(args=(1,), expected=NotImplementedError)], quiet=True)


def test_grade_returns_the_points_earned(capsys, monkeypatch):
    monkeypatch.delenv("MLMCOURSE_STRICT_EXERCISES", raising=False)
    assert grade(lambda a, b: a + b, CASES, points=2) == 2.0
    assert grade(lambda a, b: a - b, CASES, points=2) == 0.0
    assert grade(_stub, CASES, points=2) == 0.0
    assert "not solved yet" in capsys.readouterr().out


def test_strict_mode_turns_a_shortfall_into_an_error(monkeypatch):
    monkeypatch.setenv("MLMCOURSE_STRICT_EXERCISES", "1")
    assert grade(lambda a, b: a + b, CASES) == 1.0
    with pytest.raises(ExerciseNotPassed, match="scored 0 of 1 points"):
        grade(_stub, CASES)
    monkeypatch.setenv("MLMCOURSE_STRICT_EXERCISES", "0")
    assert grade(_stub, CASES) == 0.0


def test_grade_rejects_bad_points():
    for points in (0, -1, True, "1", float("inf"), float("nan")):
        with pytest.raises(ValueError, match="points must be"):
            grade(lambda a, b: a + b, CASES, points=points)


def test_a_learners_warnings_and_stderr_go_to_stdout(capsys, monkeypatch):
    """nbgrader scores a graded cell that wrote to stderr 0, however right the answer."""
    import sys
    import warnings

    monkeypatch.delenv("MLMCOURSE_STRICT_EXERCISES", raising=False)

    def noisy(a, b):
        warnings.warn("this is deprecated", UserWarning, stacklevel=1)
        print("debug output", file=sys.stderr)
        return a + b

    assert grade(noisy, CASES) == 1.0
    out, err = capsys.readouterr()
    assert err == ""
    assert "this is deprecated" in out and "debug output" in out


def test_an_experiment_is_checked_against_a_property_in_words(capsys):
    fewer = Satisfies(
        "fewer pieces per word with the larger vocabulary", lambda r: r[1000] < r[100]
    )
    cases = [Case(args=([100, 1000],), expected=fewer, name="vocabulary size")]

    def measured(sizes):
        return {100: 2.1, 1000: 1.4}

    def backwards(sizes):
        return {100: 1.2, 1000: 1.4}

    assert check(measured, cases)
    assert not check(backwards, cases)
    out = capsys.readouterr().out
    assert "expected: fewer pieces per word with the larger vocabulary" in out
    assert "got:      {100: 1.2, 1000: 1.4}" in out


def test_an_outcome_of_the_wrong_shape_is_feedback_not_a_crash(capsys):
    cases = [Case(expected=Satisfies("a dict of two rates", lambda r: r[0.15] > r[0.4]))]
    assert not check(lambda: [0.8, 0.7], cases)
    assert "could not test it: TypeError" in capsys.readouterr().out


def test_satisfies_rejects_misuse():
    with pytest.raises(ValueError, match="description"):
        Satisfies(" ", lambda r: True)
    with pytest.raises(TypeError, match="test function"):
        Satisfies("positive", 0.5)


def test_a_model_and_a_batch_are_described_in_one_line(capsys):
    model = torch.nn.Linear(3, 2)
    batch = {"input_ids": torch.zeros(4, 30, dtype=torch.long), "labels": torch.ones(2)}
    assert not check(lambda m, b: 1, [Case(args=(model, batch), expected=2)])
    out = capsys.readouterr().out
    assert (
        "input:    <Linear>, {'input_ids': tensor(shape=(4, 30), dtype=torch.int64), 'labels': tensor([1., 1.])}"
        in out
    )


class _AlwaysEqual:
    """What a learner might return to pass any check: equal to, and ordered around, anything."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    __hash__ = object.__hash__

    def __getitem__(self, key):
        return self


class _EqualInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class _EqualStr(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def test_an_object_that_equals_anything_is_not_an_answer():
    anything = _AlwaysEqual()
    for expected in (3, "an", None, 0.5, [1, 2], {"a": 1}, (("x", 0.6),), {1, 2}, torch.ones(2)):
        assert not values_equal(expected, anything), expected
    assert not values_equal(29, _EqualInt(3))
    assert not values_equal("an", _EqualStr("a"))
    assert not values_equal([1, "a"], [_EqualInt(2), _EqualStr("b")])
    assert not values_equal({"a": 1}, {"a": anything})
    assert values_equal(3, _EqualInt(3)) and values_equal("an", _EqualStr("an"))  # what they hold

    class EqualTensor(torch.Tensor):
        pass

    assert not values_equal(torch.ones(2), torch.zeros(2).as_subclass(EqualTensor))


def test_honest_answers_of_other_numeric_types_still_pass():
    import numpy as np

    assert values_equal(2, np.int64(2)) and values_equal(2, 2.0) and values_equal(2, np.float32(2))
    assert values_equal(0.5, np.float64(0.5)) and values_equal(2.0, 2)
    assert values_equal((1, 2), [1, 2]) and values_equal({1, 2}, frozenset({2, 1}))
    assert values_equal(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    assert not values_equal(2, np.int64(3)) and not values_equal(1, np.True_)


def test_an_experiment_that_says_yes_to_every_test_fails(capsys):
    cases = [Case(expected=Satisfies("a rate below 0.5", lambda r: r["rate"] < 0.5))]
    assert not check(lambda: _AlwaysEqual(), cases)
    assert not check(lambda: {"rate": _AlwaysEqual()}, cases)
    assert "not a result" in capsys.readouterr().out
    import numpy as np

    assert check(lambda: {"rate": np.float32(0.25)}, cases, quiet=True)  # numpy numbers are fine


def test_cases_made_before_the_checker_is_reloaded_still_check():
    """A graded cell reloads mlmcourse.course.exercises; the cases defined earlier keep their class."""
    import importlib

    import mlmcourse.course.exercises as exercises

    cases = [
        Case(args=(2, 3), expected=5),
        Case(args=(1, 1), expected=Satisfies("positive", lambda got: got > 0)),
    ]
    saved = dict(vars(exercises))
    try:
        fresh = importlib.reload(exercises)
        assert fresh.Satisfies is not Satisfies
        assert fresh.grade(lambda a, b: a + b, cases, points=2) == 2.0
        assert fresh.grade(lambda a, b: -1, cases[1:], points=2) == 0.0
    finally:
        vars(exercises).clear()
        vars(exercises).update(saved)


def test_replacing_the_comparison_while_the_function_runs_gains_nothing():
    import mlmcourse.course.exercises as exercises

    saved = dict(vars(exercises))

    def add(a, b):
        exercises.values_equal = lambda *args, **kwargs: True
        exercises._holds = lambda *args, **kwargs: (True, "")
        return 5  # the first case's answer, whatever the input

    try:
        assert not check(add, CASES, quiet=True)
    finally:
        vars(exercises).clear()
        vars(exercises).update(saved)
