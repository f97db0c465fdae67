"""Masking for masked language modeling: choose the positions to predict and corrupt the input.

BERT picks 15% of the tokens of every sequence as prediction targets. Of those, 80% are
replaced by ``[MASK]``, 10% by a random token and 10% are left as they are; the loss is computed
on all of them. The model therefore cannot tell which visible tokens are targets, so it learns a
representation of *every* token, not only of ``[MASK]``, which never occurs when the model is
used later.

A strategy only chooses the targets; one pipeline, :func:`~mlmcourse.masking.core.mask_with`,
does the rest for all of them (validation, special tokens, 80/10/10 and labels). Three
strategies, all vectorized over the batch in torch:

- :func:`mask_tokens` (``core.py``): each token independently (BERT);
- :func:`mask_whole_words` (``strategies.py``): each *word* independently, with all its
  WordPiece pieces together (BERT's later "whole word masking"), so a word is never half visible;
- :func:`mask_spans` (``strategies.py``): contiguous spans of words (or tokens) with geometric
  lengths (SpanBERT).

:class:`MLMCollator` (``collator.py``) tokenizes and pads a list of examples and masks them
afresh on every call, which is *dynamic masking* (RoBERTa): every epoch shows a sentence with
new masks.

Conventions (as in Hugging Face ``transformers``): ``labels`` holds the original id at the
target positions and ``-100`` (:data:`IGNORE_INDEX`, the ignore index of
``torch.nn.functional.cross_entropy``) everywhere else. Special tokens and padding are never
targets. Nothing is modified in place.
"""

from mlmcourse.masking.collator import STRATEGIES, MLMCollator
from mlmcourse.masking.core import IGNORE_INDEX, mask_tokens
from mlmcourse.masking.strategies import (
    expected_span_length,
    mask_spans,
    mask_whole_words,
    span_length_probs,
)

__all__ = [
    "IGNORE_INDEX",
    "MLMCollator",
    "STRATEGIES",
    "expected_span_length",
    "mask_spans",
    "mask_tokens",
    "mask_whole_words",
    "span_length_probs",
]
