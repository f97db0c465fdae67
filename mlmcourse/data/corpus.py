"""Sampling the corpus: the two worlds, and sentences drawn family by family from a template.

Everything is driven by one ``random.Random(seed)``, and every loop runs over lists in a fixed
order (never a set or a dict keyed by hash), so the same seed gives the same corpus byte for
byte in any interpreter.
"""

from __future__ import annotations

import random

# Importing the template modules registers their templates in TEMPLATES.
from mlmcourse.data import templates_discourse, templates_facts  # noqa: F401
from mlmcourse.data.entities import Fact, NameMaker, World, build_world
from mlmcourse.data.lexicon import OPENERS, lexicon_words
from mlmcourse.data.templates import TEMPLATES, Rendered, Sampler

SEED = 20261121

FAMILY_WEIGHTS = {
    "geography": 0.14,
    "organization": 0.16,
    "person": 0.28,
    "pronoun": 0.12,
    "plural": 0.08,
    "question": 0.09,
    "event": 0.13,
}
OPENER_FAMILIES = {"geography", "organization", "person"}
OPENER_PROBABILITY = 0.3
FAMILIES = {f: [name for name, (fam, _) in TEMPLATES.items() if fam == f] for f in FAMILY_WEIGHTS}


def _template_words() -> set[str]:
    """Every word a template or lexicon list can produce, lower-cased: names must avoid them."""
    words = lexicon_words()
    # Render every template on a throwaway world whose names cannot clash, and keep its O words.
    rng, counter = random.Random(0), iter(range(10**6))
    dummy = build_world(
        rng,
        lambda: f"Zz{next(counter)}",
        n_countries=4,
        cities_per_country=3,
        n_organizations=10,
        n_people=12,
    )
    sampler = Sampler(dummy, rng)
    for names in FAMILIES.values():  # in family order, whatever order the modules load in
        for name in names:
            for _ in range(10):
                r = TEMPLATES[name][1](sampler)
                if r is not None:
                    words |= {t.lower() for t, g in zip(r.tokens, r.tags, strict=True) if g == "O"}
    return words


def generate_worlds(seed: int = SEED) -> tuple[World, World]:
    """The world the corpus describes, and a second one with fresh names for the unseen split."""
    rng = random.Random(seed)
    names = NameMaker(rng, _template_words())
    seen = build_world(
        rng, names, n_countries=12, cities_per_country=3, n_organizations=24, n_people=40
    )
    unseen = build_world(
        rng, names, n_countries=8, cities_per_country=3, n_organizations=16, n_people=30
    )
    return seen, unseen


def sample_sentence(sampler: Sampler, reserved: set[tuple[str, Fact]]) -> Rendered:
    """One sentence: a family by weight, a template uniformly, skipping reserved wordings."""
    rng = sampler.rng
    families = list(FAMILY_WEIGHTS)
    weights = [FAMILY_WEIGHTS[f] for f in families]
    while True:
        family = rng.choices(families, weights)[0]
        name = rng.choice(FAMILIES[family])
        out = TEMPLATES[name][1](sampler)
        if out is None or any((name, fact) in reserved for fact in out.facts):
            continue
        if family in OPENER_FAMILIES and rng.random() < OPENER_PROBABILITY:
            out = with_opener(out, rng.choice(OPENERS))
        return out


def with_opener(r: Rendered, opener: str) -> Rendered:
    """``"as far as we know , the capital of ..."``: the same facts, in a longer wording."""
    first = r.tokens[0] if r.tags[0] != "O" else r.tokens[0].lower()
    words = opener.split()
    tokens = (words[0].capitalize(), *words[1:], first, *r.tokens[1:])
    return Rendered(tokens, ("O",) * len(words) + r.tags, r.template, r.facts)


def fresh_sentences(
    sampler: Sampler, reserved: set[tuple[str, Fact]], n: int, taken: set[tuple[str, ...]]
) -> list[Rendered]:
    """``n`` sentences none of which is in ``taken`` (nor repeated); adds them to ``taken``."""
    out = []
    while len(out) < n:
        r = sample_sentence(sampler, reserved)
        if r.tokens not in taken:
            taken.add(r.tokens)
            out.append(r)
    return out
