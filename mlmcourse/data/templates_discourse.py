"""Templates beyond a plain statement: pronouns, plurals, questions, and events.

A pronoun sentence refers back to its person with *she*, *he* or *they* (and the verb agrees);
a plural one joins two people who share an employer, a home or a job; a question comes with its
answer. Event sentences, in the past or the future, state no fact at all, so that not every
sentence is a fact to memorize.
"""

from __future__ import annotations

from mlmcourse.data.entities import (
    City,
    Organization,
    capital_of,
    founded,
    joined,
    lives_in,
    located_in,
    moved,
    profession,
    works_for,
)
from mlmcourse.data.lexicon import (
    ADJECTIVES,
    ITEMS,
    MEALS,
    MONTHS,
    NUMBERS,
    PLACES,
    PROFESSIONS,
    TOPICS,
    VERBS_PAST,
    WEATHER,
    WEEKDAYS,
    WHEN,
)
from mlmcourse.data.templates import (
    Rendered,
    Sampler,
    a_or_an,
    plural,
    render,
    template,
    their,
    them,
    they,
    verb,
)

# Pronouns: a second sentence refers back with she / he / they ------------------------------------


@template("pronoun")
def pronoun_lives(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "is", a_or_an(p.profession), ".", they(p), verb(p, "lives", "live"), "in"]
    return render("pronoun_lives", [*parts, s.e(p.home), "."], [profession(p), lives_in(p)])


@template("pronoun")
def pronoun_is_a(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "lives in", s.e(p.home), ".", they(p), verb(p, "is", "are")]
    return render(
        "pronoun_is_a", [*parts, a_or_an(p.profession), "."], [lives_in(p), profession(p)]
    )


@template("pronoun")
def pronoun_since(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "works for", s.e(p.employer), ".", they(p), verb(p, "has", "have")]
    parts += ["lived in", s.e(p.home), "since", str(p.moved), "."]
    facts = [works_for(p), lives_in(p), moved(p)]
    return render("pronoun_since", parts, facts)


@template("pronoun")
def pronoun_where(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "lives in", s.e(p.home), ", where", they(p), verb(p, "works", "work")]
    return render(
        "pronoun_where", [*parts, "as", a_or_an(p.profession), "."], [lives_in(p), profession(p)]
    )


@template("pronoun")
def pronoun_possessive(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "is", a_or_an(p.profession), ".", their(p), "employer is", s.e(p.employer), "."]
    return render("pronoun_possessive", parts, [profession(p), works_for(p)])


@template("pronoun")
def pronoun_object(s: Sampler) -> Rendered | None:
    p = s.person()
    parts = [s.e(p.employer), "hired", p, "in", str(p.joined), "and still pays"]
    parts += [them(p), "."]
    return render("pronoun_object", parts, [works_for(p), joined(p)])


# Plurals: two people who share something --------------------------------------------------------


@template("plural")
def both_work_for(s: Sampler) -> Rendered | None:
    pq = s.pair(lambda q: q.employer)
    if pq is None:
        return None
    p, q = pq
    parts = [p, "and", q, "both work for", s.e(p.employer), "."]
    return render("both_work_for", parts, [works_for(p), works_for(q)])


@template("plural")
def both_are(s: Sampler) -> Rendered | None:
    pq = s.pair(lambda q: q.profession)
    if pq is None:
        return None
    p, q = pq
    parts = [p, "and", q, "are", plural(p.profession), "."]
    return render("both_are", parts, [profession(p), profession(q)])


@template("plural")
def both_live_in(s: Sampler) -> Rendered | None:
    pq = s.pair(lambda q: q.home)
    if pq is None:
        return None
    p, q = pq
    parts = [p, "and", q, "live in", s.e(p.home), "."]
    return render("both_live_in", parts, [lives_in(p), lives_in(q)])


@template("plural")
def the_professions_at(s: Sampler) -> Rendered | None:
    pq = s.pair(lambda q: q.employer + "|" + q.profession)
    if pq is None:
        return None
    p, q = pq
    parts = ["the", plural(p.profession), "at", s.e(p.employer), "include", p, "and", q, "."]
    return render(
        "the_professions_at", parts, [profession(p), profession(q), works_for(p), works_for(q)]
    )


# Questions and answers -------------------------------------------------------------------------


@template("question")
def where_does_live(s: Sampler) -> Rendered:
    p = s.person()
    parts = ["where", verb(p, "does", "do"), p, "live ? in", s.e(p.home), "."]
    return render("where_does_live", parts, [lives_in(p)])


@template("question")
def who_does_work_for(s: Sampler) -> Rendered:
    p = s.person()
    parts = ["who does", p, "work for ?", they(p), verb(p, "works", "work"), "for"]
    return render("who_does_work_for", [*parts, s.e(p.employer), "."], [works_for(p)])


@template("question")
def what_is_the_capital(s: Sampler) -> Rendered:
    c = s.country()
    parts = ["what is the capital of", c, "? it is", s.e(c.capital), "."]
    return render("what_is_the_capital", parts, [capital_of(c)])


@template("question")
def which_country(s: Sampler) -> Rendered:
    c = s.city()
    parts = ["which country is", c, "in ? it is in", s.e(c.country), "."]
    return render("which_country", parts, [located_in(c)])


@template("question")
def when_founded(s: Sampler) -> Rendered:
    o = s.org()
    parts = ["when was", o, "founded ? in", str(o.founded), "."]
    return render("when_founded", parts, [founded(o)])


# Events: past and future, not facts about the world ---------------------------------------------


def _thing(s: Sampler) -> str:
    """Something to buy, handle or give: an adjective and an item ("shiny lantern")."""
    return f"{s.rng.choice(ADJECTIVES)} {s.rng.choice(ITEMS)}"


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
    return spoke_about(job, c, o, s.rng.choice(TOPICS))


def spoke_about(job: str, city: City, org: Organization, topic: str) -> Rendered:
    """Render "an engineer from Tarn spoke about chess at Vesh Bank yesterday ." from parts.

    Shared with the right-context probes, which mask the first word: only the profession after
    it decides between "a" and "an".
    """
    parts = [a_or_an(job), "from", city, "spoke about", topic, "at", org, "yesterday ."]
    return render("a_profession_from", parts)


@template("event")
def professions_travel(s: Sampler) -> Rendered:
    job, c = s.rng.choice(PROFESSIONS)[1], s.city()
    n, when = s.rng.choice(NUMBERS), s.rng.choice(WHEN)
    return render("professions_travel", [n, job, "travelled to", c, "last", when, "."])


@template("event")
def bought(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    thing = _thing(s)
    parts = [p, "bought", a_or_an(thing), "at the", s.rng.choice(PLACES), "in", c, "on"]
    return render("bought", [*parts, s.rng.choice(WEEKDAYS), "."])


@template("event")
def handled(s: Sampler) -> Rendered:
    p, action = s.person(), s.rng.choice(VERBS_PAST)
    thing = _thing(s)
    when = s.rng.choice(["yesterday", f"last {s.rng.choice(WHEN)}", f"on {s.rng.choice(WEEKDAYS)}"])
    return render("handled", [p, action, a_or_an(thing), "for", s.e(p.employer), when, "."])


@template("event")
def will_buy(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    parts = [p, "will buy", a_or_an(s.rng.choice(ITEMS)), "in", c, "next", s.rng.choice(WHEN), "."]
    return render("will_buy", parts)


@template("event")
def gave(s: Sampler) -> Rendered | None:
    p, q = s.person(), s.person()
    if p is q:
        return None
    thing = _thing(s)
    return render("gave", [p, "gave", q, a_or_an(thing), "in", s.rng.choice(MONTHS), "."])


@template("event")
def lost_possessive(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    parts = [p, "lost", their(p), s.rng.choice(ITEMS), "in", c, "last", s.rng.choice(WHEN)]
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
    parts = [p, "and", q, "had", s.rng.choice(MEALS), "at", a_or_an(place), "in", c, "."]
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
    parts = [p, verb(p, "is", "are"), "reading a book about", s.rng.choice(TOPICS), "."]
    return render("reading_about", parts)


@template("event")
def never_been(s: Sampler) -> Rendered:
    p, c = s.person(), s.city()
    return render("never_been", [p, verb(p, "has", "have"), "never been to", c, "."])


@template("event")
def org_opened_branch(s: Sampler) -> Rendered:
    o, c = s.org(), s.city()
    year = s.rng.randrange(max(o.founded + 1, 1950), 2025)
    parts = [o, "opened a new office in", c, "in", s.rng.choice(MONTHS), str(year), "."]
    return render("org_opened_branch", parts)
