"""The world's entities and facts: countries, cities, organizations and people, drawn from a seed.

Every name is invented from syllables (:class:`NameMaker`), so a model can learn an entity only
from what the corpus says about it, never from the name itself. :func:`build_world` draws
one world; :meth:`World.facts` lists what it knows as ``(relation, subject, object)`` triples.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mlmcourse.data.lexicon import INDUSTRIES, PROFESSIONS


@dataclass(frozen=True)
class Entity:
    """Anything with a name: the name's tokens and its entity type (PER, ORG or LOC)."""

    tokens: tuple[str, ...]
    type: str

    @property
    def name(self) -> str:
        return " ".join(self.tokens)


@dataclass(frozen=True)
class Country(Entity):
    capital: str = ""  # the capital city's name


@dataclass(frozen=True)
class City(Entity):
    country: str = ""


@dataclass(frozen=True)
class Organization(Entity):
    industry: str = ""
    headquarters: str = ""  # a city's name
    founded: int = 0


@dataclass(frozen=True)
class Person(Entity):
    gender: str = "n"  # "f", "m" or "n": chooses she/he/they
    profession: str = ""
    employer: str = ""  # an organization's name
    home: str = ""  # a city's name
    joined: int = 0  # the year they joined their employer
    moved: int = 0  # the year they moved to their home city


Fact = tuple[str, str, str]  # (relation, subject, object), e.g. ("capital_of", "Vesh", "Tarn")


# One function a relation: the fact an entity holds, as the templates and the probes name it.
def capital_of(c: Country) -> Fact:
    return ("capital_of", c.name, c.capital)


def located_in(c: City) -> Fact:
    return ("located_in", c.name, c.country)


def industry(o: Organization) -> Fact:
    return ("industry", o.name, o.industry)


def headquarters(o: Organization) -> Fact:
    return ("headquarters", o.name, o.headquarters)


def founded(o: Organization) -> Fact:
    return ("founded", o.name, str(o.founded))


def profession(p: Person) -> Fact:
    return ("profession", p.name, p.profession)


def works_for(p: Person) -> Fact:
    return ("works_for", p.name, p.employer)


def lives_in(p: Person) -> Fact:
    return ("lives_in", p.name, p.home)


def joined(p: Person) -> Fact:
    return ("joined", p.name, str(p.joined))


def moved(p: Person) -> Fact:
    return ("moved", p.name, str(p.moved))


@dataclass
class World:
    """All entities of one world, each list in a fixed order, with lookups by name."""

    countries: list[Country]
    cities: list[City]
    organizations: list[Organization]
    people: list[Person]
    by_name: dict[str, Entity] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for e in [*self.countries, *self.cities, *self.organizations, *self.people]:
            self.by_name[e.name] = e

    def cities_in(self, country: str) -> list[City]:
        return [c for c in self.cities if c.country == country]

    def facts(self) -> list[Fact]:
        """Every fact as ``(relation, subject, object)``, in a stable order."""
        out = [capital_of(c) for c in self.countries]
        out += [located_in(c) for c in self.cities]
        for o in self.organizations:
            out += [industry(o), headquarters(o), founded(o)]
        for p in self.people:
            out += [profession(p), works_for(p), lives_in(p), joined(p), moved(p)]
        return out

    def to_json(self) -> dict:
        return {
            "countries": [{"name": c.name, "capital": c.capital} for c in self.countries],
            "cities": [{"name": c.name, "country": c.country} for c in self.cities],
            "organizations": [
                {
                    "name": o.name,
                    "industry": o.industry,
                    "headquarters": o.headquarters,
                    "founded": o.founded,
                }
                for o in self.organizations
            ],
            "people": [
                {
                    "name": p.name,
                    "gender": p.gender,
                    "profession": p.profession,
                    "employer": p.employer,
                    "home": p.home,
                    "joined": p.joined,
                    "moved": p.moved,
                }
                for p in self.people
            ],
        }


# Syllable parts of invented names (vowels listed twice are drawn twice as often).
_ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"]
_ONSETS += ["br", "dr", "kr", "tr", "st", "th", "sh", "ch", "gr", "pl"]
_VOWELS = ["a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou"]
_CODAS = ["", "", "", "n", "r", "l", "s", "th", "m", "k", "x", "nd", "rn"]


class NameMaker:
    """Invented names from syllables, never repeated and never an English word of our templates."""

    def __init__(self, rng: random.Random, forbidden: set[str]):
        self.rng = rng
        self.used = {w.lower() for w in forbidden}

    def __call__(self, syllables: Sequence[int] = (2, 3)) -> str:
        while True:
            parts = []
            for i in range(self.rng.choice(list(syllables))):
                onset = self.rng.choice(_ONSETS) if i == 0 or self.rng.random() < 0.8 else ""
                coda = self.rng.choice(_CODAS) if i > 0 or self.rng.random() < 0.3 else ""
                parts.append(onset + self.rng.choice(_VOWELS) + coda)
            name = "".join(parts)
            if 4 <= len(name) <= 9 and name not in self.used:
                self.used.add(name)
                return name.capitalize()


def build_world(
    rng: random.Random,
    names: Callable[[], str],
    *,
    n_countries: int,
    cities_per_country: int,
    n_organizations: int,
    n_people: int,
) -> World:
    """Draw one world: every country has a capital, every person a job, an employer and a home."""
    countries, cities = _draw_countries(names, n_countries, cities_per_country)
    organizations = [_draw_organization(rng, names, i, cities) for i in range(n_organizations)]
    people = [
        _draw_person(rng, names, i, organizations[i % len(organizations)], cities)
        for i in range(n_people)
    ]
    return World(countries, cities, organizations, people)


def _draw_countries(
    names: Callable[[], str], n_countries: int, cities_per_country: int
) -> tuple[list[Country], list[City]]:
    """Countries with their cities; the first city of each country is its capital."""
    countries, cities = [], []
    for i in range(n_countries):
        # One country in four has a two-word name ("Vesh Isles"), so LOC also has I- tags.
        tokens = (names(), "Isles") if i % 4 == 3 else (names(),)
        city_names = [names() for _ in range(cities_per_country)]
        country = Country(tokens, "LOC", capital=city_names[0])
        countries.append(country)
        cities += [City((c,), "LOC", country=country.name) for c in city_names]
    return countries, cities


def _draw_organization(
    rng: random.Random, names: Callable[[], str], i: int, cities: list[City]
) -> Organization:
    """The ``i``-th organization: industries take turns, so every industry has a few."""
    kind, suffix = INDUSTRIES[i % len(INDUSTRIES)]
    return Organization(
        (names(), suffix),
        "ORG",
        industry=kind,
        headquarters=rng.choice(cities).name,
        founded=rng.randrange(1850, 2016),
    )


def _draw_person(
    rng: random.Random,
    names: Callable[[], str],
    i: int,
    employer: Organization,
    cities: list[City],
) -> Person:
    """The ``i``-th person; they joined their employer after it was founded."""
    joined = rng.randrange(max(employer.founded, 1975), 2025)
    return Person(
        (names(), names()),
        "PER",
        gender="fmn"[i % 3] if rng.random() < 0.9 else "n",
        profession=rng.choice(PROFESSIONS)[0],
        employer=employer.name,
        home=rng.choice(cities).name,
        joined=joined,
        moved=rng.randrange(1975, 2025),
    )
