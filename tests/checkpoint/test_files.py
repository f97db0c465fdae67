"""Checkpoints: atomic writes, weights round trip, refusal of mismatches, exact resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from mlmcourse import checkpoint as ckpt
from mlmcourse.checkpoint import (
    WeightsMismatchError,
    load_training_state,
    load_weights,
    save_checkpoint,
)
from mlmcourse.training import CheckpointPlan, TrainingConfig, train
from mlmcourse.utils.runtime import set_rng_state
from tests.tiny_mlm import TinyConfig, TinyMLM, tiny_batch


class _FakeTokenizer:
    def __init__(self, vocab_size: int):
        self.vocab_size = vocab_size

    def save(self, path):
        Path(path).write_text(json.dumps({"vocab_size": self.vocab_size}))


def test_checkpoint_layout_and_weights_round_trip(tmp_path):
    torch.manual_seed(0)
    model = TinyMLM(TinyConfig())
    out = save_checkpoint(tmp_path / "run", model, tokenizer=_FakeTokenizer(16))
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
    ]
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["TinyMLM"] and config["vocab_size"] == 16
    other = TinyMLM(TinyConfig())
    load_weights(other, out)
    for (name, a), b in zip(model.state_dict().items(), other.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    # The tied decoder is still tied after loading.
    assert other.decoder.weight.data_ptr() == other.embeddings.weight.data_ptr()
    assert not list(tmp_path.glob(".run.*"))  # no temporary directory left behind


def test_overwriting_is_atomic_and_a_failed_write_keeps_the_old_checkpoint(tmp_path, monkeypatch):
    model = TinyMLM(TinyConfig())
    target = save_checkpoint(tmp_path / "run", model)
    before = (target / "model.safetensors").read_bytes()

    class Broken(_FakeTokenizer):
        def save(self, path):
            raise OSError("disk full")

    with torch.no_grad():
        model.mix.weight.add_(1.0)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(target, model, tokenizer=Broken(16))
    assert (target / "model.safetensors").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    save_checkpoint(target, model)  # a successful overwrite replaces it
    assert (target / "model.safetensors").read_bytes() != before


def test_mismatched_config_or_vocab_is_refused_clearly(tmp_path):
    save_checkpoint(tmp_path / "run", TinyMLM(TinyConfig(vocab_size=16)))
    with pytest.raises(WeightsMismatchError, match="vocab_size: checkpoint 16 vs model 20"):
        load_weights(TinyMLM(TinyConfig(vocab_size=20)), tmp_path / "run")
    with pytest.raises(WeightsMismatchError, match="hidden_size: checkpoint 12 vs model 8"):
        load_weights(TinyMLM(TinyConfig(hidden_size=8)), tmp_path / "run")
    # Dropout does not change the weights, so it may differ.
    load_weights(TinyMLM(TinyConfig(hidden_dropout_prob=0.0)), tmp_path / "run")
    with pytest.raises(WeightsMismatchError, match="tokenizer has 30 tokens"):
        save_checkpoint(tmp_path / "bad", TinyMLM(TinyConfig()), tokenizer=_FakeTokenizer(30))
    with pytest.raises(FileNotFoundError, match="no config.json"):
        load_weights(TinyMLM(TinyConfig()), tmp_path)


def test_a_model_only_checkpoint_cannot_be_resumed(tmp_path):
    model = TinyMLM(TinyConfig())
    save_checkpoint(tmp_path / "run", model)
    with pytest.raises(FileNotFoundError, match="model-only checkpoint"):
        load_training_state(tmp_path / "run", model=model)


def _config(**kw) -> TrainingConfig:
    base = dict(max_steps=12, warmup_steps=3, logging_steps=1, learning_rate=5e-3)
    return TrainingConfig(**{**base, **kw})


class _Crash(Exception):
    pass


def test_resume_reproduces_the_uninterrupted_loss_curve(tmp_path):
    # Dropout is on, so the RNG state must be restored too for the curves to agree.
    torch.manual_seed(0)
    start = TinyMLM(TinyConfig(hidden_dropout_prob=0.2)).state_dict()
    torch.manual_seed(123)
    full = _model(start)
    reference = train(full, tiny_batch, _config(), progress=False, log=None)

    def crashing_batch(i):  # the machine dies while fetching the data of step 7
        if i == 6:
            raise _Crash
        return tiny_batch(i)

    torch.manual_seed(123)
    with pytest.raises(_Crash):
        train(
            _model(start),
            crashing_batch,
            _config(save_steps=5),
            checkpoints=CheckpointPlan(tmp_path / "run"),
            progress=False,
            log=None,
        )
    assert json.loads((tmp_path / "run" / "trainer_state.json").read_text())["step"] == 5

    torch.manual_seed(999)  # a new process: different global RNG, fresh weights
    resumed_model = TinyMLM(TinyConfig(hidden_dropout_prob=0.2))
    resumed = train(
        resumed_model,
        tiny_batch,
        _config(),
        checkpoints=CheckpointPlan(tmp_path / "run", resume_from=tmp_path / "run"),
        progress=False,
        log=None,
    )
    losses = [h["loss"] for h in reference.history["train"]]
    assert len(losses) == 12
    assert [h["loss"] for h in resumed.history["train"]] == pytest.approx(losses, rel=1e-6)
    for (name, a), b in zip(
        full.state_dict().items(), resumed_model.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(a, b, msg=name)
    assert json.loads((tmp_path / "run" / "trainer_state.json").read_text())["step"] == 12


def _model(state):
    model = TinyMLM(TinyConfig(hidden_dropout_prob=0.2))
    model.load_state_dict(state)
    return model


def test_shipped_checkpoint_lookup_names_what_exists():
    with pytest.raises(FileNotFoundError, match="no shipped checkpoint named 'nope'"):
        ckpt.shipped_checkpoint("nope")


def test_cuda_rng_states_restore_on_a_machine_with_fewer_gpus(monkeypatch):
    # A run saved on 2 GPUs and resumed on 1: restore GPU 0's generator and say so.
    restored = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_rng_state", lambda s, i: restored.append((i, s)))
    state = {
        "torch": torch.get_rng_state(),
        "python": __import__("random").getstate(),
        "numpy": _numpy_state(),
        "cuda": [torch.tensor([1], dtype=torch.uint8), torch.tensor([2], dtype=torch.uint8)],
    }
    with pytest.warns(UserWarning, match="2 GPU.*this machine has 1"):
        set_rng_state(state)
    assert [(i, s.tolist()) for i, s in restored] == [(0, [1])]


def _numpy_state():
    import numpy as np

    name, keys, pos, has_gauss, cached = np.random.get_state()
    return (name, torch.from_numpy(keys.astype("int64")), pos, has_gauss, cached)
