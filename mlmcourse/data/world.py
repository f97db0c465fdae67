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

Regenerate the shipped files with ``python -m mlmcourse.data.world``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20261121
SPLIT_SIZES = {"train": 20_000, "validation": 2_000, "test": 2_000, "unseen": 1_500}
DATA_DIR = Path(__file__).resolve().parent

# --- the lexicon -------------------------------------------------------------------------------

PROFESSIONS = [  # (singular, plural); about a third start with a vowel sound, for a/an
    ("engineer", "engineers"),
    ("architect", "architects"),
    ("accountant", "accountants"),
    ("editor", "editors"),
    ("author", "authors"),
    ("analyst", "analysts"),
    ("inspector", "inspectors"),
    ("economist", "economists"),
    ("actor", "actors"),
    ("teacher", "teachers"),
    ("nurse", "nurses"),
    ("pilot", "pilots"),
    ("farmer", "farmers"),
    ("lawyer", "lawyers"),
    ("doctor", "doctors"),
    ("painter", "painters"),
    ("chemist", "chemists"),
    ("baker", "bakers"),
    ("sailor", "sailors"),
    ("judge", "judges"),
]
INDUSTRIES = [  # (kind of organization, the word its names end with)
    ("bank", "Bank"),
    ("airline", "Airways"),
    ("publisher", "Press"),
    ("brewery", "Brewing"),
    ("shipyard", "Yards"),
    ("insurer", "Insurance"),
    ("bakery", "Bakers"),
    ("museum", "Museum"),
    ("university", "University"),
    ("orchestra", "Orchestra"),
]
# Words that start with a vowel letter but a consonant sound ("a university", "a useful map").
CONSONANT_SOUND = {"university", "useful", "unique", "european"}
PRONOUNS = {  # subject, object, possessive; "they" takes plural verbs
    "f": ("she", "her", "her"),
    "m": ("he", "him", "his"),
    "n": ("they", "them", "their"),
}
WHEN = ["week", "month", "year", "spring", "summer", "winter"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = "January February March April May June July August September October November December"
MONTHS = MONTHS.split()
NUMBERS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "many"]
ITEMS = """umbrella bicycle lamp clock chair table guitar violin camera map kettle blanket basket
mirror painting rug jacket coat hat scarf book notebook pen pencil radio bottle cup vase candle key
wallet ring watch bag box ladder hammer boat kite drum flute telescope globe envelope apple orange
egg onion oven anchor easel atlas engine piano sofa desk teapot compass saddle lantern helmet
bucket shovel spoon fork knife plate bowl pillow curtain carpet statue sculpture poster letter
parcel ticket sandwich cake pie loaf cheese melon lemon peach pear carrot potato tomato shirt
sweater glove boot sock belt necklace bracelet brooch fan heater printer keyboard tablet
microscope trumpet harp cello accordion banjo tent hammock canoe sled wagon tractor""".split()
ADJECTIVES = """red blue green yellow black white old new small large heavy light cheap expensive
elegant ugly odd ordinary antique beautiful broken shiny wooden simple strange tiny huge modern rare
useful empty famous quiet purple orange grey brown pink silver golden bright dark clean dirty
soft hard warm round square narrow wide long short thin thick fragile sturdy lovely handsome
precious valuable worn dusty polished painted striped spotted""".split()
PLACES = """market harbour station library cafe square bridge park gallery stadium airport theatre
garden hotel fair festival museum concert school hospital pier beach castle chapel lighthouse
zoo""".split()
TOPICS = """history music trade fishing farming poetry medicine chess football astronomy shipping
cooking mathematics gardening architecture politics travel science language law energy
geography philosophy economics biology chemistry physics sculpture dancing sailing weaving
pottery photography birds insects rivers mountains volcanoes forests deserts islands bridges
railways ships""".split()
VERBS_PAST = """repaired painted sold ordered borrowed found designed built cleaned wrapped returned
carried polished measured photographed delivered""".split()
WEATHER = ["sunny", "rainy", "cold", "warm", "windy", "foggy", "cloudy", "snowy", "hot", "stormy"]
MEALS = ["breakfast", "lunch", "dinner"]
OPENERS = [  # optional lead-ins that vary the wording of fact sentences
    "according to the records ,",
    "as far as we know ,",
    "as everyone knows ,",
    "in fact ,",
    "by all accounts ,",
    "as the newspaper reported ,",
    "people say that",
    "it is well known that",
    "we learned that",
    "the guide says that",
    "everyone in town knows that",
    "the old atlas says that",
]

_ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"]
_ONSETS += ["br", "dr", "kr", "tr", "st", "th", "sh", "ch", "gr", "pl"]
_VOWELS = ["a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou"]
_CODAS = ["", "", "", "n", "r", "l", "s", "th", "m", "k", "x", "nd", "rn"]


def article(word: str) -> str:
    """``"an"`` before a vowel sound, ``"a"`` otherwise.

    The sound, not the letter, decides ("a university", "an umbrella"); the exceptions this
    lexicon needs are listed in ``CONSONANT_SOUND``.
    """
    starts_with_vowel = word[0].lower() in "aeiou" and word.lower() not in CONSONANT_SOUND
    return "an" if starts_with_vowel else "a"


# --- the world ---------------------------------------------------------------------------------


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

    def facts(self) -> list[tuple[str, str, str]]:
        """Every fact as ``(relation, subject, object)``, in a stable order."""
        out = [("capital_of", c.name, c.capital) for c in self.countries]
        out += [("located_in", c.name, c.country) for c in self.cities]
        for o in self.organizations:
            out += [("industry", o.name, o.industry), ("headquarters", o.name, o.headquarters)]
            out.append(("founded", o.name, str(o.founded)))
        for p in self.people:
            out += [("profession", p.name, p.profession), ("works_for", p.name, p.employer)]
            out += [("lives_in", p.name, p.home), ("joined", p.name, str(p.joined))]
            out.append(("moved", p.name, str(p.moved)))
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
    countries, cities = [], []
    for i in range(n_countries):
        # One country in four has a two-word name ("Vesh Isles"), so LOC also has I- tags.
        tokens = (names(), "Isles") if i % 4 == 3 else (names(),)
        city_names = [names() for _ in range(cities_per_country)]
        country = Country(tokens, "LOC", capital=city_names[0])
        countries.append(country)
        cities += [City((c,), "LOC", country=country.name) for c in city_names]
    organizations = []
    for i in range(n_organizations):
        industry, suffix = INDUSTRIES[i % len(INDUSTRIES)]
        organizations.append(
            Organization(
                (names(), suffix),
                "ORG",
                industry=industry,
                headquarters=rng.choice(cities).name,
                founded=rng.randrange(1850, 2016),
            )
        )
    people = []
    for i in range(n_people):
        employer = organizations[i % len(organizations)]
        joined = rng.randrange(max(employer.founded, 1975), 2025)
        people.append(
            Person(
                (names(), names()),
                "PER",
                gender="fmn"[i % 3] if rng.random() < 0.9 else "n",
                profession=rng.choice(PROFESSIONS)[0],
                employer=employer.name,
                home=rng.choice(cities).name,
                joined=joined,
                moved=rng.randrange(1975, 2025),
            )
        )
    return World(countries, cities, organizations, people)


# --- sentences ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    """A sentence as the generator made it: tokens, BIO tags, and the facts it states."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    template: str
    facts: tuple[tuple[str, str, str], ...]


Part = str | Entity


def render(template: str, parts: Sequence[Part], facts=()) -> Rendered:
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


def _verb(person: Person, singular: str, plural: str) -> str:
    return plural if person.gender == "n" else singular


def _subject(p: Person) -> str:
    return PRONOUNS[p.gender][0]


def _possessive(p: Person) -> str:
    return PRONOUNS[p.gender][2]


def _a(word: str) -> str:
    return f"{article(word)} {word}"


def _plural(profession: str) -> str:
    return dict(PROFESSIONS)[profession]


class Sampler:
    """Draws the entities a template needs, with a probe's (fact, template) pairs left out."""

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


def template(family: str):
    def register(fn: Template) -> Template:
        TEMPLATES[fn.__name__] = (family, fn)
        return fn

    return register


# Geography -------------------------------------------------------------------------------------


@template("geography")
def city_is_in(s: Sampler) -> Rendered:
    c = s.city()
    return render("city_is_in", [c, "is a city in", s.e(c.country), "."], [_located(c)])


@template("geography")
def city_lies_in(s: Sampler) -> Rendered:
    c = s.city()
    return render("city_lies_in", [c, "lies in", s.e(c.country), "."], [_located(c)])


@template("geography")
def the_city_of(s: Sampler) -> Rendered:
    c = s.city()
    parts = ["the city of", c, "is in", s.e(c.country), "."]
    return render("the_city_of", parts, [_located(c)])


@template("geography")
def capital_is(s: Sampler) -> Rendered:
    c = s.country()
    parts = [s.e(c.capital), "is the capital of", c, "."]
    return render("capital_is", parts, [_capital(c)])


@template("geography")
def the_capital_of(s: Sampler) -> Rendered:
    c = s.country()
    parts = ["the capital of", c, "is", s.e(c.capital), "."]
    return render("the_capital_of", parts, [_capital(c)])


@template("geography")
def country_has_capital(s: Sampler) -> Rendered:
    c = s.country()
    parts = [c, "has", s.e(c.capital), "as its capital ."]
    return render("country_has_capital", parts, [_capital(c)])


@template("geography")
def cities_in_country(s: Sampler) -> Rendered:
    c = s.country()
    a, b = s.rng.sample(s.world.cities_in(c.name), 2)
    parts = [a, "and", b, "are cities in", c, "."]
    return render("cities_in_country", parts, [_located(a), _located(b)])


@template("geography")
def capital_city_of(s: Sampler) -> Rendered:
    c = s.country()
    parts = ["in", c, ", the government sits in", s.e(c.capital), ", the capital ."]
    return render("capital_city_of", parts, [_capital(c)])


def _located(c: City) -> tuple[str, str, str]:
    return ("located_in", c.name, c.country)


def _capital(c: Country) -> tuple[str, str, str]:
    return ("capital_of", c.name, c.capital)


# Organizations ---------------------------------------------------------------------------------


@template("organization")
def org_based_in(s: Sampler) -> Rendered:
    o = s.org()
    return render("org_based_in", [o, "is based in", s.e(o.headquarters), "."], [_hq(o)])


@template("organization")
def org_headquarters(s: Sampler) -> Rendered:
    o = s.org()
    parts = [o, "has its headquarters in", s.e(o.headquarters), "."]
    return render("org_headquarters", parts, [_hq(o)])


@template("organization")
def the_headquarters_of(s: Sampler) -> Rendered:
    o = s.org()
    parts = ["the headquarters of", o, "are in", s.e(o.headquarters), "."]
    return render("the_headquarters_of", parts, [_hq(o)])


@template("organization")
def org_founded(s: Sampler) -> Rendered:
    o = s.org()
    return render("org_founded", [o, "was founded in", str(o.founded), "."], [_founded(o)])


@template("organization")
def org_since(s: Sampler) -> Rendered:
    o = s.org()
    return render("org_since", [o, "has existed since", str(o.founded), "."], [_founded(o)])


@template("organization")
def org_founded_where(s: Sampler) -> Rendered:
    o = s.org()
    parts = [o, "was founded in", s.e(o.headquarters), "in", str(o.founded), "."]
    return render("org_founded_where", parts, [_hq(o), _founded(o)])


@template("organization")
def in_year_founders(s: Sampler) -> Rendered:
    o = s.org()
    parts = ["in", str(o.founded), ", a group of friends started", o, "."]
    return render("in_year_founders", parts, [_founded(o)])


@template("organization")
def org_is_a(s: Sampler) -> Rendered:
    o = s.org()
    return render("org_is_a", [o, "is", _a(o.industry), "."], [_industry(o)])


@template("organization")
def org_is_a_based(s: Sampler) -> Rendered:
    o = s.org()
    parts = [o, "is", _a(o.industry), "based in", s.e(o.headquarters), "."]
    return render("org_is_a_based", parts, [_industry(o), _hq(o)])


@template("organization")
def org_apposition(s: Sampler) -> Rendered:
    o = s.org()
    parts = [o, ",", _a(o.industry), "from", s.e(o.headquarters), ", opened in", str(o.founded)]
    return render("org_apposition", [*parts, "."], [_industry(o), _hq(o), _founded(o)])


def _hq(o: Organization) -> tuple[str, str, str]:
    return ("headquarters", o.name, o.headquarters)


def _founded(o: Organization) -> tuple[str, str, str]:
    return ("founded", o.name, str(o.founded))


def _industry(o: Organization) -> tuple[str, str, str]:
    return ("industry", o.name, o.industry)


# People ----------------------------------------------------------------------------------------


def _works(p: Person) -> tuple[str, str, str]:
    return ("works_for", p.name, p.employer)


def _job(p: Person) -> tuple[str, str, str]:
    return ("profession", p.name, p.profession)


def _home(p: Person) -> tuple[str, str, str]:
    return ("lives_in", p.name, p.home)


@template("person")
def person_works_for(s: Sampler) -> Rendered:
    p = s.person()
    return render("person_works_for", [p, "works for", s.e(p.employer), "."], [_works(p)])


@template("person")
def employer_of(s: Sampler) -> Rendered:
    p = s.person()
    parts = ["the employer of", p, "is", s.e(p.employer), "."]
    return render("employer_of", parts, [_works(p)])


@template("person")
def person_is_a(s: Sampler) -> Rendered:
    p = s.person()
    return render("person_is_a", [p, "is", _a(p.profession), "."], [_job(p)])


@template("person")
def person_job_is(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "works as", _a(p.profession), "."]
    return render("person_job_is", parts, [_job(p)])


@template("person")
def person_lives_in(s: Sampler) -> Rendered:
    p = s.person()
    return render("person_lives_in", [p, "lives in", s.e(p.home), "."], [_home(p)])


@template("person")
def home_of(s: Sampler) -> Rendered:
    p = s.person()
    parts = ["the home of", p, "is in", s.e(p.home), "."]
    return render("home_of", parts, [_home(p)])


@template("person")
def person_job_at(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "is", _a(p.profession), "at", s.e(p.employer), "."]
    return render("person_job_at", parts, [_job(p), _works(p)])


@template("person")
def person_apposition(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, ",", _a(p.profession), ", lives in", s.e(p.home), "."]
    return render("person_apposition", parts, [_job(p), _home(p)])


@template("person")
def person_works_as_for(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "works as", _a(p.profession), "for", s.e(p.employer), "."]
    return render("person_works_as_for", parts, [_job(p), _works(p)])


@template("person")
def person_lives_and_works(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "lives in", s.e(p.home), "and works for", s.e(p.employer), "."]
    return render("person_lives_and_works", parts, [_home(p), _works(p)])


@template("person")
def person_joined(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "joined", s.e(p.employer), "in", str(p.joined), "."]
    return render("person_joined", parts, [_works(p), ("joined", p.name, str(p.joined))])


@template("person")
def person_moved(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "moved to", s.e(p.home), "in", str(p.moved), "."]
    return render("person_moved", parts, [_home(p), ("moved", p.name, str(p.moved))])


@template("person")
def org_employs(s: Sampler) -> Rendered:
    p = s.person()
    parts = [s.e(p.employer), "employs", p, "as", _a(p.profession), "."]
    return render("org_employs", parts, [_works(p), _job(p)])


@template("person")
def a_profession_named(s: Sampler) -> Rendered:
    p = s.person()
    parts = [_a(p.profession), "named", p, "lives in", s.e(p.home), "."]
    return render("a_profession_named", parts, [_job(p), _home(p)])


# Pronouns: a second sentence refers back with she / he / they ------------------------------------


@template("pronoun")
def pronoun_lives(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "is", _a(p.profession), ".", _subject(p), _verb(p, "lives", "live"), "in"]
    return render("pronoun_lives", [*parts, s.e(p.home), "."], [_job(p), _home(p)])


@template("pronoun")
def pronoun_is_a(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "lives in", s.e(p.home), ".", _subject(p), _verb(p, "is", "are")]
    return render("pronoun_is_a", [*parts, _a(p.profession), "."], [_home(p), _job(p)])


@template("pronoun")
def pronoun_since(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "works for", s.e(p.employer), ".", _subject(p), _verb(p, "has", "have")]
    parts += ["lived in", s.e(p.home), "since", str(p.moved), "."]
    facts = [_works(p), _home(p), ("moved", p.name, str(p.moved))]
    return render("pronoun_since", parts, facts)


@template("pronoun")
def pronoun_where(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "lives in", s.e(p.home), ", where", _subject(p), _verb(p, "works", "work")]
    return render("pronoun_where", [*parts, "as", _a(p.profession), "."], [_home(p), _job(p)])


@template("pronoun")
def pronoun_possessive(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "is", _a(p.profession), ".", _possessive(p), "employer is", s.e(p.employer), "."]
    return render("pronoun_possessive", parts, [_job(p), _works(p)])


@template("pronoun")
def pronoun_object(s: Sampler) -> Rendered | None:
    p = s.person()
    parts = [s.e(p.employer), "hired", p, "in", str(p.joined), "and still pays"]
    parts += [PRONOUNS[p.gender][1], "."]
    return render("pronoun_object", parts, [_works(p), ("joined", p.name, str(p.joined))])


# Plurals: two people who share something --------------------------------------------------------


@template("plural")
def both_work_for(s: Sampler) -> Rendered | None:
    pq = s.pair(lambda q: q.employer)
    if pq is None:
        return None
    p, q = pq
    parts = [p, "and", q, "both work for", s.e(p.employer), "."]
    return render("both_work_for", parts, [_works(p), _works(q)])


@template("plural")
def both_are(s: Sampler) -> Rendered | None:
    pq = s.pair(lambda q: q.profession)
    if pq is None:
        return None
    p, q = pq
    parts = [p, "and", q, "are", _plural(p.profession), "."]
    return render("both_are", parts, [_job(p), _job(q)])


@template("plural")
def both_live_in(s: Sampler) -> Rendered | None:
    pq = s.pair(lambda q: q.home)
    if pq is None:
        return None
    p, q = pq
    parts = [p, "and", q, "live in", s.e(p.home), "."]
    return render("both_live_in", parts, [_home(p), _home(q)])


@template("plural")
def the_professions_at(s: Sampler) -> Rendered | None:
    pq = s.pair(lambda q: q.employer + "|" + q.profession)
    if pq is None:
        return None
    p, q = pq
    parts = ["the", _plural(p.profession), "at", s.e(p.employer), "include", p, "and", q, "."]
    return render("the_professions_at", parts, [_job(p), _job(q), _works(p), _works(q)])


# Questions and answers -------------------------------------------------------------------------


@template("question")
def where_does_live(s: Sampler) -> Rendered:
    p = s.person()
    parts = ["where", _verb(p, "does", "do"), p, "live ? in", s.e(p.home), "."]
    return render("where_does_live", parts, [_home(p)])


@template("question")
def who_does_work_for(s: Sampler) -> Rendered:
    p = s.person()
    parts = ["who does", p, "work for ?", _subject(p), _verb(p, "works", "work"), "for"]
    return render("who_does_work_for", [*parts, s.e(p.employer), "."], [_works(p)])


@template("question")
def what_is_the_capital(s: Sampler) -> Rendered:
    c = s.country()
    parts = ["what is the capital of", c, "? it is", s.e(c.capital), "."]
    return render("what_is_the_capital", parts, [_capital(c)])


@template("question")
def which_country(s: Sampler) -> Rendered:
    c = s.city()
    parts = ["which country is", c, "in ? it is in", s.e(c.country), "."]
    return render("which_country", parts, [_located(c)])


@template("question")
def when_founded(s: Sampler) -> Rendered:
    o = s.org()
    parts = ["when was", o, "founded ? in", str(o.founded), "."]
    return render("when_founded", parts, [_founded(o)])


# Events: past and future, not facts about the world ---------------------------------------------


@template("event")
def will_visit(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    return render("will_visit", [p, "will visit", c, "next", s.rng.choice(WHEN), "."])


@template("event")
def visited(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    return render("visited", [p, "visited", c, "last", s.rng.choice(WHEN), "."])


@template("event")
def met_in(s: Sampler) -> Rendered | None:
    p, q, c = s.person(), s.person(), s.city()
    if p is q:
        return None
    day = s.rng.choice(WEEKDAYS)
    return render("met_in", [p, "met", q, "at the", s.rng.choice(PLACES), "in", c, "on", day, "."])


@template("event")
def will_meet_at(s: Sampler) -> Rendered | None:
    p, q = s.person(), s.person()
    if p is q:
        return None
    return render("will_meet_at", [p, "will meet", q, "at", s.e(q.employer), "tomorrow ."])


@template("event")
def a_profession_from(s: Sampler) -> Rendered:
    job, c, o = s.rng.choice(PROFESSIONS)[0], s.city(), s.org()
    topic = s.rng.choice(TOPICS)
    parts = [_a(job), "from", c, "spoke about", topic, "at", o, "yesterday ."]
    return render("a_profession_from", parts)


@template("event")
def professions_travel(s: Sampler) -> Rendered:
    job, c = s.rng.choice(PROFESSIONS)[1], s.city()
    n, when = s.rng.choice(NUMBERS), s.rng.choice(WHEN)
    return render("professions_travel", [n, job, "travelled to", c, "last", when, "."])


@template("event")
def bought(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    thing = f"{s.rng.choice(ADJECTIVES)} {s.rng.choice(ITEMS)}"
    parts = [p, "bought", _a(thing), "at the", s.rng.choice(PLACES), "in", c, "on"]
    return render("bought", [*parts, s.rng.choice(WEEKDAYS), "."])


@template("event")
def handled(s: Sampler) -> Rendered:
    p, verb = s.person(), s.rng.choice(VERBS_PAST)
    thing = f"{s.rng.choice(ADJECTIVES)} {s.rng.choice(ITEMS)}"
    when = s.rng.choice(["yesterday", f"last {s.rng.choice(WHEN)}", f"on {s.rng.choice(WEEKDAYS)}"])
    return render("handled", [p, verb, _a(thing), "for", s.e(p.employer), when, "."])


@template("event")
def will_buy(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    parts = [p, "will buy", _a(s.rng.choice(ITEMS)), "in", c, "next", s.rng.choice(WHEN), "."]
    return render("will_buy", parts)


@template("event")
def gave(s: Sampler) -> Rendered | None:
    p, q = s.person(), s.person()
    if p is q:
        return None
    thing = f"{s.rng.choice(ADJECTIVES)} {s.rng.choice(ITEMS)}"
    return render("gave", [p, "gave", q, _a(thing), "in", s.rng.choice(MONTHS), "."])


@template("event")
def lost_possessive(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    parts = [p, "lost", _possessive(p), s.rng.choice(ITEMS), "in", c, "last", s.rng.choice(WHEN)]
    return render("lost_possessive", [*parts, "."])


@template("event")
def weather(s: Sampler) -> Rendered:
    c, day = s.city(), s.rng.choice(WEEKDAYS)
    if s.rng.random() < 0.5:
        parts = ["the weather in", c, "was", s.rng.choice(WEATHER), "on", day, "."]
    else:
        parts = ["it will be", s.rng.choice(WEATHER), "in", c, "on", day, "."]
    return render("weather", parts)


@template("event")
def had_meal(s: Sampler) -> Rendered | None:
    p, q, c = s.person(), s.person(), s.city()
    if p is q:
        return None
    place = f"{s.rng.choice(ADJECTIVES)} restaurant"
    parts = [p, "and", q, "had", s.rng.choice(MEALS), "at", _a(place), "in", c, "."]
    return render("had_meal", parts)


@template("event")
def will_fly(s: Sampler) -> Rendered | None:
    p, a, b = s.person(), s.city(), s.city()
    if a is b:
        return None
    parts = ["on", s.rng.choice(WEEKDAYS), ",", p, "will fly from", a, "to", b, "."]
    return render("will_fly", parts)


@template("event")
def reading_about(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, _verb(p, "is", "are"), "reading a book about", s.rng.choice(TOPICS), "."]
    return render("reading_about", parts)


@template("event")
def never_been(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    return render("never_been", [p, _verb(p, "has", "have"), "never been to", c, "."])


@template("event")
def org_opened_branch(s: Sampler) -> Rendered:
    o, c = s.org(), s.city()
    year = s.rng.randrange(max(o.founded + 1, 1950), 2025)
    parts = [o, "opened a new office in", c, "in", s.rng.choice(MONTHS), str(year), "."]
    return render("org_opened_branch", parts)


# --- corpus, probes and files ------------------------------------------------------------------

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
MASK = "[MASK]"

# Words that names must never be, besides every word the templates use.
_COMMON_WORDS = """a an the and or of in on at to for from is are was were be been has have had
do does did will would can not no it its he she they him her them his their we you me my our
this that these those with by as but if so up down out over under new old north south east west
man men woman women city town country people year years day days home work job name names
sun sea air fire water stone iron gold silver land river lake hill mount port bay""".split()


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


def _template_words() -> set[str]:
    """Every word a template or lexicon list can produce, lower-cased: names must avoid them."""
    words = set(_COMMON_WORDS) | {w for o in OPENERS for w in o.split()}
    for lexicon in (WHEN, WEEKDAYS, MONTHS, NUMBERS, ITEMS, ADJECTIVES, PLACES, TOPICS, WEATHER):
        words |= {w.lower() for w in lexicon}
    words |= {w.lower() for w in (*MEALS, *VERBS_PAST)}
    words |= {w.lower() for pair in (*PROFESSIONS, *INDUSTRIES) for w in pair}
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
    for _, fn in TEMPLATES.values():
        for _ in range(10):
            r = fn(sampler)
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


def sample_sentence(sampler: Sampler, reserved: set[tuple[str, tuple[str, str, str]]]) -> Rendered:
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


def fact_probe_plan(world: World, rng: random.Random) -> list[tuple[str, tuple[str, str, str]]]:
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


def make_fact_probes(world, rng, plan, train: list[Rendered]) -> list[dict]:
    """Fact probes: each states a fact in a wording the training split never uses for it."""
    stated: dict[tuple[str, str, str], list[int]] = {}
    for i, r in enumerate(train):
        for fact in r.facts:
            stated.setdefault(fact, []).append(i)
    probes = []
    for name, fact in plan:
        relation, subject, obj = fact
        r = TEMPLATES[name][1](_Fixed(world, rng, world.by_name[subject]))
        text, answer = _mask_object(r, relation, obj)
        where = stated.get(fact)
        if not where:  # only in tiny test corpora: a fact that train never states
            continue
        example = train[where[0]]
        probes.append(
            {
                "text": text,
                "answer": answer,
                "evidence": (
                    f"{relation}({subject}) = {obj}: stated {len(where)} times in train, never"
                    f" in this wording; e.g. train[{where[0]}]: {' '.join(example.tokens)}"
                    + _context_hint(world, relation, text)
                ),
                "relation": relation,
                "subject": subject,
                "template": name,
                "train_index": where[0],
            }
        )
    return probes


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
    probes = []
    for c in world.countries:
        r = capital_is(_Fixed(world, rng, c))
        probes.append(
            _first_word_probe(
                r, "capital", f"{c.capital} is the only capital of {c.name}: the right context"
            )
        )
    templates = [person_works_for, person_lives_in, person_is_a]
    for i, p in enumerate(world.people):
        r = templates[i % len(templates)](_Fixed(world, rng, p))
        why = f"{p.tokens[1]} is the surname of one person only, {p.name}"
        probes.append(_first_word_probe(r, "first_name", why))
    for job, _ in PROFESSIONS:
        for _ in range(3):
            c, o, topic = (
                rng.choice(world.cities),
                rng.choice(world.organizations),
                rng.choice(TOPICS),
            )
            parts = [_a(job), "from", c, "spoke about", topic, "at", o, "yesterday ."]
            r = render("a_profession_from", parts)
            why = f"'{job}' begins with a {'vowel' if article(job) == 'an' else 'consonant'} sound"
            probes.append(_first_word_probe(r, "article", why))
    return probes


def _first_word_probe(r: Rendered, category: str, why: str) -> dict:
    text = " ".join((MASK, *r.tokens[1:]))
    evidence = f"{why}; the left context is empty, so a left-to-right model sees nothing"
    return {"text": text, "answer": r.tokens[0], "evidence": evidence, "relation": category}


def generate(seed: int = SEED, sizes: dict[str, int] | None = None) -> dict[str, object]:
    """Everything the package ships: worlds, splits (as ``Rendered`` lists) and probes."""
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
        splits[split] = _fresh(sampler, reserved, sizes[split], taken)
    splits["unseen"] = _fresh(Sampler(unseen, rng), set(), sizes["unseen"], set())
    fact = make_fact_probes(seen, rng, plan, train)
    right = make_right_context_probes(seen, rng)
    return {"worlds": (seen, unseen), "splits": splits, "probes": {"fact": fact, "right": right}}


def _fresh(sampler: Sampler, reserved, n: int, taken: set) -> list[Rendered]:
    """``n`` sentences none of which is in ``taken`` (nor repeated); adds them to ``taken``."""
    out = []
    while len(out) < n:
        r = sample_sentence(sampler, reserved)
        if r.tokens not in taken:
            taken.add(r.tokens)
            out.append(r)
    return out


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
    paths = []
    for name, text in file_contents(seed).items():
        path = directory / name
        path.write_text(text, encoding="utf-8", newline="\n")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for path in write_files():
        print(f"{path.stat().st_size:>9,d}  {path}")
