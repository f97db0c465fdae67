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
"""

from __future__ import annotations

import heapq
import json
import numbers
import re
import warnings
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from mlmcourse.checks import read_text

__all__ = [
    "SPECIAL_TOKENS",
    "TokenizationStats",
    "BaseTokenizer",
    "BatchEncoding",
    "Encoding",
    "WordLevelTokenizer",
    "WordPieceTokenizer",
    "build_vocab",
    "count_words",
    "learn_wordpiece_vocab",
    "load_tokenizer",
    "pre_tokenize",
    "tokenization_stats",
    "truncation_lengths",
]

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
# Our own vocabularies put these first, so their ids are 0..4 in this order.
SPECIAL_TOKENS: tuple[str, ...] = (PAD, UNK, CLS, SEP, MASK)

_WORD_LEVEL_FORMAT = "mlmcourse.WordLevelTokenizer"


# --- the data a tokenizer returns -----------------------------------------------------------


@dataclass
class Encoding:
    """One encoded text (or pair), unpadded: parallel lists, one entry per token.

    ``word_ids`` says which word of its sequence each token came from (``None`` for ``[CLS]``
    and ``[SEP]``); in a pair the second text's words count from 0 again, as in Hugging Face,
    and ``sequence_ids`` says which text a token belongs to. ``offsets`` are ``(start, end)``
    character spans into the text the token came from (``(0, 0)`` for added specials).
    """

    ids: list[int]
    tokens: list[str]
    type_ids: list[int]
    special_tokens_mask: list[int]
    word_ids: list[int | None]
    offsets: list[tuple[int, int]]
    sequence_ids: list[int | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)


class BatchEncoding(dict):
    """A ``dict`` of ``(B, T)`` long tensors plus the per-row :class:`Encoding` objects.

    ``word_ids(i)``, ``tokens(i)`` and ``sequence_ids(i)`` are padded to ``T`` (``None`` /
    ``[PAD]`` on padding), so they line up with the tensors position by position.
    """

    def __init__(self, data: Mapping[str, torch.Tensor], encodings: Sequence[Encoding]):
        super().__init__(data)
        self.encodings = list(encodings)

    def _row(self, batch_index: int, name: str, pad: Any) -> list:
        if not -len(self.encodings) <= batch_index < len(self.encodings):
            raise IndexError(
                f"batch_index {batch_index} is out of range for a batch of {len(self.encodings)}"
            )
        values = list(getattr(self.encodings[batch_index], name))
        width = self["input_ids"].shape[1]
        return values + [pad] * (width - len(values))

    def word_ids(self, batch_index: int = 0) -> list[int | None]:
        """The word index of each position of row ``batch_index`` (``None`` for specials, padding)."""
        return self._row(batch_index, "word_ids", None)

    def sequence_ids(self, batch_index: int = 0) -> list[int | None]:
        """Which text (0 or 1) each position of row ``batch_index`` came from; ``None`` for specials."""
        return self._row(batch_index, "sequence_ids", None)

    def tokens(self, batch_index: int = 0) -> list[str]:
        """The token strings of row ``batch_index``, padded with ``[PAD]``."""
        return self._row(batch_index, "tokens", PAD)

    def to(self, device: torch.device | str) -> BatchEncoding:
        """A copy with every tensor moved to ``device`` (the encodings are shared)."""
        return BatchEncoding({k: v.to(device) for k, v in self.items()}, self.encodings)


# --- shared rules ---------------------------------------------------------------------------


def truncation_lengths(first: int, second: int | None, budget: int) -> tuple[int, int | None]:
    """How many tokens of each text to keep so that both fit in ``budget`` (specials excluded).

    A single text keeps its first ``budget`` tokens. A pair follows 🤗 tokenizers'
    ``longest_first``: the shorter text is kept whole when the longer one can absorb the cut;
    otherwise each gets half, and the longer one the odd token.
    """
    if second is None:
        return min(first, budget), None
    if first + second <= budget:
        return first, second
    short, long_ = sorted((first, second))
    long_keep = short if short > budget else max(short, budget - short)
    short_keep = short
    if short_keep + long_keep > budget:
        short_keep = budget // 2
        long_keep = short_keep + budget % 2
    if first > second:  # the first text is the long one
        return min(first, long_keep), min(second, short_keep)
    return min(first, short_keep), min(second, long_keep)


def _is_id(value: Any) -> bool:
    """An int (Python, NumPy, ...), but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_text(value: Any, name: str) -> str:
    """A text must be a non-empty string; say which one is wrong and what it was."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}: {value!r:.80}")
    if not value.strip():
        raise ValueError(
            f"{name} is empty or whitespace-only ({value!r}); there is nothing to encode"
        )
    return value


def _as_text_list(texts: Any, name: str) -> list[str]:
    """Accept one string or a list/tuple of strings; return a list, each checked."""
    if isinstance(texts, str):
        return [_check_text(texts, name)]
    if not isinstance(texts, list | tuple):
        raise TypeError(
            f"{name} must be a string or a list of strings, got {type(texts).__name__}: "
            f"{texts!r:.80}"
        )
    if not texts:
        raise ValueError(f"{name} is an empty list; give at least one text")
    return [_check_text(t, f"{name}[{i}]") for i, t in enumerate(texts)]


# --- the base class -------------------------------------------------------------------------


class BaseTokenizer(ABC):
    """What every tokenizer of the course can do; subclasses say how one text becomes tokens.

    A subclass implements :meth:`_encode_texts` (texts -> token sequences without specials),
    :meth:`_truncate`, :meth:`_post_process` (add ``[CLS]``/``[SEP]`` and token types),
    :meth:`_decode_tokens`, :meth:`get_vocab`, :meth:`_token_to_id`, :meth:`_id_to_token`
    and :meth:`to_json`. Validation, truncation lengths, padding and tensors live here, once.
    """

    pad_token, unk_token, cls_token, sep_token, mask_token = SPECIAL_TOKENS

    def __init__(self) -> None:
        self._warned_truncation = False

    # subclass hooks ------------------------------------------------------------------------

    @abstractmethod
    def _encode_texts(self, texts: list[str]) -> list[Any]:
        """Tokenize each text into a sequence object (with ``len``), without special tokens."""

    @abstractmethod
    def _truncate(self, sequence: Any, length: int) -> Any:
        """Keep the first ``length`` tokens of a sequence from :meth:`_encode_texts`."""

    @abstractmethod
    def _post_process(self, first: Any, second: Any | None) -> Encoding:
        """Add ``[CLS] A [SEP]`` (or ``[CLS] A [SEP] B [SEP]``) and token type ids."""

    @abstractmethod
    def _num_special_tokens_to_add(self, pair: bool) -> int: ...

    @abstractmethod
    def _decode_tokens(self, tokens: list[str]) -> str: ...

    @abstractmethod
    def _token_to_id(self, token: str) -> int | None: ...

    @abstractmethod
    def _id_to_token(self, index: int) -> str | None: ...

    @abstractmethod
    def get_vocab(self) -> dict[str, int]:
        """A copy of the vocabulary, token -> id."""

    @abstractmethod
    def to_json(self) -> str:
        """The JSON text :meth:`save` writes."""

    @property
    @abstractmethod
    def vocab_size(self) -> int: ...

    # special tokens ------------------------------------------------------------------------

    def _special_id(self, token: str) -> int:
        index = self._token_to_id(token)
        if index is None:  # constructors check this, so it only happens if a vocab is edited
            raise KeyError(f"the vocabulary has no {token} token")
        return index

    @property
    def pad_token_id(self) -> int:
        return self._special_id(PAD)

    @property
    def unk_token_id(self) -> int:
        return self._special_id(UNK)

    @property
    def cls_token_id(self) -> int:
        return self._special_id(CLS)

    @property
    def sep_token_id(self) -> int:
        return self._special_id(SEP)

    @property
    def mask_token_id(self) -> int:
        return self._special_id(MASK)

    @property
    def all_special_tokens(self) -> list[str]:
        return list(SPECIAL_TOKENS)

    @property
    def all_special_ids(self) -> list[int]:
        return [self._special_id(t) for t in SPECIAL_TOKENS]

    def __len__(self) -> int:
        return self.vocab_size

    # encoding ------------------------------------------------------------------------------

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``, without ``[CLS]``/``[SEP]``."""
        return self.encode(text).tokens[1:-1]

    def encode(
        self,
        text: str,
        text_pair: str | None = None,
        *,
        max_length: int | None = None,
        truncation: bool = True,
    ) -> Encoding:
        """Encode one text (or one pair) with its special tokens, unpadded."""
        pairs = None if text_pair is None else [_check_text(text_pair, "text_pair")]
        return self._encode_batch([_check_text(text, "text")], pairs, max_length, truncation)[0]

    def __call__(
        self,
        texts: str | Sequence[str],
        text_pairs: str | Sequence[str] | None = None,
        *,
        max_length: int | None = None,
        padding: bool | str = True,
        truncation: bool = True,
    ) -> BatchEncoding:
        """Encode a batch into padded ``(B, T)`` tensors, the way a model consumes it.

        ``padding``: ``True``/``"longest"`` pads to the longest row, ``"max_length"`` to
        ``max_length``, ``False`` pads nothing (so the rows must already have equal lengths).
        ``truncation`` with ``max_length`` cuts each row to ``max_length`` tokens, keeping the
        final ``[SEP]``; for pairs the longer text is cut first. ``max_length=None``: no limit.
        """
        first = _as_text_list(texts, "texts")
        second = None
        if text_pairs is not None:
            second = _as_text_list(text_pairs, "text_pairs")
            if len(second) != len(first):
                raise ValueError(
                    f"texts and text_pairs must have the same length, got {len(first)} texts "
                    f"and {len(second)} text_pairs"
                )
        if padding not in (True, False, "longest", "max_length", "do_not_pad"):
            raise ValueError(
                f"padding must be True, 'longest', 'max_length' or False, got {padding!r}"
            )
        if padding == "max_length" and max_length is None:
            raise ValueError("padding='max_length' needs max_length, got max_length=None")
        encodings = self._encode_batch(first, second, max_length, truncation)
        return self._pad(encodings, padding, max_length)

    def _encode_batch(
        self,
        texts: list[str],
        pairs: list[str] | None,
        max_length: int | None,
        truncation: bool,
    ) -> list[Encoding]:
        if max_length is not None and (not isinstance(max_length, int) or max_length < 1):
            raise ValueError(f"max_length must be a positive int or None, got {max_length!r}")
        firsts = self._check_nonempty(self._encode_texts(texts), texts, "texts")
        seconds: list[Any] = [None] * len(firsts)
        if pairs is not None:
            seconds = self._check_nonempty(self._encode_texts(pairs), pairs, "text_pairs")
        encodings, cut = [], 0
        for a, b in zip(firsts, seconds, strict=True):
            if truncation and max_length is not None:
                a, b, was_cut = self._truncate_pair(a, b, max_length)
                cut += was_cut
            encodings.append(self._post_process(a, b))
        if cut and not self._warned_truncation:
            self._warned_truncation = True
            warnings.warn(
                f"{cut} of {len(encodings)} sequences were longer than max_length={max_length} "
                f"tokens and were truncated (the final [SEP] is kept). This tokenizer warns only "
                f"once.",
                UserWarning,
                stacklevel=3,
            )
        return encodings

    @staticmethod
    def _check_nonempty(sequences: list[Any], texts: list[str], name: str) -> list[Any]:
        for i, (seq, text) in enumerate(zip(sequences, texts, strict=True)):
            if len(seq) == 0:
                raise ValueError(f"{name}[{i}] = {text!r:.80} produced no tokens")
        return sequences

    def _truncate_pair(self, a: Any, b: Any | None, max_length: int) -> tuple[Any, Any, bool]:
        specials = self._num_special_tokens_to_add(b is not None)
        budget = max_length - specials
        needed = 1 if b is None else 2
        if budget < needed:
            raise ValueError(
                f"max_length={max_length} leaves no room for text: the special tokens alone "
                f"take {specials}; use max_length >= {specials + needed}"
            )
        keep_a, keep_b = truncation_lengths(len(a), None if b is None else len(b), budget)
        was_cut = keep_a < len(a) or (b is not None and keep_b < len(b))
        a = self._truncate(a, keep_a) if keep_a < len(a) else a
        if b is not None and keep_b < len(b):
            b = self._truncate(b, keep_b)
        return a, b, was_cut

    def _pad(
        self, encodings: list[Encoding], padding: bool | str, max_length: int | None
    ) -> BatchEncoding:
        lengths = [len(e) for e in encodings]
        if padding in (False, "do_not_pad"):
            if len(set(lengths)) > 1:
                raise ValueError(
                    f"padding=False needs every row to have the same length to stack them into "
                    f"a tensor, got lengths {lengths[:16]}; use padding=True (pad to the longest) "
                    f"or padding='max_length'"
                )
            width = lengths[0]
        elif padding == "max_length":
            width = max([max_length or 0, *lengths])
        else:
            width = max(lengths)
        pad_id = self.pad_token_id
        rows: dict[str, list[list[int]]] = {
            "input_ids": [],
            "attention_mask": [],
            "token_type_ids": [],
            "special_tokens_mask": [],
        }
        for e in encodings:
            n = width - len(e)
            rows["input_ids"].append(e.ids + [pad_id] * n)
            rows["attention_mask"].append([1] * len(e) + [0] * n)
            rows["token_type_ids"].append(e.type_ids + [0] * n)
            rows["special_tokens_mask"].append(e.special_tokens_mask + [1] * n)
        tensors = {k: torch.tensor(v, dtype=torch.long) for k, v in rows.items()}  # (B, T)
        return BatchEncoding(tensors, encodings)

    # decoding and lookups ------------------------------------------------------------------

    def _check_ids(self, ids: Any) -> list[int]:
        """Ids as a list of ints: from an int, a list/tuple, or a 1-D tensor or array."""
        if hasattr(ids, "tolist") and not isinstance(ids, list | tuple):  # tensor, ndarray
            if getattr(ids, "ndim", 1) > 1:
                raise ValueError(
                    f"expected one sequence of ids (1-D), got shape {tuple(ids.shape)}; "
                    f"decode each row"
                )
            ids = ids.tolist()
        if isinstance(ids, numbers.Integral):
            ids = [ids]
        if not isinstance(ids, list | tuple) or not all(_is_id(i) for i in ids):
            raise TypeError(f"expected a list of int ids, got {ids!r:.80}")
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise ValueError(f"ids {bad[:8]} are outside the vocabulary [0, {self.vocab_size})")
        return [int(i) for i in ids]

    def convert_ids_to_tokens(self, ids: int | Sequence[int]) -> str | list[str]:
        """Token strings of ids (one string for one int, as in Hugging Face)."""
        checked = self._check_ids(ids)
        tokens = [self._id_to_token(i) or UNK for i in checked]
        return tokens[0] if isinstance(ids, numbers.Integral) else tokens

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> int | list[int]:
        """Ids of tokens; a token not in the vocabulary gets ``unk_token_id``."""
        single = isinstance(tokens, str)
        items = [tokens] if single else list(tokens)
        if not all(isinstance(t, str) for t in items):
            raise TypeError(f"expected a token string or a list of them, got {tokens!r:.80}")
        unk = self.unk_token_id
        ids = [i if (i := self._token_to_id(t)) is not None else unk for t in items]
        return ids[0] if single else ids

    def decode(self, ids: Sequence[int] | torch.Tensor, skip_special_tokens: bool = True) -> str:
        """Turn ids back into text; ``[PAD]``, ``[CLS]``... are dropped unless asked for."""
        tokens = self.convert_ids_to_tokens(self._check_ids(ids))
        if skip_special_tokens:
            tokens = [t for t in tokens if t not in SPECIAL_TOKENS]
        return self._decode_tokens(tokens)

    @classmethod
    def load(cls, path: str | Path) -> BaseTokenizer:
        """Load with :func:`load_tokenizer`, checking the result is a ``cls``."""
        tokenizer = load_tokenizer(path)
        if not isinstance(tokenizer, cls):
            raise TypeError(
                f"{path} holds a {type(tokenizer).__name__}, not a {cls.__name__}; "
                f"use load_tokenizer() to load any kind"
            )
        return tokenizer

    def save(self, path: str | Path) -> Path:
        """Write the tokenizer as JSON (a directory gets ``tokenizer.json``); return the file."""
        path = Path(path)
        if path.is_dir():
            path = path / "tokenizer.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json(), encoding="utf-8")
        return path

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"


# --- measuring a tokenizer -----------------------------------------------------------------


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
    texts = _as_text_list(list(texts) if not isinstance(texts, str) else texts, "texts")
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


# --- the word-level tokenizer, from scratch -------------------------------------------------

# A special token written in the text stays one token; otherwise a word is a run of letters,
# digits or "_", and every other non-space character is a token of its own (like BERT's
# pre-tokenizer, so both tokenizers agree on what a "word" is).
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
        _check_text(text, f"texts[{i}]")
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
    if not isinstance(min_freq, int) or min_freq < 1:
        raise ValueError(f"min_freq must be an int >= 1, got {min_freq!r}")
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
        if isinstance(texts, str):
            raise TypeError("train() takes a list of texts, got a single string")
        counts = count_words(texts, lowercase=lowercase)
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
        data = {"format": _WORD_LEVEL_FORMAT, "lowercase": self.lowercase, "vocab": tokens}
        return json.dumps(data, ensure_ascii=False, indent=0)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WordLevelTokenizer:
        """Rebuild from the dictionary :meth:`to_json` wrote."""
        tokens = data.get("vocab")
        if not isinstance(tokens, list) or len(set(tokens)) != len(tokens):
            raise ValueError("a word-level tokenizer file needs 'vocab': a list of unique tokens")
        return cls({t: i for i, t in enumerate(tokens)}, lowercase=bool(data.get("lowercase")))


# --- WordPiece with 🤗 tokenizers -----------------------------------------------------------


_SPECIAL_RE = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))


def _pairs(pieces: list[str]) -> list[tuple[str, str]]:
    return list(zip(pieces[:-1], pieces[1:], strict=True))


def learn_wordpiece_vocab(
    word_counts: Mapping[str, int],
    *,
    vocab_size: int,
    min_frequency: int = 2,
    limit_alphabet: int = 1000,
    prefix: str = "##",
) -> list[str]:
    """Learn WordPiece pieces from word counts; return the vocabulary in id order.

    The same procedure as 🤗 ``WordPieceTrainer`` (BPE-style merges): start from characters (a
    character inside a word is written ``##c``), then repeatedly merge the most frequent pair
    of adjacent pieces into a new piece, until ``vocab_size`` or no pair is seen
    ``min_frequency`` times. Ids: specials, the alphabet, ``##`` characters (each group
    sorted), then pieces in the order they were learned; a tie between pairs goes to the pair
    with the lower ids, as in the library, so the result depends only on the counts.
    """
    # The alphabet: the most frequent characters, weighted by word counts (ties alphabetical).
    char_counts: Counter[str] = Counter()
    for word, count in word_counts.items():
        for ch in word:
            char_counts[ch] += count
    alphabet = set(sorted(char_counts, key=lambda c: (-char_counts[c], c))[:limit_alphabet])
    # Each word as a list of pieces: "cat" -> ["c", "##a", "##t"]; unknown characters dropped.
    words, counts = [], []
    for word in sorted(word_counts):
        chars = [c for c in word if c in alphabet]
        if chars:
            words.append([chars[0]] + [prefix + c for c in chars[1:]])
            counts.append(word_counts[word])
    firsts = {w[0] for w in words} | alphabet
    inside = {p for w in words for p in w[1:]}
    vocab = [*SPECIAL_TOKENS, *sorted(firsts - set(SPECIAL_TOKENS)), *sorted(inside)]
    index = {token: i for i, token in enumerate(vocab)}

    def key(pair: tuple[str, str]) -> tuple[int, int, int]:  # most frequent first, then lower ids
        return (-pair_counts[pair], index[pair[0]], index[pair[1]])

    # Pair counts and, for each pair, the words it occurs in.
    pair_counts: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[int]] = {}
    for i, pieces in enumerate(words):
        for pair in _pairs(pieces):
            pair_counts[pair] += counts[i]
            where.setdefault(pair, set()).add(i)
    heap = [(*key(pair), pair) for pair in pair_counts]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        neg, *_, pair = heapq.heappop(heap)
        if -neg != pair_counts.get(pair, 0):  # a stale entry: the count has changed since
            continue
        if -neg < min_frequency:
            break
        merged = pair[0] + pair[1].removeprefix(prefix)
        if merged not in index:
            index[merged] = len(vocab)
            vocab.append(merged)
        changed: set[tuple[str, str]] = set()
        for i in sorted(where.pop(pair, ())):
            pieces, count = words[i], counts[i]
            for old in _pairs(pieces):  # forget this word's pairs ...
                pair_counts[old] -= count
                changed.add(old)
            j, out = 0, []
            while j < len(pieces):  # ... merge every occurrence, left to right ...
                if j + 1 < len(pieces) and (pieces[j], pieces[j + 1]) == pair:
                    out.append(merged)
                    j += 2
                else:
                    out.append(pieces[j])
                    j += 1
            words[i] = out
            for new in _pairs(out):  # ... and count the pairs it has now
                pair_counts[new] += count
                where.setdefault(new, set()).add(i)
                changed.add(new)
        for p in sorted(changed):
            if pair_counts[p] > 0:
                heapq.heappush(heap, (*key(p), p))
            else:
                pair_counts.pop(p)
    return vocab


def _bert_pipeline(vocab: Mapping[str, int] | None, *, lowercase: bool) -> Any:
    """A 🤗 ``Tokenizer`` with BERT's normalizer, pre-tokenizer and a WordPiece model.

    ``vocab=None`` gives an empty model, for the library's trainer to fill.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    if vocab is None:
        model = models.WordPiece(unk_token=UNK, continuing_subword_prefix="##")
    else:
        model = models.WordPiece(vocab=dict(vocab), unk_token=UNK, continuing_subword_prefix="##")
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=lowercase
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()  # whitespace and punctuation
    return tokenizer


class WordPieceTokenizer(BaseTokenizer):
    """BERT's subword tokenizer, run by the Rust 🤗 ``tokenizers`` library.

    The pipeline is the library's: normalizer (clean, optionally lowercase and strip accents)
    -> pre-tokenizer (split on whitespace and punctuation) -> WordPiece model (longest-match
    pieces, ``##`` marks a piece that continues a word) -> ``TemplateProcessing`` (``[CLS]``,
    ``[SEP]``, token types) -> decoder. Make one with :meth:`train`, :meth:`from_file` (a
    ``tokenizer.json``) or :meth:`from_vocab_file` (a BERT ``vocab.txt``).
    """

    def __init__(self, tokenizer: Any):
        super().__init__()
        from tokenizers import Tokenizer

        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"expected a tokenizers.Tokenizer, got {type(tokenizer).__name__}")
        missing = [t for t in SPECIAL_TOKENS if tokenizer.token_to_id(t) is None]
        if missing:
            raise ValueError(
                f"the vocabulary is missing the special tokens {missing}; a tokenizer needs all "
                f"of {list(SPECIAL_TOKENS)}"
            )
        tokenizer = Tokenizer.from_str(tokenizer.to_str())  # a copy: the caller's stays as it was
        tokenizer.no_padding()  # we pad ourselves, into tensors
        tokenizer.no_truncation()  # and truncate per call, with the caller's max_length
        tokenizer.add_special_tokens(list(SPECIAL_TOKENS))  # "[MASK]" in a text stays whole
        self._finish_pipeline(tokenizer)
        self.backend_tokenizer = tokenizer

    def _finish_pipeline(self, tokenizer: Any) -> None:
        """Set BERT's template and decoder (a loaded BERT file already has the same ones)."""
        from tokenizers import decoders, processors

        cls_id, sep_id = tokenizer.token_to_id(CLS), tokenizer.token_to_id(SEP)
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{CLS} $A {SEP}",
            pair=f"{CLS} $A {SEP} $B:1 {SEP}:1",
            special_tokens=[(CLS, cls_id), (SEP, sep_id)],
        )
        if tokenizer.decoder is None:
            tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=True)

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        *,
        vocab_size: int = 8000,
        lowercase: bool = False,
        min_frequency: int = 2,
        limit_alphabet: int = 1000,
        deterministic: bool = True,
    ) -> WordPieceTokenizer:
        """Learn a WordPiece vocabulary of at most ``vocab_size`` tokens (specials included).

        Every character seen (up to ``limit_alphabet`` of them) enters the vocabulary, so a new
        word can always be spelled in pieces and ``[UNK]`` becomes rare. With
        ``deterministic=True`` (the default) the pieces are learned by
        :func:`learn_wordpiece_vocab`, whose ties never depend on hash order; ``False`` uses the
        library's ``WordPieceTrainer``, whose vocabulary can change from run to run because it
        breaks ties in hash-map order (huggingface/tokenizers issue #1794).
        """
        from tokenizers import trainers

        if isinstance(texts, str):
            raise TypeError("train() takes a list of texts, got a single string")
        texts = [_check_text(t, f"texts[{i}]") for i, t in enumerate(texts)]
        if not isinstance(vocab_size, int) or vocab_size <= len(SPECIAL_TOKENS):
            raise ValueError(
                f"vocab_size must be an int > {len(SPECIAL_TOKENS)}, got {vocab_size!r}"
            )
        if not deterministic:
            tokenizer = _bert_pipeline(None, lowercase=lowercase)
            trainer = trainers.WordPieceTrainer(
                vocab_size=vocab_size,
                min_frequency=min_frequency,
                special_tokens=list(SPECIAL_TOKENS),  # ids 0..4, in this order
                limit_alphabet=limit_alphabet,
                continuing_subword_prefix="##",
                show_progress=False,
            )
            tokenizer.train_from_iterator(texts, trainer=trainer)
            return cls(tokenizer)
        # The same normalizer and pre-tokenizer decide what a word is, then we learn the pieces.
        splitter = _bert_pipeline(None, lowercase=lowercase)
        # Both work character by character and never join across a space, so each distinct
        # space-separated chunk is split once and its words weighted by how often it occurs.
        chunks = Counter(c for t in texts for part in _SPECIAL_RE.split(t) for c in part.split(" "))
        counts: Counter[str] = Counter()
        for chunk, n in chunks.items():
            normalized = splitter.normalizer.normalize_str(chunk)
            for word, _ in splitter.pre_tokenizer.pre_tokenize_str(normalized):
                counts[word] += n
        tokens = learn_wordpiece_vocab(
            counts,
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            limit_alphabet=limit_alphabet,
        )
        return cls(_bert_pipeline({t: i for i, t in enumerate(tokens)}, lowercase=lowercase))

    @classmethod
    def from_file(cls, path: str | Path) -> WordPieceTokenizer:
        """Load a ``tokenizer.json`` (BERT's, or one :meth:`save` wrote); ids are kept."""
        from tokenizers import Tokenizer

        path = _existing(path)
        data = _read_json(path)
        kind = (data.get("model") or {}).get("type")
        if kind != "WordPiece":
            raise ValueError(
                f"{path} holds a {kind!r} model; expected a WordPiece (BERT) tokenizer"
            )
        return cls(Tokenizer.from_file(str(path)))

    @classmethod
    def from_vocab_file(
        cls, path: str | Path, *, lowercase: bool | None = None
    ) -> WordPieceTokenizer:
        """Build BERT's tokenizer around a ``vocab.txt`` (one token per line; line number = id).

        ``lowercase=None`` reads ``do_lower_case`` from a ``tokenizer_config.json`` beside the
        file, else lowercases when the vocabulary has no upper-case letters (an uncased model).
        """
        path = _existing(path)
        tokens = read_text(path, "vocab.txt").split("\n")
        if tokens and tokens[-1] == "":
            tokens.pop()
        vocab: dict[str, int] = {}
        for index, token in enumerate(tokens):
            vocab.setdefault(token, index)
        if lowercase is None:
            lowercase = _guess_lowercase(path, vocab)
        return cls(_bert_pipeline(vocab, lowercase=lowercase))

    def _encode_texts(self, texts: list[str]) -> list[Any]:
        return self.backend_tokenizer.encode_batch(texts, add_special_tokens=False)

    def _truncate(self, sequence: Any, length: int) -> Any:
        sequence.truncate(length)
        return sequence

    def _post_process(self, first: Any, second: Any | None) -> Encoding:
        e = self.backend_tokenizer.post_process(first, second, add_special_tokens=True)
        return Encoding(
            ids=list(e.ids),
            tokens=list(e.tokens),
            type_ids=list(e.type_ids),
            special_tokens_mask=list(e.special_tokens_mask),
            word_ids=list(e.word_ids),
            offsets=[tuple(o) for o in e.offsets],
            # post_process of separately encoded texts loses the library's own sequence ids
            sequence_ids=[
                None if s else t for s, t in zip(e.special_tokens_mask, e.type_ids, strict=True)
            ],
        )

    def _num_special_tokens_to_add(self, pair: bool) -> int:
        return self.backend_tokenizer.num_special_tokens_to_add(pair)

    def _decode_tokens(self, tokens: list[str]) -> str:
        return self.backend_tokenizer.decoder.decode(tokens)

    def _token_to_id(self, token: str) -> int | None:
        return self.backend_tokenizer.token_to_id(token)

    def _id_to_token(self, index: int) -> str | None:
        return self.backend_tokenizer.id_to_token(index)

    def get_vocab(self) -> dict[str, int]:
        return self.backend_tokenizer.get_vocab(with_added_tokens=True)

    @property
    def vocab_size(self) -> int:
        return self.backend_tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def lowercase(self) -> bool:
        """Whether the normalizer lowercases (``False`` for a pipeline without BERT's normalizer)."""
        return bool(getattr(self.backend_tokenizer.normalizer, "lowercase", False))

    def to_json(self) -> str:
        """🤗 tokenizers' own ``tokenizer.json``, so ``transformers`` can load it too."""
        return self.backend_tokenizer.to_str(pretty=True)


# --- loading --------------------------------------------------------------------------------


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no tokenizer file at {path}")
    return path


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(read_text(path, "tokenizer file"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds a JSON {type(data).__name__}, expected an object")
    return data


def _guess_lowercase(vocab_path: Path, vocab: Mapping[str, int]) -> bool:
    config = vocab_path.parent / "tokenizer_config.json"
    if config.is_file():
        setting = _read_json(config).get("do_lower_case")
        if isinstance(setting, bool):
            return setting
    return not any(
        t.lower() != t for t in vocab if t not in SPECIAL_TOKENS and not t.startswith("[")
    )


def load_tokenizer(path: str | Path) -> BaseTokenizer:
    """Load what :meth:`BaseTokenizer.save` wrote, a BERT ``tokenizer.json`` or a ``vocab.txt``.

    A directory is searched for ``tokenizer.json`` first, then ``vocab.txt``.
    """
    path = Path(path)
    if path.is_dir():
        for name in ("tokenizer.json", "vocab.txt"):
            if (path / name).is_file():
                return load_tokenizer(path / name)
        raise FileNotFoundError(f"{path} has neither tokenizer.json nor vocab.txt")
    path = _existing(path)
    if path.suffix == ".txt":
        return WordPieceTokenizer.from_vocab_file(path)
    data = _read_json(path)
    if data.get("format") == _WORD_LEVEL_FORMAT:
        return WordLevelTokenizer.from_json(data)
    if "model" in data:
        return WordPieceTokenizer.from_file(path)
    raise ValueError(
        f"{path} is neither a tokenizer saved by mlmcourse nor a 🤗 tokenizers tokenizer.json"
    )
