"""Templates that state facts plainly: geography, organizations and people.

Each template draws an entity, looks up its facts and lists the sentence's parts; the facts it
states go with the sentence (the last argument of :func:`render`), so the probes can prove that
train states a fact and can keep one wording of it out of the corpus.
"""

from __future__ import annotations

from mlmcourse.data.entities import (
    capital_of,
    founded,
    headquarters,
    industry,
    joined,
    lives_in,
    located_in,
    moved,
    profession,
    works_for,
)
from mlmcourse.data.templates import Rendered, Sampler, a_or_an, render, template

# Geography -------------------------------------------------------------------------------------


@template("geography")
def city_is_in(s: Sampler) -> Rendered:
    c = s.city()
    return render("city_is_in", [c, "is a city in", s.e(c.country), "."], [located_in(c)])


@template("geography")
def city_lies_in(s: Sampler) -> Rendered:
    c = s.city()
    return render("city_lies_in", [c, "lies in", s.e(c.country), "."], [located_in(c)])


@template("geography")
def the_city_of(s: Sampler) -> Rendered:
    c = s.city()
    parts = ["the city of", c, "is in", s.e(c.country), "."]
    return render("the_city_of", parts, [located_in(c)])


@template("geography")
def capital_is(s: Sampler) -> Rendered:
    c = s.country()
    parts = [s.e(c.capital), "is the capital of", c, "."]
    return render("capital_is", parts, [capital_of(c)])


@template("geography")
def the_capital_of(s: Sampler) -> Rendered:
    c = s.country()
    parts = ["the capital of", c, "is", s.e(c.capital), "."]
    return render("the_capital_of", parts, [capital_of(c)])


@template("geography")
def country_has_capital(s: Sampler) -> Rendered:
    c = s.country()
    parts = [c, "has", s.e(c.capital), "as its capital ."]
    return render("country_has_capital", parts, [capital_of(c)])


@template("geography")
def cities_in_country(s: Sampler) -> Rendered:
    c = s.country()
    a, b = s.rng.sample(s.world.cities_in(c.name), 2)
    parts = [a, "and", b, "are cities in", c, "."]
    return render("cities_in_country", parts, [located_in(a), located_in(b)])


@template("geography")
def capital_city_of(s: Sampler) -> Rendered:
    c = s.country()
    parts = ["in", c, ", the government sits in", s.e(c.capital), ", the capital ."]
    return render("capital_city_of", parts, [capital_of(c)])


# Organizations ---------------------------------------------------------------------------------


@template("organization")
def org_based_in(s: Sampler) -> Rendered:
    o = s.org()
    return render("org_based_in", [o, "is based in", s.e(o.headquarters), "."], [headquarters(o)])


@template("organization")
def org_headquarters(s: Sampler) -> Rendered:
    o = s.org()
    parts = [o, "has its headquarters in", s.e(o.headquarters), "."]
    return render("org_headquarters", parts, [headquarters(o)])


@template("organization")
def the_headquarters_of(s: Sampler) -> Rendered:
    o = s.org()
    parts = ["the headquarters of", o, "are in", s.e(o.headquarters), "."]
    return render("the_headquarters_of", parts, [headquarters(o)])


@template("organization")
def org_founded(s: Sampler) -> Rendered:
    o = s.org()
    return render("org_founded", [o, "was founded in", str(o.founded), "."], [founded(o)])


@template("organization")
def org_since(s: Sampler) -> Rendered:
    o = s.org()
    return render("org_since", [o, "has existed since", str(o.founded), "."], [founded(o)])


@template("organization")
def org_founded_where(s: Sampler) -> Rendered:
    o = s.org()
    parts = [o, "was founded in", s.e(o.headquarters), "in", str(o.founded), "."]
    return render("org_founded_where", parts, [headquarters(o), founded(o)])


@template("organization")
def in_year_founders(s: Sampler) -> Rendered:
    o = s.org()
    parts = ["in", str(o.founded), ", a group of friends started", o, "."]
    return render("in_year_founders", parts, [founded(o)])


@template("organization")
def org_is_a(s: Sampler) -> Rendered:
    o = s.org()
    return render("org_is_a", [o, "is", a_or_an(o.industry), "."], [industry(o)])


@template("organization")
def org_is_a_based(s: Sampler) -> Rendered:
    o = s.org()
    parts = [o, "is", a_or_an(o.industry), "based in", s.e(o.headquarters), "."]
    return render("org_is_a_based", parts, [industry(o), headquarters(o)])


@template("organization")
def org_apposition(s: Sampler) -> Rendered:
    o = s.org()
    parts = [o, ",", a_or_an(o.industry), "from", s.e(o.headquarters), ", opened in"]
    facts = [industry(o), headquarters(o), founded(o)]
    return render("org_apposition", [*parts, str(o.founded), "."], facts)


# People ----------------------------------------------------------------------------------------


@template("person")
def person_works_for(s: Sampler) -> Rendered:
    p = s.person()
    return render("person_works_for", [p, "works for", s.e(p.employer), "."], [works_for(p)])


@template("person")
def employer_of(s: Sampler) -> Rendered:
    p = s.person()
    parts = ["the employer of", p, "is", s.e(p.employer), "."]
    return render("employer_of", parts, [works_for(p)])


@template("person")
def person_is_a(s: Sampler) -> Rendered:
    p = s.person()
    return render("person_is_a", [p, "is", a_or_an(p.profession), "."], [profession(p)])


@template("person")
def person_job_is(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "works as", a_or_an(p.profession), "."]
    return render("person_job_is", parts, [profession(p)])


@template("person")
def person_lives_in(s: Sampler) -> Rendered:
    p = s.person()
    return render("person_lives_in", [p, "lives in", s.e(p.home), "."], [lives_in(p)])


@template("person")
def home_of(s: Sampler) -> Rendered:
    p = s.person()
    parts = ["the home of", p, "is in", s.e(p.home), "."]
    return render("home_of", parts, [lives_in(p)])


@template("person")
def person_job_at(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "is", a_or_an(p.profession), "at", s.e(p.employer), "."]
    return render("person_job_at", parts, [profession(p), works_for(p)])


@template("person")
def person_apposition(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, ",", a_or_an(p.profession), ", lives in", s.e(p.home), "."]
    return render("person_apposition", parts, [profession(p), lives_in(p)])


@template("person")
def person_works_as_for(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "works as", a_or_an(p.profession), "for", s.e(p.employer), "."]
    return render("person_works_as_for", parts, [profession(p), works_for(p)])


@template("person")
def person_lives_and_works(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "lives in", s.e(p.home), "and works for", s.e(p.employer), "."]
    return render("person_lives_and_works", parts, [lives_in(p), works_for(p)])


@template("person")
def person_joined(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "joined", s.e(p.employer), "in", str(p.joined), "."]
    return render("person_joined", parts, [works_for(p), joined(p)])


@template("person")
def person_moved(s: Sampler) -> Rendered:
    p = s.person()
    parts = [p, "moved to", s.e(p.home), "in", str(p.moved), "."]
    return render("person_moved", parts, [lives_in(p), moved(p)])


@template("person")
def org_employs(s: Sampler) -> Rendered:
    p = s.person()
    parts = [s.e(p.employer), "employs", p, "as", a_or_an(p.profession), "."]
    return render("org_employs", parts, [works_for(p), profession(p)])


@template("person")
def a_profession_named(s: Sampler) -> Rendered:
    p = s.person()
    parts = [a_or_an(p.profession), "named", p, "lives in", s.e(p.home), "."]
    return render("a_profession_named", parts, [profession(p), lives_in(p)])
