"""Config keys from one source: each field's help, group and check make the --help text,
the grouping and the validation, so adding a key is one line in one place."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pytest

from mlmcourse.pretraining import GROUPS, PretrainConfig
from mlmcourse.training import TrainingConfig
from mlmcourse.utils.checks import WrongTypeError, check_bool, check_choice, is_int, is_number
from mlmcourse.utils.options import check_options, keys_by_group, option, options_help, read_kinds


@dataclass
class Toy:
    steps: int = option(
        3, "how many steps", lambda v, name: check_choice(v, name, (1, 2, 3)), group="b"
    )
    rate: float = option(0.5, "how fast", group="a")
    name: str = option("", "what to call it", group="a")
    loud: bool = option(True, "say it out loud", group="b")

    def __post_init__(self) -> None:
        read_kinds(self)
        check_options(self)


def test_help_lists_every_key_with_its_yaml_default_grouped_in_the_order_given():
    text = options_help(Toy, ["b", "a"])
    assert text.splitlines()[0] == "config keys (YAML; default in brackets):"
    assert text.index("  b:") < text.index("    steps [3]") < text.index("    loud [true]")
    assert text.index("  a:") < text.index("    rate [0.5]") < text.index("    name ['']")
    assert "        say it out loud" in text
    assert keys_by_group(Toy, ["b", "a"]) == {"b": ("steps", "loud"), "a": ("rate", "name")}


def test_values_take_their_field_kind_and_pass_their_check():
    toy = Toy(steps=np.int64(2), rate="1e-3")
    assert (type(toy.steps), toy.rate) == (int, 0.001)  # YAML 1.1 reads `1e-3` as a string
    assert Toy(rate=1).rate == 1.0
    with pytest.raises(ValueError, match=r"config key 'loud' must be true or false, got 1"):
        Toy(loud=1)
    with pytest.raises(ValueError, match=r"config key 'steps' must be an integer, got '2'"):
        Toy(steps="2")
    with pytest.raises(ValueError, match=r"steps must be one of \(1, 2, 3\), got 4"):
        Toy(steps=4)


def test_every_pretraining_key_has_help_a_known_group_and_a_kind():
    for f in fields(PretrainConfig):
        assert f.metadata["help"] and f.metadata["group"] in GROUPS, f.name
        assert f.type in ("int", "float", "str", "bool", "str | list[str]"), f.name
    assert {f.name for f in fields(TrainingConfig)} < {f.name for f in fields(PretrainConfig)}


def test_checks_refuse_bools_as_numbers_and_name_the_key():
    assert is_int(3) and is_int(np.int32(3)) and not is_int(True) and not is_int(np.bool_(True))
    assert is_number(0.5) and is_number(2) and not is_number(False) and not is_number("1")
    assert check_bool(False, "pre_layer_norm") is False
    with pytest.raises(WrongTypeError, match="is_causal must be True or False, got 'yes'"):
        check_bool("yes", "is_causal")
    # Wrong types are TypeErrors, and ValueErrors for code that caught those before the checks.
    assert issubclass(WrongTypeError, TypeError) and issubclass(WrongTypeError, ValueError)
