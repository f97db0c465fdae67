"""Let nbval execute the book's chapters straight from their jupytext ``.md`` sources.

nbval only collects ``.ipynb`` files. Here a chapter ``book/*.md`` is read into a notebook by
jupytext and handed to nbval's own collector, so `pytest --nbval-lax book` runs every chapter
and a broken cell fails as ``book/<chapter>.md::Cell N``. The generated Colab notebooks
(``book/*.ipynb``) are the same chapters, so they are not collected a second time.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest

collect_ignore_glob = ["book/*.ipynb", "_build/*", ".venv/*", "_widgets_js/*"]


def _is_jupytext_markdown(path: Path) -> bool:
    return path.suffix == ".md" and "jupytext:" in path.read_text(encoding="utf-8")[:500]


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    opt = parent.config.option
    if not (getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False)):
        return None
    if file_path.parent.name != "book" or not _is_jupytext_markdown(file_path):
        return None
    from nbval.plugin import IPyNbFile

    class MarkdownNotebook(IPyNbFile):
        """nbval's collector, fed by jupytext instead of nbformat."""

        def collect(self):
            import jupytext
            import nbval.plugin

            notebook = jupytext.read(self.path)
            with mock.patch.object(nbval.plugin.nbformat, "read", lambda *a, **k: notebook):
                yield from super().collect()

    return MarkdownNotebook.from_parent(parent, path=file_path)
