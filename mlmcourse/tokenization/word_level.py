"""A word-level tokenizer written from scratch: one token per word, ``[UNK]`` for the rest.

Plain Python, so the chapter can show every step: what a word is (:func:`pre_tokenize`), how
often each occurs (:func:`count_words`), which words get ids and in which order
(:func:`build_vocab`), and how a text becomes ids (:class:`WordLevelTokenizer`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from mlmcourse.tokenization.base import BaseTokenizer, check_text, check_training_texts
from mlmcourse.tokenization.encoding import CLS, SEP, SPECIAL_TOKENS, UNK, Encoding
from mlmcourse.utils.checks import check_positive_int

# What save() writes in "format", so load_tokenizer can tell our file from a 🤗 tokenizer.json.
WORD_LEVEL_FORMAT = "mlmcourse.WordLevelTokenizer"

# A special token written in the text stays one token; otherwise a word is a run of letters,
# digits or "_", and every other non-space character is a token of its own: close to BERT's
# basic pre-tokenizer, which differs at the edges (chapter 1 shows where).
_WORD_RE = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS) + r"|\w+|[^\w\s]")


def pre_tokenize(text: str, *, lowercase: bool = False) -> list[tuple[str, tuple[int, int]]]:
    """Split text into words with their character spans; special tokens are kept whole."""
    words = []
    for m in _WORD_RE.finditer(text):
        word = m.group()
        if lowercase and word not in SPECIAL_TOKENS:
            word = word.lower()
        words.append((word, m.span()))
    return words


def count_words(texts: Iterable[str], *, lowercase: bool = False) -> Counter[str]:
    """How often each word occurs in ``texts`` (special tokens written in the text excluded)."""
    counts: Counter[str] = Counter()
    for i, text in enumerate(texts):
        check_text(text, f"texts[{i}]")
        counts.update(w for w, _ in pre_tokenize(text, lowercase=lowercase))
    for token in SPECIAL_TOKENS:
        counts.pop(token, None)
    return counts


def build_vocab(
    counts: Mapping[str, int], *, min_freq: int = 1, max_size: int | None = None
) -> dict[str, int]:
    """The specials first (ids 0..4), then words by falling frequency, ties alphabetically.

    Sorting by ``(-count, word)`` makes ids independent of the order words were seen in and of
    hash order, so the same corpus always gives the same ids. ``max_size`` counts the specials.
    """
    check_positive_int(min_freq, "min_freq")
    if max_size is not None and (not isinstance(max_size, int) or max_size <= len(SPECIAL_TOKENS)):
        raise ValueError(
            f"max_size counts the {len(SPECIAL_TOKENS)} special tokens, so it must be an int > "
            f"{len(SPECIAL_TOKENS)} (or None), got {max_size!r}"
        )
    kept = [w for w, c in counts.items() if c >= min_freq and w not in SPECIAL_TOKENS]
    kept.sort(key=lambda w: (-counts[w], w))
    if max_size is not None:
        kept = kept[: max_size - len(SPECIAL_TOKENS)]
    return {token: index for index, token in enumerate([*SPECIAL_TOKENS, *kept])}


class WordLevelTokenizer(BaseTokenizer):
    """One token per word; a word missing from the vocabulary becomes ``[UNK]``.

    Build one with :meth:`train`. Plain Python, so every step can be read in the chapter.
    """

    def __init__(self, vocab: Mapping[str, int], *, lowercase: bool = False):
        super().__init__()
        if not isinstance(vocab, Mapping):
            raise TypeError(f"vocab must be a mapping token -> id, got {type(vocab).__name__}")
        missing = [t for t in SPECIAL_TOKENS if t not in vocab]
        if missing:
            raise ValueError(
                f"the vocabulary is missing the special tokens {missing}; a tokenizer needs all "
                f"of {list(SPECIAL_TOKENS)}"
            )
        if sorted(vocab.values()) != list(range(len(vocab))):
            raise ValueError("vocabulary ids must be 0, 1, ..., len(vocab) - 1, each used once")
        self._vocab = dict(vocab)
        self._itos = {i: t for t, i in self._vocab.items()}
        self.lowercase = lowercase

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        *,
        min_freq: int = 1,
        max_size: int | None = None,
        lowercase: bool = False,
    ) -> WordLevelTokenizer:
        """Count the words of ``texts`` and keep the frequent ones (see :func:`build_vocab`)."""
        counts = count_words(check_training_texts(texts), lowercase=lowercase)
        return cls(build_vocab(counts, min_freq=min_freq, max_size=max_size), lowercase=lowercase)

    def _encode_texts(self, texts: list[str]) -> list[Encoding]:
        return [self._encode_one(t) for t in texts]

    def _encode_one(self, text: str) -> Encoding:
        words = pre_tokenize(text, lowercase=self.lowercase)
        unk = self._vocab[UNK]
        ids = [self._vocab.get(w, unk) for w, _ in words]
        return Encoding(
            ids=ids,
            tokens=[self._itos[i] for i in ids],
            type_ids=[0] * len(ids),
            special_tokens_mask=[0] * len(ids),
            word_ids=list(range(len(ids))),
            offsets=[span for _, span in words],
            sequence_ids=[0] * len(ids),
        )

    def _truncate(self, sequence: Encoding, length: int) -> Encoding:
        return Encoding(*(getattr(sequence, f)[:length] for f in Encoding.__dataclass_fields__))

    def _post_process(self, first: Encoding, second: Encoding | None) -> Encoding:
        """``[CLS] A [SEP]`` or ``[CLS] A [SEP] B [SEP]``, B and its [SEP] with token type 1."""
        cls_id, sep_id = self._vocab[CLS], self._vocab[SEP]
        out = Encoding([cls_id], [CLS], [0], [1], [None], [(0, 0)], [None])
        for type_id, seq in enumerate([first] if second is None else [first, second]):
            out.ids += [*seq.ids, sep_id]
            out.tokens += [*seq.tokens, SEP]
            out.type_ids += [type_id] * (len(seq) + 1)
            out.special_tokens_mask += [0] * len(seq) + [1]
            out.word_ids += [*seq.word_ids, None]
            out.offsets += [*seq.offsets, (0, 0)]
            out.sequence_ids += [type_id] * len(seq) + [None]
        return out

    def _num_special_tokens_to_add(self, pair: bool) -> int:
        return 3 if pair else 2

    def _decode_tokens(self, tokens: list[str]) -> str:
        return " ".join(tokens)

    def _token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def _id_to_token(self, index: int) -> str | None:
        return self._itos.get(index)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    def to_json(self) -> str:
        tokens = [self._itos[i] for i in range(len(self._itos))]
        data = {"format": WORD_LEVEL_FORMAT, "lowercase": self.lowercase, "vocab": tokens}
        return json.dumps(data, ensure_ascii=False, indent=0)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WordLevelTokenizer:
        """Rebuild from the dictionary :meth:`to_json` wrote."""
        tokens = data.get("vocab")
        if not isinstance(tokens, list) or len(set(tokens)) != len(tokens):
            raise ValueError("a word-level tokenizer file needs 'vocab': a list of unique tokens")
        return cls({t: i for i, t in enumerate(tokens)}, lowercase=bool(data.get("lowercase")))
