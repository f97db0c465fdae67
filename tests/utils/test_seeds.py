"""Seeds: one rule (check_seed) for every seed, and the rules every seed setting follows."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mlmcourse.tasks.ner.batches import word_dropout
from mlmcourse.utils.checks import MAX_SEED, ConfigError, WrongTypeError, check_seed
from mlmcourse.utils.runtime import seeded_generator, set_seed
from tests.clear_errors import clear_error


@pytest.mark.parametrize("seed", [0, 7, MAX_SEED, np.int64(7), np.uint32(7), torch.tensor(7)])
def test_a_seed_is_any_int_up_to_the_largest(seed):
    assert check_seed(seed) == int(seed)
    assert isinstance(check_seed(seed), int)
    set_seed(seed)
    assert seeded_generator(seed).initial_seed() == int(seed)


@pytest.mark.parametrize(
    "seed, error",
    [
        (MAX_SEED + 1, ConfigError),
        (2**64, ConfigError),
        (-1, ConfigError),
        (1.0, WrongTypeError),
        (True, WrongTypeError),
        ("0", WrongTypeError),
        (torch.tensor([1, 2]), WrongTypeError),
    ],
)
def test_a_seed_out_of_range_or_of_another_type_is_named(seed, error):
    for function in (check_seed, set_seed, seeded_generator):
        raised = clear_error(function, seed)
        assert isinstance(raised, error) and "seed" in str(raised)


def test_a_seed_past_the_largest_never_reaches_torch():
    from mlmcourse.training import TrainingConfig

    error = clear_error(TrainingConfig, seed=2**64)
    assert "seed must be an int in [0, 2**32 - 1]" in str(error)


@pytest.mark.parametrize("seed", [np.int64(3), torch.tensor(3)])
def test_continue_prompts_takes_numpy_and_tensor_seeds(seed, monkeypatch):
    from mlmcourse.tasks import generation

    monkeypatch.setattr(generation, "generate", lambda *a, **k: "x")
    monkeypatch.setattr(generation, "mask_predict", lambda *a, **k: "y")
    prompts, outputs = generation.continue_prompts(None, None, None, ["a b c"], seed=seed)
    assert prompts == ["a b"] and outputs["MLM mask-predict"] == ["y"]
    error = clear_error(generation.continue_prompts, None, None, None, ["a b c"], seed=2**64)
    assert "seed" in str(error)


@pytest.mark.parametrize("unk", [-1, 1.5, "[UNK]", None, torch.tensor([1, 2])])
def test_word_dropout_refuses_an_unk_token_id_that_is_no_id(unk):
    batch = {"input_ids": torch.tensor([[2, 3]]), "labels": torch.tensor([[0, 1]])}
    error = clear_error(word_dropout, batch, unk_token_id=unk, probability=0.5)
    assert "unk_token_id" in str(error)


def test_word_dropout_takes_a_numpy_unk_token_id():
    batch = {"input_ids": torch.tensor([[2, 3]]), "labels": torch.tensor([[0, 1]])}
    out = word_dropout(batch, unk_token_id=np.int64(1), probability=1.0)
    assert out["input_ids"].tolist() == [[1, 1]]
