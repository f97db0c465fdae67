"""The reading path shows results, not test talk: no prose line of a chapter names the test
suite, a test file, CI, "slow tests" or "never ran here". How we know sits in one collapsed
"How we know" note per chapter, which may name them."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from count_checks import prose_lines  # noqa: E402

CHAPTERS = sorted((ROOT / "book").glob("*.md"))
TEST_TALK = re.compile(
    r"tests/|\btest_\w+\.py\b|\btest suite\b|\bCI\b|slow tests|never ran here", re.IGNORECASE
)


def talk_lines(markdown: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in prose_lines(markdown, notes=False) if TEST_TALK.search(line)]


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


def test_the_word_count_reads_notes_admonitions_and_captions_but_not_code(tmp_path):
    from count_checks import prose_words

    chapter = tmp_path / "c.md"
    chapter.write_text(
        "\n".join(
            [
                "---",
                "jupytext: front matter words",
                "---",
                "One two three.",  # 3
                "```{code-cell} ipython3",
                "print('not prose')",
                "```",
                "```{admonition} Common mistakes",  # the title is options, not read twice
                ":class: warning",
                "Four five.",  # 2
                "```",
                "```{admonition} How we know",
                ":class: dropdown",
                "Six seven eight.",  # 3: the note counts
                "```",
                "```{figure} figures/x.svg",
                ":alt: alt text is not read",
                "Nine ten.",  # 2: the caption
                "```",
                "```{literalinclude} ../mlmcourse/x.py",
                ":pyobject: f",
                "```",
            ]
        ),
        encoding="utf-8",
    )
    assert prose_words(chapter) == 10


@pytest.mark.parametrize(
    "chapter",
    [
        c
        for c in CHAPTERS
        if c.stem not in {"intro", "howto", "data", "troubleshooting", "teachers"}
    ],
    ids=lambda c: c.stem,
)
def test_each_chapter_has_one_collapsed_how_we_know_note(chapter):
    text = chapter.read_text(encoding="utf-8")
    assert text.count("```{admonition} How we know\n:class: dropdown") == 1


def _course_chapters() -> list[Path]:
    """The chapters of the toc's course and "Going further" parts (not the intro, the how-to
    or the appendices)."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    parts = [p for p in toc["parts"] if p["caption"] in {"The course", "Going further"}]
    return [ROOT / f"{c['file']}.md" for p in parts for c in p["chapters"]]


def first_plain_and_listing(markdown: str) -> tuple[int | None, int | None]:
    """The line of the first code cell tagged ``plain`` or ``teaching`` (a plain version of the
    chapter's idea) and of the first package listing (``literalinclude``)."""
    plain = listing = None
    lines = markdown.split("\n")
    for number, line in enumerate(lines, start=1):
        if listing is None and line.startswith("```{literalinclude}"):
            listing = number
        tags = re.match(r":tags:\s*\[([^\]]*)\]", line)
        opened = number > 1 and lines[number - 2].startswith("```{code-cell}")
        if (
            plain is None
            and tags
            and opened
            and {"plain", "teaching"} & set(t.strip() for t in tags[1].split(","))
        ):
            plain = number
    return plain, listing


@pytest.mark.parametrize("chapter", _course_chapters(), ids=lambda c: c.stem)
def test_the_plain_version_comes_before_the_first_package_listing(chapter):
    plain, listing = first_plain_and_listing(chapter.read_text(encoding="utf-8"))
    assert plain is not None, f"{chapter.name}: no code cell tagged plain or teaching"
    assert listing is None or plain < listing, (
        f"{chapter.name}: the first package listing (line {listing}) comes before the first "
        f"plain version (line {plain}); write the idea plainly first"
    )


def test_the_plain_first_rule_finds_tagged_cells_and_listings():
    chapter = "\n".join(
        [
            "```{literalinclude} ../m.py",  # 1
            "```",
            "```{code-cell} ipython3",
            ":tags: [hide-cell, plain]",  # 4
            "x = 1",
            "```",
        ]
    )
    assert first_plain_and_listing(chapter) == (4, 1)
    assert first_plain_and_listing(":tags: [plain]\nprose") == (None, None)  # not a cell's tags
