"""Any 🤗 ``tokenizer.json`` behind the course's interface: real checkpoints' own tokenizers.

The course builds two tokenizers from scratch (word-level, WordPiece). Real checkpoints come
with others: ModernBERT's byte-level BPE (``"Ġparis"``: the ``Ġ`` is the space before the
word), RoBERTa's, Unigram ones. The course does not teach how those are built; it only needs
to read text the way the checkpoint was trained to. :class:`HFTokenizer` lets the Rust
``tokenizers`` library run the file exactly as it is (normalizer, pre-tokenizer, model,
post-processor, decoder) and answers with our :class:`~mlmcourse.tokenization.Encoding`, so
``fill_mask``, the collator and the CLI work with it unchanged.

Special tokens have other names there (``<mask>`` in RoBERTa, ``[MASK]`` in ModernBERT): they
are read from ``special_tokens_map.json`` / ``tokenizer_config.json`` beside the file when
present, else recognised among the file's special added tokens (:data:`SPECIAL_NAMES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer

from mlmcourse.tokenization.base import check_text
from mlmcourse.tokenization.files import FIX_TOKENIZER, HF_TOKENIZER_KEYS, existing_file
from mlmcourse.tokenization.library import LibraryTokenizer
from mlmcourse.utils.checks import read_json, reading
from mlmcourse.utils.schema import check_keys

__all__ = ["SPECIAL_NAMES", "HFTokenizer"]

# Each role (Hugging Face's attribute name) and the tokens that play it: BERT's and
# ModernBERT's first, then RoBERTa's.
SPECIAL_NAMES: dict[str, tuple[str, ...]] = {
    "pad_token": ("[PAD]", "<pad>"),
    "unk_token": ("[UNK]", "<unk>"),
    "cls_token": ("[CLS]", "<s>"),
    "sep_token": ("[SEP]", "</s>"),
    "mask_token": ("[MASK]", "<mask>"),
}
CONFIG_FILES = ("special_tokens_map.json", "tokenizer_config.json")  # the first that names wins


def special_tokens(tokenizer: Tokenizer, configs: Sequence[Mapping[str, Any]] = ()) -> dict:
    """``{role: token or None}``: what the configs name, else a known name among the special
    added tokens. A config's entry is a string or ``{"content": ...}`` (an ``AddedToken``)."""
    added = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
    found: dict[str, str | None] = {}
    for role, names in SPECIAL_NAMES.items():
        named = next((c[role] for c in configs if c.get(role)), None)
        if isinstance(named, Mapping):
            named = named.get("content")
        if isinstance(named, str) and tokenizer.token_to_id(named) is None:
            raise ValueError(f"{role} is {named!r}, a token the tokenizer does not have")
        found[role] = (
            named if isinstance(named, str) else next((n for n in names if n in added), None)
        )
    return found


class HFTokenizer(LibraryTokenizer):
    """A 🤗 ``tokenizers.Tokenizer`` (BPE, byte-level BPE, Unigram...) run as its file says.

    Make one with :meth:`from_file`, or from a ``Tokenizer`` and ``special`` (``{role: token}``,
    the roles of :data:`SPECIAL_NAMES`; found among its added tokens when not given).
    ``encode``, ``__call__`` and ``convert_*`` are :class:`BaseTokenizer`'s (checks, truncation,
    padding); ``decode`` is the library's, as ``transformers``' is (its decoder turns
    ``"Ġparis"`` back into ``" paris"``). A special token the tokenizer lacks has the id
    ``None``, as in ``transformers``.
    """

    def __init__(self, tokenizer: Tokenizer, special: Mapping[str, str | None] | None = None):
        super().__init__()
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"expected a tokenizers.Tokenizer, got {type(tokenizer).__name__}")
        tokenizer = Tokenizer.from_str(tokenizer.to_str())  # a copy: the caller's stays as it was
        tokenizer.no_padding()  # we pad ourselves, into tensors
        tokenizer.no_truncation()  # and truncate per call, with the caller's max_length
        self.backend_tokenizer = tokenizer
        # Texts are split without the post-processor, which runs once, in _post_process:
        # RoBERTa's trims the offsets each time it runs.
        self._pieces = Tokenizer.from_str(tokenizer.to_str())
        self._pieces.post_processor = None
        roles = special_tokens(tokenizer) if special is None else special
        for role in SPECIAL_NAMES:
            setattr(self, role, roles.get(role))
        self._size = max(tokenizer.get_vocab(with_added_tokens=True).values()) + 1

    @classmethod
    def from_file(cls, path: str | Path) -> HFTokenizer:
        """Load a ``tokenizer.json``, its special tokens named by the config files beside it."""
        path = existing_file(path)
        data = read_json(path, "a tokenizer file")
        check_keys(data, HF_TOKENIZER_KEYS, str(path), fix=FIX_TOKENIZER)
        configs = [
            read_json(path.parent / name, "a tokenizer config")
            for name in CONFIG_FILES
            if (path.parent / name).is_file()
        ]
        with reading(path, "a 🤗 tokenizers tokenizer.json"):
            tokenizer = Tokenizer.from_file(str(path))
        return cls(tokenizer, special_tokens(tokenizer, configs))

    # special tokens: by this tokenizer's names ----------------------------------------------

    def _special_id(self, token: str | None) -> int | None:
        return None if token is None else self.backend_tokenizer.token_to_id(token)

    @property
    def pad_token_id(self) -> int | None:
        return self._special_id(self.pad_token)

    @property
    def unk_token_id(self) -> int | None:
        return self._special_id(self.unk_token)

    @property
    def cls_token_id(self) -> int | None:
        return self._special_id(self.cls_token)

    @property
    def sep_token_id(self) -> int | None:
        return self._special_id(self.sep_token)

    @property
    def mask_token_id(self) -> int | None:
        return self._special_id(self.mask_token)

    @property
    def all_special_tokens(self) -> list[str]:
        return [t for role in SPECIAL_NAMES if (t := getattr(self, role)) is not None]

    @property
    def all_special_ids(self) -> list[int]:
        return [self._special_id(t) for t in self.all_special_tokens]

    # the hooks of BaseTokenizer ------------------------------------------------------------

    @property
    def _splitter(self) -> Tokenizer:
        return self._pieces

    def _sequence_ids(self, encoding: Any) -> list[int | None]:
        # post_process keeps the second text's sequence id (1) but loses the first's (0);
        # type ids cannot tell them apart either: RoBERTa's are all 0
        return [
            None if s else int(q == 1)
            for s, q in zip(encoding.special_tokens_mask, encoding.sequence_ids, strict=True)
        ]

    def _decode_tokens(self, tokens: list[str]) -> str:
        decoder = self.backend_tokenizer.decoder
        return decoder.decode(tokens) if decoder is not None else " ".join(tokens)

    @property
    def vocab_size(self) -> int:
        """One more than the largest id (ids run 0 .. vocab_size - 1)."""
        return self._size

    # where the library knows better than the base class ------------------------------------

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``, without the special tokens the post-processor adds."""
        return self.backend_tokenizer.encode(
            check_text(text, "text"), add_special_tokens=False
        ).tokens

    def decode(self, ids: Sequence[int] | torch.Tensor, skip_special_tokens: bool = True) -> str:
        """The library's decoding, as ``transformers``' (which special tokens to skip included)."""
        return self.backend_tokenizer.decode(
            self._check_ids(ids), skip_special_tokens=skip_special_tokens
        )
