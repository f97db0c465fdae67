"""No exercise's answer is on the page: a reference solution that repeats code the chapter
shows above its exercises teaches transcription, not the idea.

Each solution (between ``### BEGIN SOLUTION`` and ``### END SOLUTION``) is compared, token by
token, with every block a learner sees above the chapter's ``## Exercises``: the visible code
cells and the package listings (``literalinclude`` with ``:pyobject:``). Tokens are Python's,
with comments and layout dropped and every string and number written alike. A solution is a
near-copy of a block when :data:`SHARE` or more of its tokens lie in runs of :data:`RUN` or more
tokens that the block also has. (A formula, table or rule copied from the prose is checked by
reading.)
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from count_checks import CELL, HIDDEN_TAGS, TAGS  # noqa: E402 - the one reader of cells

RUN, SHARE = 6, 0.4
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
LISTING = re.compile(r"^```\{literalinclude\}\s*(\S+)\n((?::[^\n]*\n)*)", re.M)
LAYOUT = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
          tokenize.ENDMARKER, tokenize.ENCODING}  # fmt: skip


def tokens(source: str) -> list[str]:
    """``source``'s Python tokens without comments or layout; strings and numbers alike."""
    import textwrap

    source = textwrap.dedent(source)
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in LAYOUT:
                continue
            if tok.type == tokenize.STRING or getattr(tokenize, "FSTRING_START", -1) == tok.type:
                found.append("<str>")
            elif tok.type == tokenize.NUMBER:
                found.append("<num>")
            elif tok.type in (getattr(tokenize, "FSTRING_MIDDLE", -1),
                              getattr(tokenize, "FSTRING_END", -1)):  # fmt: skip
                continue
            else:
                found.append(tok.string)
    except (tokenize.TokenError, IndentationError):
        pass  # a cell with IPython syntax: what was read so far is compared
    return found


def shared_share(solution: list[str], block: list[str]) -> float:
    """The share of ``solution``'s tokens inside runs of :data:`RUN` or more tokens that
    ``block`` has too."""
    if len(solution) < RUN:
        return 0.0
    grams = {tuple(block[i : i + RUN]) for i in range(len(block) - RUN + 1)}
    covered = [False] * len(solution)
    for i in range(len(solution) - RUN + 1):
        if tuple(solution[i : i + RUN]) in grams:
            covered[i : i + RUN] = [True] * RUN
    return sum(covered) / len(solution)


def pyobject_source(path: Path, name: str) -> str:
    """The source of ``name`` (``function``, ``Class`` or ``Class.method``) in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scope: list[ast.stmt] = tree.body
    node = None
    for part in name.split("."):
        node = next(n for n in scope if getattr(n, "name", None) == part)
        scope = getattr(node, "body", [])
    return ast.get_source_segment(path.read_text(encoding="utf-8"), node)


def visible_blocks(markdown: str) -> list[tuple[str, list[str]]]:
    """``(where, tokens)`` of each code cell without a hiding tag and each listing."""
    blocks = []
    for match in CELL.finditer(markdown):
        tags = TAGS.search(match[1])
        names = {t.strip() for t in tags[1].split(",")} if tags else set()
        if not names & HIDDEN_TAGS:
            line = markdown[: match.start()].count("\n") + 1
            blocks.append((f"the code cell at line {line}", tokens(_code(match[1]))))
    for match in LISTING.finditer(markdown):
        options = dict(re.findall(r"^:(\w+):\s*(.*)$", match[2], re.M))
        if "pyobject" in options:
            path = (ROOT / "book" / match[1]).resolve()
            source = pyobject_source(path, options["pyobject"])
            blocks.append((f"the listing {options['pyobject']}", tokens(source)))
    return blocks


def _code(cell: str) -> str:
    """A cell's Python: its option lines (``:tags:``, a ``---`` block) dropped."""
    lines = cell.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        lines = lines[end + 1 :]
    return "\n".join(line for line in lines if not line.startswith(":"))


def solutions(markdown: str) -> list[tuple[str, str]]:
    """``(exercise heading, solution source)`` of each reference solution."""
    found = []
    for match in SOLUTION.finditer(markdown):
        headings = re.findall(r"^### (.+)$", markdown[: match.start()], re.M)
        found.append((headings[-1] if headings else "?", match[1]))
    return found


def near_copies(markdown: str) -> list[str]:
    """Every (solution, block) pair of the chapter where the solution is a near-copy."""
    body, _, exercises = markdown.partition("\n## Exercises")
    blocks = visible_blocks(body)
    found = []
    for heading, source in solutions(exercises):
        solution = tokens(source)
        for where, block in blocks:
            share = shared_share(solution, block)
            if share >= SHARE:
                found.append(f"{heading!r} repeats {share:.0%} of its tokens from {where}")
    return found


def _chapters() -> list[Path]:
    return sorted(p for p in (ROOT / "book").glob("*.md") if "## Exercises" in p.read_text())


@pytest.mark.parametrize("chapter", _chapters(), ids=lambda p: p.stem)
def test_no_exercise_solution_repeats_code_the_chapter_shows(chapter):
    copies = near_copies(chapter.read_text(encoding="utf-8"))
    assert not copies, f"{chapter.name}: " + "; ".join(copies)


def test_the_copy_rule_finds_a_transcription_and_passes_new_code():
    shown = (
        "def f(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"
    )
    renamed = "    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"
    fresh = "    return max((len(w), w) for w in words if w.isalpha())[1]\n"
    chapter = (f"```{{code-cell}} ipython3\n{shown}```\n\n## Exercises\n\n### 1. Squares\n\n"
               f"```{{code-cell}} ipython3\n:tags: [hide-cell]\n\ndef f(xs):\n"
               f"    ### BEGIN SOLUTION\n{renamed}    ### END SOLUTION\n```\n\n### 2. Longest\n\n"
               f"```{{code-cell}} ipython3\n:tags: [hide-cell]\n\ndef g(words):\n"
               f"    ### BEGIN SOLUTION\n{fresh}    ### END SOLUTION\n```\n")  # fmt: skip
    (copy,) = near_copies(chapter)
    assert copy.startswith("'1. Squares' repeats 100% of its tokens from the code cell at line 1")
    assert keyword.iskeyword("for") and tokens("x = 'a'  # note\n") == ["x", "=", "<str>"]
