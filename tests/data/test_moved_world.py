"""The moved world of continued pretraining: a fixed city shuffle, moved texts, moved probes."""

from __future__ import annotations

from mlmcourse.data import Probe, load_probes, load_world_facts
from mlmcourse.data.moved_world import CONTINUED_PRETRAINING, city_move, moved, moved_fact_probes
from mlmcourse.pretraining import load_config

CITIES = [c["name"] for c in load_world_facts()["world"]["cities"]]


def test_city_move_is_a_fixed_permutation_of_the_cities():
    move = city_move(CITIES)
    assert move == city_move(CITIES, seed=0)  # the same in every run
    assert list(move) == CITIES and sorted(move.values()) == sorted(CITIES)
    assert sum(old != new for old, new in move.items()) > len(CITIES) / 2  # most cities move
    assert city_move(CITIES, seed=1) != move


def test_moved_renames_city_words_only():
    move = {"Orlen": "Tarvo", "Tarvo": "Kelso", "Kelso": "Orlen"}
    assert moved("Ana lives in Orlen , near Tarvo .", move) == "Ana lives in Tarvo , near Kelso ."
    assert moved("Orlenia is not a city", move) == "Orlenia is not a city"  # whole words only
    assert moved("", move) == ""


def test_moved_fact_probes_keep_the_probes_a_move_changes_and_move_them():
    move = {"Orlen": "Tarvo", "Tarvo": "Orlen"}
    probes = [
        Probe("the capital of Vesh is [MASK] .", "Orlen", "stated 30 times", "capital_of"),
        Probe("Ana lives in [MASK] .", "Tarvo", "stated 25 times", "lives_in"),
        Probe("the city of Orlen lies in [MASK] .", "Vesh", "stated 20 times", "located_in"),
        Probe("Ana works for [MASK] .", "Kelso", "stated 20 times", "works_for"),
    ]
    old, new = moved_fact_probes(probes, move)
    assert old == probes[:3]  # the employer's probe names no city
    assert [(p.text, p.answer, p.relation) for p in new] == [
        ("the capital of Vesh is [MASK] .", "Tarvo", "capital_of"),
        ("Ana lives in [MASK] .", "Orlen", "lives_in"),
        ("the city of Tarvo lies in [MASK] .", "Vesh", "located_in"),
    ]
    assert all(p.text.count("[MASK]") == 1 for p in new)


def test_the_world_fact_probes_a_move_changes():
    probes = load_probes("fact")
    move = city_move(CITIES)
    old, new = moved_fact_probes(probes, move)
    assert len(old) == len(new) and 0 < len(old) < len(probes)
    assert any(o.answer != n.answer for o, n in zip(old, new, strict=True))
    assert {p.relation for p in old} >= {"capital_of", "lives_in", "headquarters"}


def test_the_recipe_overrides_make_a_valid_world_config():
    config = load_config("world", {**CONTINUED_PRETRAINING, "init_from": "world"})
    assert (config.max_steps, config.warmup_steps, config.eval_steps) == (300, 20, 0)
    assert (
        config.learning_rate == 1e-3 and config.max_steps / load_config("world").max_steps == 0.15
    )
