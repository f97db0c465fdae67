"""Entity metrics: conlleval entity reading, hand-checked scores, zero division, clear errors."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from mlmcourse.data.bio import get_entities, split_tag
from mlmcourse.tasks.ner.metrics import (
    EntityScores,
    UndefinedMetricWarning,
    classification_report,
    f1_score,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
    token_accuracy,
    token_accuracy_from_ids,
)


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ([], []),
        (["O", "O"], []),
        (["B-PER", "I-PER", "O"], [("PER", 0, 1)]),
        (["I-PER", "I-PER"], [("PER", 0, 1)]),  # I- at the start opens an entity
        (["O", "I-LOC", "O"], [("LOC", 1, 1)]),  # I- after O opens an entity
        (["B-PER", "I-LOC"], [("PER", 0, 0), ("LOC", 1, 1)]),  # I-X after B-Y: a new one
        (["B-PER", "B-PER"], [("PER", 0, 0), ("PER", 1, 1)]),  # B- always opens
        (["I-ORG", "I-ORG", "B-ORG", "I-ORG"], [("ORG", 0, 1), ("ORG", 2, 3)]),
        (["B-creative-work", "I-creative-work"], [("creative-work", 0, 1)]),
        (["O", "B-LOC"], [("LOC", 1, 1)]),  # an entity at the end is closed
    ],
)
def test_get_entities_follows_conlleval(tags, expected):
    assert get_entities(tags) == expected


@pytest.mark.parametrize("bad", ["B_PER", "B-", "PER", "b-PER", "", "I", "S-PER", "E-LOC"])
def test_malformed_tags_are_named_in_the_error(bad):
    with pytest.raises(ValueError, match="malformed BIO tag") as info:
        get_entities(["O", bad])
    assert repr(bad) in str(info.value)
    with pytest.raises(ValueError, match="malformed"):
        f1_score([["O", "O"]], [["O", bad]])


def test_iobes_tags_get_a_conversion_hint():
    with pytest.raises(ValueError, match="IOBES"):
        split_tag("S-PER")


def test_split_tag():
    assert split_tag("O") == ("O", "")
    assert split_tag("I-creative-work") == ("I", "creative-work")


def test_hand_computed_scores():
    y_true = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    y_pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "B-LOC"]]
    # gold: PER(0-1), LOC(3), ORG(s1 0); predicted: PER(0-1), ORG(3), ORG(s1 0), LOC(s1 1)
    # true positives: PER and ORG(s1 0) -> tp=2, predicted 4, gold 3
    assert precision_score(y_true, y_pred) == pytest.approx(2 / 4)
    assert recall_score(y_true, y_pred) == pytest.approx(2 / 3)
    assert f1_score(y_true, y_pred) == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    per_type = precision_recall_fscore_support(y_true, y_pred)
    assert list(per_type) == ["LOC", "ORG", "PER"]
    assert per_type["LOC"] == EntityScores(0.0, 0.0, 0.0, 1)
    assert per_type["ORG"] == EntityScores(0.5, 1.0, pytest.approx(2 / 3), 1)
    assert per_type["PER"] == EntityScores(1.0, 1.0, 1.0, 1)
    macro = precision_recall_fscore_support(y_true, y_pred, average="macro")
    assert macro.precision == pytest.approx((0 + 0.5 + 1) / 3)
    assert macro.support == 3


def test_an_entity_must_match_exactly_to_count():
    # a boundary error is both a false positive and a false negative
    assert f1_score([["B-PER", "I-PER", "O"]], [["B-PER", "O", "O"]]) == 0.0


def test_entities_do_not_run_across_sentences():
    # seqeval flattens sentences with an O between them; so do we (by keeping sentence ids)
    y = [["O", "I-PER"], ["I-PER", "O"]]
    report = classification_report(y, y, output_dict=True)
    assert report["PER"]["support"] == 2


def test_zero_division_warns_by_default_and_can_be_set():
    gold = [["B-PER", "O"]]
    nothing = [["O", "O"]]
    with pytest.warns(UndefinedMetricWarning, match="Precision"):
        assert precision_score(gold, nothing) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning once the caller chose a value
        assert precision_score(gold, nothing, zero_division=1) == 1.0
        assert precision_score(gold, nothing, zero_division=0) == 0.0
        assert recall_score(nothing, gold, zero_division=1) == 1.0
        # F1 of the empty prediction: precision 1 (chosen), recall 0 -> F1 0
        assert f1_score(gold, nothing, zero_division=1) == 0.0
        # nothing anywhere: all three are the chosen value, the macro mean is undefined
        assert f1_score(nothing, nothing, zero_division=1) == 1.0
        assert math.isnan(f1_score(nothing, nothing, average="macro", zero_division=1))
        weighted = precision_recall_fscore_support(
            nothing, gold, average="weighted", zero_division=1
        )
        assert weighted == EntityScores(0.0, 1.0, 0.0, 0)


@pytest.mark.parametrize("value", [2, 0.5, "ignore", None, True])
def test_bad_zero_division_is_rejected(value):
    with pytest.raises(ValueError, match="zero_division"):
        f1_score([["O"]], [["O"]], zero_division=value)


def test_average_is_checked():
    with pytest.raises(ValueError, match="average"):
        f1_score([["O"]], [["O"]], average="samples")
    with pytest.raises(ValueError, match="average=None"):
        f1_score([["O"]], [["O"]], average=None)
    with pytest.raises(ValueError, match="average"):
        precision_recall_fscore_support([["O"]], [["O"]], average="binary")


def test_length_mismatches_are_clear_errors():
    with pytest.raises(ValueError, match="y_true has 2 sentences but y_pred has 1"):
        f1_score([["O"], ["O"]], [["O"]])
    with pytest.raises(ValueError, match=r"sentence 1: y_true has 2 tags but y_pred has 3"):
        f1_score([["O"], ["O", "O"]], [["O"], ["O", "O", "O"]])
    with pytest.raises(ValueError, match="sentence 0"):
        token_accuracy([["O"]], [[]])


def test_a_flat_list_is_rejected_with_a_hint():
    with pytest.raises(TypeError, match=r"wrap a single sentence's tags in a list"):
        f1_score(["B-PER", "O"], ["B-PER", "O"])
    with pytest.raises(TypeError, match="list of tag sequences"):
        f1_score("B-PER", "B-PER")


def test_tuples_are_accepted_like_lists():
    y = (("B-PER", "O"),)
    assert f1_score(y, y) == 1.0


def test_classification_report_table():
    y_true = [["B-PER", "I-PER", "O", "B-LOC"]]
    y_pred = [["B-PER", "I-PER", "O", "O"]]
    with pytest.warns(UndefinedMetricWarning):
        table = classification_report(y_true, y_pred, digits=3)
    lines = table.splitlines()
    assert lines[0].split() == ["precision", "recall", "f1-score", "support"]
    assert lines[2].split() == ["LOC", "0.000", "0.000", "0.000", "1"]
    assert lines[3].split() == ["PER", "1.000", "1.000", "1.000", "1"]
    assert lines[5].split() == ["micro", "avg", "1.000", "0.500", "0.667", "2"]
    report = classification_report(y_true, y_pred, output_dict=True, zero_division=0)
    assert list(report) == ["LOC", "PER", "micro avg", "macro avg", "weighted avg"]
    assert report["macro avg"]["f1-score"] == pytest.approx(0.5)


def test_classification_report_without_any_entity_still_renders():
    table = classification_report([["O"]], [["O"]], zero_division=0)
    assert "micro avg" in table and "nan" in table  # the macro mean of no type


def test_token_accuracy():
    assert token_accuracy([["O", "B-PER"], ["O"]], [["O", "O"], ["O"]]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="at least one tag"):
        token_accuracy([[]], [[]])


def test_token_accuracy_from_ids_skips_ignored_positions():
    labels = torch.tensor([[-100, 1, 0, -100], [-100, 2, -100, -100]])
    preds = torch.tensor([[5, 1, 1, 5], [0, 2, 3, 3]])
    assert token_accuracy_from_ids(preds, labels) == pytest.approx(2 / 3)
    logits = torch.nn.functional.one_hot(preds.clamp(max=3), 6).float()  # (B, T, L)
    assert token_accuracy_from_ids(logits, labels) == pytest.approx(2 / 3)
    assert math.isnan(token_accuracy_from_ids(preds, torch.full_like(labels, -100)))
    with pytest.raises(ValueError, match="same shape"):
        token_accuracy_from_ids(preds[:, :2], labels)
