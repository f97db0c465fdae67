"""A seeded generator of a small fictional world and the corpus that describes it.

Why a generated world: a model trained on it can be *measured*. We know every fact (the capital
of each country, where each person works), so after pretraining we can ask the model the
facts in a wording it never saw and count how often it is right. We know every entity, so the
NER labels are exact. And the vocabulary is small (about 730 word types in train) and the
sentences short, so a 2-core CPU learns it in minutes.

The world has countries, cities, organizations and people. Facts are rendered into English by
templates grouped in families (geography, organizations, people, pronouns, plurals,
questions, events). Each template renders tokens *and* BIO tags together, so the tags can never
drift from the text. Everything is driven by one ``random.Random(seed)``; no set or dict order
leaks into the output, so the shipped files are reproduced byte for byte.

The generator reads in this order, one idea a module:

- :mod:`~mlmcourse.data.lexicon`: the words (professions, objects, places) and the a/an rule;
- :mod:`~mlmcourse.data.entities`: the entities, their facts, invented names, one world;
- :mod:`~mlmcourse.data.templates`: rendering parts into tokens and tags, the template registry;
- :mod:`~mlmcourse.data.templates_facts`, :mod:`~mlmcourse.data.templates_discourse`: the
  templates, family by family;
- :mod:`~mlmcourse.data.corpus`: the two worlds and sentences sampled from them;
- :mod:`~mlmcourse.data.world_probes`: the fact and right-context probe sets;
- this module: the splits, and the files shipped next to it.

Regenerate the shipped files with ``python -m mlmcourse.data.world``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from mlmcourse.data.corpus import (
    FAMILIES,
    FAMILY_WEIGHTS,
    OPENER_FAMILIES,
    OPENER_PROBABILITY,
    SEED,
    fresh_sentences,
    generate_worlds,
    sample_sentence,
    with_opener,
)
from mlmcourse.data.entities import (
    City,
    Country,
    Entity,
    NameMaker,
    Organization,
    Person,
    World,
    build_world,
)
from mlmcourse.data.lexicon import (
    ADJECTIVES,
    CONSONANT_SOUND,
    INDUSTRIES,
    ITEMS,
    MEALS,
    MONTHS,
    NUMBERS,
    OPENERS,
    PLACES,
    PROFESSIONS,
    PRONOUNS,
    TOPICS,
    VERBS_PAST,
    WEATHER,
    WEEKDAYS,
    WHEN,
    article,
)
from mlmcourse.data.probes import MASK
from mlmcourse.data.templates import TEMPLATES, Part, Rendered, Sampler, Template, render, template
from mlmcourse.data.world_probes import (
    PROBE_TEMPLATES,
    fact_probe_plan,
    make_fact_probes,
    make_right_context_probes,
)

__all__ = [
    "ADJECTIVES",
    "CONSONANT_SOUND",
    "DATA_DIR",
    "FAMILIES",
    "FAMILY_WEIGHTS",
    "INDUSTRIES",
    "ITEMS",
    "MASK",
    "MEALS",
    "MONTHS",
    "NUMBERS",
    "OPENERS",
    "OPENER_FAMILIES",
    "OPENER_PROBABILITY",
    "PLACES",
    "PROBE_TEMPLATES",
    "PROFESSIONS",
    "PRONOUNS",
    "SEED",
    "SPLIT_SIZES",
    "TEMPLATES",
    "TOPICS",
    "VERBS_PAST",
    "WEATHER",
    "WEEKDAYS",
    "WHEN",
    "City",
    "Country",
    "Entity",
    "NameMaker",
    "Organization",
    "Part",
    "Person",
    "Rendered",
    "Sampler",
    "Template",
    "World",
    "article",
    "build_world",
    "fact_probe_plan",
    "file_contents",
    "generate",
    "generate_worlds",
    "make_fact_probes",
    "make_right_context_probes",
    "render",
    "sample_sentence",
    "split_lines",
    "template",
    "with_opener",
    "write_files",
]

SPLIT_SIZES = {"train": 20_000, "validation": 2_000, "test": 2_000, "unseen": 1_500}
DATA_DIR = Path(__file__).resolve().parent


def generate(seed: int = SEED, sizes: dict[str, int] | None = None) -> dict[str, object]:
    """Everything the package ships: worlds, splits (as ``Rendered`` lists) and probes.

    The probes' wordings are reserved first, so no split ever states a probed fact in its
    probe's wording; validation and test hold no sentence of train, the unseen split draws
    from the second world.
    """
    sizes = dict(SPLIT_SIZES if sizes is None else sizes)
    seen, unseen = generate_worlds(seed)
    rng = random.Random(seed + 1)
    plan = fact_probe_plan(seen, rng)
    reserved = set(plan)
    sampler = Sampler(seen, rng)
    train = [sample_sentence(sampler, reserved) for _ in range(sizes["train"])]
    taken = {r.tokens for r in train}
    splits: dict[str, list[Rendered]] = {"train": train}
    for split in ("validation", "test"):
        splits[split] = fresh_sentences(sampler, reserved, sizes[split], taken)
    splits["unseen"] = fresh_sentences(Sampler(unseen, rng), set(), sizes["unseen"], set())
    fact = make_fact_probes(seen, rng, plan, train)
    right = make_right_context_probes(seen, rng)
    return {"worlds": (seen, unseen), "splits": splits, "probes": {"fact": fact, "right": right}}


def split_lines(sentences: Sequence[Rendered]) -> str:
    """The shipped text format: one sentence a line, ``template<TAB>tokens<TAB>tags``."""
    return "".join(f"{r.template}\t{' '.join(r.tokens)}\t{' '.join(r.tags)}\n" for r in sentences)


def file_contents(seed: int = SEED, generated: dict | None = None) -> dict[str, str]:
    """File name -> text of every shipped file, exactly as ``write_files`` writes them.

    ``generated`` reuses the output of ``generate(seed)`` instead of generating again.
    """
    out = generate(seed) if generated is None else generated
    seen, unseen = out["worlds"]
    files = {f"world_{k}.txt": split_lines(v) for k, v in out["splits"].items()}
    files["world_facts.json"] = (
        json.dumps(
            {"seed": seed, "world": seen.to_json(), "unseen_world": unseen.to_json()}, indent=1
        )
        + "\n"
    )
    for kind, key in (("fact", "fact"), ("right_context", "right")):
        files[f"probes_{kind}.jsonl"] = "".join(
            json.dumps(p, ensure_ascii=False) + "\n" for p in out["probes"][key]
        )
    return files


def write_files(directory: Path = DATA_DIR, seed: int = SEED) -> list[Path]:
    """Write every shipped file into ``directory`` (UTF-8, ``\\n`` line ends); their paths."""
    paths = []
    for name, text in file_contents(seed).items():
        path = directory / name
        path.write_text(text, encoding="utf-8", newline="\n")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for path in write_files():
        print(f"{path.stat().st_size:>9,d}  {path}")
