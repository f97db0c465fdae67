"""Tokenizers: a word-level tokenizer written from scratch, and WordPiece built with 🤗 `tokenizers`.

Both share one interface (:class:`BaseTokenizer`), modelled on Hugging Face's, so the masking
collator, the encoder and the NER code work with either:

- ``tokenizer(texts, text_pairs=None, *, max_length=None, padding=True, truncation=True)``
  returns a :class:`BatchEncoding` of ``(B, T)`` ``torch.long`` tensors (``input_ids``,
  ``attention_mask``, ``token_type_ids``, ``special_tokens_mask``) with ``word_ids(i)``;
- ``encode(text, text_pair=None)`` returns one unpadded :class:`Encoding`;
- ``decode``, ``convert_ids_to_tokens``, ``convert_tokens_to_ids``, ``get_vocab``, the special
  token ids, ``save(path)``; :func:`load_tokenizer` reads what ``save`` wrote, a BERT
  ``tokenizer.json`` or a BERT ``vocab.txt``.

Why one interface: the chapters compare the two tokenizers on the same text, and every later
module asks the tokenizer for ids (``mask_token_id`` is 4 in our vocabularies and 103 in
BERT's) instead of assuming them.

One idea a module, in the order the chapter meets them:

- ``encoding``: the special tokens, :class:`Encoding` and :class:`BatchEncoding`;
- ``base``: :class:`BaseTokenizer`, checks, truncation and padding, written once;
- ``word_level``: :class:`WordLevelTokenizer` and its steps, from scratch;
- ``wordpiece_training``: learning WordPiece pieces, a naive loop and the fast one we ship;
- ``library``: the hooks of a tokenizer the 🤗 ``tokenizers`` library runs, written once;
- ``wordpiece``: :class:`WordPieceTokenizer` on 🤗 ``tokenizers``;
- ``files`` and ``loading``: reading tokenizer files, :func:`load_tokenizer`;
- ``hf_tokenizer``: :class:`HFTokenizer`, any other 🤗 ``tokenizer.json`` (ModernBERT's
  byte-level BPE, RoBERTa's) behind the same interface, for real checkpoints;
- ``stats``: :class:`TokenizationStats`, what a tokenizer does to a corpus; the words of a
  text it reads as ``[UNK]`` (:func:`unknown_words`).
"""

from mlmcourse.tokenization.base import BaseTokenizer, truncation_lengths
from mlmcourse.tokenization.encoding import SPECIAL_TOKENS, BatchEncoding, Encoding
from mlmcourse.tokenization.hf_tokenizer import HFTokenizer
from mlmcourse.tokenization.loading import load_tokenizer
from mlmcourse.tokenization.stats import (
    TokenizationStats,
    stats_row,
    tokenization_stats,
    unknown_words,
    wikitext2_comparison,
)
from mlmcourse.tokenization.word_level import (
    WordLevelTokenizer,
    build_vocab,
    count_words,
    pre_tokenize,
)
from mlmcourse.tokenization.wordpiece import WordPieceTokenizer, count_bert_words
from mlmcourse.tokenization.wordpiece_training import (
    learn_wordpiece_vocab,
    learn_wordpiece_vocab_naive,
)

__all__ = [
    "SPECIAL_TOKENS",
    "TokenizationStats",
    "BaseTokenizer",
    "BatchEncoding",
    "Encoding",
    "HFTokenizer",
    "WordLevelTokenizer",
    "WordPieceTokenizer",
    "build_vocab",
    "count_bert_words",
    "count_words",
    "learn_wordpiece_vocab",
    "learn_wordpiece_vocab_naive",
    "load_tokenizer",
    "pre_tokenize",
    "stats_row",
    "tokenization_stats",
    "unknown_words",
    "wikitext2_comparison",
    "truncation_lengths",
]
