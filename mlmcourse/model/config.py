"""The encoder's configuration (every size and switch, validated) and what it returns.

Kept apart from :mod:`mlmcourse.model` so the model file reads as the network alone; both
names are re-exported there. Field names follow ``transformers.BertConfig`` so a
``config.json`` written by :mod:`mlmcourse.checkpoint` is also a BERT config.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from functools import partial

import torch
import torch.nn.functional as F

from mlmcourse.utils.checks import (
    ConfigError,
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_positive_int,
)

__all__ = ["ACTIVATIONS", "MODERN_FIELDS", "SIZE_FIELDS", "EncoderConfig", "EncoderOutput"]

# The switches of the modern encoder (mlmcourse.model.modern); BERT has each at its default.
MODERN_FIELDS = (
    "position_embedding_type",
    "rope_theta",
    "local_rope_theta",
    "ffn_type",
    "norm_type",
    "bias",
    "local_attention",
    "global_attn_every_n_layers",
)


def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


# Hugging Face's names for activations: "gelu" is the exact (erf) GELU BERT was trained with;
# "gelu_new" and "gelu_pytorch_tanh" are the tanh approximation GPT-2 uses.
ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "relu": F.relu,
    "silu": F.silu,
    "swish": F.silu,
}


# The fields that set a weight matrix's shape: each a positive int.
SIZE_FIELDS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
)


_positive = partial(check_number, low=0.0, low_open=True)  # (0, inf)
_dropout = partial(check_number, low=0.0, high=1.0, high_open=True)  # [0, 1): 1 drops all

# The float fields and their checks: each finite (an infinite epsilon or theta is a typo).
_FLOAT_CHECKS = {
    "hidden_dropout_prob": _dropout,
    "attention_probs_dropout_prob": _dropout,
    "layer_norm_eps": _positive,
    "initializer_range": _positive,
    "rope_theta": _positive,
    "local_rope_theta": _positive,
}


@dataclass
class EncoderConfig:
    """Every size and switch of the encoder. The defaults are BERT-base's.

    ``pre_layer_norm=True`` applies each LayerNorm to a sublayer's input instead of to the
    residual sum (the "pre-LN" Transformer, easier to train deep or with large learning rates);
    it adds one final LayerNorm, and the first layer takes the embeddings' normalised output as
    it is. ``is_causal=True`` lets each position attend only to itself and earlier positions
    (the causal LM of the CLM vs MLM chapter).

    The switches after ``is_causal`` are what later encoders changed (:mod:`mlmcourse.model.modern`),
    each off by default: ``position_embedding_type="rotary"`` (with ``rope_theta``, and
    ``local_rope_theta`` for local layers), ``ffn_type="geglu"`` or ``"swiglu"`` (``hidden_act``
    is for ``"mlp"`` only), ``norm_type="rmsnorm"``, ``bias=False`` (no bias in projections
    and norms), ``local_attention`` (a window, 0 for none) with ``global_attn_every_n_layers``.
    ``type_vocab_size=0`` leaves out segment embeddings, as ModernBERT does.
    """

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"
    pad_token_id: int = 0
    initializer_range: float = 0.02
    pre_layer_norm: bool = False
    is_causal: bool = False
    position_embedding_type: str = "absolute"
    rope_theta: float = 10_000.0
    local_rope_theta: float = 10_000.0
    ffn_type: str = "mlp"
    norm_type: str = "layernorm"
    bias: bool = True
    local_attention: int = 0
    global_attn_every_n_layers: int = 1

    def __post_init__(self) -> None:
        # Each value is kept as the Python number its check returns (a NumPy int or a 0-d
        # tensor would not go into config.json).
        for name in SIZE_FIELDS:  # 0 type_vocab_size: no segment embeddings
            minimum = 0 if name == "type_vocab_size" else 1
            setattr(self, name, check_int(getattr(self, name), name, minimum=minimum))
        if self.hidden_size % self.num_attention_heads != 0:
            raise ConfigError(
                f"hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                f"({self.num_attention_heads}): each head gets hidden_size / num_attention_heads "
                f"dimensions"
            )
        for name, check in _FLOAT_CHECKS.items():
            setattr(self, name, check(getattr(self, name), name))
        self.hidden_act = check_choice(self.hidden_act, "hidden_act", tuple(sorted(ACTIVATIONS)))
        self.pad_token_id = check_int(self.pad_token_id, "pad_token_id", minimum=0)
        if self.pad_token_id >= self.vocab_size:
            raise ConfigError(
                f"pad_token_id must be an id in [0, vocab_size={self.vocab_size}), "
                f"got {self.pad_token_id!r}"
            )
        for name in ("pre_layer_norm", "is_causal", "bias"):
            setattr(self, name, check_bool(getattr(self, name), name))
        self._check_modern_switches()

    def _check_modern_switches(self) -> None:
        for name, allowed in (
            ("position_embedding_type", ("absolute", "rotary")),
            ("ffn_type", ("mlp", "geglu", "swiglu")),
            ("norm_type", ("layernorm", "rmsnorm")),
        ):
            setattr(self, name, check_choice(getattr(self, name), name, allowed))
        self.local_attention = check_int(self.local_attention, "local_attention", minimum=0)
        self.global_attn_every_n_layers = check_positive_int(
            self.global_attn_every_n_layers, "global_attn_every_n_layers"
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
        """Whether every switch of :mod:`mlmcourse.model.modern` is off: BERT's architecture."""
        defaults = EncoderConfig.__dataclass_fields__
        return all(getattr(self, name) == defaults[name].default for name in MODERN_FIELDS)

    @property
    def attention_head_size(self) -> int:
        """Dimensions per head: the ``d`` in ``softmax(Q K^T / sqrt(d))``."""
        return self.hidden_size // self.num_attention_heads

    def to_dict(self) -> dict:
        """A plain JSON-ready dict of every field."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> EncoderConfig:
        """Build a config from :meth:`to_dict`'s output; unknown keys are an error, not ignored."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(
                f"unknown EncoderConfig fields {unknown}; known fields: {sorted(known)}"
            )
        return cls(**values)


@dataclass
class EncoderOutput:
    """What the encoder returns. Tuples are ``None`` unless asked for.

    ``hidden_states`` holds the embeddings' output then every layer's output
    (``num_hidden_layers + 1`` tensors of shape (B, T, H)); ``attentions`` holds every layer's
    attention probabilities, (B, heads, T, T). ``pooler_output`` is set only when the model
    has a pooler (``add_pooling_layer=True``).
    """

    last_hidden_state: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
    pooler_output: torch.Tensor | None = None
