"""A transformers ModernBERT folder loads into our encoder and gives the same hidden states."""

import json

import pytest
import torch

from mlmcourse.interop.modernbert import (
    config_from_modernbert,
    load_modernbert,
    modernbert_switches,
)
from mlmcourse.model.modern import MODERN_FIELDS

transformers = pytest.importorskip("transformers")

SMALL = dict(
    vocab_size=100, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
    num_attention_heads=4, max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
    eos_token_id=2, cls_token_id=1, sep_token_id=2,
)  # fmt: skip


def saved_modernbert(directory, *, head: bool = False, **overrides):
    """A random small ModernBERT (weights widened to std 0.3, so every part matters), saved."""
    config = transformers.ModernBertConfig(**{**SMALL, **overrides}, attn_implementation="sdpa")
    torch.manual_seed(0)
    cls = transformers.ModernBertForMaskedLM if head else transformers.ModernBertModel
    model = cls(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "norm" in name:
                parameter.uniform_(0.5, 1.5) if name.endswith("weight") else parameter.normal_(
                    0, 0.1
                )
            else:
                parameter.normal_(0, 0.3)
    model.save_pretrained(directory)
    return model.model if head else model


def padded_batch():
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 100, (3, 20), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, 13:] = 0
    mask[2, 4:] = 0
    return ids * mask, mask


@pytest.mark.parametrize(
    "overrides",
    [
        dict(local_attention=8, global_attn_every_n_layers=3),  # ModernBERT's pattern
        dict(global_attn_every_n_layers=1, attention_bias=True, mlp_bias=True, norm_bias=True,
             hidden_activation="silu", global_rope_theta=10_000.0),
        dict(local_attention=4, global_attn_every_n_layers=2, local_rope_theta=500.0),
    ],
    ids=["modernbert", "biases-swiglu-all-global", "every-second-local"],
)  # fmt: skip
def test_hidden_states_match_transformers_on_a_padded_batch(tmp_path, overrides):
    theirs = saved_modernbert(tmp_path, **overrides)
    ours, tokenizer = load_modernbert(tmp_path)
    assert tokenizer is None  # no tokenizer.json was saved
    ids, mask = padded_batch()
    expected = theirs(input_ids=ids, attention_mask=mask).last_hidden_state
    real = mask.bool()
    got = ours(ids, mask).last_hidden_state
    assert (got[real] - expected[real]).abs().max() < 1e-4


def test_local_attention_is_really_exercised(tmp_path):
    """With a window of 4 in 20 tokens, treating every layer as global gives other numbers."""
    theirs = saved_modernbert(tmp_path, local_attention=4, global_attn_every_n_layers=2)
    ours, _ = load_modernbert(tmp_path)
    ids, mask = padded_batch()
    expected = theirs(input_ids=ids, attention_mask=mask).last_hidden_state
    for layer in ours.layers:
        layer.is_local = False
    got = ours(ids, mask).last_hidden_state
    assert (got - expected)[mask.bool()].abs().max() > 1e-3


def test_a_masked_lm_folder_loads_its_encoder(tmp_path):
    theirs = saved_modernbert(tmp_path, head=True)
    ours, _ = load_modernbert(tmp_path)
    ids, mask = padded_batch()
    expected = theirs(input_ids=ids, attention_mask=mask).last_hidden_state
    assert (ours(ids, mask).last_hidden_state - expected)[mask.bool()].abs().max() < 1e-4


def test_config_translation_and_its_refusals(tmp_path):
    config = config_from_modernbert(transformers.ModernBertConfig(**SMALL).to_dict())
    assert (config.position_embedding_type, config.ffn_type, config.bias) == (
        "rotary",
        "geglu",
        False,
    )
    assert (config.rope_theta, config.local_rope_theta) == (160_000.0, 10_000.0)
    assert (config.local_attention, config.global_attn_every_n_layers) == (128, 3)
    assert config.pre_layer_norm and config.type_vocab_size == 0
    # the map names every switch of ModernConfig, in its order: none is left at BERT's by default
    assert tuple(modernbert_switches(transformers.ModernBertConfig(**SMALL).to_dict())) == (
        MODERN_FIELDS
    )
    with pytest.raises(ValueError, match="expected a ModernBERT config"):
        config_from_modernbert({"model_type": "bert"})
    mixed = {**transformers.ModernBertConfig(**SMALL).to_dict(), "attention_bias": True}
    with pytest.raises(ValueError, match="one bias switch"):
        config_from_modernbert(mixed)
    odd = {**transformers.ModernBertConfig(**SMALL).to_dict(),
           "layer_types": ["sliding_attention"] * 4}  # fmt: skip
    with pytest.raises(ValueError, match="is not 'global every n layers"):
        config_from_modernbert(odd)
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        load_modernbert(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(ValueError, match="expected a ModernBERT config"):
        load_modernbert(tmp_path)
