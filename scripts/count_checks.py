"""Count the checks a reader sees in the book's code cells, and each chapter's prose words.

A check is a line that proves rather than teaches: an ``assert``, a ``torch.testing`` or
``np.testing`` call, an exercise's ``check(...)`` or a call of a helper whose name starts
with ``assert``. A cell is visible unless its tags hide or remove it (``hide-cell``,
``remove-cell``, ``hide-input``, ``hidden-tests``); the collapsed check cells are counted apart.
Prose words are every word a reader reads: prose, admonitions, notes and figure captions.

    python scripts/count_checks.py            # per chapter (and its prose words), then totals
    python scripts/count_checks.py --total    # one line: visible, collapsed
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

BOOK = Path(__file__).resolve().parent.parent / "book"
HIDDEN_TAGS = {"hide-cell", "remove-cell", "hide-input", "hidden-tests"}
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.S | re.M)
TAGS = re.compile(r"^:tags:\s*\[([^\]]*)\]", re.M)
CHECK = re.compile(
    r"^\s*assert\b"  # an assert statement
    r"|\b(?:np|numpy|torch)\.testing\."  # numpy's and torch's comparisons
    r"|^\s*(?:\w+\s*=\s*)?check\("  # an exercise's check(...)
    r"|^\s*(?:\w+\.)*assert_\w*\(",  # a helper that asserts
    re.M,
)


def cells(text: str) -> list[tuple[set[str], str]]:
    """(tags, source) of every code cell of a MyST notebook."""
    found = []
    for match in CELL.finditer(text):
        body = match.group(1)
        tags = TAGS.search(body)
        names = {t.strip().strip("'\"") for t in tags.group(1).split(",")} if tags else set()
        found.append((names, body))
    return found


FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\{[\w-]+\})?\s*(.*)$")
CODE = {None, "{code-cell}", "{code-block}", "{code}", "{literalinclude}", "{math}"}
NOTE = "How we know"
WORD = re.compile(r"[A-Za-z0-9]+(?:[-'.][A-Za-z0-9]+)*")


def prose_lines(markdown: str, *, notes: bool = True) -> list[tuple[int, str]]:
    """``(line number, text)`` of each line a reader reads as prose.

    Code cells, code blocks, listings, maths and directive options (``:alt:``) are not prose;
    admonitions and figure captions are. ``notes=False`` also leaves out the collapsed
    "How we know" note, the one place where the course may say which test shows what.
    """
    found: list[tuple[int, str]] = []
    stack: list[tuple[str, bool]] = []  # the open blocks: (fence, holds prose)
    for number, line in enumerate(markdown.split("\n"), start=1):
        match = FENCE.match(line.strip())
        if match and stack and not (match[2] or match[3]) and _closes(match[1], stack[-1][0]):
            stack.pop()
            continue
        if match:
            directive = match[2]
            note = directive == "{admonition}" and match[3].strip() == NOTE
            prose = (not stack or stack[-1][1]) and directive not in CODE and (notes or not note)
            stack.append((match[1], prose))
            continue
        if (not stack or stack[-1][1]) and not line.startswith(":"):
            found.append((number, line))
    return found


def _closes(fence: str, opening: str) -> bool:
    return fence[0] == opening[0] and len(fence) >= len(opening)


def prose_words(path: Path) -> int:
    """The words a reader reads: prose, admonitions, "How we know" notes and figure captions;
    not code, listings, directive options or the front matter."""
    text = path.read_text(encoding="utf-8")
    front = FRONT_MATTER.match(text)
    lines = prose_lines(text[front.end() if front else 0 :])
    return sum(len(WORD.findall(line)) for _, line in lines)


def count(path: Path) -> tuple[int, int]:
    """(checks in visible cells, checks in hidden or collapsed cells) of one chapter."""
    visible = hidden = 0
    for tags, source in cells(path.read_text(encoding="utf-8")):
        n = len(CHECK.findall(source))
        if tags & HIDDEN_TAGS:
            hidden += n
        else:
            visible += n
    return visible, hidden


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total", action="store_true", help="print only the two totals")
    args = parser.parse_args(argv)
    totals = [0, 0]
    for path in sorted(BOOK.glob("*.md")):
        visible, hidden = count(path)
        totals[0] += visible
        totals[1] += hidden
        if not args.total:
            print(
                f"{path.stem:21} visible {visible:4}   hidden or collapsed {hidden:4}   "
                f"prose words {prose_words(path):5}"
            )
    print(f"{'total':21} visible {totals[0]:4}   hidden or collapsed {totals[1]:4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
