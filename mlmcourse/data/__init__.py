"""Data for the course: the generated small-world corpus shipped with the package, and real data.

The small world (see :mod:`mlmcourse.data.world`) is a fictional set of countries, cities,
organizations and people whose facts are written out as short English sentences with BIO
entity tags. It ships as plain text files next to this module, so loading it needs no network
and takes a fraction of a second.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from mlmcourse.data.moved_world import city_move, moved, moved_fact_probes
from mlmcourse.data.new_roles import names_in_new_roles
from mlmcourse.data.real import load_sst2, load_wikitext2, load_wnut17, read_conll
from mlmcourse.data.sentence import Probe, Sentence

__all__ = [
    "WORLD_LABELS",
    "city_move",
    "Probe",
    "Sentence",
    "load_probes",
    "load_sst2",
    "load_wikitext2",
    "load_wnut17",
    "load_world",
    "load_world_facts",
    "moved",
    "moved_fact_probes",
    "names_in_new_roles",
    "read_conll",
    "world_texts",
]

DATA_DIR = Path(__file__).resolve().parent
WORLD_SPLITS = ("train", "validation", "test", "unseen")
PROBE_KINDS = ("fact", "right_context")
WORLD_LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
"""The BIO labels of the world corpus, ``"O"`` first (person, organization, location)."""


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")


@functools.cache
def _world_split(split: str) -> tuple[Sentence, ...]:
    out = []
    path = DATA_DIR / f"world_{split}.txt"
    with path.open(encoding="utf-8") as f:
        for line in f:
            _, text, tags = line.rstrip("\n").split("\t")
            out.append(Sentence(tuple(text.split(" ")), tuple(tags.split(" "))))
    return tuple(out)


def load_world(split: str = "train") -> list[Sentence]:
    """The small-world corpus: ``"train"``, ``"validation"``, ``"test"`` or ``"unseen"``.

    ``"unseen"`` is the unseen-entity NER test: the same sentence frames, filled with names that
    never occur in the other three splits. A new list is returned on each call (the sentences
    themselves are immutable), so callers may shuffle or slice it freely.
    """
    _check_choice("split", split, WORLD_SPLITS)
    return list(_world_split(split))


def world_texts(split: str = "train") -> list[str]:
    """The sentences of a split as plain strings (tokens joined by single spaces)."""
    return [s.text for s in load_world(split)]


@functools.cache
def _probes(kind: str) -> tuple[Probe, ...]:
    path = DATA_DIR / f"probes_{kind}.jsonl"
    with path.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return tuple(Probe(r["text"], r["answer"], r["evidence"], r["relation"]) for r in rows)


def load_probes(kind: str) -> list[Probe]:
    """Probe sets: ``"fact"`` (facts stated in train in other words) or ``"right_context"``."""
    _check_choice("kind", kind, PROBE_KINDS)
    return list(_probes(kind))


def load_world_facts() -> dict:
    """The world itself: countries, cities, organizations and people with their attributes.

    ``"world"`` is the one the train/validation/test splits describe; ``"unseen_world"`` the one
    behind the unseen-entity split. A fresh dict each call.
    """
    return json.loads((DATA_DIR / "world_facts.json").read_text(encoding="utf-8"))
