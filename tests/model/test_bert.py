"""The encoder: config validation, shapes, masks, the two attention paths, clear errors, parity."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from mlmcourse.model import (
    BertModel,
    EncoderConfig,
    EncoderOutput,
    ModernConfig,
    config_from_dict,
    eager_attention,
    encoder_for,
)
from mlmcourse.model.bert import attention_allowed, attention_bias
from mlmcourse.model.inputs import check_model_inputs
from tests.tiny import TINY_ENCODER

# The shared tiny encoder, with a smaller vocabulary and context than tests/tiny.py's.
TINY = {**TINY_ENCODER, "vocab_size": 50, "max_position_embeddings": 16}


def tiny_model(seed: int = 0, **overrides) -> BertModel:
    torch.manual_seed(seed)
    config = EncoderConfig(**{**TINY, **overrides})
    return BertModel(config).eval()


def padded_batch(generator_seed: int = 0):
    """Three sequences of lengths 9, 6 and 3, right-padded with id 0 to length 9."""
    g = torch.Generator().manual_seed(generator_seed)
    input_ids = torch.randint(1, TINY["vocab_size"], (3, 9), generator=g)
    attention_mask = torch.ones(3, 9, dtype=torch.long)
    attention_mask[1, 6:] = 0
    attention_mask[2, 3:] = 0
    input_ids[attention_mask == 0] = 0
    token_type_ids = torch.zeros_like(input_ids)
    token_type_ids[:, 4:] = 1
    return input_ids, attention_mask, token_type_ids


# ------------------------------------------------------------------------------- config
def test_default_config_is_bert_base():
    config = EncoderConfig()
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads) == (
        768,
        12,
        12,
    )
    assert config.attention_head_size == 64


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"hidden_size": 30, "num_attention_heads": 4}, "divisible"),
        ({"vocab_size": 0}, "vocab_size must be an int >= 1"),
        ({"num_hidden_layers": -1}, "num_hidden_layers"),
        ({"intermediate_size": 2.5}, "intermediate_size"),
        ({"hidden_dropout_prob": 1.0}, r"\[0, 1\)"),
        ({"attention_probs_dropout_prob": -0.1}, "attention_probs_dropout_prob"),
        ({"hidden_act": "tanh"}, "hidden_act must be one of"),
        ({"pad_token_id": 50}, "pad_token_id"),
        ({"layer_norm_eps": 0.0}, "layer_norm_eps"),
        ({"is_causal": "yes"}, "is_causal"),
    ],
)
def test_config_rejects_bad_values_with_a_clear_message(overrides, message):
    with pytest.raises(ValueError, match=message):
        EncoderConfig(**{**TINY, **overrides})


def test_config_round_trips_through_a_dict():
    config = EncoderConfig(**TINY, is_causal=True)
    assert EncoderConfig.from_dict(config.to_dict()) == config
    assert config_from_dict({**config.to_dict(), "pre_layer_norm": False}) == config  # 0.2.0's
    with pytest.raises(ValueError, match="unknown EncoderConfig fields"):
        EncoderConfig.from_dict({**config.to_dict(), "hiden_size": 3})


def test_model_needs_a_config():
    with pytest.raises(TypeError, match="EncoderConfig"):
        BertModel(TINY)


# ------------------------------------------------------------------------------- outputs
def test_output_shapes_hidden_states_and_attentions():
    model = tiny_model()
    input_ids, attention_mask, token_type_ids = padded_batch()
    out = model(
        input_ids,
        attention_mask,
        token_type_ids,
        output_attentions=True,
        output_hidden_states=True,
    )
    assert isinstance(out, EncoderOutput)
    assert out.last_hidden_state.shape == (3, 9, 32)
    assert len(out.hidden_states) == TINY["num_hidden_layers"] + 1
    assert torch.equal(out.hidden_states[-1], out.last_hidden_state)
    assert len(out.attentions) == TINY["num_hidden_layers"]
    probs = out.attentions[0]
    assert probs.shape == (3, 4, 9, 9)
    torch.testing.assert_close(probs.sum(-1), torch.ones(3, 4, 9))
    # padding keys get no attention at all
    assert probs[1, :, :, 6:].abs().max() == 0
    assert probs[2, :, :, 3:].abs().max() == 0
    plain = model(input_ids, attention_mask, token_type_ids)
    assert plain.hidden_states is None and plain.attentions is None and plain.pooler_output is None


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_explicit_attention_path_equals_sdpa(is_causal, padded):
    model = tiny_model(is_causal=is_causal)
    input_ids, attention_mask, token_type_ids = padded_batch()
    mask = attention_mask if padded else None
    with torch.no_grad():
        fused = model(input_ids, mask, token_type_ids).last_hidden_state
        explicit = model(input_ids, mask, token_type_ids, output_attentions=True).last_hidden_state
    torch.testing.assert_close(explicit, fused, atol=1e-5, rtol=0)


def test_eager_attention_is_softmax_of_scaled_scores():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 5, 8, generator=g) for _ in range(3))
    context, probs = eager_attention(q, k, v)
    expected = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, dim=-1)
    torch.testing.assert_close(probs, expected)
    torch.testing.assert_close(context, expected @ v)
    torch.testing.assert_close(
        context, torch.nn.functional.scaled_dot_product_attention(q, k, v), atol=1e-6, rtol=0
    )
    future = attention_bias(attention_allowed(torch.ones(2, 5), is_causal=True), torch.float32)
    _, causal = eager_attention(q, k, v, future)  # causality is a mask like padding
    assert causal[..., 0, 1:].abs().max() == 0 and causal[..., 2, 3:].abs().max() == 0


def test_padding_does_not_change_real_tokens():
    model = tiny_model()
    input_ids, attention_mask, token_type_ids = padded_batch()
    with torch.no_grad():
        batched = model(input_ids, attention_mask, token_type_ids).last_hidden_state
        alone = model(input_ids[2:, :3], None, token_type_ids[2:, :3]).last_hidden_state
    torch.testing.assert_close(batched[2, :3], alone[0], atol=1e-5, rtol=0)


@pytest.mark.parametrize("padded", [False, True])
def test_causal_model_does_not_look_ahead(padded):
    model = tiny_model(is_causal=True)
    input_ids, attention_mask, _ = padded_batch()
    mask = attention_mask if padded else None
    changed = input_ids.clone()
    changed[0, 5] = (changed[0, 5] % 49) + 1  # a different real token at position 5
    with torch.no_grad():
        before = model(input_ids, mask).last_hidden_state
        after = model(changed, mask).last_hidden_state
    torch.testing.assert_close(after[0, :5], before[0, :5], atol=1e-6, rtol=0)
    assert (after[0, 5] - before[0, 5]).abs().max() > 1e-3
    assert torch.isfinite(after).all()


@pytest.mark.parametrize("is_causal", [False, True])
def test_rows_with_no_visible_key_stay_finite(is_causal):
    """Left padding (causal: the first query sees only padding) and an all-padding row."""
    model = tiny_model(is_causal=is_causal)
    input_ids = torch.tensor([[0, 0, 5, 6, 7], [0, 0, 0, 0, 0]])
    attention_mask = (input_ids != 0).long()
    for output_attentions in (False, True):
        with torch.no_grad():
            out = model(input_ids, attention_mask, output_attentions=output_attentions)
        assert torch.isfinite(out.last_hidden_state).all()
        if output_attentions:
            assert all(torch.isfinite(a).all() for a in out.attentions)


def test_bidirectional_model_looks_both_ways():
    model = tiny_model()
    input_ids, _, _ = padded_batch()
    changed = input_ids.clone()
    changed[0, 5] = (changed[0, 5] % 49) + 1
    with torch.no_grad():
        before = model(input_ids).last_hidden_state
        after = model(changed).last_hidden_state
    assert (after[0, 0] - before[0, 0]).abs().max() > 1e-3


def test_masks_as_matrices():
    attention_mask = torch.tensor([[1, 1, 1, 0]])
    padding = attention_allowed(attention_mask, is_causal=False)
    assert padding.shape == (1, 1, 1, 4)
    assert padding[0, 0, 0].tolist() == [True, True, True, False]
    causal = attention_allowed(attention_mask, is_causal=True)[0, 0]
    assert causal[:3, :3].tolist() == torch.ones(3, 3, dtype=torch.bool).tril().tolist()
    assert causal[:3, 3].tolist() == [False, False, False]
    assert causal[3, 3]  # a padded query sees itself, so its softmax row is never empty
    bias = attention_bias(padding, torch.float32)
    assert bias[0, 0, 0, :3].tolist() == [0.0, 0.0, 0.0]
    assert bias[0, 0, 0, 3] == torch.finfo(torch.float32).min


def test_dropout_only_in_training():
    model = tiny_model(hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3)
    input_ids, attention_mask, _ = padded_batch()
    with torch.no_grad():
        first = model(input_ids, attention_mask).last_hidden_state
        second = model(input_ids, attention_mask).last_hidden_state
        assert torch.equal(first, second)
        model.train()
        noisy = model(input_ids, attention_mask).last_hidden_state
    assert not torch.allclose(noisy, first)


def test_pre_layer_norm_model_trains():
    model = encoder_for(ModernConfig(**TINY, pre_layer_norm=True)).train()
    assert "final_norm.weight" in dict(model.named_parameters())
    input_ids, attention_mask, token_type_ids = padded_batch()
    out = model(input_ids, attention_mask, token_type_ids, output_hidden_states=True)
    assert torch.equal(out.hidden_states[-1], out.last_hidden_state)
    out.last_hidden_state.pow(2).mean().backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    assert all(g is not None for g in grads.values())
    # the [PAD] embedding row never learns
    assert grads["embeddings.tok_embeddings.weight"][0].abs().max() == 0
    # one final LayerNorm more, and none before the first layer's attention (the embeddings'
    # LayerNorm has just normalised its input): as many parameters as post-LN
    post = tiny_model()
    assert "layers.0.attn_norm.weight" not in dict(model.named_parameters())
    assert model.num_parameters() == post.num_parameters()


def test_pooler_is_optional():
    model = BertModel(EncoderConfig(**TINY), add_pooling_layer=True).eval()
    input_ids, attention_mask, _ = padded_batch()
    assert model(input_ids, attention_mask).pooler_output.shape == (3, 32)


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("input_ids", "message"),
    [
        (torch.ones(1, 17, dtype=torch.long), "longer than max_position_embeddings"),
        (torch.tensor([1, 2, 3]), r"\(batch, seq_len\)"),
    ],
)
def test_the_forward_checks_the_shape_and_length(input_ids, message):
    with pytest.raises(ValueError, match=message):
        tiny_model()(input_ids)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"input_ids": torch.tensor([[1, 2, 50]])}, r"\[0, vocab_size=50\), found id 50"),
        ({"input_ids": torch.tensor([[1, -1]])}, "found id -1"),
        ({"input_ids": torch.ones(1, 17, dtype=torch.long)}, "longer than max_position_embeddings"),
        ({"input_ids": torch.ones(1, 3)}, "input_ids must hold integer ids, got dtype"),
        (
            {"input_ids": torch.ones(2, 3, dtype=torch.long), "attention_mask": torch.ones(2, 4)},
            r"attention_mask must have the shape of input_ids \(2, 3\), got \(2, 4\)",
        ),
        (
            {
                "input_ids": torch.ones(1, 3, dtype=torch.long),
                "attention_mask": torch.tensor([[1, 2, 0]]),
            },
            "only 0",
        ),
        (
            {
                "input_ids": torch.ones(1, 3, dtype=torch.long),
                "token_type_ids": torch.tensor([[0, 1, 2]]),
            },
            r"token_type_ids must be in \[0, type_vocab_size=2\)",
        ),
        (
            {"input_ids": torch.ones(1, 3, dtype=torch.long), "token_type_ids": torch.zeros(1, 2)},
            "token_type_ids must have the shape",
        ),
    ],
)
def test_bad_values_are_clear_errors_where_a_batch_comes_in(kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_model_inputs(tiny_model().config, kwargs)


# ------------------------------------------------------------------- parity with transformers
transformers = pytest.importorskip("transformers")


def hf_config(config: EncoderConfig):
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    fields.pop("is_causal")
    return transformers.BertConfig(**fields)


def test_parameter_names_and_shapes_match_transformers():
    config = EncoderConfig(**TINY)
    ours = BertModel(config, add_pooling_layer=True).state_dict()
    theirs = transformers.BertModel(hf_config(config)).state_dict()
    assert {k: v.shape for k, v in ours.items()} == {k: v.shape for k, v in theirs.items()}


@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_new"])
def test_random_weights_copied_into_transformers_give_equal_outputs(hidden_act):
    ours = BertModel(EncoderConfig(**TINY, hidden_act=hidden_act), add_pooling_layer=True).eval()
    theirs = transformers.BertModel(hf_config(ours.config)).eval()
    theirs.load_state_dict(ours.state_dict(), strict=True)
    input_ids, attention_mask, token_type_ids = padded_batch()
    with torch.no_grad():
        got = ours(input_ids, attention_mask, token_type_ids, output_attentions=True)
        want = theirs(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
        )
        fused = ours(input_ids, attention_mask, token_type_ids).last_hidden_state
    real = attention_mask.bool()
    torch.testing.assert_close(got.last_hidden_state[real], want.last_hidden_state[real])
    torch.testing.assert_close(fused[real], want.last_hidden_state[real])
    torch.testing.assert_close(got.pooler_output, want.pooler_output)


@pytest.mark.parametrize("seed", range(3))
def test_the_chapters_plain_bert_layer_is_the_models(seed):
    """book/encoder.md's teaching cell, executed from the chapter, against BertLayer."""
    from tests.teaching import teaching_namespace

    namespace = teaching_namespace("encoder")
    model = tiny_model(seed)
    ids, mask, _ = padded_batch(seed)
    bias = torch.zeros(3, 1, 1, 9).masked_fill(mask[:, None, None, :] == 0, -1e9)
    with torch.no_grad():
        h = model.embeddings(ids)
        for layer in model.encoder.layer:
            plain = namespace["bert_layer"](h, mask, layer)
            h, _ = layer(h, bias)
            real = mask.bool()
            torch.testing.assert_close(plain[real], h[real], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("seed", range(3))
def test_the_chapters_plain_attention_head_is_the_packages(seed):
    """book/encoder.md's one-head teaching cell against attention_allowed + eager_attention."""
    from tests.teaching import teaching_namespace

    attention_head = teaching_namespace("encoder")["attention_head"]
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 9, 8, generator=g)
    w_q, w_k, w_v = (torch.randn(8, 4, generator=g) for _ in range(3))
    _, mask, _ = padded_batch(seed)
    bias = attention_bias(attention_allowed(mask, is_causal=False), torch.float32)
    expected, probs = eager_attention(
        (x @ w_q)[:, None], (x @ w_k)[:, None], (x @ w_v)[:, None], bias
    )
    torch.testing.assert_close(attention_head(x, mask, w_q, w_k, w_v), expected[:, 0])
    padded_keys = (mask[:, None, :] == 0).expand(3, 9, 9)
    assert (probs[:, 0][padded_keys] == 0).all()  # no query gives a [PAD] key any weight
