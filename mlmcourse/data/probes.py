"""Checks that a probe's answer is determined the way its probe set claims.

A right-context probe claims that the words *before* ``[MASK]`` do not determine the answer.
:func:`left_continuations` makes that claim measurable: it counts which words follow the same
left context in a corpus. When several different words do, a model that reads only the left
context (a causal language model) cannot know which one the probe wants.

:func:`by_relation` and :func:`by_blank_position` break a probe score down the way the CLM vs
MLM chapter compares a masked and a causal LM: per relation, and by where the blank stands.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mlmcourse.data.sentence import Probe, Sentence

MASK = "[MASK]"


def split_probe(probe: Probe) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words left and right of the probe's ``[MASK]``."""
    tokens = probe.text.split(" ")
    if tokens.count(MASK) != 1:
        raise ValueError(f"a probe needs exactly one {MASK}, got {probe.text!r}")
    i = tokens.index(MASK)
    return tuple(tokens[:i]), tuple(tokens[i + 1 :])


def left_continuations(
    left: Sequence[str], sentences: Iterable[Sentence | Sequence[str]]
) -> Counter[str]:
    """How often each word follows exactly the words ``left`` at the start of a sentence.

    With ``left == ()`` this is the distribution of first words. A left-to-right model that saw
    ``sentences`` can at best predict this distribution for a probe with that left context.
    """
    left = tuple(left)
    n = len(left)
    counts: Counter[str] = Counter()
    for s in sentences:
        tokens = s.tokens if isinstance(s, Sentence) else tuple(s)
        if len(tokens) > n and tuple(tokens[:n]) == left:
            counts[tokens[n]] += 1
    return counts


SENTENCE_START = "<s>"
SENTENCE_END = "</s>"


def between_neighbours(
    left: Sequence[str], right: Sequence[str], sentences: Iterable[Sentence | Sequence[str]]
) -> Counter[str]:
    """How often each word stands between the blank's two neighbours in ``sentences``.

    The neighbours are the last word of ``left`` and the first of ``right`` (the sentence's
    start or end where a side is empty). A model that reads only the two words next to a blank
    can at best predict this distribution: the control for a right-context probe, which may be
    solved by a neighbour rather than by reading the rest of the sentence.
    """
    before = left[-1] if left else SENTENCE_START
    after = right[0] if right else SENTENCE_END
    counts: Counter[str] = Counter()
    for s in sentences:
        tokens = (SENTENCE_START, *(s.tokens if isinstance(s, Sentence) else s), SENTENCE_END)
        for a, word, b in zip(tokens, tokens[1:], tokens[2:], strict=False):
            if a == before and b == after:
                counts[word] += 1
    return counts


def by_relation(
    rows: Sequence[Mapping[str, Any]], probes: Sequence[Probe]
) -> dict[str, tuple[float, int]]:
    """Accuracy and number of probes per relation, in sorted relation order.

    ``rows`` are the scored rows of :func:`~mlmcourse.tasks.fill_mask.fill_mask_accuracy` or
    :func:`~mlmcourse.tasks.generation.next_word_accuracy` (each with ``correct``), one per probe, in the
    order of ``probes`` (a different number is an error): one overall accuracy can hide a
    relation a model never gets right.
    """
    out = {}
    for relation in sorted({p.relation for p in probes}):
        hits = [r["correct"] for r, p in zip(rows, probes, strict=True) if p.relation == relation]
        out[relation] = (sum(hits) / len(hits), len(hits))
    return out


def by_blank_position(probes: Sequence[Probe]) -> dict[str, list[Probe]]:
    """The probes split by where the blank is: ``answer at the end``, ``answer inside``, ``all``.

    The answer is at the end when only the final ``.`` follows ``[MASK]``: then a left-to-right
    model reads the whole question before it must answer (``The capital of Kroudron is [MASK]
    .``). Inside, words after the blank belong to the question (``Pokronpes has [MASK] as its
    capital .``), and a left-to-right model answers without them.
    """
    at_end = [p for p in probes if split_probe(p)[1] == (".",)]
    inside = [p for p in probes if split_probe(p)[1] != (".",)]
    return {"answer at the end": at_end, "answer inside": inside, "all": list(probes)}
