"""SQuAD v1.1: the official metric on hand-made cases, the parser on a tiny file in the real
format (``fixtures/squad_v1_tiny.json``, our own text), and the loader through ``fetch``."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from mlmcourse.tasks.qa import (
    QAExample,
    exact_match_score,
    f1_score,
    load_squad,
    metric_max_over_ground_truths,
    normalize_answer,
    parse_squad,
    score_predictions,
    squad_evaluate,
)
from mlmcourse.utils.checks import FileFormatError

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "squad_v1_tiny.json"


@pytest.fixture
def tiny_squad() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


# --- the metric ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The  Cat!", "cat"),
        ("an apple, a pear and THE plum", "apple pear and plum"),
        ("theatre", "theatre"),  # an article only as a whole word
        ("Mr. Smith's 3.5%", "mr smiths 35"),
        ("  a\tb \n c ", "b c"),
        # punctuation goes first, so "a-team" becomes "ateam" and survives the articles
        ("The a-team", "ateam"),
    ],
)
def test_normalize_answer_as_the_official_script(text, normalized):
    assert normalize_answer(text) == normalized


def test_exact_match_ignores_case_punctuation_and_articles():
    assert exact_match_score("The Eiffel Tower.", "eiffel tower")
    assert not exact_match_score("Eiffel Tower", "the tower")
    assert exact_match_score("the", "a")  # both normalise to "": the official script's quirk


def test_f1_counts_shared_words():
    assert f1_score("Eiffel Tower", "the Eiffel Tower") == 1.0
    assert f1_score("blue whale", "red panda") == 0.0
    assert f1_score("the", "a") == 0.0  # nothing left to share
    # by hand: {big, red, barn} and {red, barn, in, valley} share 2: P = 2/3, R = 2/4, F1 = 4/7
    assert f1_score("the big red barn", "red barn in the valley") == pytest.approx(4 / 7)
    # a word counts as often as it occurs in both: 1 shared "cat", P = 1/3, R = 1
    assert f1_score("cat cat cat", "the cat") == pytest.approx(0.5)


def test_a_prediction_gets_its_best_score_over_the_gold_answers():
    golds = ["Agnes Thorne", "the miller Agnes Thorne"]
    assert metric_max_over_ground_truths(f1_score, "Agnes", golds) == pytest.approx(2 / 3)
    assert metric_max_over_ground_truths(exact_match_score, "Miller Agnes Thorne", golds) == 1


def test_squad_evaluate_on_the_fixture_matches_a_hand_count(tiny_squad):
    predictions = {
        "hm-1": "1784",  # EM 1
        "hm-2": "Agnes",  # F1 2/3 against "Agnes Thorne"
        "hm-3": "The flood.",  # EM 1 against "flood"
        # hm-4 unanswered: 0
        "hm-5": "museum",  # F1 2/3 against "small museum"
        "gf-1": "rainforests",  # F1 2/7 against the six words without "in"
        "gf-2": "belly skin",  # EM 1
        "gf-3": "leaves",  # EM 1
        "gf-4": "the frog",  # 0
    }
    with pytest.warns(UserWarning, match="1 unanswered questions \\(such as 'hm-4'\\)"):
        scores = squad_evaluate(tiny_squad, predictions)
    assert scores["exact_match"] == pytest.approx(100 * 4 / 9)
    assert scores["f1"] == pytest.approx(100 * (4 + 2 / 3 + 2 / 3 + 2 / 7) / 9)  # 62.43%
    assert squad_evaluate(tiny_squad["data"], predictions | {"hm-4": "forty years"}) == {
        "exact_match": pytest.approx(100 * 5 / 9),
        "f1": pytest.approx(100 * (5 + 2 / 3 + 2 / 3 + 2 / 7) / 9),
    }


def test_score_predictions_explains_bad_input():
    with pytest.raises(ValueError, match="no questions to score"):
        score_predictions({}, {})
    with pytest.raises(ValueError, match="question 'q' has no gold answer"):
        score_predictions({"q": ()}, {"q": "x"})


# --- the format ---------------------------------------------------------------------------------


def test_parse_squad_flattens_the_fixture(tiny_squad):
    examples = parse_squad(tiny_squad, source=FIXTURE.name)
    assert [e.id for e in examples] == [
        "hm-1",
        "hm-2",
        "hm-3",
        "hm-4",
        "hm-5",
        "gf-1",
        "gf-2",
        "gf-3",
        "gf-4",
    ]
    first = examples[0]
    assert first.title == "Harrowby_Mill" and first.question.startswith("When was")
    assert first.answers == ("1784", "in 1784") and first.answer_starts == (38, 35)
    assert [len(e.answers) for e in examples] == [2, 2, 3, 1, 2, 2, 2, 3, 1]
    for e in examples:
        for text, start in zip(e.answers, e.answer_starts, strict=True):
            assert e.context[start : start + len(text)] == text
    assert parse_squad(tiny_squad["data"]) == examples  # the data list alone, as the script


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("data"), "tiny.json: the document has no 'data'"),
        (
            lambda d: d["data"][1]["paragraphs"][0]["qas"][1].pop("id"),
            r"tiny.json: data\[1\].paragraphs\[0\].qas\[1\] has no 'id'",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][1].pop("context"),
            r"data\[0\].paragraphs\[1\] has no 'context'",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][1].pop("answer_start"),
            r"qas\[0\].answers\[1\] has no 'answer_start'",
        ),
        (
            lambda d: d["data"][0].__setitem__("paragraphs", "oops"),
            r"data\[0\].paragraphs should be a list, got str",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][2]["answers"][0].__setitem__(
                "answer_start", 3
            ),
            r"qas\[2\]: example 'hm-3': answer_start=3 does not point at the answer 'a flood'",
        ),
    ],
)
def test_parse_squad_names_the_file_the_place_and_the_key(tiny_squad, edit, message):
    broken = copy.deepcopy(tiny_squad)
    edit(broken)
    with pytest.raises(FileFormatError, match=message):
        parse_squad(broken, source="tiny.json")


def test_an_example_checks_its_answer_starts():
    QAExample("q", "", "Ana lives in Vesh.", "Where?", ("Vesh",), (13,))
    with pytest.raises(ValueError, match="answer_start=12 .* the context there reads ' Ves'"):
        QAExample("q", "", "Ana lives in Vesh.", "Where?", ("Vesh",), (12,))
    with pytest.raises(ValueError, match="1 answers but 2 answer_starts"):
        QAExample("q", "", "Ana lives in Vesh.", "Where?", ("Vesh",), (13, 13))
    with pytest.raises(ValueError, match="answer_start=-1"):
        QAExample("q", "", "Ana lives in Vesh.", "Where?", ("Vesh",), (-1,))


def test_load_squad_reads_what_fetch_gives(monkeypatch, tmp_path):
    import mlmcourse.data.real as real

    asked = []

    def fake_fetch(name: str) -> Path:
        asked.append(name)
        return FIXTURE

    monkeypatch.setattr(real, "fetch", fake_fetch)
    examples = load_squad("dev")
    assert asked == ["squad/dev-v1.1"] and len(examples) == 9
    assert load_squad("train")[0].id == "hm-1" and asked[-1] == "squad/train-v1.1"
    with pytest.raises(ValueError, match="split must be 'train' or 'dev'"):
        load_squad("validation")
    bad = tmp_path / "dev-v1.1.json"
    bad.write_text('{"data": [{"title": "x"}]}', encoding="utf-8")
    monkeypatch.setattr(real, "fetch", lambda name: bad)
    with pytest.raises(FileFormatError, match=r"dev-v1.1.json: data\[0\] has no 'paragraphs'"):
        load_squad("dev")
