"""The one strict loader: every misfit is reported, tied tensors stored once still load."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file, save_model

from mlmcourse.checkpoint import WeightsMismatchError, load_state_strict
from mlmcourse.checkpoint.weights import check_vocab_fits
from mlmcourse.heads import BertForMaskedLM
from tests.tiny import tiny_encoder_config


def test_a_tied_decoder_stored_once_loads_and_stays_tied(tiny_mlm, tmp_path):
    save_model(tiny_mlm, str(tmp_path / "w.safetensors"))
    state = load_file(tmp_path / "w.safetensors")
    assert len(state) < len(tiny_mlm.state_dict())  # the tied copy is not in the file
    torch.manual_seed(1)
    other = BertForMaskedLM(tiny_mlm.config)
    load_state_strict(other, state, source="w.safetensors")
    for key, value in tiny_mlm.state_dict().items():
        assert other.state_dict()[key].equal(value), key
    embeddings = other.bert.embeddings.word_embeddings.weight
    assert other.cls.predictions.decoder.weight.data_ptr() == embeddings.data_ptr()


def test_every_problem_is_listed_with_the_vocabulary_named(tiny_mlm):
    state = dict(tiny_mlm.state_dict())
    state.pop("bert.encoder.layer.1.output.dense.weight")
    state["bert.extra.weight"] = torch.zeros(1)
    bigger = BertForMaskedLM(tiny_encoder_config(vocab_size=70))
    with pytest.raises(WeightsMismatchError) as error:
        load_state_strict(bigger, state, source="f.safetensors", hint="a hint")
    message = str(error.value)
    assert "missing from f.safetensors (1): bert.encoder.layer.1.output.dense.weight" in message
    assert "unexpected in f.safetensors (1): bert.extra.weight" in message
    assert "(60, 32) in f.safetensors vs (70, 32) in the model" in message
    assert "f.safetensors has 60 word embeddings, the model was built with vocab_size 70" in message
    assert message.endswith("(a hint)")


def test_ignored_prefixes_may_be_present(tiny_mlm):
    state = {**tiny_mlm.state_dict(), "bert.pooler.dense.weight": torch.zeros(2, 2)}
    with pytest.raises(WeightsMismatchError, match="unexpected"):
        load_state_strict(BertForMaskedLM(tiny_mlm.config), state)
    load_state_strict(BertForMaskedLM(tiny_mlm.config), state, ignore=("bert.pooler.",))


def test_a_tokenizer_larger_than_the_embeddings_is_refused():
    class Tokenizer:
        vocab_size = 61

    check_vocab_fits(Tokenizer(), 61, "here")
    with pytest.raises(WeightsMismatchError, match="here: the tokenizer has 61 tokens .* is 60"):
        check_vocab_fits(Tokenizer(), 60, "here")
