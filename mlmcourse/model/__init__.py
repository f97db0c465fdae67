"""The encoder: BERT from embeddings to the last layer, then what later chapters build on it.

In reading order:

- :mod:`~mlmcourse.model.config`: :class:`EncoderConfig`, every size checked on creation, and
  :class:`EncoderOutput`;
- :mod:`~mlmcourse.model.bert`: :class:`BertModel`, top to bottom (embeddings, self-attention,
  the feed-forward block, the stack, the pooler), with Hugging Face's parameter names; BERT
  and nothing else;
- :mod:`~mlmcourse.model.modern`: :class:`ModernConfig` and :class:`ModernBertModel`, the
  modern encoder's switches (rotary positions, gated feed-forward, pre-LN, RMSNorm, no
  biases, local attention) on BERT's pieces; :func:`encoder_for` builds either from a config;
- :mod:`~mlmcourse.model.speed`: the speed path, BERT on the real tokens only and on packed
  rows, with :mod:`~mlmcourse.model.dropout`'s cheaper random draws.

The heads that turn the encoder's vectors into predictions are :mod:`mlmcourse.heads`.
"""

from mlmcourse.model.bert import BertModel, eager_attention
from mlmcourse.model.config import EncoderConfig, EncoderOutput
from mlmcourse.model.modern import ModernBertModel, ModernConfig, config_from_dict, encoder_for

__all__ = [
    "BertModel",
    "EncoderConfig",
    "EncoderOutput",
    "ModernBertModel",
    "ModernConfig",
    "config_from_dict",
    "eager_attention",
    "encoder_for",
]
