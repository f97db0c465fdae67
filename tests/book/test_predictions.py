"""A prediction before the answer: an experiment's expected outcome is not on the screen while
the learner is asked to predict it.

An exercise with a **Predict** step has an open code cell where the learner writes the
prediction (a line assigning ``prediction``, ``my_prediction``, ``my_guess`` or a name starting
with ``predicted_``) before any cell that states what the check expects; every cell that builds
the check's cases (``Case(``, ``Satisfies(``) is collapsed (tagged ``hide-cell`` and
``expected``, which the notebooks collapse too) and comes after it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from count_checks import CELL, HIDDEN_TAGS, TAGS  # noqa: E402 - the one reader of cells

PREDICTION = re.compile(r"^(prediction|my_prediction|my_guess|predicted_\w+)\s*=", re.M)
STATES_OUTCOME = re.compile(r"\b(Case|Satisfies)\(")


def exercises(markdown: str) -> list[tuple[str, str]]:
    """``(heading, text)`` of each exercise: a ``###`` section, or a bold ``**N. Title**``
    paragraph, after ``## Exercises``."""
    _, _, section = markdown.partition("\n## Exercises")
    parts = re.split(r"^(### .+|\*\*\d+\. [^*]+\*\*)", section, flags=re.M)
    return [(parts[i].strip("#* "), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


def prediction_problems(text: str) -> list[str]:
    """What is wrong with an exercise's order of prediction and expectation (empty: nothing)."""
    if "**Predict" not in text:
        return []
    problems, predicted = [], False
    for match in CELL.finditer(text):
        tags = TAGS.search(match[1])
        names = {t.strip() for t in tags[1].split(",")} if tags else set()
        hidden = bool(names & HIDDEN_TAGS)
        if "hidden-tests" in names:
            continue  # the grader's, never shown
        if PREDICTION.search(match[1]) and not hidden:
            predicted = True
        elif STATES_OUTCOME.search(match[1]):
            if not hidden or "expected" not in names:
                problems.append(
                    "a cell not tagged hide-cell, expected states what the check expects"
                )
            elif not predicted:
                problems.append("the expected outcome comes before the open prediction cell")
    if not predicted:
        problems.append("no open cell for the learner's prediction")
    return problems


def _chapters() -> list[Path]:
    return sorted(p for p in (ROOT / "book").glob("*.md") if "## Exercises" in p.read_text())


@pytest.mark.parametrize("chapter", _chapters(), ids=lambda p: p.stem)
def test_every_experiment_asks_for_a_prediction_before_it_shows_the_outcome(chapter):
    found = {
        heading: problems
        for heading, text in exercises(chapter.read_text(encoding="utf-8"))
        if (problems := prediction_problems(text))
    }
    assert not found, f"{chapter.name}: {found}"


def test_the_prediction_rule_finds_an_outcome_shown_too_early():
    open_cell = "```{code-cell} ipython3\nmy_prediction = '?'\n```\n"
    cases = (
        "```{code-cell} ipython3\n:tags: [hide-cell, expected]\n\nCASES = [Case(args=(1,))]\n```\n"
    )
    shown = "```{code-cell} ipython3\nCASES = [Case(args=(1,), expected=Satisfies('x', f))]\n```\n"
    predict = "- **Predict.** What will it be?\n\n"
    assert prediction_problems(predict + open_cell + cases) == []
    assert prediction_problems(predict + shown) == [
        "a cell not tagged hide-cell, expected states what the check expects",
        "no open cell for the learner's prediction",
    ]
    assert prediction_problems(predict + cases + open_cell) == [
        "the expected outcome comes before the open prediction cell"
    ]
    assert prediction_problems("no experiment here\n" + shown) == []
    chapter = "intro\n\n## Exercises\n\n### 1. One\n\ntext\n\n**2. Two** more\n"
    assert [h for h, _ in exercises(chapter)] == ["1. One", "2. Two"]
