"""From label probabilities per piece to word tags and entity spans.

The model scores every label at every piece; decoding picks one label per word, either the
argmax or the best label sequence that is valid BIO (:func:`viterbi_decode`, which never puts
``I-X`` after ``O``), spreads each word's decision over its later pieces
(:func:`decode_pieces`), and reads the tags as per-word tags (:func:`word_tags`) or as entity
spans with character offsets (:func:`group_entities`, :func:`entities_from_probabilities`).
Nothing here needs a model or a tokenizer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from mlmcourse.data.bio import split_tag
from mlmcourse.heads.base import Labels, label_names

__all__ = [
    "allowed_transitions",
    "decode_pieces",
    "entities_from_probabilities",
    "group_entities",
    "viterbi_decode",
    "word_tags",
]


def allowed_transitions(labels: Labels) -> tuple[torch.Tensor, torch.Tensor]:
    """BIO's rules as masks: ``start`` (L,) and ``transitions`` (L_prev, L_next), True = allowed.

    ``I-X`` may only follow ``B-X`` or ``I-X``; in particular not ``O``, not ``B-Y``/``I-Y``
    and not the start. Everything else is allowed.
    """
    parsed = [split_tag(label) for label in label_names(labels)]
    start = torch.tensor([p != "I" for p, _ in parsed])
    transitions = torch.tensor(
        [
            [nxt != "I" or (prv != "O" and t_prv == t_nxt) for nxt, t_nxt in parsed]
            for prv, t_prv in parsed
        ]
    )
    return start, transitions


def viterbi_decode(log_probs: torch.Tensor, labels: Labels) -> list[int]:
    """The valid BIO label sequence with the highest total log-probability.

    ``log_probs`` is (T, L). Each step keeps, for every label, the best valid path ending in
    it (T·L² work instead of the Lᵀ sequences a brute-force search would score).
    """
    start, transitions = allowed_transitions(labels)
    if log_probs.dim() != 2 or log_probs.shape[1] != len(start):
        raise ValueError(
            f"log_probs must be (seq_len, {len(start)} labels), got {tuple(log_probs.shape)}"
        )
    if log_probs.shape[0] == 0:
        return []
    # NumPy: these are tiny (L,) vectors, where torch's per-op overhead dominates
    emissions = log_probs.detach().double().cpu().numpy()  # (T, L)
    penalty = np.where(transitions.numpy(), 0.0, -np.inf)  # (L_prev, L_next)
    score = np.where(start.numpy(), emissions[0], -np.inf)  # (L,)
    backpointers = []
    for t in range(1, len(emissions)):
        candidates = score[:, None] + penalty  # (L_prev, L_next)
        back = candidates.argmax(axis=0)  # the best previous label for each next label
        score = candidates[back, np.arange(len(back))] + emissions[t]
        backpointers.append(back)
    path = [int(score.argmax())]
    for back in reversed(backpointers):
        path.append(int(back[path[-1]]))
    return path[::-1]


def _deciding_pieces(word_ids: Sequence[int | None], label_all_pieces: bool) -> list[int]:
    """The pieces whose label is a decision: each word's first piece (or every word piece)."""
    return [
        k
        for k, w in enumerate(word_ids)
        if w is not None and (label_all_pieces or k == 0 or word_ids[k - 1] != w)
    ]


def decode_pieces(
    probabilities: torch.Tensor,
    word_ids: Sequence[int | None],
    labels: Labels,
    *,
    constrained: bool = True,
    label_all_pieces: bool = False,
) -> tuple[list[str | None], list[float]]:
    """One tag per piece (``None`` for specials) and the probability of each piece's decision.

    A model trained with first-piece labels only decides at each word's first piece; the word's
    later pieces inherit (``B-X`` continues as ``I-X``) and their score is ``nan``, so an
    entity's score averages the decisions actually made. With ``label_all_pieces=True`` every
    piece decides. ``constrained`` decodes with :func:`viterbi_decode` over the deciding pieces.
    """
    names = label_names(labels)
    if probabilities.dim() != 2 or probabilities.shape != (len(word_ids), len(names)):
        raise ValueError(
            f"probabilities must be (num_pieces={len(word_ids)}, num_labels={len(names)}), "
            f"got {tuple(probabilities.shape)}"
        )
    deciding = _deciding_pieces(word_ids, label_all_pieces)
    probs = probabilities.detach().float().cpu()[deciding]  # (D, L)
    if constrained:
        chosen = viterbi_decode(probs.clamp_min(1e-30).log(), names)
    else:
        chosen = probs.argmax(-1).tolist()
    tags: list[str | None] = [None] * len(word_ids)
    scores = [math.nan] * len(word_ids)
    for row, (k, c) in enumerate(zip(deciding, chosen, strict=True)):
        tags[k], scores[k] = names[c], float(probs[row, c])
    for k, w in enumerate(word_ids):  # later pieces of a word inherit its decision
        if w is not None and tags[k] is None:
            prefix, type_ = split_tag(tags[k - 1])
            tags[k] = "O" if prefix == "O" else f"I-{type_}"
    return tags, scores


def word_tags(
    piece_tags: Sequence[str | None], word_ids: Sequence[int | None], num_words: int
) -> list[str]:
    """One tag per word, from its first piece; a word with no piece (cut off) gets ``O``."""
    words = ["O"] * num_words
    for k in reversed(range(len(piece_tags))):  # reversed: the first piece of a word wins
        if word_ids[k] is not None:
            words[word_ids[k]] = piece_tags[k]
    return words


def _entity(text: str, span: dict[str, Any]) -> dict[str, Any]:
    """A span in the pipeline's form; its score is the mean of its pieces' decisions."""
    scores = span["scores"]
    return {
        "entity_group": span["entity_group"],
        "word": text[span["start"] : span["end"]],
        "start": span["start"],
        "end": span["end"],
        "score": sum(scores) / len(scores) if scores else math.nan,
    }


def group_entities(
    text: str,
    offsets: Sequence[tuple[int, int]],
    tags: Sequence[str | None],
    scores: Sequence[float],
) -> list[dict[str, Any]]:
    """Merge tagged pieces into entity spans, like the ``transformers`` pipeline's "simple" mode.

    ``B-X`` opens a span, ``I-X`` extends an open span of type ``X`` (and otherwise opens one,
    as conlleval reads it), ``O`` and specials (``None``) close it. Each span is
    ``{entity_group, word, start, end, score}``: character offsets into ``text``, ``word`` is
    ``text[start:end]`` (the original spelling, not the lower-cased pieces), and ``score`` the
    mean of its pieces' scores (``nan`` ones skipped).
    """
    if not len(offsets) == len(tags) == len(scores):
        raise ValueError(
            f"offsets, tags and scores must have one entry per piece, got {len(offsets)}, "
            f"{len(tags)} and {len(scores)}"
        )
    spans: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for (start, end), tag, score in zip(offsets, tags, scores, strict=True):
        prefix, type_ = ("O", "") if tag is None else split_tag(tag)
        if current is not None and (prefix != "I" or type_ != current["entity_group"]):
            spans.append(current)
            current = None
        if prefix == "O":
            continue
        if current is None:
            current = {"entity_group": type_, "start": start, "end": end, "scores": []}
        current["end"] = max(current["end"], end)
        if not math.isnan(score):
            current["scores"].append(score)
    if current is not None:
        spans.append(current)
    return [_entity(text, span) for span in spans]


def entities_from_probabilities(
    text: str,
    offsets: Sequence[tuple[int, int]],
    probabilities: torch.Tensor,
    word_ids: Sequence[int | None],
    labels: Labels,
    *,
    constrained: bool = True,
    label_all_pieces: bool = False,
) -> list[dict[str, Any]]:
    """Entity spans from per-piece label probabilities (num_pieces, num_labels): decode, group.

    The pure part of :func:`~mlmcourse.tasks.ner.predict_entities`, with no model or tokenizer in it.
    """
    tags, scores = decode_pieces(
        probabilities, word_ids, labels, constrained=constrained, label_all_pieces=label_all_pieces
    )
    return group_entities(text, offsets, tags, scores)
