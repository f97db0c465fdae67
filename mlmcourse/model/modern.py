"""The modern encoder: what encoders changed after BERT, each a switch, built on BERT's pieces.

ModernBERT, NeoBERT, MosaicBERT and the cramming study keep BERT's masked-LM objective and
change the architecture. :class:`ModernConfig` adds each change to BERT's config as a switch,
off by default, so that one change at a time can be measured (the modern encoder chapter's
ablation), and :class:`ModernBertModel` builds the encoder they describe from the modules of
:mod:`mlmcourse.model.bert`, with the same parameter names:

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
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.model.bert import (
    BertAttention,
    BertModel,
    BertPooler,
    BertSelfAttention,
    BertSelfOutput,
    attention_allowed,
    attention_bias,
    check_input_shape,
    project_qkv,
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
# The switches of the modern encoder; BERT has each at its default.
MODERN_FIELDS = (
    "pre_layer_norm",
    "position_embedding_type",
    "rope_theta",
    "local_rope_theta",
    "ffn_type",
    "norm_type",
    "bias",
    "local_attention",
    "global_attn_every_n_layers",
)


@dataclass
class ModernConfig(EncoderConfig):
    """BERT's config plus the switches of a modern encoder, each off (BERT's) by default.

    ``type_vocab_size=0`` leaves out segment embeddings, as ModernBERT does.
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
def make_norm(config: ModernConfig) -> nn.Module:
    """The config's normalisation: BERT's LayerNorm, one without bias, or RMSNorm. Whatever it
    is, the module keeps BERT's attribute name ``LayerNorm`` (the checkpoints' names)."""
    if config.norm_type == "rmsnorm":
        return RMSNorm(config.hidden_size, eps=config.layer_norm_eps)
    return nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps, bias=config.bias)


class ModernEmbeddings(nn.Module):
    """BERT's embeddings, less the position vectors (with rotary positions) and the segment
    vectors (with ``type_vocab_size=0``), normalised by the config's norm."""

    def __init__(self, config: ModernConfig) -> None:
        super().__init__()
        hidden = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, hidden, config.pad_token_id)
        self.position_embeddings = None
        if config.position_embedding_type == "absolute":
            self.position_embeddings = nn.Embedding(config.max_position_embeddings, hidden)
        self.token_type_embeddings = None
        if config.type_vocab_size:
            self.token_type_embeddings = nn.Embedding(config.type_vocab_size, hidden)
        self.LayerNorm = make_norm(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> torch.Tensor:
        embeddings = self.word_embeddings(input_ids)  # (B, T, H)
        if self.position_embeddings is not None:
            positions = torch.arange(input_ids.shape[1], device=input_ids.device)
            embeddings = embeddings + self.position_embeddings(positions)
        if self.token_type_embeddings is not None:
            segments = torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids
            embeddings = embeddings + self.token_type_embeddings(segments)
        return self.dropout(self.LayerNorm(embeddings))  # (B, T, H)


class ModernSelfAttention(BertSelfAttention):
    """BERT's attention, with queries and keys turned by their positions (rotary), and
    projections without biases when the config has none."""

    def __init__(self, config: ModernConfig) -> None:
        super().__init__(config)
        for name in ("query", "key", "value"):
            setattr(self, name, nn.Linear(config.hidden_size, config.hidden_size, config.bias))

    def forward(
        self,
        hidden_states: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        is_causal: bool = False,
        output_attentions: bool = False,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        query, key, value = project_qkv(hidden_states, self).chunk(3, dim=-1)  # (B, T, H)
        query, key, value = (self.split_heads(x) for x in (query, key, value))  # (B, h, T, d)
        if rotary is not None:  # turn queries and keys by their positions' angles
            query, key = apply_rotary(query, key, *rotary)
        context, probs = self.attend(query, key, value, bias, is_causal, output_attentions)
        return self.merge_heads(context), probs


class ModernSelfOutput(BertSelfOutput):
    """Project back to H, dropout, add the residual; normalise here only when post-LN."""

    def __init__(self, config: ModernConfig, in_features: int | None = None) -> None:
        super().__init__(config, in_features)
        self.dense = nn.Linear(in_features or config.hidden_size, config.hidden_size, config.bias)
        self.LayerNorm = make_norm(config)
        self.pre_layer_norm = config.pre_layer_norm

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        hidden_states = self.dropout(self.dense(hidden_states)) + input_tensor  # (B, T, H)
        return hidden_states if self.pre_layer_norm else self.LayerNorm(hidden_states)


class ModernAttention(BertAttention):
    """The attention block; pre-LN normalises its input with the block's own norm."""

    def __init__(self, config: ModernConfig) -> None:
        super().__init__(config)
        self.self = ModernSelfAttention(config)
        self.output = ModernSelfOutput(config)
        self.pre_layer_norm = config.pre_layer_norm

    def forward(self, hidden_states, bias=None, *, is_causal=False, output_attentions=False,
                rotary=None):  # fmt: skip
        normed = self.output.LayerNorm(hidden_states) if self.pre_layer_norm else hidden_states
        context, probs = self.self(
            normed, bias, is_causal=is_causal, output_attentions=output_attentions, rotary=rotary
        )
        return self.output(context, hidden_states), probs


class ModernIntermediate(nn.Module):
    """The feed-forward expansion: BERT's ``act(x W)``, or a gated block twice as wide whose
    second half gates the first (:func:`gated_activation`)."""

    def __init__(self, config: ModernConfig) -> None:
        super().__init__()
        self.ffn_type = config.ffn_type
        width = config.intermediate_size * (1 if config.ffn_type == "mlp" else 2)
        self.dense = nn.Linear(config.hidden_size, width, bias=config.bias)
        self.intermediate_act_fn = ACTIVATIONS[config.hidden_act]

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if self.ffn_type == "mlp":
            return self.intermediate_act_fn(self.dense(hidden_states))  # (B, T, I)
        return gated_activation(self.dense(hidden_states), self.ffn_type)  # (B, T, I)


class ModernLayer(nn.Module):
    """One layer: the attention block, then the feed-forward block, each normalised before
    (pre-LN) or after (post-LN). With pre-LN the first layer's input is the embeddings' output,
    already normalised, so it is not normalised again (as in ModernBERT)."""

    def __init__(self, config: ModernConfig, index: int) -> None:
        super().__init__()
        self.attention = ModernAttention(config)
        if config.pre_layer_norm and index == 0:
            self.attention.output.LayerNorm = nn.Identity()
        self.intermediate = ModernIntermediate(config)
        self.output = ModernSelfOutput(config, in_features=config.intermediate_size)
        self.pre_layer_norm = config.pre_layer_norm
        self.is_local = config.is_local_layer(index)

    def forward(self, hidden_states, bias=None, *, is_causal=False, output_attentions=False,
                rotary=None):  # fmt: skip
        attention_output, probs = self.attention(
            hidden_states, bias, is_causal=is_causal, output_attentions=output_attentions,
            rotary=rotary,
        )  # fmt: skip
        normed = (
            self.output.LayerNorm(attention_output) if self.pre_layer_norm else attention_output
        )
        return self.output(self.intermediate(normed), attention_output), probs


class LocalAttention(NamedTuple):
    """What the local layers use instead of the global layers' bias and rotation."""

    bias: torch.Tensor  # (B, 1, T, T): the window (and padding, causality)
    rotary: tuple[torch.Tensor, torch.Tensor] | None  # (cos, sin) at local_rope_theta


class ModernEncoder(nn.Module):
    """The stack, each layer global or local; pre-LN adds a final norm."""

    def __init__(self, config: ModernConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(ModernLayer(config, i) for i in range(config.num_hidden_layers))
        if config.pre_layer_norm:  # pre-LN leaves the residual stream unnormalised: fix the end
            self.LayerNorm = make_norm(config)

    def forward(self, hidden_states, bias, *, is_causal, output_attentions, output_hidden_states,
                rotary, local):  # fmt: skip
        all_hidden = [hidden_states] if output_hidden_states else None
        all_attentions = [] if output_attentions else None
        for layer in self.layer:
            layer_bias, layer_rotary = (
                (local.bias, local.rotary) if layer.is_local else (bias, rotary)
            )
            hidden_states, probs = layer(
                hidden_states, layer_bias, is_causal=is_causal and layer_bias is None,
                output_attentions=output_attentions, rotary=layer_rotary,
            )  # fmt: skip
            if all_hidden is not None:
                all_hidden.append(hidden_states)
            if all_attentions is not None:
                all_attentions.append(probs)
        if hasattr(self, "LayerNorm"):
            hidden_states = self.LayerNorm(hidden_states)
            if all_hidden is not None:
                all_hidden[-1] = hidden_states
        return EncoderOutput(
            last_hidden_state=hidden_states,
            hidden_states=tuple(all_hidden) if all_hidden is not None else None,
            attentions=tuple(all_attentions) if all_attentions is not None else None,
        )


class ModernBertModel(BertModel):
    """The modern encoder: :class:`ModernConfig`'s switches on BERT's structure and names."""

    def __init__(self, config: ModernConfig, *, add_pooling_layer: bool = False) -> None:
        nn.Module.__init__(self)  # BERT's own modules are not built, these are
        if not isinstance(config, ModernConfig):
            raise TypeError(f"ModernBertModel needs a ModernConfig, got {type(config).__name__}")
        self.config = config
        self.embeddings = ModernEmbeddings(config)
        self.encoder = ModernEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.apply(self._init_weights)

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
        config = self.config
        hidden_states = self.embeddings(input_ids, token_type_ids)  # (B, T, H)
        if attention_mask is None and config.local_attention:
            attention_mask = torch.ones_like(input_ids)
        bias = local = None
        if attention_mask is not None:  # padding (and causality), as in BERT
            allowed = attention_allowed(attention_mask, is_causal=config.is_causal)
            bias = attention_bias(allowed, hidden_states.dtype)
        if config.local_attention:  # the local layers' window, and their rotation
            window = sliding_window_allowed(
                input_ids.shape[1], config.local_attention, input_ids.device
            )
            allowed = attention_allowed(attention_mask, is_causal=config.is_causal) & window
            diagonal = torch.eye(input_ids.shape[1], dtype=torch.bool, device=input_ids.device)
            local_bias = attention_bias(allowed | diagonal, hidden_states.dtype)  # (B, 1, T, T)
            local = LocalAttention(local_bias, self._rotary(input_ids, config.local_rope_theta))
        output = self.encoder(
            hidden_states, bias, is_causal=config.is_causal, output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            rotary=self._rotary(input_ids, config.rope_theta), local=local,
        )  # fmt: skip
        if self.pooler is not None:
            output.pooler_output = self.pooler(output.last_hidden_state)
        return output

    def _rotary(
        self, input_ids: torch.Tensor, theta: float
    ) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Each position's (cos, sin) with rotary positions, else None."""
        if self.config.position_embedding_type != "rotary":
            return None
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)[None]  # (1, T)
        return rotary_cos_sin(positions, self.config.attention_head_size, theta)
