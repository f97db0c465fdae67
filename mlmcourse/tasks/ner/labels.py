"""The BIO label set of a NER data set: names, ids, and loss weights for rare labels.

NER tags each word ``O`` (outside any entity), ``B-X`` (begins an entity of type ``X``) or
``I-X`` (continues it). :class:`LabelVocab` fixes the ids of those labels, with Hugging Face's
``label2id`` / ``id2label``; :func:`class_weights_from_tags` weights the loss so a missed
entity word costs more than a missed ``O``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import torch

from mlmcourse.data.bio import split_tag
from mlmcourse.utils.checks import check_number

__all__ = ["LabelVocab", "class_weights_from_tags"]


class LabelVocab:
    """The BIO label set with Hugging Face's ``label2id`` / ``id2label``.

    Ids are fixed by the label order, never by hash order, so a model trained today and the
    vocabulary rebuilt tomorrow agree. An unknown label is an error naming it (mapping it
    silently to ``O`` would teach the model that an entity is not one).
    """

    def __init__(self, labels: Iterable[str]) -> None:
        labels = tuple(labels)
        for label in labels:
            split_tag(label)  # a malformed label is an error naming it
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise ValueError(f"labels must be unique; repeated: {duplicates}")
        if "O" not in labels:
            raise ValueError(
                f"the labels must include 'O' (outside any entity), got {list(labels)}"
            )
        self.labels = labels
        self.label2id = {label: i for i, label in enumerate(labels)}
        self.id2label = dict(enumerate(labels))

    @classmethod
    def from_sentences(cls, sentences: Iterable[Any]) -> LabelVocab:
        """Collect the labels of ``sentences`` (objects with ``.tags``, or tag sequences).

        ``"O"`` comes first, then the other labels sorted. Every type gets both its ``B-`` and
        ``I-`` label even when the data shows only one (a type seen only as one-word entities
        can still be continued, and constrained decoding needs both).
        """
        types = set()
        for sentence in sentences:
            for tag in getattr(sentence, "tags", sentence):
                prefix, type_ = split_tag(tag)
                if prefix != "O":
                    types.add(type_)
        return cls(["O", *sorted(f"{p}-{t}" for t in types for p in "BI")])

    @property
    def num_labels(self) -> int:
        return len(self.labels)

    def __len__(self) -> int:
        return len(self.labels)

    def __iter__(self) -> Iterator[str]:
        return iter(self.labels)

    def __contains__(self, label: object) -> bool:
        return label in self.label2id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabelVocab) and self.labels == other.labels

    def __repr__(self) -> str:
        return f"LabelVocab({list(self.labels)})"

    def encode(self, tags: Iterable[str]) -> list[int]:
        """Tags to ids; an unknown tag is a ``ValueError`` naming it and the known labels."""
        ids = []
        for tag in tags:
            if tag not in self.label2id:
                raise ValueError(f"unknown label {tag!r}; this vocabulary has {list(self.labels)}")
            ids.append(self.label2id[tag])
        return ids

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Ids to tags (an id out of range is an error, not a silent ``O``)."""
        out = []
        for i in ids:
            i = int(i)
            if i not in self.id2label:
                raise ValueError(f"label id {i} is out of range [0, {len(self)})")
            out.append(self.id2label[i])
        return out

    def continuation(self, label: str) -> str:
        """The label of a word's later pieces: ``B-X -> I-X``; ``I-X`` and ``O`` stay."""
        prefix, type_ = split_tag(label)
        if prefix != "B":
            return label
        inside = f"I-{type_}"
        if inside not in self.label2id:
            raise ValueError(
                f"{label!r} has no continuation label {inside!r} in {list(self.labels)}"
            )
        return inside


def class_weights_from_tags(
    sentences: Iterable[Any], label_vocab: LabelVocab, *, power: float = 0.5
) -> torch.Tensor:
    """Per-label loss weights ``(total / (num_labels * count)) ** power`` from word tags.

    NER data is mostly ``O``; weighting a label by its inverse frequency makes a missed
    entity word cost more than a missed ``O``. ``power=1`` is full inverse frequency (often
    too strong: the model then over-predicts entities), ``0.5`` the usual compromise, ``0``
    no weighting. A label that never occurs gets the weight of a label seen once.
    """
    check_number(power, "power", low=0)
    counts = torch.zeros(len(label_vocab))
    for sentence in sentences:
        for i in label_vocab.encode(getattr(sentence, "tags", sentence)):
            counts[i] += 1
    if counts.sum() == 0:
        raise ValueError("no tags to count: the sentences are empty")
    weights = counts.sum() / (len(label_vocab) * counts.clamp_min(1))
    return weights**power
