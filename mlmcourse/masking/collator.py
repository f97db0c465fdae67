"""The collator: pad a list of examples, then mask them afresh at every call.

Masking in the collator rather than once when the data set is built is *dynamic masking*
(RoBERTa): every epoch shows a sentence with new masks. :class:`MLMCollator` takes strings,
pairs of strings or already tokenized dicts, pads them into a batch and masks it with one of
the :data:`STRATEGIES`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from mlmcourse.masking.core import (
    Choose,
    _check_generator,
    _id_tuple,
    _replacement,
    check_count,
    check_ratios,
    check_setting,
    choose_tokens,
    mask_batch,
)
from mlmcourse.masking.strategies import check_span_settings, choose_spans, choose_words
from mlmcourse.utils.checks import check_choice, check_int, check_integer_values, check_seed

__all__ = ["MLMCollator", "STRATEGIES"]

STRATEGIES = ("token", "whole_word", "span")


def _pad_rows(rows: Sequence[Any], filled: np.ndarray, fill: int, name: str) -> torch.Tensor:
    """Write rows of ints (lists or tensors) where ``filled`` (B, T) is True; ``fill`` elsewhere.

    NumPy does the work: for a batch of short rows, each torch call costs more in overhead
    than the copying itself, and ``torch.from_numpy`` shares the result without a copy. The
    values are read with their own type and checked before the cast to int64, so a float id
    (``7.9``) is an error rather than silently truncated to another token (7).
    """
    out = np.full(filled.shape, fill, dtype=np.int64)
    if all(type(row) is list for row in rows):  # the common case; numpy reads ints fastest
        flat = np.array(list(itertools.chain.from_iterable(rows)))
    else:
        flat = torch.cat([torch.as_tensor(row).reshape(-1) for row in rows]).numpy()
    if flat.dtype.kind not in "iu" and flat.size:
        check_integer_values(flat, name)
    out[filled] = flat
    return torch.from_numpy(out)


class MLMCollator:
    """Turn a list of examples into a masked MLM batch, for ``torch.utils.data.DataLoader``.

    Examples are strings (tokenized here, truncated to ``max_length``), pairs of strings, or
    dicts with ``input_ids`` and optionally ``token_type_ids``, ``special_tokens_mask`` and
    ``word_ids`` (already tokenized, with their special tokens; ``None`` word ids may be
    ``None`` or ``-1``). The batch is padded to its longest row and masked with ``strategy``
    (``"token"``, ``"whole_word"`` or ``"span"``). It returns the dict a Hugging Face model
    takes: ``input_ids``, ``attention_mask``, ``token_type_ids``, ``labels``, all ``(B, T)``
    long tensors, with ``labels == -100`` on everything but the targets.

    **Dynamic masking and the seed stream.** The collator owns a ``torch.Generator`` seeded
    with ``seed``; every call draws new masks from it, so a sentence is masked differently in
    every epoch, and the sequence of batches is the same in every run with the same seed and
    the same order of calls. ``generator=`` on a call uses that generator instead (the training
    loop passes one per batch index, so a resumed run sees exactly the masks it would have).
    In a ``DataLoader`` with ``num_workers > 0`` each worker gets a *copy* of the collator; a
    copy that kept the parent's stream would give every worker (and, since workers restart
    every epoch, every epoch) the same masks. So inside a worker the stream is reseeded from
    ``seed`` and the worker's seed, which PyTorch draws anew for each epoch from the loader's
    ``generator`` (or the global seed): pass ``generator=torch.Generator().manual_seed(...)``
    to the ``DataLoader`` and the run is reproducible with workers too.
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        mlm_probability: float = 0.15,
        mask_replace_prob: float = 0.8,
        random_replace_prob: float = 0.1,
        strategy: str = "token",
        max_length: int = 128,
        min_masked: int = 1,
        seed: int = 0,
        geometric_p: float = 0.2,
        max_span_length: int = 10,
    ):
        _check_tokenizer(tokenizer)
        self.mlm_probability, self.mask_replace_prob, self.random_replace_prob = check_ratios(
            mlm_probability, mask_replace_prob, random_replace_prob
        )
        self.strategy = check_choice(strategy, "strategy", STRATEGIES)
        self.max_length = _check_max_length(max_length)
        self.min_masked = check_count(min_masked, "min_masked")
        self.seed = check_seed(seed)
        self.geometric_p, self.max_span_length = check_span_settings(geometric_p, max_span_length)
        self.tokenizer = tokenizer
        # The 80/10/10 step's lookups, checked here once rather than at every batch.
        self.replacement = _replacement(
            tokenizer.mask_token_id,
            _id_tuple(tokenizer.all_special_ids),
            tokenizer.vocab_size,
            self.mask_replace_prob,
            self.random_replace_prob,
        )
        self.generator = torch.Generator().manual_seed(self.seed)
        self._worker: tuple[int, int] | None = None  # (id, seed) of the worker we run in

    def __repr__(self) -> str:
        return (
            f"MLMCollator(strategy={self.strategy!r}, mlm_probability={self.mlm_probability}, "
            f"mask_replace_prob={self.mask_replace_prob}, "
            f"random_replace_prob={self.random_replace_prob}, max_length={self.max_length}, "
            f"min_masked={self.min_masked}, seed={self.seed})"
        )

    # A generator pickles as its state, so the collator can go to spawned DataLoader workers.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["generator"] = self.generator.get_state()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        generator = torch.Generator()
        generator.set_state(state.pop("generator"))
        self.__dict__.update(state, generator=generator)

    def _stream(self) -> torch.Generator:
        """This process's generator, reseeded once inside each DataLoader worker."""
        info = torch.utils.data.get_worker_info()
        if info is not None and self._worker != (info.id, info.seed):
            self._worker = (info.id, info.seed)
            self.generator = torch.Generator().manual_seed(
                (self.seed * 1_000_003 + info.seed) % 2**63
            )
        return self.generator

    def __call__(
        self, examples: Sequence[Any], generator: torch.Generator | None = None
    ) -> dict[str, torch.Tensor]:
        batch = self.pad(examples)
        inputs, labels = self.mask(batch, generator=generator)
        return {
            "input_ids": inputs,
            "attention_mask": batch["attention_mask"],
            "token_type_ids": batch["token_type_ids"],
            "labels": labels,
        }

    def pad(self, examples: Sequence[Any]) -> dict[str, torch.Tensor]:
        """Tokenize (if needed) and pad, without masking: ``input_ids``, ``attention_mask``,
        ``token_type_ids``, ``special_tokens_mask`` and ``word_ids`` (``-1`` for None)."""
        kind = _kind_of_all(examples)
        if kind == "dict":
            return self._pad_dicts(examples)
        if kind == "text":
            encoded = self.tokenizer(list(examples), max_length=self.max_length)
        else:
            first, second = zip(*examples, strict=True)
            encoded = self.tokenizer(list(first), list(second), max_length=self.max_length)
        batch = {
            name: torch.as_tensor(encoded[name], dtype=torch.long)
            for name in ("input_ids", "attention_mask", "token_type_ids", "special_tokens_mask")
            if name in encoded
        }
        batch.setdefault("token_type_ids", torch.zeros_like(batch["input_ids"]))
        if self.strategy != "token":
            rows = [_no_none(encoded.word_ids(i)) for i in range(len(examples))]
            batch["word_ids"] = torch.tensor(rows, dtype=torch.long)  # already padded
        return batch

    def _pad_dicts(self, examples: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        ids = [example["input_ids"] for example in examples]
        lengths = [len(row) for row in ids]
        width = max(lengths)
        if width > self.max_length:
            longest = lengths.index(width)
            raise ValueError(
                f"example {longest} has {width} tokens, more than max_length={self.max_length}; "
                "tokenize with truncation (or raise max_length) rather than cut [SEP] off here"
            )
        filled = np.arange(width) < np.array(lengths)[:, None]  # (B, T)
        batch = {
            "input_ids": _pad_rows(ids, filled, self.tokenizer.pad_token_id, "input_ids"),
            "attention_mask": torch.from_numpy(filled.astype(np.int64)),
        }
        self.replacement.check_ids(batch["input_ids"])  # ids a user brings, checked here
        for name, fill in (("token_type_ids", 0), ("special_tokens_mask", 1), ("word_ids", -1)):
            present = [name in example for example in examples]
            if any(present) and not all(present):
                raise ValueError(f"{name} is in some examples but not all")
            if all(present):
                rows = [example[name] for example in examples]
                if name == "word_ids":
                    rows = [_no_none(row) for row in rows]
                _check_lengths(rows, lengths, name)
                batch[name] = _pad_rows(rows, filled, fill, name)
        batch.setdefault("token_type_ids", torch.zeros_like(batch["input_ids"]))
        if self.strategy == "whole_word" and "word_ids" not in batch:
            raise ValueError(
                "strategy='whole_word' needs word_ids in every example dict (or pass strings "
                "and let the collator tokenize them)"
            )
        return batch

    def mask(
        self, batch: Mapping[str, torch.Tensor], generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mask a padded batch (from :meth:`pad`) with this collator's strategy and settings."""
        ids = batch["input_ids"]  # (B, T), ids of this collator's tokenizer
        _check_generator(generator, ids)
        return mask_batch(
            ids,
            self._choose(batch.get("word_ids")),
            self.replacement,
            special_tokens_mask=batch.get("special_tokens_mask"),
            mlm_probability=self.mlm_probability,
            min_masked=self.min_masked,
            generator=generator if generator is not None else self._stream(),
        )

    def _choose(self, word_ids: torch.Tensor | None) -> Choose:
        """This collator's strategy as a rule (``word_ids``: ``(B, T)``, ``-1`` for none)."""
        if self.strategy == "token":
            return choose_tokens
        if self.strategy == "whole_word":
            return functools.partial(choose_words, word_ids)
        return functools.partial(choose_spans, word_ids, self.geometric_p, self.max_span_length)


def _check_max_length(max_length: Any) -> int:
    at_least_two = functools.partial(check_int, minimum=2)
    return check_setting(at_least_two, max_length, "max_length", "an int >= 2 ([CLS] and [SEP])")


def _check_tokenizer(tokenizer: Any) -> None:
    missing = [
        name
        for name in ("mask_token_id", "pad_token_id", "all_special_ids", "vocab_size")
        if not hasattr(tokenizer, name)
    ]
    if missing or not callable(tokenizer):
        raise TypeError(
            "MLMCollator needs a tokenizer (callable, with mask_token_id, pad_token_id, "
            f"all_special_ids and vocab_size); {type(tokenizer).__name__} lacks "
            f"{', '.join(missing) or '__call__'}"
        )


def _kind_of_all(examples: Any) -> str:
    """``"text"``, ``"pair"`` or ``"dict"``: the one kind all the examples are."""
    if isinstance(examples, str | bytes | Mapping) or not isinstance(examples, Sequence):
        raise TypeError(
            "MLMCollator takes a list of examples (strings, (text, pair) tuples or dicts "
            f"with input_ids), got {type(examples).__name__}"
        )
    if not examples:
        raise ValueError("MLMCollator needs at least one example, got an empty list")
    if all(type(example) is dict and "input_ids" in example for example in examples):
        return "dict"  # the DataLoader's usual case, checked cheaply
    kinds = {_example_kind(example) for example in examples}
    if len(kinds) != 1:
        raise TypeError(
            "examples must all be of one kind (strings, (text, pair) tuples or dicts with "
            f"input_ids), got a mix: {sorted(kinds)}"
        )
    kind = kinds.pop()
    if kind not in ("text", "pair", "dict"):
        raise TypeError(
            "each example must be a string, a (text, pair) tuple of strings or a dict with "
            f"input_ids, got {kind}"
        )
    return kind


def _example_kind(example: Any) -> str:
    if type(example) is dict:  # the common case, checked first: this runs for every example
        return "dict" if "input_ids" in example else "dict without input_ids"
    if isinstance(example, str):
        return "text"
    if (
        isinstance(example, tuple)
        and len(example) == 2
        and all(isinstance(t, str) for t in example)
    ):
        return "pair"
    if isinstance(example, Mapping) and "input_ids" in example:
        return "dict"
    return type(example).__name__


def _no_none(row: Any) -> Any:
    """A word_ids row with ``None`` written as ``-1`` (tensors pass through)."""
    if isinstance(row, torch.Tensor):
        return row
    return [-1 if w is None else w for w in row]


def _check_lengths(rows: Sequence[Any], lengths: Sequence[int], name: str) -> None:
    if list(map(len, rows)) == list(lengths):  # one comparison in C for the usual case
        return
    for i, (row, n) in enumerate(zip(rows, lengths, strict=True)):
        if len(row) != n:
            raise ValueError(f"example {i}: {name} has {len(row)} entries but input_ids has {n}")
