"""The shipped world tagger: the NER chapter's model, small, and as good as its results say.

``experiments/world_tagger.py`` trained it once with ``book/ner_world.md``'s recipe and committed
``mlmcourse/course/results/world_tagger.json``; these tests only load and score it (no
training, a few seconds). An entity F1 is a ratio of counts over more than a thousand
entities, so "equal to 1e-6" means the same tags on every sentence.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.course.results import load_results
from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.heads import BertForTokenClassification, load_checkpoint
from mlmcourse.tasks.ner import TAGGER_RECIPE, evaluate_ner, new_tagger, predict_entities

ROOT = Path(__file__).resolve().parents[3]
SAME_F1 = 1e-6  # one tag more or less changes the F1 by about 1e-4
MODEL_FILES = {"config.json", "model.safetensors", "tokenizer.json"}


@pytest.fixture(scope="module")
def tagger():
    return load_checkpoint(shipped_checkpoint("world_ner"))


@pytest.fixture(scope="module")
def world():
    return load_checkpoint(shipped_checkpoint("world"))


@pytest.fixture(scope="module")
def committed():
    return load_results("world_tagger")


def test_the_shipped_tagger_is_small_and_holds_only_the_model():
    path = shipped_checkpoint("world_ner")
    assert {p.name for p in path.iterdir()} == MODEL_FILES  # no optimiser state
    size = sum(p.stat().st_size for p in path.iterdir())
    world_size = sum(p.stat().st_size for p in shipped_checkpoint("world").iterdir())
    assert size < world_size < 5_000_000  # the encoder without the MLM head, plus 7 labels


def test_the_shipped_tagger_is_a_token_classifier_on_the_world_encoder(tagger, world):
    model = tagger.model
    assert isinstance(model, BertForTokenClassification) and not model.training
    assert [model.id2label[i] for i in range(model.num_labels)] == WORLD_LABELS
    assert tagger.tokenizer.get_vocab() == world.tokenizer.get_vocab()
    assert model.config == world.model.bert.config


def test_the_committed_recipe_is_the_chapters(committed):
    recipe = committed["recipe"]
    # book/ner_world.md: models["pretrained", 4000], STEPS = 300, UNK_RATE = 0.3, seed 0
    assert (recipe["pretrained"], recipe["sentences"], recipe["steps"]) == (True, 4000, 300)
    assert (recipe["unk_rate"], recipe["seed"], committed["seeds"]) == (0.3, 0, [0])
    # ... and fine_tune_tagger's recipe and new_tagger's defaults for the rest, as the chapter
    defaults = {**dataclasses.asdict(TAGGER_RECIPE), **_defaults(new_tagger)}
    for key in ("batch_size", "learning_rate", "lr_scheduler_type", "classifier_dropout"):
        assert recipe[key] == defaults[key], key


def _defaults(function) -> dict:
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


@pytest.mark.parametrize(
    "name",
    [
        "unseen_first_500",  # the chapter's learning-curve set: 2 s
        pytest.param("unseen", marks=pytest.mark.slow),
        pytest.param("test", marks=pytest.mark.slow),
    ],
)
def test_the_shipped_tagger_scores_what_its_results_file_says(tagger, committed, name):
    expected = committed["scores"][name]
    split, _, first = name.partition("_first_")
    sentences = load_world(split)[: int(first) if first else None]
    assert expected["sentences"] == len(sentences)
    scores = evaluate_ner(tagger.model, tagger.tokenizer, sentences)
    for key in ("precision", "recall", "f1"):
        assert abs(scores[key] - expected[key]) < SAME_F1, (key, scores[key], expected)
    assert expected["f1"] > 0.95


def test_the_shipped_tagger_is_the_chapters_model(committed):
    # ner_curve.json's seed-0 run of the same recipe, scored on the chapter's curve set
    (row,) = [
        r
        for r in load_results("ner_curve")["runs"]
        if (r["start"], r["sentences"], r["seed"], r["unk_rate"], r["steps"])
        == ("pretrained", 4000, 0, 0.3, 300)
    ]
    assert abs(committed["scores"]["unseen_first_500"]["f1"] - row["unseen_f1"]) < SAME_F1


def test_the_shipped_tagger_finds_invented_names_from_their_context(tagger, committed):
    text = "Zorbel Quintax moved to Vaskoria and joined Drafer Museum as a pilot ."
    found = predict_entities(tagger.model, tagger.tokenizer, text)
    pairs = {(e["entity_group"], e["word"]) for e in found}
    assert {("PER", "Zorbel Quintax"), ("LOC", "Vaskoria")} <= pairs  # as book/ner_world.md asserts
    assert committed["invented"]["text"] == text
    assert pairs == {(e["entity_group"], e["word"]) for e in committed["invented"]["entities"]}


@pytest.mark.slow
def test_the_world_tagger_script_saves_a_tagger_that_loads(tmp_path):
    out, folder = tmp_path / "world_tagger.json", tmp_path / "world_ner"
    done = subprocess.run(
        [sys.executable, "experiments/world_tagger.py", "--steps", "2", "--checkpoint",
         str(folder), "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["recipe"]["steps"] == 2 and results["seeds"] == [0]
    assert set(results["scores"]) == {"test", "unseen", "unseen_first_500"}
    loaded = load_checkpoint(folder)
    assert isinstance(loaded.model, BertForTokenClassification)
    assert {p.name for p in folder.iterdir()} == MODEL_FILES
