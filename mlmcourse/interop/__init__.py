"""Real checkpoints in and out: Hugging Face BERT, ModernBERT and the MiniLM encoder.

- :mod:`~mlmcourse.interop.bert`: ``transformers``' BERT folders (``config.json`` plus
  safetensors or ``pytorch_model.bin``) to our encoder and back (:func:`load_bert`,
  :func:`save_hf`, :func:`export_hf`);
- :mod:`~mlmcourse.interop.modernbert`: a ModernBERT folder into our encoder with its modern
  switches on (:func:`load_modernbert`);
- :mod:`~mlmcourse.interop.minilm`: the MiniLM encoder shipped on PyPI, with the masked-LM head
  this package fits for it (:func:`load_minilm_mlm`).
"""
