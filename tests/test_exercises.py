import pytest
import torch

from mlmcourse.exercises import Case, check, values_equal

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
