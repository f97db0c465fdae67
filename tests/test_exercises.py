import pytest
import torch

from mlmcourse.exercises import Case, ExerciseNotPassed, Satisfies, check, grade, values_equal

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
