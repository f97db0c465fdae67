"""A checkpoint is a Hugging Face model folder plus the training state: transformers loads it."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from mlmcourse.checkpoint import TrainingState, load_encoder, save_checkpoint
from mlmcourse.heads import (
    MODEL_FOR_ARCHITECTURE,
    BertForCausalLM,
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    load_checkpoint,
)
from mlmcourse.model import BertModel, ModernBertModel, ModernConfig
from mlmcourse.tasks.ner import LabelVocab
from mlmcourse.utils.checks import ConfigError
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
    save_checkpoint(tmp_path / "run", model, state=TrainingState(step=3, optimizer=optimizer))
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


def _tagger() -> BertForTokenClassification:
    labels = LabelVocab(["O", "B-LOC", "I-LOC", "B-PER", "I-PER"])
    torch.manual_seed(0)
    config = tiny_encoder_config(hidden_dropout_prob=0.0)
    model = BertForTokenClassification(config, len(labels), id2label=labels).eval()
    with torch.no_grad():  # a non-zero classifier bias, so a missing one would show
        model.classifier.bias.normal_()
    return model


def test_transformers_loads_a_ner_checkpoint_with_its_labels(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = _tagger()
    save_checkpoint(tmp_path / "ner", model)
    reference = transformers.BertForTokenClassification.from_pretrained(str(tmp_path / "ner"))
    assert reference.config.id2label == model.id2label
    assert reference.config.label2id == {name: i for i, name in model.id2label.items()}
    loaded = load_checkpoint(tmp_path / "ner").model
    assert isinstance(loaded, BertForTokenClassification) and loaded.id2label == model.id2label
    batch = _batch()
    with torch.no_grad():
        expected = reference.eval()(**batch).logits
        got, reloaded = model(**batch).logits, loaded(**batch).logits
    valid = batch["attention_mask"].bool()
    torch.testing.assert_close(got[valid], expected[valid], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(reloaded, got, atol=0, rtol=0)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"id2label": {"0": "O", "1": "B-LOC"}}, "id2label must name each of the 5 labels"),
        ({"label2id": {"O": 1}}, "label2id contradicts id2label"),
        ({"architectures": ["BertForMaskedLM"]}, r"unknown key\(s\) \['classifier_dropout'"),
    ],
)
def test_ner_label_keys_that_do_not_fit_are_refused(tmp_path, edit, message):
    save_checkpoint(tmp_path / "ner", _tagger())
    path = tmp_path / "ner" / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **edit}))
    with pytest.raises(ConfigError, match=message):
        load_checkpoint(tmp_path / "ner")


def _every_architecture(config):
    labels = ["O", "B-PER", "I-PER"]
    return [
        BertModel(config),
        ModernBertModel(ModernConfig(**config.to_dict(), pre_layer_norm=True)),
        BertForMaskedLM(config),
        BertForCausalLM(dataclasses.replace(config, is_causal=True)),
        BertForTokenClassification(config, 3, id2label=labels, classifier_dropout=0.2),
        BertForSequenceClassification(config, 2, id2label=["negative", "positive"]),
        BertForQuestionAnswering(config),
    ]


def test_every_head_reloads_through_the_one_path(tmp_path):
    """save_checkpoint then load_checkpoint gives back the same class, labels and weights."""
    torch.manual_seed(0)
    models = _every_architecture(tiny_encoder_config())
    assert {type(m).__name__ for m in models} == set(MODEL_FOR_ARCHITECTURE)
    for model in models:
        directory = tmp_path / type(model).__name__
        save_checkpoint(directory, model)
        loaded = load_checkpoint(directory).model
        assert type(loaded) is type(model)
        assert getattr(loaded, "id2label", None) == getattr(model, "id2label", None)
        assert getattr(loaded, "num_labels", None) == getattr(model, "num_labels", None)
        if hasattr(model, "dropout"):
            assert loaded.dropout.p == model.dropout.p
        ours, theirs = model.state_dict(), loaded.state_dict()
        assert ours.keys() == theirs.keys()
        assert all(torch.equal(ours[k], theirs[k]) for k in ours)


def test_the_encoder_of_any_head_loads_alone(tmp_path):
    """load_encoder reads the encoder's tensors of any checkpoint, pooler included."""
    torch.manual_seed(0)
    for model in _every_architecture(tiny_encoder_config()):
        directory = tmp_path / type(model).__name__
        save_checkpoint(directory, model)
        encoder = load_encoder(directory)
        bert = getattr(model, "bert", model)
        assert (encoder.pooler is None) == (bert.pooler is None)
        assert all(torch.equal(v, bert.state_dict()[k]) for k, v in encoder.state_dict().items())


def test_a_modern_checkpoint_saved_the_0_2_0_way_loads_into_the_modern_encoder(tmp_path):
    """0.2.0 wrote a modern encoder's switches into ``config.json`` beside the head's class
    name (``BertForMaskedLM``); such a folder loads into ``ModernBertModel``, same logits."""
    config = tiny_encoder_config(
        position_embedding_type="rotary", ffn_type="geglu", norm_type="rmsnorm", bias=False
    )
    model = BertForMaskedLM(config).eval()
    save_checkpoint(tmp_path / "run", model)
    path = tmp_path / "run" / "config.json"
    saved = json.loads(path.read_text())
    saved["architectures"] = ["BertForMaskedLM"]  # as 0.2.0 wrote it
    path.write_text(json.dumps(saved))
    loaded = load_checkpoint(tmp_path / "run").model.eval()
    assert isinstance(loaded.bert, ModernBertModel)
    ids = torch.randint(5, config.vocab_size, (2, 7), generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(loaded(ids).logits, model(ids).logits)
