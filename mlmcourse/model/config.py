"""The encoder's configuration (every size, validated) and what it returns.

Kept apart from the model so that :mod:`mlmcourse.model.bert` reads as the network alone;
both names are also in :mod:`mlmcourse.model`. Field names follow ``transformers.BertConfig``,
so a ``config.json`` written by :mod:`mlmcourse.checkpoint` is also a BERT config.
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
)

__all__ = ["ACTIVATIONS", "SIZE_FIELDS", "EncoderConfig", "EncoderOutput"]


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

# The float fields and their checks: each finite (an infinite epsilon is a typo).
_FLOAT_CHECKS = {
    "hidden_dropout_prob": _dropout,
    "attention_probs_dropout_prob": _dropout,
    "layer_norm_eps": _positive,
    "initializer_range": _positive,
}


@dataclass
class EncoderConfig:
    """Every size and switch of the BERT encoder. The defaults are BERT-base's.

    ``is_causal=True`` lets each position attend only to itself and earlier positions (the
    causal LM of the CLM vs MLM chapter). What later encoders changed is
    :class:`mlmcourse.model.modern.ModernConfig`, a subclass.
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
    is_causal: bool = False

    def __post_init__(self) -> None:
        # Each value is kept as the Python number its check returns (a NumPy int or a 0-d
        # tensor would not go into config.json).
        for name in SIZE_FIELDS:
            minimum = self._min_type_vocab_size if name == "type_vocab_size" else 1
            setattr(self, name, check_int(getattr(self, name), name, minimum=minimum))
        if self.hidden_size % self.num_attention_heads != 0:
            raise ConfigError(
                f"hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                f"({self.num_attention_heads}): each head gets hidden_size / num_attention_heads "
                f"dimensions"
            )
        for name, check in self._float_checks().items():
            setattr(self, name, check(getattr(self, name), name))
        self.hidden_act = check_choice(self.hidden_act, "hidden_act", tuple(sorted(ACTIVATIONS)))
        self.pad_token_id = check_int(self.pad_token_id, "pad_token_id", minimum=0)
        if self.pad_token_id >= self.vocab_size:
            raise ConfigError(
                f"pad_token_id must be an id in [0, vocab_size={self.vocab_size}), "
                f"got {self.pad_token_id!r}"
            )
        self.is_causal = check_bool(self.is_causal, "is_causal")

    _min_type_vocab_size = 1  # every BERT token has a segment

    def _float_checks(self) -> dict:
        return _FLOAT_CHECKS

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
                f"unknown {cls.__name__} fields {unknown}; known fields: {sorted(known)}"
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
