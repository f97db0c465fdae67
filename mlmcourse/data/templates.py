"""How a template makes a sentence: entities drawn, parts listed, tokens and BIO tags rendered.

A template is a small function of a :class:`Sampler`: it draws the entities it needs, looks up
their facts, and lists the sentence's parts (plain words and entities). :func:`render` turns the
parts into tokens *and* tags together, so the tags can never drift from the text. The
:func:`template` decorator registers a template under its family; the families live in
:mod:`mlmcourse.data.templates_facts` and :mod:`mlmcourse.data.templates_discourse`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlmcourse.data.entities import City, Country, Entity, Fact, Organization, Person, World
from mlmcourse.data.lexicon import PROFESSIONS, PRONOUNS, article


@dataclass(frozen=True)
class Rendered:
    """A sentence as the generator made it: tokens, BIO tags, and the facts it states."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    template: str
    facts: tuple[Fact, ...]


Part = str | Entity


def render(template: str, parts: Sequence[Part], facts: Sequence[Fact] = ()) -> Rendered:
    """Join plain words (tag ``O``) and entities (``B-``/``I-`` tags); capitalise the first word."""
    tokens: list[str] = []
    tags: list[str] = []
    for part in parts:
        if isinstance(part, Entity):
            tokens += part.tokens
            tags += [f"B-{part.type}"] + [f"I-{part.type}"] * (len(part.tokens) - 1)
        else:
            words = part.split()
            tokens += words
            tags += ["O"] * len(words)
    tokens[0] = tokens[0][0].upper() + tokens[0][1:]
    # After a full stop or question mark inside the sentence, the next word starts a sentence.
    for i in range(1, len(tokens)):
        if tokens[i - 1] in {".", "?"} and tags[i] == "O":
            tokens[i] = tokens[i][0].upper() + tokens[i][1:]
    return Rendered(tuple(tokens), tuple(tags), template, tuple(facts))


# Grammar: agreement with the person a sentence is about ------------------------------------------


def verb(person: Person, singular: str, plural: str) -> str:
    """The verb form that agrees with the person: "they" takes the plural ("they live")."""
    return plural if person.gender == "n" else singular


# The pronouns are named after their gender-neutral forms: they(p) is "she", "he" or "they".
def they(p: Person) -> str:
    """The subject pronoun: ``"she lives"``."""
    return PRONOUNS[p.gender][0]


def them(p: Person) -> str:
    """The object pronoun: ``"pays her"``."""
    return PRONOUNS[p.gender][1]


def their(p: Person) -> str:
    """The possessive: ``"her employer"``."""
    return PRONOUNS[p.gender][2]


def a_or_an(word: str) -> str:
    """``"an engineer"``, ``"a university"``: the word after its indefinite article."""
    return f"{article(word)} {word}"


def plural(profession: str) -> str:
    """``"engineers"``: the lexicon lists each profession's plural."""
    return dict(PROFESSIONS)[profession]


# Drawing entities, and the registry of templates -----------------------------------------------


class Sampler:
    """Draws the entities a template needs from one world, with one random generator."""

    def __init__(self, world: World, rng: random.Random):
        self.world = world
        self.rng = rng

    def country(self) -> Country:
        return self.rng.choice(self.world.countries)

    def city(self) -> City:
        return self.rng.choice(self.world.cities)

    def org(self) -> Organization:
        return self.rng.choice(self.world.organizations)

    def person(self) -> Person:
        return self.rng.choice(self.world.people)

    def pair(self, key: Callable[[Person], str]) -> tuple[Person, Person] | None:
        """Two different people who share ``key`` (an employer, a home, a profession)."""
        p = self.person()
        others = [q for q in self.world.people if q is not p and key(q) == key(p)]
        return (p, self.rng.choice(others)) if others else None

    def e(self, name: str) -> Entity:
        return self.world.by_name[name]


Template = Callable[[Sampler], Rendered | None]
TEMPLATES: dict[str, tuple[str, Template]] = {}  # name -> (family, function)


def template(family: str) -> Callable[[Template], Template]:
    """Register the decorated template under its name, in ``family``; the corpus draws from it."""

    def register(fn: Template) -> Template:
        TEMPLATES[fn.__name__] = (family, fn)
        return fn

    return register
