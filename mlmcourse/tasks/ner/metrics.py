"""Entity-level metrics for BIO tagging, equal to ``seqeval``'s default (conlleval) mode.

Token accuracy flatters a tagger: a sentence with no entity is all ``O`` and is "right" for free.
What we care about is whole entities, so an entity counts as found only when its type, first
word and last word all match the gold one. Entities are read from BIO tags with the rules of the
CoNLL ``conlleval`` script, which ``seqeval`` follows by default:

- ``B-X`` starts an entity of type ``X``;
- ``I-X`` continues the current entity when it is of type ``X``, and otherwise *starts* one
  (an ``I-X`` after ``O``, at the start, or after ``B-Y``/``I-Y`` is not thrown away);
- ``O`` ends it.

Undefined ratios follow ``seqeval`` (and scikit-learn): a precision with no predicted entity or a
recall with no gold entity is set to ``zero_division`` (``"warn"`` means 0 and a warning); the
macro average over no entity type at all is ``nan``. ``tests/tasks/ner/test_metrics_seqeval.py`` checks
every number here against ``seqeval.metrics`` on thousands of random sequences.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

from mlmcourse.data.bio import get_entities
from mlmcourse.utils.checks import check_non_negative_int, is_number
from mlmcourse.utils.labels import IGNORE_INDEX

if TYPE_CHECKING:  # torch is only needed by `token_accuracy_from_ids`
    import torch

__all__ = [
    "EntityScores",
    "UndefinedMetricWarning",
    "classification_report",
    "f1_score",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
    "token_accuracy",
    "token_accuracy_from_ids",
]

Average = Literal["micro", "macro", "weighted"]
ZeroDivision = Literal["warn"] | int | float
_AVERAGES = ("micro", "macro", "weighted")


class UndefinedMetricWarning(UserWarning):
    """A precision or recall had nothing to divide by and was set to ``zero_division``."""


class EntityScores(NamedTuple):
    """Precision, recall and F1 for one entity type or one average; support = gold entities."""

    precision: float
    recall: float
    f1: float
    support: int


# --------------------------------------------------------------------------- validation


def _check_sequences(y_true: Sequence[Sequence[str]], y_pred: Sequence[Sequence[str]]) -> None:
    """Both arguments are lists of tag sequences of the same shape, made of valid BIO tags."""
    for name, seqs in (("y_true", y_true), ("y_pred", y_pred)):
        if isinstance(seqs, str) or not isinstance(seqs, Sequence):
            raise TypeError(
                f"{name} must be a list of tag sequences (one per sentence), got {type(seqs).__name__}"
            )
        for i, seq in enumerate(seqs):
            if isinstance(seq, str) or not isinstance(seq, Sequence):
                raise TypeError(
                    f"{name} must be a list of tag sequences (one per sentence), but {name}[{i}] "
                    f"is {seq!r}; wrap a single sentence's tags in a list: [tags]"
                )
    if len(y_true) != len(y_pred):
        raise ValueError(
            f"y_true has {len(y_true)} sentences but y_pred has {len(y_pred)}; "
            "they must be aligned sentence by sentence"
        )
    for i, (t, p) in enumerate(zip(y_true, y_pred, strict=True)):
        if len(t) != len(p):
            raise ValueError(
                f"sentence {i}: y_true has {len(t)} tags but y_pred has {len(p)}; "
                "predictions must be one tag per word"
            )


# --------------------------------------------------------------------------- entities


def _count(
    y_true: Sequence[Sequence[str]], y_pred: Sequence[Sequence[str]]
) -> dict[str, tuple[int, int, int]]:
    """Per entity type, sorted by name: ``(true positives, predicted, gold)`` entity counts."""
    _check_sequences(y_true, y_pred)
    gold: dict[str, set] = defaultdict(set)
    pred: dict[str, set] = defaultdict(set)
    for i, (t, p) in enumerate(zip(y_true, y_pred, strict=True)):
        for type_, start, end in get_entities(t):
            gold[type_].add((i, start, end))
        for type_, start, end in get_entities(p):
            pred[type_].add((i, start, end))
    return {
        name: (len(gold[name] & pred[name]), len(pred[name]), len(gold[name]))
        for name in sorted(set(gold) | set(pred))
    }


# --------------------------------------------------------------------------- scores


def _check_zero_division(zero_division: ZeroDivision) -> float:
    if zero_division == "warn":
        return 0.0
    if is_number(zero_division) and zero_division in (0, 1):
        return float(zero_division)
    raise ValueError(f"zero_division must be 'warn', 0 or 1, got {zero_division!r}")


def _divide(num: int, den: int, zero: float, warn: str | None) -> float:
    if den:
        return num / den
    if warn:
        warnings.warn(
            f"{warn} is ill-defined and set to {zero}; pass zero_division=0 or 1 to silence this",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    return zero


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def precision_recall_fscore_support(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    *,
    average: Average | None = None,
    zero_division: ZeroDivision = "warn",
    _warn_for: tuple[str, ...] = ("precision", "recall"),
) -> EntityScores | dict[str, EntityScores]:
    """Entity precision, recall, F1 and support, per type (``average=None``) or averaged.

    ``"micro"`` pools the entity counts of all types (the headline NER number); ``"macro"`` is
    the plain mean of the per-type scores (rare types weigh as much as common ones);
    ``"weighted"`` weights them by support. Per type, the result is a dict ``type -> scores``
    sorted by type name.
    """
    if average not in (None, *_AVERAGES):
        raise ValueError(f"average must be None, 'micro', 'macro' or 'weighted', got {average!r}")
    zero = _check_zero_division(zero_division)
    warn = zero_division == "warn"
    counts = _count(y_true, y_pred)

    def scores(tp: int, n_pred: int, n_gold: int) -> EntityScores:
        p = _divide(tp, n_pred, zero, warn and "precision" in _warn_for and "Precision")
        r = _divide(tp, n_gold, zero, warn and "recall" in _warn_for and "Recall")
        if warn and "f1" in _warn_for and n_pred == 0 and n_gold == 0:
            _divide(0, 0, zero, "F1 (no gold and no predicted entity)")
        return EntityScores(p, r, _f1(p, r), n_gold)

    if average == "micro":
        tp, n_pred, n_gold = (sum(c[k] for c in counts.values()) for k in range(3))
        return scores(tp, n_pred, n_gold)
    per_type = {name: scores(*c) for name, c in counts.items()}
    if average is None:
        return per_type
    support = sum(s.support for s in per_type.values())
    if average == "macro":
        if not per_type:  # the mean of no scores: undefined, as in seqeval
            return EntityScores(math.nan, math.nan, math.nan, 0)
        n = len(per_type)
        p, r, f = (sum(s[k] for s in per_type.values()) / n for k in range(3))
        return EntityScores(p, r, f, support)
    if support == 0:  # weighted, but no gold entity to weigh by (seqeval's rule)
        nothing_predicted = all(c[1] == 0 for c in counts.values())
        return EntityScores(
            zero if nothing_predicted else 0.0, zero, zero if nothing_predicted else 0.0, 0
        )
    p, r, f = (sum(s[k] * s.support for s in per_type.values()) / support for k in range(3))
    return EntityScores(p, r, f, support)


def _scalar(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    average: Average,
    zero_division: ZeroDivision,
    warn_for: tuple[str, ...],
) -> EntityScores:
    if average not in _AVERAGES:
        raise ValueError(
            f"average must be 'micro', 'macro' or 'weighted', got {average!r}; "
            "for per-type scores call precision_recall_fscore_support(..., average=None)"
        )
    scores = precision_recall_fscore_support(
        y_true, y_pred, average=average, zero_division=zero_division, _warn_for=warn_for
    )
    assert isinstance(scores, EntityScores)
    return scores


def precision_score(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    *,
    average: Average = "micro",
    zero_division: ZeroDivision = "warn",
) -> float:
    """Entity precision: the share of predicted entities that are exactly right."""
    return _scalar(y_true, y_pred, average, zero_division, ("precision",)).precision


def recall_score(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    *,
    average: Average = "micro",
    zero_division: ZeroDivision = "warn",
) -> float:
    """Entity recall: the share of gold entities that were found exactly."""
    return _scalar(y_true, y_pred, average, zero_division, ("recall",)).recall


def f1_score(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    *,
    average: Average = "micro",
    zero_division: ZeroDivision = "warn",
) -> float:
    """Entity F1, the harmonic mean of precision and recall (0 when both are 0)."""
    return _scalar(y_true, y_pred, average, zero_division, ("f1",)).f1


def classification_report(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    *,
    digits: int = 2,
    output_dict: bool = False,
    zero_division: ZeroDivision = "warn",
) -> str | dict[str, dict[str, float | int]]:
    """Per-type and averaged entity scores, as a table (``str``) or a dict like seqeval's.

    The dict maps each entity type and ``"micro avg"``, ``"macro avg"``, ``"weighted avg"`` to
    ``{"precision", "recall", "f1-score", "support"}``; the table is laid out as seqeval's.
    """
    per_type = precision_recall_fscore_support(
        y_true, y_pred, average=None, zero_division=zero_division
    )
    assert isinstance(per_type, dict)
    rows: dict[str, EntityScores] = dict(per_type)
    for average in _AVERAGES:
        rows[f"{average} avg"] = precision_recall_fscore_support(
            y_true, y_pred, average=average, zero_division=zero_division, _warn_for=()
        )
    if output_dict:
        return {
            name: {
                "precision": s.precision,
                "recall": s.recall,
                "f1-score": s.f1,
                "support": s.support,
            }
            for name, s in rows.items()
        }
    digits = check_non_negative_int(digits, "digits")
    width = max([len(name) for name in per_type] + [len("weighted avg"), digits])
    headers = ("precision", "recall", "f1-score", "support")
    lines = [f"{'':>{width}s} " + "".join(f" {h:>9}" for h in headers), ""]

    def row(name: str, s: EntityScores) -> str:
        numbers = "".join(f" {v:>9.{digits}f}" for v in s[:3])
        return f"{name:>{width}s} {numbers} {s.support:>9}"

    lines += [row(name, s) for name, s in per_type.items()] + [""]
    lines += [row(f"{a} avg", rows[f"{a} avg"]) for a in _AVERAGES] + [""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- tokens


def token_accuracy(y_true: Sequence[Sequence[str]], y_pred: Sequence[Sequence[str]]) -> float:
    """The share of words whose tag is right (``O`` included, which is why it flatters)."""
    _check_sequences(y_true, y_pred)
    total = sum(len(t) for t in y_true)
    if total == 0:
        raise ValueError("token_accuracy needs at least one tag; all sentences are empty")
    return (
        sum(a == b for t, p in zip(y_true, y_pred, strict=True) for a, b in zip(t, p, strict=True))
        / total
    )


def token_accuracy_from_ids(
    predictions: torch.Tensor, labels: torch.Tensor, *, ignore_index: int = IGNORE_INDEX
) -> float:
    """Token accuracy on label ids, skipping ``ignore_index`` positions (specials, padding, pieces).

    ``predictions`` are label ids ``(B, T)`` or logits ``(B, T, num_labels)``; ``labels`` is
    ``(B, T)``. Returns ``nan`` when every position is ignored (there is nothing to score).
    """
    if predictions.dim() == labels.dim() + 1:
        predictions = predictions.argmax(-1)
    if predictions.shape != labels.shape:
        raise ValueError(
            f"predictions {tuple(predictions.shape)} and labels {tuple(labels.shape)} must have "
            "the same shape (or predictions be logits with one extra last dimension)"
        )
    keep = labels != ignore_index
    n = int(keep.sum())
    if n == 0:
        return math.nan
    return int((predictions[keep] == labels[keep]).sum()) / n
