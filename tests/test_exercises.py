import pytest
import torch

from mlmcourse.exercises import Case, ExerciseNotPassed, check, grade, values_equal

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
    for points in (0, -1, True, "1"):
        with pytest.raises(ValueError, match="points > 0"):
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
