"""The two probe sets made with the corpus: fact probes and right-context probes.

A fact probe masks the object of a fact (a capital, an employer, a founding year) in a
wording that the training split never uses for that fact, so a model must have learned the fact,
not the sentence. Its evidence says where train states the fact. A right-context probe masks a
sentence's first word, which only the words after it determine: a bidirectional model can know
it, a left-to-right one cannot.
"""

from __future__ import annotations

import random

from mlmcourse.data.entities import Country, Entity, Fact, Person, World
from mlmcourse.data.lexicon import PROFESSIONS, TOPICS, article
from mlmcourse.data.probes import MASK
from mlmcourse.data.templates import TEMPLATES, Rendered, Sampler
from mlmcourse.data.templates_discourse import spoke_about
from mlmcourse.data.templates_facts import (
    capital_is,
    person_is_a,
    person_lives_in,
    person_works_for,
)

# Which templates may carry a fact probe, per relation: the probe masks the fact's object.
PROBE_TEMPLATES = {
    "capital_of": ["the_capital_of", "country_has_capital", "what_is_the_capital"],
    "located_in": ["city_is_in", "city_lies_in", "the_city_of", "which_country"],
    "headquarters": ["org_based_in", "org_headquarters", "the_headquarters_of"],
    "founded": ["org_founded", "org_since", "when_founded"],
    "profession": ["person_is_a", "person_job_is"],
    "works_for": ["person_works_for", "employer_of"],
    "lives_in": ["person_lives_in", "home_of", "where_does_live"],
}


class _Fixed(Sampler):
    """A sampler that always draws the given entity: renders one template for one fact."""

    def __init__(self, world: World, rng: random.Random, entity: Entity):
        super().__init__(world, rng)
        self.entity = entity

    def country(self):
        return self.entity

    def city(self):
        return self.entity

    def org(self):
        return self.entity

    def person(self):
        return self.entity


def fact_probe_plan(world: World, rng: random.Random) -> list[tuple[str, Fact]]:
    """Pick, for every probe-able fact, the one wording kept out of the corpus for the probe."""
    plan = []
    for fact in world.facts():
        relation, _, obj = fact
        if relation not in PROBE_TEMPLATES:
            continue
        if relation != "works_for" and len(obj.split()) != 1:
            continue  # the answer must be one word ("Vesh Isles" is two)
        plan.append((rng.choice(PROBE_TEMPLATES[relation]), fact))
    return plan


def _mask_object(r: Rendered, relation: str, obj: str) -> tuple[str, str]:
    """Mask the first word of the fact's object in a rendered sentence: (text, answer)."""
    target = tuple(obj.split())
    tokens = list(r.tokens)
    for i in range(len(tokens) - len(target) + 1):
        if tuple(tokens[i : i + len(target)]) == target:
            answer = tokens[i]
            tokens[i] = MASK
            return " ".join(tokens), answer
    raise AssertionError(f"{obj!r} not found in {r.tokens} ({relation})")


def make_fact_probes(
    world: World, rng: random.Random, plan: list[tuple[str, Fact]], train: list[Rendered]
) -> list[dict]:
    """Fact probes: each states a fact in a wording the training split never uses for it."""
    stated = _where_stated(train)
    probes = []
    for name, fact in plan:
        relation, subject, obj = fact
        r = TEMPLATES[name][1](_Fixed(world, rng, world.by_name[subject]))
        text, answer = _mask_object(r, relation, obj)
        where = stated.get(fact)
        if not where:  # only in tiny test corpora: a fact that train never states
            continue
        evidence = (
            f"{relation}({subject}) = {obj}: stated {len(where)} times in train, never"
            f" in this wording; e.g. train[{where[0]}]: {' '.join(train[where[0]].tokens)}"
            + _context_hint(world, relation, text)
        )
        probes.append(
            {
                "text": text,
                "answer": answer,
                "evidence": evidence,
                "relation": relation,
                "subject": subject,
                "template": name,
                "train_index": where[0],
            }
        )
    return probes


def _where_stated(train: list[Rendered]) -> dict[Fact, list[int]]:
    """For each fact, the indices of the training sentences that state it."""
    stated: dict[Fact, list[int]] = {}
    for i, r in enumerate(train):
        for fact in r.facts:
            stated.setdefault(fact, []).append(i)
    return stated


def _context_hint(world: World, relation: str, text: str) -> str:
    """Say how far the words around the mask narrow the answer without knowing the fact.

    An organization's last word ("Bank") and the article before a profession ("an") are
    visible in the probe, so a guesser that reads them beats a plain most-common guess.
    """
    tokens = text.split(" ")
    i = tokens.index(MASK)
    if relation == "works_for":
        fits = [o for o in world.organizations if o.tokens[-1] == tokens[i + 1]]
        return (
            f"; the visible last word {tokens[i + 1]!r} fits {len(fits)} of the"
            f" {len(world.organizations)} organizations"
        )
    if relation == "profession":
        fits = [p for p, _ in PROFESSIONS if article(p) == tokens[i - 1]]
        return (
            f"; the visible article {tokens[i - 1]!r} fits {len(fits)} of the"
            f" {len(PROFESSIONS)} professions"
        )
    return ""


def make_right_context_probes(world: World, rng: random.Random) -> list[dict]:
    """Probes that mask a sentence's first word, which only the words after it determine."""
    capitals = [_capital_probe(world, rng, c) for c in world.countries]
    first_names = [_first_name_probe(world, rng, i, p) for i, p in enumerate(world.people)]
    articles = [_article_probe(world, rng, job) for job, _ in PROFESSIONS for _ in range(3)]
    return capitals + first_names + articles


def _capital_probe(world: World, rng: random.Random, c: Country) -> dict:
    """Mask a capital ("[MASK] is the capital of Vesh ."): a country has only one."""
    r = capital_is(_Fixed(world, rng, c))
    why = f"{c.capital} is the only capital of {c.name}: the right context"
    return _first_word_probe(r, "capital", why)


def _first_name_probe(world: World, rng: random.Random, i: int, p: Person) -> dict:
    """Mask a first name ("[MASK] Tarvo works for ..."): each surname is one person's only."""
    templates = [person_works_for, person_lives_in, person_is_a]
    r = templates[i % len(templates)](_Fixed(world, rng, p))
    why = f"{p.tokens[1]} is the surname of one person only, {p.name}"
    return _first_word_probe(r, "first_name", why)


def _article_probe(world: World, rng: random.Random, job: str) -> dict:
    """Mask an article ("[MASK] engineer from ..."): the profession after it decides a or an."""
    c, o, topic = rng.choice(world.cities), rng.choice(world.organizations), rng.choice(TOPICS)
    r = spoke_about(job, c, o, topic)
    why = f"'{job}' begins with a {'vowel' if article(job) == 'an' else 'consonant'} sound"
    return _first_word_probe(r, "article", why)


def _first_word_probe(r: Rendered, category: str, why: str) -> dict:
    """The probe that masks the first word of ``r``; ``why`` says what determines it."""
    text = " ".join((MASK, *r.tokens[1:]))
    evidence = f"{why}; the left context is empty, so a left-to-right model sees nothing"
    return {"text": text, "answer": r.tokens[0], "evidence": evidence, "relation": category}
