"""SQuAD v1.1: its examples, its file format, and its official metric, exact match and F1.

A question-answering example is a context, a question and the answers: spans of the context,
each given as its text and the character where it starts (:class:`QAExample`). SQuAD's JSON
nests them as ``data -> paragraphs -> qas``; :func:`parse_squad` flattens that into examples,
:func:`load_squad` reads the official files through :func:`mlmcourse.data.real.fetch`.

The metric is the official ``evaluate-v1.1.py`` re-implemented line for line: both texts are
normalised (:func:`normalize_answer`), then *exact match* asks whether they are equal and *F1*
counts the words they share; a prediction gets the best score over the gold answers (the dev
set has up to three per question, from different annotators), and the totals are percentages.
"""

from __future__ import annotations

import re
import string
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlmcourse.utils.checks import FileFormatError, read_json

__all__ = [
    "QAExample",
    "exact_match_score",
    "f1_score",
    "load_squad",
    "metric_max_over_ground_truths",
    "normalize_answer",
    "parse_squad",
    "score_predictions",
    "squad_evaluate",
]

SQUAD_SPLITS = {"train": "squad/train-v1.1", "dev": "squad/dev-v1.1"}
_PUNCTUATION = frozenset(string.punctuation)  # ASCII only, as in the official script


@dataclass(frozen=True)
class QAExample:
    """One question about one context, with its gold answers (none for a question to predict).

    ``answers[i]`` is the text of an answer and ``answer_starts[i]`` the character where it
    starts in ``context``; every start is checked to point at its text, since a wrong start
    silently teaches the model the wrong span.
    """

    id: str
    title: str
    context: str
    question: str
    answers: tuple[str, ...] = ()
    answer_starts: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if len(self.answers) != len(self.answer_starts):
            raise ValueError(
                f"example {self.id!r}: {len(self.answers)} answers but "
                f"{len(self.answer_starts)} answer_starts; give one start per answer"
            )
        for text, start in zip(self.answers, self.answer_starts, strict=True):
            found = self.context[start : start + len(text)] if 0 <= start else None
            if found != text:
                raise ValueError(
                    f"example {self.id!r}: answer_start={start} does not point at the answer "
                    f"{text!r}: the context there reads {found!r}; answer_start counts "
                    f"characters from 0"
                )


# --- the official metric --------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    """Lower-case, remove punctuation, remove the articles a/an/the, then fix whitespace.

    In this order, as the official script: so ``"The Cat!"`` and ``"cat"`` are the same answer.
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match_score(prediction: str, ground_truth: str) -> bool:
    """Whether the two texts are equal once normalised."""
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def f1_score(prediction: str, ground_truth: str) -> float:
    """The F1 of the words the two normalised texts share, each word counted as often as in both."""
    predicted = normalize_answer(prediction).split()
    gold = normalize_answer(ground_truth).split()
    common = Counter(predicted) & Counter(gold)  # the intersection keeps the smaller count
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def metric_max_over_ground_truths(
    metric: Callable[[str, str], float], prediction: str, ground_truths: Sequence[str]
) -> float:
    """The best score of ``prediction`` against any of the gold answers."""
    return max(metric(prediction, truth) for truth in ground_truths)


def score_predictions(
    references: Mapping[str, Sequence[str]], predictions: Mapping[str, str]
) -> dict[str, float]:
    """``{"exact_match", "f1"}`` in percent over every question of ``references`` (id -> answers).

    A question without a prediction scores 0 (the official script says so on stderr; we warn).
    """
    if not references:
        raise ValueError("there are no questions to score")
    exact = f1 = 0.0
    missing = []
    for qid, truths in references.items():
        if not truths:
            raise ValueError(f"question {qid!r} has no gold answer to score against")
        if qid not in predictions:
            missing.append(qid)
            continue
        exact += metric_max_over_ground_truths(exact_match_score, predictions[qid], truths)
        f1 += metric_max_over_ground_truths(f1_score, predictions[qid], truths)
    if missing:
        warnings.warn(
            f"{len(missing)} unanswered questions (such as {missing[0]!r}) will receive score 0",
            UserWarning,
            stacklevel=2,
        )
    total = len(references)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def squad_evaluate(
    dataset: Mapping[str, Any] | Sequence[Any], predictions: Mapping[str, str]
) -> dict[str, float]:
    """The official SQuAD v1.1 evaluation: ``{"exact_match": %, "f1": %}``.

    ``dataset`` is the official JSON (``{"data": [...]}``) or its ``data`` list, as the script
    takes it; ``predictions`` maps question ids to answer texts.
    """
    references = {}
    for where, _, _, qa in _questions(dataset, "the dataset"):
        references[_question_id(qa, where, "the dataset")] = _answers(qa, where, "the dataset")[0]
    return score_predictions(references, predictions)


# --- the file format ------------------------------------------------------------------------------


def _field(node: Any, key: str, where: str, source: str, kind: type | tuple[type, ...]) -> Any:
    """``node[key]``, or an error that names the file, the place and the missing key."""
    if not isinstance(node, dict):
        raise FileFormatError(f"{source}: {where} should be an object, got {type(node).__name__}")
    if key not in node:
        raise FileFormatError(f"{source}: {where} has no {key!r} (keys: {sorted(node)})")
    value = node[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise FileFormatError(
            f"{source}: {where}.{key} should be a {names}, got {type(value).__name__}"
        )
    return value


def _questions(
    dataset: Mapping[str, Any] | Sequence[Any], source: str
) -> Iterator[tuple[str, str, str, Any]]:
    """Walk ``data -> paragraphs -> qas``: ``(where, title, context, qa)`` for each question."""
    articles = dataset
    if isinstance(dataset, Mapping):
        articles = _field(dict(dataset), "data", "the document", source, list)
    if not isinstance(articles, list):
        raise FileFormatError(
            f"{source}: expected a list of articles, got {type(articles).__name__}"
        )
    for a, article in enumerate(articles):
        where = f"data[{a}]"
        title = _field(article, "title", where, source, str)
        for p, paragraph in enumerate(_field(article, "paragraphs", where, source, list)):
            here = f"{where}.paragraphs[{p}]"
            context = _field(paragraph, "context", here, source, str)
            for q, qa in enumerate(_field(paragraph, "qas", here, source, list)):
                yield f"{here}.qas[{q}]", title, context, qa


def _question_id(qa: Any, where: str, source: str) -> str:
    return str(_field(qa, "id", where, source, (str, int)))


def _answers(qa: Any, where: str, source: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The answers' texts and starts."""
    texts, starts = [], []
    for i, answer in enumerate(_field(qa, "answers", where, source, list)):
        texts.append(_field(answer, "text", f"{where}.answers[{i}]", source, str))
        starts.append(_field(answer, "answer_start", f"{where}.answers[{i}]", source, int))
    return tuple(texts), tuple(starts)


def parse_squad(
    dataset: Mapping[str, Any] | Sequence[Any], *, source: str = "SQuAD"
) -> list[QAExample]:
    """The examples of a SQuAD v1.1 JSON document, in file order.

    ``source`` (a file name) goes into every error, with the place in the document and what is
    wrong there: ``"dev-v1.1.json: data[3].paragraphs[0].qas[2] has no 'id'"``.
    """
    examples = []
    for where, title, context, qa in _questions(dataset, source):
        texts, starts = _answers(qa, where, source)
        qid, question = _question_id(qa, where, source), _field(qa, "question", where, source, str)
        try:
            examples.append(QAExample(qid, title, context, question, texts, starts))
        except ValueError as err:
            raise FileFormatError(f"{source}: {where}: {err}") from None
    return examples


def load_squad(split: str = "dev") -> list[QAExample]:
    """SQuAD v1.1, ``"train"`` (87,599 questions) or ``"dev"`` (10,570, up to 3 answers each).

    Fetched once and checked by sha256 (:func:`mlmcourse.data.real.fetch`). CC BY-SA 4.0: cite
    Rajpurkar et al. (2016).
    """
    from mlmcourse.data.real import fetch

    if split not in SQUAD_SPLITS:
        raise ValueError(f"split must be 'train' or 'dev'; got {split!r}")
    path = fetch(SQUAD_SPLITS[split])
    return parse_squad(read_json(path, "a SQuAD v1.1 file"), source=str(path))
