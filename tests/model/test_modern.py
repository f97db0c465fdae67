"""The modern encoder's switches (mlmcourse.model.modern): each idea alone, then in the model."""

import dataclasses
import math

import pytest
import torch

from mlmcourse.checkpoint import save_checkpoint
from mlmcourse.heads import BertForMaskedLM, load_checkpoint
from mlmcourse.interop.bert import config_to_hf
from mlmcourse.model import BertModel, EncoderConfig, ModernBertModel, ModernConfig, encoder_for
from mlmcourse.model.modern import (
    RMSNorm,
    apply_rotary,
    gated_activation,
    rotary_cos_sin,
    sliding_window_allowed,
)
from tests.tiny import tiny_encoder_config

SWITCHES = {
    "rotary": {"position_embedding_type": "rotary"},
    "geglu": {"ffn_type": "geglu"},
    "swiglu": {"ffn_type": "swiglu"},
    "pre-ln": {"pre_layer_norm": True},
    "rmsnorm": {"norm_type": "rmsnorm", "pre_layer_norm": True},
    "no bias": {"bias": False},
    "local": {"local_attention": 4, "global_attn_every_n_layers": 2},
    "all": {
        "position_embedding_type": "rotary", "ffn_type": "geglu", "pre_layer_norm": True,
        "norm_type": "rmsnorm", "bias": False, "local_attention": 4,
        "global_attn_every_n_layers": 2, "type_vocab_size": 0,
    },
}  # fmt: skip


def test_rmsnorm_equals_torch():
    x = torch.randn(3, 5, 8)
    ours, theirs = RMSNorm(8, eps=1e-6), torch.nn.RMSNorm(8, eps=1e-6)
    with torch.no_grad():
        ours.weight.uniform_(0.5, 1.5)
        theirs.weight.copy_(ours.weight)
    assert torch.allclose(ours(x), theirs(x), atol=1e-6)


def test_rotary_scores_depend_only_on_the_distance():
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 1, 16), torch.randn(1, 1, 1, 16)

    def score(m: int, n: int) -> float:
        cos_m, sin_m = rotary_cos_sin(torch.tensor([[m]]), 16)
        cos_n, sin_n = rotary_cos_sin(torch.tensor([[n]]), 16)
        rq, _ = apply_rotary(q, q, cos_m, sin_m)
        _, rk = apply_rotary(k, k, cos_n, sin_n)
        return float((rq * rk).sum())

    assert score(3, 1) == pytest.approx(score(10, 8), abs=1e-5)
    assert score(3, 1) == pytest.approx(score(52, 50), abs=1e-4)
    assert score(3, 1) != pytest.approx(score(3, 2), abs=1e-3)
    cos, sin = rotary_cos_sin(torch.tensor([[5]]), 16)  # a rotation keeps lengths
    assert torch.allclose(apply_rotary(q, q, cos, sin)[0].norm(), q.norm(), atol=1e-5)


def test_rotary_matches_transformers_modernbert():
    modeling = pytest.importorskip("transformers.models.modernbert.modeling_modernbert")
    config = modeling.ModernBertConfig(hidden_size=32, num_attention_heads=4, num_hidden_layers=1)
    positions = torch.arange(7)[None]
    cos, sin = modeling.ModernBertRotaryEmbedding(config)(
        torch.zeros(1), positions, "full_attention"
    )
    ours_cos, ours_sin = rotary_cos_sin(positions, 8, theta=160_000.0)
    assert torch.allclose(ours_cos[:, 0], cos, atol=1e-6)
    assert torch.allclose(ours_sin[:, 0], sin, atol=1e-6)
    q, k = torch.randn(1, 4, 7, 8), torch.randn(1, 4, 7, 8)
    theirs = modeling.apply_rotary_pos_emb(q, k, cos, sin)
    for a, b in zip(apply_rotary(q, k, ours_cos, ours_sin), theirs, strict=True):
        assert torch.allclose(a, b, atol=1e-6)


def test_gated_activation_gates_the_first_half_with_the_second():
    x = torch.tensor([[1.0, -2.0, 3.0, 0.5]])
    expected = torch.nn.functional.silu(torch.tensor([[1.0, -2.0]])) * torch.tensor([[3.0, 0.5]])
    assert torch.allclose(gated_activation(x, "swiglu"), expected)
    gelu = 0.5 * 1.0 * (1 + math.erf(1 / math.sqrt(2)))
    assert gated_activation(x, "geglu")[0, 0].item() == pytest.approx(gelu * 3.0, abs=1e-6)


def test_sliding_window_sees_half_the_window_on_each_side():
    allowed = sliding_window_allowed(6, window=4)
    assert allowed[3].tolist() == [False, True, True, True, True, True]
    assert allowed[0].tolist() == [True, True, True, False, False, False]
    assert torch.equal(allowed, allowed.T)


def test_bert_is_the_default_and_each_switch_is_checked():
    assert ModernConfig().is_bert and type(tiny_encoder_config()) is EncoderConfig
    assert not tiny_encoder_config(ffn_type="geglu").is_bert
    assert isinstance(encoder_for(tiny_encoder_config(ffn_type="geglu")), ModernBertModel)
    assert type(encoder_for(tiny_encoder_config())) is BertModel
    with pytest.raises(ValueError, match="type_vocab_size must be"):  # BERT has segments
        EncoderConfig(type_vocab_size=0)
    for bad, message in [
        ({"position_embedding_type": "relative"}, "position_embedding_type must be one of"),
        ({"ffn_type": "glu"}, "ffn_type must be one of"),
        ({"norm_type": "batchnorm"}, "norm_type must be one of"),
        ({"bias": "no"}, "bias"),
        ({"local_attention": -1}, "local_attention must be"),
        ({"global_attn_every_n_layers": 0}, "global_attn_every_n_layers must be"),
        ({"rope_theta": 0}, "rope_theta must be"),
        ({"position_embedding_type": "rotary", "hidden_size": 36, "num_attention_heads": 4},
         "must be even"),
    ]:  # fmt: skip
        with pytest.raises(ValueError, match=message):
            tiny_encoder_config(**bad)


@pytest.mark.parametrize("switches", SWITCHES.values(), ids=SWITCHES.keys())
def test_each_switch_trains_and_keeps_padding_exact(switches):
    torch.manual_seed(0)
    config = tiny_encoder_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                 **switches)  # fmt: skip
    model = encoder_for(config)
    ids = torch.randint(1, 60, (3, 9))
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    mask[2, 3:] = 0
    out = model(ids, mask).last_hidden_state
    out.pow(2).mean().backward()
    assert all(p.grad is not None for p in model.parameters())  # every weight is used
    with torch.no_grad():
        alone = model(ids[1:2, :6]).last_hidden_state[0]
    assert torch.allclose(out[1, :6], alone, atol=1e-5)  # padding changes nothing


def as_modern(config: EncoderConfig) -> ModernConfig:
    return ModernConfig.from_dict(config.to_dict())


def test_with_every_switch_off_the_modern_encoder_is_bert():
    """BERT's weights under ModernBERT's names give BERT's vectors: the same blocks, in the same
    order (post-LN, learned positions, GELU, LayerNorm with bias), only named otherwise."""
    torch.manual_seed(0)
    bert = BertModel(tiny_encoder_config()).eval()
    modern = ModernBertModel(as_modern(tiny_encoder_config())).eval()
    theirs = bert.state_dict()
    ours = {"embeddings.tok_embeddings.weight": theirs["embeddings.word_embeddings.weight"]}
    for name in ("position_embeddings.weight", "token_type_embeddings.weight"):
        ours[f"embeddings.{name}"] = theirs[f"embeddings.{name}"]
    for kind in ("weight", "bias"):
        ours[f"embeddings.norm.{kind}"] = theirs[f"embeddings.LayerNorm.{kind}"]
        for i in range(len(bert.encoder.layer)):
            b, m = f"encoder.layer.{i}.", f"layers.{i}."
            qkv = [theirs[f"{b}attention.self.{p}.{kind}"] for p in ("query", "key", "value")]
            ours[f"{m}attn.Wqkv.{kind}"] = torch.cat(qkv)
            ours[f"{m}attn.Wo.{kind}"] = theirs[f"{b}attention.output.dense.{kind}"]
            ours[f"{m}attn_norm.{kind}"] = theirs[f"{b}attention.output.LayerNorm.{kind}"]
            ours[f"{m}mlp.Wi.{kind}"] = theirs[f"{b}intermediate.dense.{kind}"]
            ours[f"{m}mlp.Wo.{kind}"] = theirs[f"{b}output.dense.{kind}"]
            ours[f"{m}mlp_norm.{kind}"] = theirs[f"{b}output.LayerNorm.{kind}"]
    modern.load_state_dict(ours)
    ids = torch.randint(1, 60, (2, 9))
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    expected = bert(ids, mask).last_hidden_state
    torch.testing.assert_close(modern(ids, mask).last_hidden_state, expected)


def test_switches_change_the_parameters_as_expected():
    absolute = ModernBertModel(as_modern(tiny_encoder_config())).state_dict()
    rotary = encoder_for(tiny_encoder_config(position_embedding_type="rotary")).state_dict()
    assert "embeddings.position_embeddings.weight" not in rotary
    assert set(absolute) - set(rotary) == {"embeddings.position_embeddings.weight"}
    glu = encoder_for(tiny_encoder_config(ffn_type="swiglu")).state_dict()
    assert glu["layers.0.mlp.Wi.weight"].shape == (2 * 64, 32)
    assert glu["layers.0.mlp.Wo.weight"].shape == (32, 64)
    no_bias = encoder_for(tiny_encoder_config(bias=False)).state_dict()
    assert not any(name.endswith(".bias") for name in no_bias)
    rms = encoder_for(tiny_encoder_config(norm_type="rmsnorm")).state_dict()
    assert "embeddings.norm.weight" in rms and "embeddings.norm.bias" not in rms


def test_local_layers_see_only_their_window():
    torch.manual_seed(0)
    config = tiny_encoder_config(num_hidden_layers=1, local_attention=4,
                                 global_attn_every_n_layers=2)  # fmt: skip
    assert [config.is_local_layer(i) for i in range(4)] == [False, True, False, True]
    one_local_layer = ModernBertModel(
        dataclasses.replace(config, global_attn_every_n_layers=2)
    ).eval()
    one_local_layer.layers[0].is_local = True  # make the only layer local
    ids = torch.randint(1, 60, (1, 12))
    changed = ids.clone()
    changed[0, 11] = (ids[0, 11] % 59) + 1  # a token 11 positions away from the first
    first = one_local_layer(ids).last_hidden_state[0, 0]
    assert torch.allclose(first, one_local_layer(changed).last_hidden_state[0, 0], atol=1e-6)
    one_local_layer.layers[0].is_local = False  # global: the first token sees it
    assert not torch.allclose(
        one_local_layer(ids).last_hidden_state[0, 0],
        one_local_layer(changed).last_hidden_state[0, 0],
        atol=1e-6,
    )


def test_a_modern_checkpoint_saves_and_loads_but_is_not_exported_as_bert(tmp_path):
    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_encoder_config(**SWITCHES["all"])).eval()
    save_checkpoint(tmp_path / "modern", model)
    loaded = load_checkpoint(tmp_path / "modern").model
    assert loaded.config == model.config
    ids = torch.randint(1, 60, (2, 7))
    assert torch.equal(loaded(ids).logits, model(ids).logits)
    with pytest.raises(ValueError, match=r"'ffn_type': 'geglu'.*; it cannot be exported as a BERT"):
        config_to_hf(tiny_encoder_config(ffn_type="geglu"))
