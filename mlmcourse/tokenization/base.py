"""The interface every tokenizer of the course shares, and the rules written once for all of them.

:class:`BaseTokenizer` does what does not depend on how a text becomes tokens: input checks,
truncation to ``max_length`` (:func:`truncation_lengths`), ``[CLS]``/``[SEP]`` bookkeeping,
padding into ``(B, T)`` tensors, decoding, saving. A subclass only says how one text becomes
tokens (:mod:`~mlmcourse.tokenization.word_level`, :mod:`~mlmcourse.tokenization.wordpiece`).
"""

from __future__ import annotations

import numbers
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from mlmcourse.tokenization.encoding import (
    CLS,
    MASK,
    PAD,
    SEP,
    SPECIAL_TOKENS,
    UNK,
    BatchEncoding,
    Encoding,
)

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


def check_text(value: Any, name: str) -> str:
    """A text must be a non-empty string; say which one is wrong and what it was."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}: {value!r:.80}")
    if not value.strip():
        raise ValueError(
            f"{name} is empty or whitespace-only ({value!r}); there is nothing to encode"
        )
    return value


def as_text_list(texts: Any, name: str) -> list[str]:
    """Accept one string or a list/tuple of strings; return a list, each checked."""
    if isinstance(texts, str):
        return [check_text(texts, name)]
    if not isinstance(texts, list | tuple):
        raise TypeError(
            f"{name} must be a string or a list of strings, got {type(texts).__name__}: "
            f"{texts!r:.80}"
        )
    if not texts:
        raise ValueError(f"{name} is an empty list; give at least one text")
    return [check_text(t, f"{name}[{i}]") for i, t in enumerate(texts)]


def check_training_texts(texts: Iterable[str]) -> list[str]:
    """The texts a tokenizer learns from, each checked; one string is refused (not split up)."""
    if isinstance(texts, str):
        raise TypeError("train() takes a list of texts, got a single string")
    return [check_text(t, f"texts[{i}]") for i, t in enumerate(texts)]


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
        pairs = None if text_pair is None else [check_text(text_pair, "text_pair")]
        return self._encode_batch([check_text(text, "text")], pairs, max_length, truncation)[0]

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
        first = as_text_list(texts, "texts")
        second = None
        if text_pairs is not None:
            second = as_text_list(text_pairs, "text_pairs")
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
        names = ("input_ids", "attention_mask", "token_type_ids", "special_tokens_mask")
        rows: dict[str, list[list[int]]] = {name: [] for name in names}
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
