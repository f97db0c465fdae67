"""A checkpoint is a Hugging Face model folder plus the training state: transformers loads it."""

from __future__ import annotations

import json

import pytest
import torch

from mlmcourse.checkpoint import load_checkpoint, save_checkpoint
from mlmcourse.checks import ConfigError
from mlmcourse.clm import BertForCausalLM
from mlmcourse.mlm import BertForMaskedLM
from tests.tiny import tiny_encoder_config

transformers = pytest.importorskip("transformers")


def _batch() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    input_ids = torch.randint(5, 60, (2, 9), generator=g)
    attention_mask = torch.tensor([[1] * 9, [1] * 6 + [0] * 3])
    return {"input_ids": input_ids, "attention_mask": attention_mask}


@pytest.mark.parametrize(
    ("ours", "theirs", "is_causal"),
    [(BertForMaskedLM, "BertForMaskedLM", False), (BertForCausalLM, "BertLMHeadModel", True)],
)
def test_transformers_loads_a_training_checkpoint_as_it_is(
    tmp_path, monkeypatch, ours, theirs, is_causal
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    torch.manual_seed(0)
    model = ours(tiny_encoder_config(hidden_dropout_prob=0.0, is_causal=is_causal)).eval()
    with torch.no_grad():  # a non-zero output bias, so a missing one would show
        model.cls.predictions.bias.normal_()
    optimizer = torch.optim.AdamW(model.parameters())
    save_checkpoint(tmp_path / "run", model, optimizer=optimizer, step=3)
    reference = getattr(transformers, theirs).from_pretrained(str(tmp_path / "run")).eval()
    batch = _batch()
    with torch.no_grad():
        expected = reference(**batch).logits
        got = model(**batch).logits
    valid = batch["attention_mask"].bool()
    torch.testing.assert_close(got[valid], expected[valid], atol=1e-4, rtol=1e-4)
    assert load_checkpoint(tmp_path / "run").step == 3  # and it is still our checkpoint


def test_a_pre_layer_norm_checkpoint_is_not_passed_off_as_transformers_bert(tmp_path):
    save_checkpoint(tmp_path / "run", BertForMaskedLM(tiny_encoder_config(pre_layer_norm=True)))
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert "model_type" not in config  # transformers refuses the folder: no silent wrong model
    assert load_checkpoint(tmp_path / "run").model.config.pre_layer_norm


def test_hf_keys_that_contradict_ours_are_refused(tmp_path):
    save_checkpoint(tmp_path / "run", BertForMaskedLM(tiny_encoder_config()))
    path = tmp_path / "run" / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "is_decoder": True}))
    with pytest.raises(ConfigError, match="contradicts the model's own keys"):
        load_checkpoint(tmp_path / "run")
