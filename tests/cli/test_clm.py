"""``training_mode: clm`` in the same loop and CLI as MLM: a tiny YAML config runs a few steps."""

from __future__ import annotations

import json

import pytest

from mlmcourse.cli import main
from mlmcourse.heads import BertForCausalLM
from mlmcourse.masking.causal import CLMCollator
from mlmcourse.pretraining import load_config, pretrain

TINY_YAML = """\
training_mode: clm
dataset: world
tokenizer: word
max_length: 24
hidden_size: 16
num_hidden_layers: 1
num_attention_heads: 2
intermediate_size: 32
max_steps: 4
warmup_steps: 1
logging_steps: 2
batch_size: 8
eval_batch_size: 500
"""


def test_cli_trains_a_causal_lm_from_a_yaml_config(tmp_path, capsys):
    path = tmp_path / "clm.yaml"
    path.write_text(TINY_YAML)
    out = tmp_path / "run"
    assert main(["pretrain", "--config", str(path), "--no-progress", "--set",
                 f"output_dir={out}"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "pretraining (clm) on world" in printed
    assert "final evaluation" in printed and "next tokens" in printed
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["step"] == 4 and state["training_config"]["training_mode"] == "clm"
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["BertForCausalLM"] and config["is_causal"] is True


def test_pretrain_dispatches_model_and_collator_on_training_mode(tmp_path):
    path = tmp_path / "clm.yaml"
    path.write_text(TINY_YAML)
    run = pretrain(load_config(path, {"max_steps": 2}), progress=False, log=None)
    assert isinstance(run.model, BertForCausalLM) and run.model.config.is_causal
    assert isinstance(run.collator, CLMCollator)
    final = run.result.final_eval
    # every token but [CLS] is a target: far more than MLM's ~15%
    real = sum(int(b["attention_mask"].sum() - b["attention_mask"].shape[0]) for b in
               run.eval_batches)  # fmt: skip
    assert final["tokens"] == real
    assert final["perplexity"] == pytest.approx(2.718281828 ** final["loss"], rel=1e-6)
