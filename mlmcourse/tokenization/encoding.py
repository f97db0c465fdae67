"""What a tokenizer returns: one :class:`Encoding` per text, a :class:`BatchEncoding` of tensors.

The special tokens live here too: every tokenizer adds them, and a padded row is filled with
``[PAD]``. The names follow Hugging Face's, so the code reads the same in ``transformers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
# Our own vocabularies put these first, so their ids are 0..4 in this order.
SPECIAL_TOKENS: tuple[str, ...] = (PAD, UNK, CLS, SEP, MASK)


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
