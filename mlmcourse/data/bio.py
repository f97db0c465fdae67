"""The BIO tagging scheme: how entity spans are written as one tag per word.

``B-X`` begins an entity of type ``X``, ``I-X`` continues it, ``O`` is outside any entity.
:func:`split_tag` reads one tag (refusing malformed ones), :func:`get_entities` reads the
spans of a sentence with the rules of CoNLL's ``conlleval`` (which ``seqeval`` follows).
Data readers check tags with it; the entity metrics (:mod:`mlmcourse.tasks.ner.metrics`)
count spans with it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["get_entities", "split_tag"]


def split_tag(tag: str) -> tuple[str, str]:
    """Split a BIO tag into ``(prefix, type)``: ``"B-PER" -> ("B", "PER")``, ``"O" -> ("O", "")``.

    Only ``O``, ``B-<type>`` and ``I-<type>`` are accepted; anything else is a ``ValueError``
    that names the tag, because a typo such as ``"B_PER"`` or an IOBES ``"S-PER"`` would
    otherwise be scored silently as something it is not.
    """
    if tag == "O":
        return "O", ""
    if isinstance(tag, str) and len(tag) > 2 and tag[0] in "BI" and tag[1] == "-":
        return tag[0], tag[2:]
    hint = ""
    if isinstance(tag, str) and len(tag) > 2 and tag[0] in "ES" and tag[1] == "-":
        hint = " (IOBES/IOBE tags are not supported: convert E- to I- and S- to B-)"
    raise ValueError(f"malformed BIO tag {tag!r}: expected 'O', 'B-<type>' or 'I-<type>'{hint}")


def get_entities(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """Read the entities of one tag sequence as ``(type, start, end)`` with ``end`` inclusive.

    >>> get_entities(["B-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG"])
    [('PER', 0, 1), ('LOC', 3, 3), ('LOC', 4, 4), ('ORG', 5, 5)]
    """
    if isinstance(tags, str):
        raise TypeError(f"tags must be a sequence of tag strings, got the string {tags!r}")
    entities: list[tuple[str, int, int]] = []
    current: str | None = None  # type of the open entity
    start = 0
    for i, tag in enumerate(tags):
        prefix, type_ = split_tag(tag)
        continues = prefix == "I" and current == type_
        if current is not None and not continues:
            entities.append((current, start, i - 1))
            current = None
        if prefix != "O" and not continues:
            current, start = type_, i
    if current is not None:
        entities.append((current, start, len(tags) - 1))
    return entities
