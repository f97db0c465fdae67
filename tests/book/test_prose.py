"""The reading path shows results, not test talk: no prose line of a chapter names the test
suite, a test file, CI, "slow tests" or "never ran here". How we know sits in one collapsed
"How we know" note per chapter, which may name them."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))
TEST_TALK = re.compile(
    r"tests/|\btest_\w+\.py\b|\btest suite\b|\bCI\b|slow tests|never ran here", re.IGNORECASE
)
FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\{[\w-]+\})?\s*(.*)$")
CODE = {None, "{code-cell}", "{code-block}", "{code}", "{literalinclude}", "{math}"}


def prose_lines(markdown: str) -> list[tuple[int, str]]:
    """``(line number, text)`` of each line a reader reads as prose: outside code cells, code
    blocks and listings, and outside the "How we know" note (admonitions are prose)."""
    found: list[tuple[int, str]] = []
    stack: list[tuple[str, bool]] = []  # the open blocks: (fence, holds prose)
    for number, line in enumerate(markdown.split("\n"), start=1):
        match = FENCE.match(line.strip())
        if match and stack and not (match[2] or match[3]) and _closes(match[1], stack[-1][0]):
            stack.pop()
            continue
        if match:
            directive = match[2]
            note = directive == "{admonition}" and match[3].strip() == "How we know"
            prose = (not stack or stack[-1][1]) and directive not in CODE and not note
            stack.append((match[1], prose))
            continue
        if (not stack or stack[-1][1]) and not line.startswith(":"):
            found.append((number, line))
    return found


def _closes(fence: str, opening: str) -> bool:
    return fence[0] == opening[0] and len(fence) >= len(opening)


def talk_lines(markdown: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in prose_lines(markdown) if TEST_TALK.search(line)]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_no_prose_line_narrates_the_tests(chapter):
    found = talk_lines(chapter.read_text(encoding="utf-8"))
    assert not found, "\n".join(f"{chapter.name}:{n}: {line.strip()}" for n, line in found)


def test_the_rule_reads_prose_and_admonitions_but_not_code_or_the_note():
    chapter = "\n".join(
        [
            "Intro, as `tests/x.py` shows.",  # 1: prose
            "```{code-cell} ipython3",
            "# tests/book/test_chapter_runs.py runs this",  # code
            "```",
            "```{admonition} Common mistakes",
            ":class: warning",
            "",
            "In CI this fails.",  # 8: an admonition is prose
            "```",
            "```{admonition} How we know",
            ":class: dropdown",
            "",
            "- `tests/checkpoint/test_shipped.py` re-runs it; the slow tests too.",  # the note
            "```",
            "```python",
            "pytest tests/",  # a code block
            "```",
            "It never ran here.",  # 18: prose
        ]
    )
    assert [n for n, _ in talk_lines(chapter)] == [1, 8, 18]
