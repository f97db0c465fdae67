"""Write a Colab-ready ``book/<chapter>.ipynb`` next to every chapter ``book/<chapter>.md``.

sphinx-book-theme's Colab button opens ``book/<chapter>.ipynb`` when that file sits next to the
chapter, so these generated notebooks are committed. Each one starts with a cell that installs
the package when it is missing. ``--check`` exits non-zero when a committed notebook is stale
(the test suite runs it).

    python scripts/make_notebooks.py          # regenerate
    python scripts/make_notebooks.py --check  # fail if any notebook is stale or missing
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"

INSTALL_CELL = """\
# Install the course package when it is missing (on Colab, or in a fresh environment).
try:
    import mlmcourse  # noqa: F401
except ImportError:
    %pip install -q mlmcourse"""


def chapter_sources() -> list[Path]:
    """Every jupytext chapter in ``book/``."""
    return sorted(p for p in BOOK.glob("*.md") if "jupytext" in p.read_text(encoding="utf-8")[:500])


def render(source: Path) -> str:
    """The notebook text for one chapter: the install cell, then the chapter's cells, no outputs."""
    nb = jupytext.read(source)
    install = nbformat.v4.new_code_cell(INSTALL_CELL, metadata={"tags": ["remove-cell"]})
    nb.cells.insert(0, install)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{source.stem}-{i:03d}"  # stable ids keep the files diff-friendly
        cell.metadata.pop("lines_to_next_cell", None)
    nb.metadata.pop("jupytext", None)
    nb.metadata["colab"] = {"provenance": [], "name": f"{source.stem}.ipynb"}
    nb.metadata.setdefault("language_info", {"name": "python"})
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nbformat.writes(nb) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale notebooks")
    args = parser.parse_args(argv)
    stale = []
    sources = chapter_sources()
    expected = {source.with_suffix(".ipynb") for source in sources}
    for source in sources:
        target = source.with_suffix(".ipynb")
        text = render(source)
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target)
        if not args.check:
            target.write_text(text, encoding="utf-8")
    orphans = [p for p in BOOK.glob("*.ipynb") if p not in expected]
    for orphan in orphans:
        stale.append(orphan)
        if not args.check:
            orphan.unlink()
    if args.check and stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"stale notebooks: {names}; run `make notebooks`", file=sys.stderr)
        return 1
    if not args.check:
        print(f"{len(sources)} notebooks up to date ({len(stale)} written or removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
