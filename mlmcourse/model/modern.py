"""The modern encoder: what encoders changed after BERT, each a switch, built on BERT's pieces.

ModernBERT, NeoBERT, MosaicBERT and the cramming study keep BERT's masked-LM objective and
change the architecture. :class:`ModernConfig` adds each change to BERT's config as a switch,
off by default, so that one change at a time can be measured (the modern encoder chapter's
ablation), and :class:`ModernBertModel` builds the encoder they describe from its own layer,
:class:`ModernLayer`, with ModernBERT's names (``Wqkv``, ``attn_norm``, ``mlp.Wi``...), on
BERT's attention (:func:`mlmcourse.model.bert.attention`) and initialisation:

- ``position_embedding_type="rotary"``: no learned position vectors; queries and keys are
  rotated by an angle proportional to their position (:func:`apply_rotary`), so attention
  scores depend on the *distance* between tokens.
- ``ffn_type="geglu"`` / ``"swiglu"``: a gated feed-forward block (:func:`gated_activation`),
  ``act(x W_a) * (x W_b)``, with GELU or SiLU as ``act``.
- ``pre_layer_norm=True``: each norm goes before its block, with one more at the end.
- ``norm_type="rmsnorm"``: :class:`RMSNorm`, LayerNorm without the mean and the bias.
- ``bias=False``: no bias in any projection or norm.
- ``local_attention=W`` with ``global_attn_every_n_layers=n``: every ``n``-th layer attends
  to the whole text, the others only to tokens within ``W // 2`` positions
  (:func:`sliding_window_allowed`).
- ``type_vocab_size=0``: no segment embeddings.

:func:`mlmcourse.interop.modernbert.load_modernbert` loads a ``transformers`` ModernBERT
checkpoint into it with the matching switches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import partial
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.model.bert import (
    BertModel,
    BertPooler,
    attention,
    attention_allowed,
    attention_bias,
    check_input_shape,
    init_weights,
    merge_heads,
    split_heads,
)
from mlmcourse.model.config import ACTIVATIONS, EncoderConfig, EncoderOutput, _positive
from mlmcourse.utils.checks import ConfigError, check_bool, check_choice, check_int

__all__ = [
    "GATED_ACTIVATIONS",
    "MODERN_FIELDS",
    "ModernBertModel",
    "ModernConfig",
    "RMSNorm",
    "apply_rotary",
    "config_from_dict",
    "encoder_for",
    "gated_activation",
    "make_norm",
    "rotary_cos_sin",
    "rotate_half",
    "sliding_window_allowed",
]

# The gated feed-forward blocks and the activation each puts on its gate.
GATED_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "geglu": F.gelu,
    "swiglu": F.silu,
}


# ---------------------------------------------------------------------------------- rotary
def rotary_cos_sin(
    position_ids: torch.Tensor, head_dim: int, theta: float = 10_000.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """The rotation of each position: (cos, sin), each (B, 1, T, d) from (B, T) positions.

    Dimension pair ``i`` turns by ``position * theta ** (-2i / d)``: fast for the first pairs,
    slow for the last, so near and far distances both stay visible. The two halves of the
    head repeat the same angles (the ``rotate_half`` layout of GPT-NeoX, Llama and ModernBERT).
    """
    exponents = torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim
    inv_freq = 1.0 / (theta**exponents)  # (d/2,)
    angles = position_ids[..., None].float() * inv_freq  # (B, T, d/2)
    angles = torch.cat([angles, angles], dim=-1)[:, None]  # (B, 1, T, d)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last dimension: a 90-degree turn."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rotary(
    query: torch.Tensor, key: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rotate queries and keys (B, heads, T, d) by their positions' angles.

    A rotation keeps lengths, and ``q_m . k_n`` after rotating by ``m`` and ``n`` depends only
    on ``m - n``: the score sees how far apart two tokens are, not where they are. Values are
    not rotated. Computed in float32, as ``transformers`` does, then cast back.
    """
    dtype = query.dtype
    query, key = query.float(), key.float()
    rotated_query = query * cos + rotate_half(query) * sin
    rotated_key = key * cos + rotate_half(key) * sin
    return rotated_query.to(dtype), rotated_key.to(dtype)


# ------------------------------------------------------------------------------ gated FFN
def gated_activation(x: torch.Tensor, ffn_type: str) -> torch.Tensor:
    """(..., 2I) -> (..., I): ``act(first half) * second half`` (GeGLU or SwiGLU).

    The up-projection is twice as wide and its second half gates the first, token by token;
    ModernBERT, Llama and PaLM use it. (ModernBERT's names: ``input, gate = Wi(x).chunk(2)``.)
    """
    value, gate = x.chunk(2, dim=-1)
    return GATED_ACTIVATIONS[ffn_type](value) * gate


# -------------------------------------------------------------------------------- RMSNorm
class RMSNorm(nn.Module):
    """``x / sqrt(mean(x^2) + eps) * weight``: LayerNorm without subtracting the mean, no bias.

    Cheaper, and in practice as good; the same as ``torch.nn.RMSNorm`` (a test pins it).
    """

    def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return (x.float() * scale).to(x.dtype) * self.weight


# ------------------------------------------------------------------------ local attention
def sliding_window_allowed(seq_len: int, window: int, device: torch.device | None = None):
    """(T, T) booleans: query ``i`` may see key ``j`` when ``|i - j| <= window // 2``.

    ``window`` is the whole span a token sees (ModernBERT's ``local_attention``, 128), half
    on each side. Local layers cost O(T x window) instead of O(T^2) with a kernel that skips
    the hidden blocks; every few layers a global one lets information cross the whole text.
    """
    positions = torch.arange(seq_len, device=device)
    return (positions[:, None] - positions[None, :]).abs() <= window // 2


# ---------------------------------------------------------------------------------- config
@dataclass
class ModernConfig(EncoderConfig):
    """BERT's config plus the switches of a modern encoder, each off (BERT's) by default.

    ``type_vocab_size=0`` leaves out segment embeddings, as ModernBERT does. The fields below
    are the one list of the switches: :data:`MODERN_FIELDS`, the pretraining config's model
    keys and the checkpoint files take their names and defaults from here.
    """

    pre_layer_norm: bool = False
    position_embedding_type: str = "absolute"
    rope_theta: float = 10_000.0
    local_rope_theta: float = 10_000.0
    ffn_type: str = "mlp"
    norm_type: str = "layernorm"
    bias: bool = True
    local_attention: int = 0
    global_attn_every_n_layers: int = 1

    _min_type_vocab_size = 0

    def _float_checks(self) -> dict:
        return {**super()._float_checks(), "rope_theta": _positive, "local_rope_theta": _positive}

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("pre_layer_norm", "bias"):
            setattr(self, name, check_bool(getattr(self, name), name))
        for name, allowed in (
            ("position_embedding_type", ("absolute", "rotary")),
            ("ffn_type", ("mlp", "geglu", "swiglu")),
            ("norm_type", ("layernorm", "rmsnorm")),
        ):
            setattr(self, name, check_choice(getattr(self, name), name, allowed))
        self.local_attention = check_int(self.local_attention, "local_attention", minimum=0)
        self.global_attn_every_n_layers = check_int(
            self.global_attn_every_n_layers, "global_attn_every_n_layers", minimum=1
        )
        if self.position_embedding_type == "rotary" and self.attention_head_size % 2:
            raise ConfigError(
                f"rotary positions turn pairs of dimensions: hidden_size / num_attention_heads "
                f"must be even, got {self.attention_head_size}"
            )

    def is_local_layer(self, index: int) -> bool:
        """Whether layer ``index`` attends within ``local_attention`` only (every
        ``global_attn_every_n_layers``-th layer, starting with the first, is global)."""
        return self.local_attention > 0 and index % self.global_attn_every_n_layers != 0

    @property
    def is_bert(self) -> bool:
        """Whether every switch is off: BERT's architecture."""
        defaults = ModernConfig.__dataclass_fields__
        switches_off = all(getattr(self, f) == defaults[f].default for f in MODERN_FIELDS)
        return switches_off and self.type_vocab_size > 0


# The switches of the modern encoder (the fields ModernConfig adds to BERT's), in field order;
# BERT has each at its default.
MODERN_FIELDS = tuple(
    f.name for f in fields(ModernConfig) if f.name not in EncoderConfig.__dataclass_fields__
)


def config_from_dict(values: dict[str, Any]) -> EncoderConfig:
    """The config a ``config.json`` (or :meth:`~EncoderConfig.to_dict`) describes: a
    :class:`ModernConfig` when a modern switch is on, else BERT's :class:`EncoderConfig` (a
    switch written at its default, as older checkpoints write ``pre_layer_norm: false``, is
    dropped). Unknown keys are an error."""
    defaults = ModernConfig.__dataclass_fields__
    modern = (
        any(k in MODERN_FIELDS and v != defaults[k].default for k, v in values.items())
        or values.get("type_vocab_size") == 0
    )
    if modern:
        return ModernConfig.from_dict(values)
    unknown = sorted(set(values) - set(defaults))
    if unknown:  # named against every field a config may have
        raise ConfigError(
            f"unknown EncoderConfig fields {unknown}; known fields: {sorted(defaults)}"
        )
    return EncoderConfig.from_dict({k: v for k, v in values.items() if k not in MODERN_FIELDS})


def encoder_for(config: EncoderConfig, *, add_pooling_layer: bool = False) -> BertModel:
    """A new encoder of the kind ``config`` describes: BERT, or the modern encoder."""
    model = ModernBertModel if isinstance(config, ModernConfig) else BertModel
    return model(config, add_pooling_layer=add_pooling_layer)


# ------------------------------------------------------------------------------- modules
# The modules take ModernBERT's own names (``tok_embeddings``, ``Wqkv``, ``Wo``, ``attn_norm``,
# ``mlp.Wi``, ``final_norm``), so its checkpoints load as they are
# (:mod:`mlmcourse.interop.modernbert`); BERT's learned positions and segments keep BERT's names.
def make_norm(config: ModernConfig) -> nn.Module:
    """The config's normalisation: BERT's LayerNorm, one without bias, or RMSNorm."""
    if config.norm_type == "rmsnorm":
        return RMSNorm(config.hidden_size, eps=config.layer_norm_eps)
    return nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps, bias=config.bias)


class ModernEmbeddings(nn.Module):
    """Token vectors (``tok_embeddings``), plus BERT's learned positions unless they are
    rotary and its segment vectors unless ``type_vocab_size=0``; then ``norm`` and dropout."""

    def __init__(self, config: ModernConfig) -> None:
        super().__init__()
        hidden = config.hidden_size
        self.tok_embeddings = nn.Embedding(config.vocab_size, hidden, config.pad_token_id)
        self.position_embeddings = None
        if config.position_embedding_type == "absolute":
            self.position_embeddings = nn.Embedding(config.max_position_embeddings, hidden)
        self.token_type_embeddings = None
        if config.type_vocab_size:
            self.token_type_embeddings = nn.Embedding(config.type_vocab_size, hidden)
        self.norm = make_norm(config)
        self.drop = nn.Dropout(config.hidden_dropout_prob)

    def forward(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> torch.Tensor:
        embeddings = self.tok_embeddings(input_ids)  # (B, T, H)
        if self.position_embeddings is not None:
            positions = torch.arange(input_ids.shape[1], device=input_ids.device)
            embeddings = embeddings + self.position_embeddings(positions)
        if self.token_type_embeddings is not None:
            segments = torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids
            embeddings = embeddings + self.token_type_embeddings(segments)
        return self.drop(self.norm(embeddings))  # (B, T, H)


class ModernAttention(nn.Module):
    """Self-attention: queries, keys and values from one projection (``Wqkv``), queries and keys
    turned by their positions (rotary), BERT's attention in every head, ``Wo`` back to H."""

    def __init__(self, config: ModernConfig) -> None:
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.Wqkv = nn.Linear(config.hidden_size, 3 * config.hidden_size, bias=config.bias)
        self.Wo = nn.Linear(config.hidden_size, config.hidden_size, bias=config.bias)
        self.dropout_prob = config.attention_probs_dropout_prob
        self.out_drop = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, bias=None, *, output_attentions=False, rotary=None):
        heads = self.num_attention_heads
        qkv = self.Wqkv(hidden_states).chunk(3, dim=-1)  # 3 x (B, T, H)
        query, key, value = (split_heads(x, heads) for x in qkv)  # (B, h, T, d)
        if rotary is not None:  # turn queries and keys by their positions' angles
            query, key = apply_rotary(query, key, *rotary)
        context, probs = attention(
            query, key, value, bias, output_attentions=output_attentions,
            dropout_p=self.dropout_prob if self.training else 0.0,
        )  # fmt: skip
        return self.out_drop(self.Wo(merge_heads(context))), probs  # (B, T, H)


class ModernMLP(nn.Module):
    """The feed-forward block: ``Wi`` up to the intermediate width (twice as wide when gated,
    :func:`gated_activation`), the activation, ``Wo`` back down, dropout."""

    def __init__(self, config: ModernConfig) -> None:
        super().__init__()
        self.ffn_type = config.ffn_type
        width = config.intermediate_size * (1 if config.ffn_type == "mlp" else 2)
        self.Wi = nn.Linear(config.hidden_size, width, bias=config.bias)
        self.act = ACTIVATIONS[config.hidden_act]
        self.Wo = nn.Linear(config.intermediate_size, config.hidden_size, bias=config.bias)
        self.drop = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        up = self.Wi(hidden_states)  # (B, T, I) or (B, T, 2I)
        up = self.act(up) if self.ffn_type == "mlp" else gated_activation(up, self.ffn_type)
        return self.drop(self.Wo(up))  # (B, T, H)


class ModernLayer(nn.Module):
    """One layer: attention and feed-forward blocks, each with its norm (``attn_norm``,
    ``mlp_norm``). Pre-LN normalises each block's input and adds its output to the stream
    (the first layer's input, the embeddings', is normalised already: no ``attn_norm``, as in
    ModernBERT); post-LN, BERT's order, normalises each block's sum with its input."""

    def __init__(self, config: ModernConfig, index: int) -> None:
        super().__init__()
        first_pre_ln = config.pre_layer_norm and index == 0
        self.attn_norm = nn.Identity() if first_pre_ln else make_norm(config)
        self.attn = ModernAttention(config)
        self.mlp_norm = make_norm(config)
        self.mlp = ModernMLP(config)
        self.pre_layer_norm = config.pre_layer_norm
        self.is_local = config.is_local_layer(index)

    def forward(self, x, bias=None, *, output_attentions=False, rotary=None):
        kwargs = dict(output_attentions=output_attentions, rotary=rotary)
        if self.pre_layer_norm:
            attended, probs = self.attn(self.attn_norm(x), bias, **kwargs)
            x = x + attended  # (B, T, H)
            return x + self.mlp(self.mlp_norm(x)), probs
        attended, probs = self.attn(x, bias, **kwargs)
        x = self.attn_norm(x + attended)  # (B, T, H)
        return self.mlp_norm(x + self.mlp(x)), probs


class LocalAttention(NamedTuple):
    """What the local layers use instead of the global layers' bias and rotation."""

    bias: torch.Tensor  # (B, 1, T, T): the window (and padding, causality)
    rotary: tuple[torch.Tensor, torch.Tensor] | None  # (cos, sin) at local_rope_theta


class ModernBertModel(nn.Module):
    """The modern encoder: embeddings, the layers (each global or local), and with pre-LN a
    final norm (pre-LN leaves the residual stream unnormalised); BERT's pooler if asked."""

    def __init__(self, config: ModernConfig, *, add_pooling_layer: bool = False) -> None:
        super().__init__()
        if not isinstance(config, ModernConfig):
            raise TypeError(f"ModernBertModel needs a ModernConfig, got {type(config).__name__}")
        self.config = config
        self.embeddings = ModernEmbeddings(config)
        self.layers = nn.ModuleList(ModernLayer(config, i) for i in range(config.num_hidden_layers))
        self.final_norm = make_norm(config) if config.pre_layer_norm else None
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.apply(partial(init_weights, std=config.initializer_range))

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embeddings.tok_embeddings

    def num_parameters(self) -> int:
        """How many numbers the model learns (tied weights counted once)."""
        return sum(p.numel() for p in self.parameters())

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> EncoderOutput:
        check_input_shape(input_ids, self.config)
        hidden_states = self.embeddings(input_ids, token_type_ids)  # (B, T, H)
        bias, local = self._biases(input_ids, attention_mask, hidden_states.dtype)
        rotary = self._rotary(input_ids, self.config.rope_theta)
        all_hidden, all_attentions = [hidden_states], []
        for layer in self.layers:
            layer_bias, layer_rotary = (
                (local.bias, local.rotary) if layer.is_local else (bias, rotary)
            )
            hidden_states, probs = layer(
                hidden_states, layer_bias, output_attentions=output_attentions, rotary=layer_rotary
            )
            all_hidden.append(hidden_states)
            all_attentions.append(probs)
        if self.final_norm is not None:
            hidden_states = all_hidden[-1] = self.final_norm(hidden_states)
        output = EncoderOutput(
            last_hidden_state=hidden_states,
            hidden_states=tuple(all_hidden) if output_hidden_states else None,
            attentions=tuple(all_attentions) if output_attentions else None,
        )
        if self.pooler is not None:
            output.pooler_output = self.pooler(output.last_hidden_state)
        return output

    def _biases(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None, dtype: torch.dtype
    ) -> tuple[torch.Tensor | None, LocalAttention | None]:
        """The global layers' bias (padding and causality, as BERT's), and the local layers'
        window with their rotation (``None`` without local attention)."""
        config = self.config
        if attention_mask is None and (config.local_attention or config.is_causal):
            attention_mask = torch.ones_like(input_ids)  # no padding, but a window or a future
        if attention_mask is None:
            return None, None
        allowed = attention_allowed(attention_mask, is_causal=config.is_causal)
        bias = attention_bias(allowed, dtype)
        if not config.local_attention:
            return bias, None
        seq_len, device = input_ids.shape[1], input_ids.device
        window = sliding_window_allowed(seq_len, config.local_attention, device)
        diagonal = torch.eye(seq_len, dtype=torch.bool, device=device)
        local_bias = attention_bias((allowed & window) | diagonal, dtype)  # (B, 1, T, T)
        return bias, LocalAttention(local_bias, self._rotary(input_ids, config.local_rope_theta))

    def _rotary(
        self, input_ids: torch.Tensor, theta: float
    ) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Each position's (cos, sin) with rotary positions, else None."""
        if self.config.position_embedding_type != "rotary":
            return None
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)[None]  # (1, T)
        return rotary_cos_sin(positions, self.config.attention_head_size, theta)
