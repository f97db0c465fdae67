"""The encoder's configuration (every size and switch, validated) and what it returns.

Kept apart from :mod:`mlmcourse.model` so the model file reads as the network alone; both
names are re-exported there. Field names follow ``transformers.BertConfig`` so a
``config.json`` written by :mod:`mlmcourse.checkpoint` is also a BERT config.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import torch
import torch.nn.functional as F

from mlmcourse.utils.checks import check_bool, is_int, is_number

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
        for name in SIZE_FIELDS:
            value = getattr(self, name)
            low = 0 if name == "type_vocab_size" else 1  # 0: no segment embeddings
            if not is_int(value) or value < low:
                kind = "a non-negative" if low == 0 else "a positive"
                raise ValueError(f"{name} must be {kind} int, got {value!r}")
            setattr(self, name, int(value))  # a NumPy int would not go into config.json
        if self.hidden_size % self.num_attention_heads != 0:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                f"({self.num_attention_heads}): each head gets hidden_size / num_attention_heads "
                f"dimensions"
            )
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not is_number(value) or not 0 <= value < 1:
                raise ValueError(f"{name} must be a probability in [0, 1), got {value!r}")
        for name in ("layer_norm_eps", "initializer_range"):
            value = getattr(self, name)
            if not is_number(value) or not value > 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(
                f"hidden_act must be one of {sorted(ACTIVATIONS)}, got {self.hidden_act!r}"
            )
        if not is_int(self.pad_token_id) or not 0 <= self.pad_token_id < self.vocab_size:
            raise ValueError(
                f"pad_token_id must be an id in [0, vocab_size={self.vocab_size}), "
                f"got {self.pad_token_id!r}"
            )
        for name in ("pre_layer_norm", "is_causal", "bias"):
            check_bool(getattr(self, name), name)
        self._check_modern_switches()

    def _check_modern_switches(self) -> None:
        for name, allowed in (
            ("position_embedding_type", ("absolute", "rotary")),
            ("ffn_type", ("mlp", "geglu", "swiglu")),
            ("norm_type", ("layernorm", "rmsnorm")),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f"{name} must be one of {list(allowed)}, got {getattr(self, name)!r}"
                )
        for name in ("rope_theta", "local_rope_theta"):
            value = getattr(self, name)
            if not is_number(value) or not value > 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        if not is_int(self.local_attention) or self.local_attention < 0:
            raise ValueError(
                f"local_attention must be a window of tokens (an int >= 0, 0 for none), "
                f"got {self.local_attention!r}"
            )
        value = self.global_attn_every_n_layers
        if not is_int(value) or value <= 0:
            raise ValueError(f"global_attn_every_n_layers must be a positive int, got {value!r}")
        if self.position_embedding_type == "rotary" and self.attention_head_size % 2:
            raise ValueError(
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
            raise ValueError(
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
