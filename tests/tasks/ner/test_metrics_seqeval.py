"""Parity: our entity metrics equal ``seqeval.metrics`` (default, conlleval mode) number for number.

The random batches are built to hit the corners where implementations disagree: ``I-X`` after
``O`` or at the start, ``I-X`` after ``B-Y``, types whose name has a hyphen, empty sentences,
batches with no gold or no predicted entity (zero division), and predictions that are small
edits of the gold tags (so that partial matches are common).
"""

from __future__ import annotations

import math
import random
import warnings

import pytest

seqeval_metrics = pytest.importorskip("seqeval.metrics")

from mlmcourse.data import bio  # noqa: E402
from mlmcourse.tasks.ner import metrics  # noqa: E402

TYPES = ["PER", "LOC", "ORG", "creative-work"]
TAGS = ["O"] + [f"{p}-{t}" for t in TYPES for p in "BI"]
N_BATCHES = 1200  # about 4,200 sentences per zero_division setting


def _random_tags(rng: random.Random, n: int) -> list[str]:
    style = rng.random()
    if style < 0.1:
        return ["O"] * n
    if style < 0.5:  # mostly O, like real NER data
        return [rng.choice(TAGS) if rng.random() < 0.35 else "O" for _ in range(n)]
    return [rng.choice(TAGS) for _ in range(n)]


def _perturb(rng: random.Random, tags: list[str]) -> list[str]:
    style = rng.random()
    if style < 0.1:
        return ["O"] * len(tags)  # a model that predicts nothing
    if style < 0.3:
        return _random_tags(rng, len(tags))
    rate = rng.choice([0.05, 0.15, 0.4])
    return [rng.choice(TAGS) if rng.random() < rate else t for t in tags]


def random_batches(seed: int = 0, n: int = N_BATCHES):
    rng = random.Random(seed)
    for _ in range(n):
        n_sentences = rng.randint(1, 6)
        lengths = [rng.choice([0, 1, 2, 3, 5, 8, 13]) for _ in range(n_sentences)]
        y_true = [_random_tags(rng, k) for k in lengths]
        y_pred = [_perturb(rng, t) for t in y_true]
        yield y_true, y_pred


def _same(a: float, b: float) -> bool:
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _same_report(ours: dict, theirs: dict) -> bool:
    if list(ours) != list(theirs):
        return False
    return all(
        _same(ours[row][k], theirs[row][k])
        for row in ours
        for k in ("precision", "recall", "f1-score")
    ) and all(int(ours[row]["support"]) == int(theirs[row]["support"]) for row in ours)


@pytest.mark.parametrize("zero_division", ["warn", 0, 1])
def test_scores_and_reports_equal_seqeval_on_random_batches(zero_division):
    mismatches = []
    n_zero_division = n_no_entities = n_sentences = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both libraries warn about the zero-division cases
        for i, (y_true, y_pred) in enumerate(random_batches(seed=17)):
            n_sentences += len(y_true)
            kw = {"zero_division": zero_division}
            for average in ("micro", "macro", "weighted"):
                for name in ("precision_score", "recall_score", "f1_score"):
                    ours = getattr(metrics, name)(y_true, y_pred, average=average, **kw)
                    theirs = getattr(seqeval_metrics, name)(y_true, y_pred, average=average, **kw)
                    if not _same(ours, theirs):
                        mismatches.append((i, name, average, ours, theirs, y_true, y_pred))
            ours_report = metrics.classification_report(y_true, y_pred, output_dict=True, **kw)
            theirs_report = seqeval_metrics.classification_report(
                y_true, y_pred, output_dict=True, **kw
            )
            if not _same_report(ours_report, theirs_report):
                mismatches.append((i, "classification_report", ours_report, theirs_report))
            has_types = len(ours_report) > 3
            if has_types:  # seqeval's text table fails (max of nothing) when there is no type
                text = metrics.classification_report(y_true, y_pred, digits=4, **kw)
                if text != seqeval_metrics.classification_report(y_true, y_pred, digits=4, **kw):
                    mismatches.append((i, "text report", text))
            n_no_entities += not has_types
            n_zero_division += any(
                row["support"] == 0 or row["precision"] in (0.0, 1.0)
                for row in ours_report.values()
            )
    assert not mismatches, f"{len(mismatches)} mismatches; first: {mismatches[0]}"
    # the random batches did exercise the corners they are meant to
    assert n_sentences > 3000 and n_no_entities > 10 and n_zero_division > 100


def test_token_accuracy_equals_seqeval_accuracy_score():
    for y_true, y_pred in random_batches(seed=3, n=500):
        if sum(map(len, y_true)) == 0:
            continue
        assert _same(
            metrics.token_accuracy(y_true, y_pred), seqeval_metrics.accuracy_score(y_true, y_pred)
        )


def test_get_entities_equals_seqeval_on_single_sequences():
    from seqeval.metrics.sequence_labeling import get_entities

    rng = random.Random(5)
    for _ in range(2000):
        tags = _random_tags(rng, rng.randint(0, 12))
        assert bio.get_entities(tags) == get_entities(tags)


def test_a_perfect_tagger_scores_one_and_an_empty_one_zero():
    y_true = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "I-ORG"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in ("precision_score", "recall_score", "f1_score"):
            assert getattr(metrics, fn)(y_true, y_true) == 1.0
            nothing = [["O"] * len(t) for t in y_true]
            assert getattr(metrics, fn)(y_true, nothing) == getattr(seqeval_metrics, fn)(
                y_true, nothing
            )


def test_scores_equal_seqeval_on_real_wnut17_tags():
    """Real tags (six types, hyphenated names) against a seeded, realistically noisy tagger."""
    import os
    from pathlib import Path

    data = pytest.importorskip("mlmcourse.data")
    root = (
        os.environ.get("MLMCOURSE_DATA_DIR")
        or Path(__file__).resolve().parents[4] / "shared" / "data"
    )
    path = Path(root) / "wnut17" / "emerging.dev.conll"
    if not path.is_file():
        pytest.skip(f"WNUT-17 not found at {path} (set MLMCOURSE_DATA_DIR)")
    gold = [list(s.tags) for s in data.read_conll(path)]
    labels = sorted({t for g in gold for t in g})
    rng = random.Random(0)
    pred = [[rng.choice(labels) if rng.random() < 0.1 else t for t in g] for g in gold]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for average in ("micro", "macro", "weighted"):
            for name in ("precision_score", "recall_score", "f1_score"):
                ours = getattr(metrics, name)(gold, pred, average=average)
                assert _same(ours, getattr(seqeval_metrics, name)(gold, pred, average=average))
        ours = metrics.classification_report(gold, pred, output_dict=True)
        assert _same_report(
            ours, seqeval_metrics.classification_report(gold, pred, output_dict=True)
        )
        assert metrics.classification_report(gold, pred, digits=4) == (
            seqeval_metrics.classification_report(gold, pred, digits=4)
        )
    assert len(gold) > 1000 and "creative-work" in ours
