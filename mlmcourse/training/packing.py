"""Sequence packing: several documents per row, so a batch holds tokens and not padding.

Real text is short and uneven. Padded to the longest row of its batch, a batch of WikiText-2
paragraphs or tweets is often half padding, and every matrix multiply of the encoder spends
that half on nothing. Packing puts documents one after the other in each row, up to
``max_length``; each keeps its own ``[CLS] ... [SEP]``, its positions restart at 0 (so it gets
the position embeddings it would have alone), and the encoder lets it attend only to itself
(:func:`mlmcourse.model.bert.attention_allowed` with ``document_ids``: a block-diagonal mask). Its
hidden states, and so its MLM logits and loss, are then those of the document on its own row;
masking is unchanged (each document's specials are protected as before).

``pack`` chooses the rows; :class:`PackedMLMCollator` builds and masks a batch of packed rows;
:class:`PackedMLMBatches` is :class:`~mlmcourse.training.MLMBatches` with packing: batch ``i``
still depends only on ``(seed, i)``. For masked LM only: a causal LM would also need its
shifted targets cut at each document's end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from mlmcourse.training.batches import MLMBatches, check_batch_plan
from mlmcourse.utils.checks import ConfigError, as_scalar, check_positive_int, is_int

__all__ = ["PackedMLMBatches", "PackedMLMCollator", "pack", "padding_share", "padding_shares"]


def pack(lengths: Sequence[int], max_length: int, *, window: int = 32) -> list[list[int]]:
    """Rows of document indices, each row's lengths summing to at most ``max_length``.

    First fit, in the given order: a document goes into the first of the ``window`` most
    recently opened rows that has room for it, else starts a new row. Keeping the order keeps
    the epoch's shuffle; looking back at several open rows (not only the last, as next fit
    does) fills them far better, and the window keeps the cost linear in the documents. A
    document longer than ``max_length`` is an error: truncate it first (the collator does).
    """
    max_length = check_positive_int(max_length, "max_length")
    window = check_positive_int(window, "window")
    rows: list[list[int]] = []
    room: list[int] = []  # free tokens left in each row
    open_rows: list[int] = []  # the rows still being filled, oldest first
    for index, length in enumerate(lengths):
        length = as_scalar(length)
        if not is_int(length) or not 0 < length <= max_length:
            raise ConfigError(
                f"document {index} has {length!r:.40} tokens; each must have 1 to "
                f"max_length={max_length} (truncate longer documents before packing)"
            )
        row = next((r for r in open_rows if room[r] >= length), None)
        if row is None:
            row = len(rows)
            rows.append([])
            room.append(max_length)
            open_rows = [*open_rows, row][-window:]
        rows[row].append(index)
        room[row] -= length
    return rows


def padding_share(attention_mask: torch.Tensor) -> float:
    """The share of a padded batch that is padding: 1 - real tokens / (B x T)."""
    return 1.0 - float(attention_mask.sum()) / max(1, attention_mask.numel())


def padding_shares(
    texts: Sequence[str], collator: Any, batch_size: int, batches: int = 20
) -> dict[str, float]:
    """The mean share of padding in the first ``batches`` training batches of ``texts``:
    ``{"padded": ...}`` with :class:`~mlmcourse.training.MLMBatches` (each batch padded to its
    longest row), ``{"packed": ...}`` with :class:`PackedMLMBatches`; ``collator`` is an
    :class:`~mlmcourse.masking.MLMCollator`."""
    batches = check_positive_int(batches, "batches")
    plain = MLMBatches(texts, collator, batch_size=batch_size)
    packed = PackedMLMBatches(texts, PackedMLMCollator(collator), batch_size=batch_size)
    return {
        name: sum(padding_share(b(i)["attention_mask"]) for i in range(batches)) / batches
        for name, b in (("padded", plain), ("packed", packed))
    }


class PackedMLMCollator:
    """Build a masked batch whose rows each hold several documents.

    ``collator`` is an :class:`~mlmcourse.masking.MLMCollator`: its tokenizer, ``max_length``
    and masking settings are used unchanged. A call takes rows, each a list of texts (from
    :func:`pack`), and returns the usual ``input_ids``, ``attention_mask``, ``token_type_ids``
    and ``labels``, plus ``position_ids`` restarting at 0 with each document.
    """

    def __init__(self, collator: Any) -> None:
        if not callable(getattr(collator, "mask", None)) or not hasattr(collator, "max_length"):
            raise TypeError(
                f"PackedMLMCollator wraps an MLMCollator, got {type(collator).__name__}"
            )
        self.collator = collator

    @property
    def max_length(self) -> int:
        return self.collator.max_length

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in tokens, ``[CLS]`` and ``[SEP]`` included, after truncation."""
        encoded = self.collator.tokenizer(list(texts), max_length=self.max_length)
        return [int(n) for n in torch.as_tensor(encoded["attention_mask"]).sum(1)]

    def __call__(
        self, rows: Sequence[Sequence[str]], generator: torch.Generator | None = None
    ) -> dict[str, torch.Tensor]:
        if not rows or any(not row for row in rows):
            raise ValueError("PackedMLMCollator needs at least one row, each with a document")
        examples = [self._row(row) for row in rows]
        positions = [example.pop("position_ids") for example in examples]
        batch = self.collator.pad(examples)
        inputs, labels = self.collator.mask(batch, generator=generator)
        width = batch["input_ids"].shape[1]
        position_ids = torch.zeros_like(batch["input_ids"])  # padding at position 0
        for r, row in enumerate(positions):
            position_ids[r, : len(row)] = torch.tensor(row)
        return {
            "input_ids": inputs,
            "attention_mask": batch["attention_mask"],
            "token_type_ids": batch["token_type_ids"],
            "position_ids": position_ids[:, :width],
            "labels": labels,
        }

    def _row(self, texts: Sequence[str]) -> dict[str, list[int]]:
        """One packed row: the documents' tokens, specials, word ids and positions, joined."""
        encoded = self.collator.tokenizer(list(texts), max_length=self.max_length)
        mask = torch.as_tensor(encoded["attention_mask"])
        ids, special, words, positions = [], [], [], []
        word_offset = 0
        for d in range(len(texts)):
            n = int(mask[d].sum())
            ids += torch.as_tensor(encoded["input_ids"])[d, :n].tolist()
            if "special_tokens_mask" in encoded:
                special += torch.as_tensor(encoded["special_tokens_mask"])[d, :n].tolist()
            doc_words = [-1 if w is None else w + word_offset for w in encoded.word_ids(d)[:n]]
            word_offset = max([word_offset - 1, *doc_words]) + 1  # words never shared
            words += doc_words
            positions += list(range(n))
        if len(ids) > self.max_length:
            raise ValueError(
                f"a row holds {len(ids)} tokens, more than max_length={self.max_length}: "
                "build the rows with pack(collator.lengths(texts), max_length)"
            )
        row = {"input_ids": ids, "word_ids": words, "position_ids": positions}
        if special:
            row["special_tokens_mask"] = special
        return row


class PackedMLMBatches:
    """Packed masked training batches, ``batch_size`` rows each; batch ``i`` depends only on
    ``(seed, i)``, as with :class:`~mlmcourse.training.MLMBatches`, so resuming stays exact.

    Each epoch shuffles the texts (seeded by ``(seed, epoch)``) and packs them in that order
    (:func:`pack`); the epochs' rows follow each other, so an epoch has fewer, fuller batches
    than without packing and no text is dropped. Under DDP each rank keeps every
    ``world_size``-th row of the global batch of ``batch_size * world_size`` rows.
    ``collator`` is a :class:`PackedMLMCollator`.
    """

    def __init__(
        self,
        texts: Sequence[str],
        collator: PackedMLMCollator,
        *,
        batch_size: int,
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
    ):
        if not isinstance(collator, PackedMLMCollator):
            raise TypeError(
                "PackedMLMBatches needs a PackedMLMCollator (wrap your MLMCollator in one)"
            )
        self.batch_size, self.seed, self.rank, self.world_size = check_batch_plan(
            texts, batch_size, seed, rank, world_size, "PackedMLMBatches"
        )
        self.texts, self.collator = list(texts), collator
        self.lengths = collator.lengths(self.texts)
        self._rows: dict[int, list[list[int]]] = {}  # the last two epochs' rows
        self._starts = [0]  # _starts[e]: the first row of epoch e, counted over all epochs

    def rows(self, epoch: int) -> list[list[int]]:
        """The packed rows of ``epoch`` (text indices), in the epoch's shuffled order."""
        if epoch not in self._rows:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            order = torch.randperm(len(self.texts), generator=g).tolist()
            packed = pack([self.lengths[i] for i in order], self.collator.max_length)
            self._rows = {e: r for e, r in self._rows.items() if e == epoch - 1}
            self._rows[epoch] = [[order[j] for j in row] for row in packed]
        return self._rows[epoch]

    def _row(self, position: int) -> list[int]:
        """Row ``position`` of the stream of every epoch's rows, one epoch after another."""
        while position >= self._starts[-1]:
            self._starts.append(self._starts[-1] + len(self.rows(len(self._starts) - 1)))
        epoch = next(e for e in range(len(self._starts) - 1) if position < self._starts[e + 1])
        return self.rows(epoch)[position - self._starts[epoch]]

    def __call__(self, index: int) -> dict[str, torch.Tensor]:
        width = self.batch_size * self.world_size
        rows = [self._row(index * width + k) for k in range(width)]
        mask_seed = (self.seed * 1_000_003 + index) * 1009
        batch = self.collator(
            [[self.texts[t] for t in row] for row in rows],
            generator=torch.Generator().manual_seed(mask_seed),
        )
        if self.world_size == 1:
            return batch
        return {name: value[self.rank :: self.world_size] for name, value in batch.items()}
