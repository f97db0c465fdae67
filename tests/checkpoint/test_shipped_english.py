"""The shipped English model: small, 16-bit, loads, far above the unigram floor, and its
recorded command starts exactly as the run that made it did (its first 20 losses again)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.checkpoint.files import read_trainer_state
from mlmcourse.course.results import load_results
from mlmcourse.heads import BertForMaskedLM, load_checkpoint
from tests.data.test_real import SHARED, needs_shared

LIMIT_BYTES = 12_000_000


@pytest.fixture(scope="module")
def english():
    return load_checkpoint(shipped_checkpoint("english"))


def test_the_shipped_english_model_is_small_16_bit_and_has_its_history():
    from safetensors import safe_open

    path = shipped_checkpoint("english")
    names = {p.name for p in path.iterdir()}
    assert names == {"config.json", "model.safetensors", "tokenizer.json", "trainer_state.json"}
    assert sum(p.stat().st_size for p in path.iterdir()) <= LIMIT_BYTES
    with safe_open(str(path / "model.safetensors"), "pt") as weights:
        assert {weights.get_tensor(k).dtype for k in weights.keys()} == {torch.float16}
    state = read_trainer_state(path)
    assert [r["step"] for r in state["history"]["train"][:20]] == list(range(1, 21))
    assert state["step"] == state["training_config"]["max_steps"]  # the whole run


def test_it_loads_in_32_bits_with_its_uncased_wordpiece_tokenizer(english):
    assert isinstance(english.model, BertForMaskedLM)
    assert {p.dtype for p in english.model.parameters()} == {torch.float32}
    assert english.tokenizer.lowercase and english.tokenizer.vocab_size == 8000
    assert english.tokenizer.tokenize("The Film") == english.tokenizer.tokenize("the film")


def test_the_committed_run_is_far_above_the_unigram_floor():
    results = load_results("english_mlm")
    test = results["long"]["test"]
    assert test["accuracy"] >= 3 * test["unigram_accuracy"]
    assert test["perplexity"] <= test["unigram_perplexity"] / 2
    assert results["long"]["train_minutes"] <= 120  # one run of at most two hours
    shipped = results["shipped"]["test"]
    assert shipped["accuracy"] >= 3 * shipped["unigram_accuracy"]  # 16 bits lost nothing real
    assert len(results["short"]["runs"]) == 3


STEPS = 20
FIRST_STEPS = f"""
import json, torch
torch.set_num_threads({{threads}})
from mlmcourse.pretraining import load_config, pretrain
config = load_config("english", {{{{"max_steps": {STEPS}, "eval_steps": 0, "save_steps": 0,
                                  "final_evaluation": False}}}})
run = pretrain(config, progress=False, log=None)
print(json.dumps([row["loss"] for row in run.result.history["train"]]))
"""


@needs_shared
@pytest.mark.slow
def test_the_recorded_command_starts_with_the_logged_losses():
    """A checked start, not a retrain: the config's first 20 steps, on the thread count the
    run used, give the losses its history logged (the warmup's rates do not depend on
    max_steps, so a 20-step run takes the same steps)."""
    results = load_results("english_mlm")
    threads = results["long"]["threads"]
    logged = read_trainer_state(shipped_checkpoint("english"))["history"]["train"][:STEPS]
    env = {**os.environ, "MLMCOURSE_DATA_DIR": str(SHARED), "OMP_NUM_THREADS": str(threads)}
    out = subprocess.run(
        [sys.executable, "-c", FIRST_STEPS.format(threads=threads)],
        env=env, capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    losses = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(losses) == STEPS
    for step, (ours, row) in enumerate(zip(losses, logged, strict=True), start=1):
        assert abs(ours - row["loss"]) <= 1e-4 * abs(row["loss"]), (step, ours, row["loss"])
