"""The encoder: BERT from embeddings to the last layer, and the modern switches.

In reading order:

- :mod:`~mlmcourse.model.config`: :class:`EncoderConfig`, every size and switch, checked on
  creation, and :class:`EncoderOutput`;
- :mod:`~mlmcourse.model.bert`: :class:`BertModel`, top to bottom (embeddings, self-attention,
  the feed-forward block, the stack, the pooler), with Hugging Face's parameter names;
- :mod:`~mlmcourse.model.modern`: rotary positions, gated feed-forward, RMSNorm and local
  attention, the parts a modern encoder (ModernBERT) changes;
- :mod:`~mlmcourse.model.unpadding`: computing on the real tokens only.

The heads that turn the encoder's vectors into predictions are :mod:`mlmcourse.heads`.
"""

from mlmcourse.model.bert import BertModel, eager_attention, mean_pooling
from mlmcourse.model.config import EncoderConfig, EncoderOutput

__all__ = ["BertModel", "EncoderConfig", "EncoderOutput", "eager_attention", "mean_pooling"]
