"""Measuring a tokenizer on a corpus: out-of-vocabulary words, tokens per word, sequence length.

The numbers the chapter compares the word-level and WordPiece tokenizers by; any tokenizer with
the shared interface can be measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mlmcourse.tokenization.base import BaseTokenizer, as_text_list


@dataclass(frozen=True)
class TokenizationStats:
    """What a tokenizer does to a corpus: how many words it loses and how long sequences get."""

    texts: int
    words: int  # as the tokenizer's pre-tokenizer splits them
    tokens: int  # without [CLS]/[SEP]
    unk_words: int  # words with at least one [UNK] token: out-of-vocabulary words
    vocab_size: int

    @property
    def oov_rate(self) -> float:
        """The fraction of words the model cannot see (they became ``[UNK]``)."""
        return self.unk_words / self.words

    @property
    def tokens_per_word(self) -> float:
        """1.0 for a word-level tokenizer; above 1 when words are split into pieces."""
        return self.tokens / self.words

    @property
    def mean_length(self) -> float:
        """The mean sequence length the model sees, ``[CLS]`` and ``[SEP]`` included."""
        return (self.tokens + 2 * self.texts) / self.texts


def tokenization_stats(tokenizer: BaseTokenizer, texts: Sequence[str]) -> TokenizationStats:
    """Encode every text (no truncation) and count words, tokens and out-of-vocabulary words."""
    texts = as_text_list(list(texts) if not isinstance(texts, str) else texts, "texts")
    words = tokens = unk_words = 0
    unk = tokenizer.unk_token_id
    for enc in tokenizer._encode_batch(texts, None, None, truncation=False):
        unknown: set[int] = set()
        seen: set[int] = set()
        for token_id, word, special in zip(
            enc.ids, enc.word_ids, enc.special_tokens_mask, strict=True
        ):
            if special or word is None:
                continue
            tokens += 1
            seen.add(word)
            if token_id == unk:
                unknown.add(word)
        words += len(seen)
        unk_words += len(unknown)
    return TokenizationStats(len(texts), words, tokens, unk_words, tokenizer.vocab_size)
