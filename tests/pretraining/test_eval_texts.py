"""``eval_texts``: a run scored on the first N validation texts only."""

from __future__ import annotations

import pytest

from mlmcourse.data import world_texts
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.training import evaluate, fixed_eval_batches


def _tiny(**extra):
    return load_config("world", {
        "max_steps": 1, "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
        "intermediate_size": 32, "eval_steps": 0, "device": "cpu", **extra,
    })  # fmt: skip


def test_a_run_scores_the_first_n_validation_texts_with_the_usual_masks():
    run = pretrain(_tiny(eval_texts=20), progress=False, log=None)
    assert sum(len(b["input_ids"]) for b in run.eval_batches) == 20
    expected = fixed_eval_batches(world_texts("validation")[:20], run.collator, seed=1234)
    assert evaluate(run.model, expected) == run.result.final_eval


def test_zero_scores_every_validation_text_and_a_negative_count_says_what_to_do():
    assert _tiny().eval_texts == 0
    with pytest.raises(ValueError, match="eval_texts"):
        _tiny(eval_texts=-1)
