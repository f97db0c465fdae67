"""Measuring a tokenizer on a corpus: out-of-vocabulary words, tokens per word, sequence length.

The numbers the chapter compares the word-level and WordPiece tokenizers by; any tokenizer with
the shared interface can be measured. :func:`unknown_words` names the words of one text a
tokenizer loses (the explorers and the fill-mask command say which they are).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mlmcourse.tokenization.base import BaseTokenizer, as_text_list
from mlmcourse.tokenization.word_level import WordLevelTokenizer
from mlmcourse.tokenization.wordpiece import WordPieceTokenizer


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


def stats_row(corpus: str, name: str, tokenizer: BaseTokenizer, texts: Sequence[str]) -> dict:
    """One row of the chapter's comparison table: a tokenizer measured on a corpus."""
    s = tokenization_stats(tokenizer, texts)
    return {
        "corpus": corpus,
        "tokenizer": name,
        "vocab_size": s.vocab_size,
        "oov_rate": s.oov_rate,
        "tokens_per_word": s.tokens_per_word,
        "mean_length": s.mean_length,
    }


def wikitext2_comparison(
    paragraphs: Sequence[str], others: dict[str, BaseTokenizer] | None = None
) -> tuple[list[dict], int, int]:
    """Word-level against WordPiece on real prose: rows, and paragraphs trained and measured on.

    Both are trained on the first 80% of ``paragraphs`` (8,000 entries each, the word-level
    one capped there) and measured on the last 20%, next to ``others`` (BERT's tokenizer,
    say), which are measured only. The ``<unk>`` markers of WikiText's tokenized release are
    dropped first (the raw release has none).
    """
    for i, p in enumerate(paragraphs):
        if not isinstance(p, str):
            raise TypeError(f"paragraphs[{i}] must be a string, got {type(p).__name__}")
    cleaned = [p.replace("<unk>", " ").strip() for p in paragraphs]
    cleaned = [p for p in cleaned if p]
    if len(cleaned) < 5:
        raise ValueError(f"wikitext2_comparison needs at least 5 paragraphs, got {len(cleaned)}")
    cut = int(0.8 * len(cleaned))
    train, test = cleaned[:cut], cleaned[cut:]
    tokenizers = {
        "word-level": WordLevelTokenizer.train(train, max_size=8000),
        "WordPiece": WordPieceTokenizer.train(train, vocab_size=8000),
        **(others or {}),
    }
    rows = [stats_row("WikiText-2", name, t, test) for name, t in tokenizers.items()]
    return rows, len(train), len(test)


def unknown_words(tokenizer: Any, text: str) -> list[str]:
    """The words of ``text`` that ``tokenizer`` reads as its unknown token, once each, in order.

    A word-level vocabulary (the world model's) has no entry for a word it never saw; WordPiece
    spells almost any word in pieces, and only a word of characters it lacks (an emoji, say)
    becomes ``[UNK]``; a byte-level BPE (ModernBERT's) has no unknown token at all. The model
    sees the same vector for every such word, so an explorer should say which they are. A blank
    text has none.
    """
    unk = tokenizer.unk_token_id
    if unk is None or not text.strip():
        return []
    encoding = tokenizer.encode(text)
    words = [
        text[start:end]
        for token, (start, end) in zip(encoding.ids, encoding.offsets, strict=True)
        if token == unk and text[start:end] != tokenizer.unk_token  # not a typed [UNK]
    ]
    return list(dict.fromkeys(words))
