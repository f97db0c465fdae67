"""Training batches for token classification: padded, aligned, and with words hidden.

:func:`tokenize_and_align_labels` turns sentences into the model's padded tensors, a
``DataLoader``'s ``collate_fn``; :func:`word_dropout` hides words in such a batch so the model
learns to tag a word it has never seen from its context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from mlmcourse.tasks.ner.alignment import (
    EncodedWords,
    align_labels_with_tokens,
    encode_words,
    words_and_tags,
)
from mlmcourse.tasks.ner.labels import LabelVocab
from mlmcourse.utils.checks import check_non_negative_int, check_probability
from mlmcourse.utils.labels import IGNORE_INDEX

__all__ = ["pad_encoded", "tokenize_and_align_labels", "word_dropout"]


def _pad(rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    width = max((len(r) for r in rows), default=0)
    return torch.tensor([list(r) + [value] * (width - len(r)) for r in rows], dtype=torch.long)


def pad_encoded(encoded: Sequence[EncodedWords], pad_token_id: int) -> dict[str, torch.Tensor]:
    """The model inputs ``{input_ids, attention_mask, token_type_ids}``, each padded (B, T)."""
    return {
        "input_ids": _pad([e.input_ids for e in encoded], pad_token_id),
        "attention_mask": _pad([[1] * len(e.input_ids) for e in encoded], 0),
        "token_type_ids": _pad([e.token_type_ids for e in encoded], 0),
    }


def tokenize_and_align_labels(
    sentences: Sequence[Any],
    tokenizer: Any,
    label_vocab: LabelVocab,
    *,
    max_length: int | None = 128,
    label_all_pieces: bool = False,
) -> dict[str, torch.Tensor]:
    """A padded batch ``{input_ids, attention_mask, token_type_ids, labels}``, each (B, T).

    ``sentences`` are ``Sentence`` objects or ``(tokens, tags)`` pairs. Use it as a
    ``DataLoader``'s ``collate_fn`` with ``functools.partial``.
    """
    encoded, labels = [], []
    for i, sentence in enumerate(sentences):
        words, tags = words_and_tags(sentence, i)
        if tags is None:
            raise ValueError(f"sentence {i} has no tags; training batches need labels")
        enc = encode_words(tokenizer, words, max_length=max_length)
        encoded.append(enc)
        try:
            labels.append(
                align_labels_with_tokens(
                    tags, enc.word_ids, label_vocab, label_all_pieces=label_all_pieces
                )
            )
        except ValueError as err:
            raise ValueError(f"sentence {i}: {err}") from None
    return {**pad_encoded(encoded, tokenizer.pad_token_id), "labels": _pad(labels, IGNORE_INDEX)}


def _check_word_dropout(probability: Any, unk_token_id: Any) -> tuple[float, int]:
    """:func:`word_dropout`'s settings as Python numbers (kept out of its listing)."""
    return (
        check_probability(probability, "probability"),
        check_non_negative_int(unk_token_id, "unk_token_id"),
    )


def word_dropout(
    batch: Mapping[str, torch.Tensor],
    *,
    unk_token_id: int,
    probability: float,
    generator: torch.Generator | None = None,
) -> dict[str, torch.Tensor]:
    """A copy of ``batch`` where each labelled piece's input id became ``[UNK]`` with ``probability``.

    A word-level vocabulary built from the training text has no unknown word *in* that text, so
    a model fine-tuned on it never sees ``[UNK]``, yet every new name at test time is one. Hiding
    words during training (Lample et al., 2016, replaced singletons) teaches the model to tag a
    word from its context. Only positions with a label (``!= -100``: a word's first piece) are
    replaced; specials, padding and labels are left alone.
    """
    probability, unk_token_id = _check_word_dropout(probability, unk_token_id)
    missing = {"input_ids", "labels"} - set(batch)
    if missing:
        raise ValueError(f"batch lacks {sorted(missing)}; word_dropout needs input_ids and labels")
    input_ids, labels = batch["input_ids"], batch["labels"]
    if input_ids.shape != labels.shape:
        raise ValueError(
            f"input_ids {tuple(input_ids.shape)} and labels {tuple(labels.shape)} differ in shape"
        )
    draw = torch.rand(input_ids.shape, generator=generator)  # (B, T), on the CPU like the batch
    hidden = (draw < probability).to(input_ids.device) & (labels != IGNORE_INDEX)
    return {**batch, "input_ids": input_ids.masked_fill(hidden, unk_token_id)}
