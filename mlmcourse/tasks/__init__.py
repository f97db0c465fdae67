"""What a trained model is used for, one module (or package) per task.

- :mod:`~mlmcourse.tasks.fill_mask`: the words behind ``[MASK]``, probes and baselines;
- :mod:`~mlmcourse.tasks.generation`: a causal LM continuing a prompt, and an MLM filling a
  run of masks (the CLM vs MLM chapter);
- :mod:`~mlmcourse.tasks.classification`: fine-tuning and using a sentence classifier;
- :mod:`~mlmcourse.tasks.embeddings`: sentence vectors and semantic search;
- :mod:`~mlmcourse.tasks.zero_shot`: classification by a prompt with a mask;
- :mod:`~mlmcourse.tasks.probing`: what the encoder's vectors already know (linear probes);
- :mod:`~mlmcourse.tasks.ner`: named entities, with their metrics;
- :mod:`~mlmcourse.tasks.qa`: extractive question answering, with SQuAD's metrics.

Every task starts from a head of :mod:`mlmcourse.heads`, trained with
:func:`mlmcourse.training.fine_tune`.
"""
