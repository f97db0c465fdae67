"""Each probe's answer is determined exactly as its probe set claims."""

import json
from collections import Counter

import pytest

from mlmcourse.data import Probe, load_probes, load_world, load_world_facts, world_texts
from mlmcourse.data import world as W
from mlmcourse.data.probes import MASK, between_neighbours, left_continuations, split_probe


@pytest.fixture(scope="module")
def generated():
    return W.generate()


def _raw(kind):
    path = W.DATA_DIR / f"probes_{kind}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("kind", ["fact", "right_context"])
def test_probe_shape(kind):
    probes = load_probes(kind)
    assert len(probes) >= 100
    for p in probes:
        assert isinstance(p, Probe)
        assert p.text.split(" ").count(MASK) == 1, p.text
        assert p.answer and " " not in p.answer and p.answer != MASK
        assert p.evidence and p.relation
        assert MASK not in p.filled


def test_fact_probes_answer_the_world_fact():
    world = load_world_facts()["world"]
    truth = {("capital_of", c["name"]): c["capital"] for c in world["countries"]}
    truth |= {("located_in", c["name"]): c["country"] for c in world["cities"]}
    for o in world["organizations"]:
        truth[("headquarters", o["name"])] = o["headquarters"]
        truth[("founded", o["name"])] = str(o["founded"])
    for p in world["people"]:
        truth[("profession", p["name"])] = p["profession"]
        truth[("works_for", p["name"])] = p["employer"]
        truth[("lives_in", p["name"])] = p["home"]
    rows = _raw("fact")
    assert {r["relation"] for r in rows} == set(W.PROBE_TEMPLATES)
    for r in rows:
        obj = truth[(r["relation"], r["subject"])]
        assert r["answer"] == obj.split()[0], r
        assert r["subject"] in r["text"]


def test_fact_probes_state_a_train_fact_in_a_wording_train_never_uses_for_it(generated):
    train = generated["splits"]["train"]
    wordings: dict[tuple, Counter] = {}
    for r in train:
        for fact in r.facts:
            wordings.setdefault(fact, Counter())[r.template] += 1
    every_text = {
        t for split in ("train", "validation", "test", "unseen") for t in world_texts(split)
    }
    for row, probe in zip(_raw("fact"), load_probes("fact"), strict=True):
        fact = next(
            f for f in generated["worlds"][0].facts() if f[:2] == (row["relation"], row["subject"])
        )
        seen = wordings[fact]
        assert seen[row["template"]] == 0, row  # never in the probe's wording...
        assert sum(seen.values()) >= 10, (row, seen)  # ...but stated many times otherwise
        assert len(seen) >= 2  # in at least two other wordings
        assert probe.filled not in every_text
        example = train[row["train_index"]]
        assert row["subject"] in " ".join(example.tokens) and fact in example.facts


def test_right_context_probes_are_determined_by_the_right_context_only():
    world = load_world_facts()["world"]
    capital = {c["name"]: c["capital"] for c in world["countries"]}
    surnames = Counter(p["name"].split()[1] for p in world["people"])
    first_of = {p["name"].split()[1]: p["name"].split()[0] for p in world["people"]}
    train = load_world("train")
    by_left: dict[tuple, set] = {}
    for probe in load_probes("right_context"):
        left, right = split_probe(probe)
        by_left.setdefault(left, set()).add(probe.answer)
        if probe.relation == "capital":
            assert right[:4] == ("is", "the", "capital", "of")
            country = " ".join(right[4:-1])
            assert probe.answer == capital[country]
        elif probe.relation == "first_name":
            assert surnames[right[0]] == 1  # the surname names one person only
            assert probe.answer == first_of[right[0]]
        else:
            assert probe.relation == "article"
            assert probe.answer.lower() == W.article(right[0])
        # The left context alone allows several different words, in train and among probes.
        following = left_continuations(left, train)
        assert len(following) >= 10, (probe.text, following.most_common(3))
    for left, answers in by_left.items():
        assert len(answers) >= 2, (left, answers)
    # In this set every masked word is the first word: a left-to-right model sees nothing.
    assert set(by_left) == {()}


def test_right_context_probes_cover_each_kind():
    kinds = Counter(p.relation for p in load_probes("right_context"))
    assert set(kinds) == {"capital", "first_name", "article"}
    answers = {p.answer for p in load_probes("right_context") if p.relation == "article"}
    assert answers == {"A", "An"}


def test_left_continuations_counts_what_follows():
    sentences = [("A", "b", "c"), ("A", "d"), ("X", "b"), ("A",)]
    assert left_continuations(("A",), sentences) == Counter({"b": 1, "d": 1})
    assert left_continuations((), sentences) == Counter({"A": 3, "X": 1})


def test_split_probe_rejects_a_probe_without_one_mask():
    with pytest.raises(ValueError, match="exactly one"):
        split_probe(Probe("no mask here", "x", "none"))


def test_between_neighbours_counts_the_words_between_the_two_neighbours():
    sentences = [("A", "b", "c"), ("A", "d", "c"), ("X", "b", "c"), ("A", "b")]
    assert between_neighbours(("A",), ("c",), sentences) == Counter({"b": 1, "d": 1})
    # an empty side is the sentence's start or end
    assert between_neighbours((), ("b",), sentences) == Counter({"A": 2, "X": 1})
    assert between_neighbours(("A",), (), sentences) == Counter({"b": 1})


def test_a_neighbour_lookup_solves_first_names_and_articles_but_no_capital():
    train = load_world("train")
    solved = {}
    for probe in load_probes("right_context"):
        left, right = split_probe(probe)
        best = between_neighbours(left, right, train).most_common(1)
        solved.setdefault(probe.relation, []).append(bool(best) and best[0][0] == probe.answer)
    rates = {relation: sum(hits) / len(hits) for relation, hits in solved.items()}
    assert rates == {"capital": 0.0, "first_name": 1.0, "article": 1.0}
