"""The five ``BertFor*`` heads side by side, each a pretrained encoder plus a few new layers.

As in Hugging Face's ``modeling_bert.py``: one :class:`~mlmcourse.model.BertModel` called
``bert``, and per task the layers that read its vectors.

- :mod:`~mlmcourse.heads.base`: what every head shares (:class:`EncoderHead`: start from a
  pretrained encoder; :class:`ClassifierHead`: labels saved in ``config.json``);
- :mod:`~mlmcourse.heads.masked_lm`: :class:`BertForMaskedLM`, a read-out tied to the word
  embeddings, scored at the masked positions;
- :mod:`~mlmcourse.heads.causal_lm`: :class:`BertForCausalLM`, the same model with causal
  attention and next-token targets;
- :mod:`~mlmcourse.heads.token_classification`: :class:`BertForTokenClassification`, a label
  per token (NER);
- :mod:`~mlmcourse.heads.sequence_classification`: :class:`BertForSequenceClassification`, a
  label per text, from the pooler;
- :mod:`~mlmcourse.heads.question_answering`: :class:`BertForQuestionAnswering`, an answer's
  start and end;
- :mod:`~mlmcourse.heads.auto`: architecture name to class, and :func:`load_checkpoint`.
"""

from mlmcourse.heads.auto import MODEL_FOR_ARCHITECTURE, Checkpoint, load_checkpoint
from mlmcourse.heads.base import ClassifierHead, EncoderHead, encoder_state
from mlmcourse.heads.causal_lm import BertForCausalLM, CausalLMOutput
from mlmcourse.heads.masked_lm import BertForMaskedLM, MaskedLMOutput
from mlmcourse.heads.question_answering import BertForQuestionAnswering
from mlmcourse.heads.sequence_classification import BertForSequenceClassification
from mlmcourse.heads.token_classification import BertForTokenClassification

__all__ = [
    "MODEL_FOR_ARCHITECTURE",
    "BertForCausalLM",
    "BertForMaskedLM",
    "BertForQuestionAnswering",
    "BertForSequenceClassification",
    "BertForTokenClassification",
    "CausalLMOutput",
    "Checkpoint",
    "ClassifierHead",
    "EncoderHead",
    "MaskedLMOutput",
    "encoder_state",
    "load_checkpoint",
]
