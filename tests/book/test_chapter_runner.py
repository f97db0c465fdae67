"""The chapter runner's parts: which cells a plain install runs, and the book's execution cache.

``scripts/test_notebooks.py`` executes every chapter once from the wheel; these are the pieces
it relies on, checked without executing anything: the plain-install slice of a chapter
(``scripts/optional_cells.py``) and the cache the book build renders from
(``scripts/book_cache.py``), current only while both the chapter's code and the package are.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import book_cache  # noqa: E402
import make_notebooks as mn  # noqa: E402
from optional_cells import plain_install_cells  # noqa: E402

# --- The plain-install slice ------------------------------------------------------------------


def test_a_chapter_without_optional_parts_has_no_plain_install_cells():
    assert plain_install_cells(["import torch", "x = torch.zeros(2)", "print(x)"]) == []


def test_the_slice_holds_the_optional_cell_and_what_its_plain_path_needs():
    cells = [
        "import torch\nfrom mlmcourse.utils.runtime import optional_import",  # 0: needed (imports)
        "model = train_for_ten_minutes()",  # 1: only the guarded branch uses it
        "sentence = 'a b c'",  # 2: the else branch uses it
        "unrelated = 3",  # 3
        "tf = optional_import('transformers', 'the comparison')\n"
        "if tf is not None:\n    print(model(sentence))\nelse:\n    print('skipped', sentence)",
        "if tf is not None:\n    print(tf.__version__)",  # 5: uses the optional name
    ]
    assert plain_install_cells(cells) == [0, 2, 4, 5]


def test_needs_are_followed_back_to_the_last_cell_that_binds_a_name():
    cells = [
        "from mlmcourse.utils.runtime import optional_import",
        "a = 1",
        "a = 2\nb = a + 1",  # the last binder of `a` before cell 3, and it needs `a` itself
        "x = optional_import('seqeval', 'scores')\nprint(b)",
    ]
    assert plain_install_cells(cells) == [0, 1, 2, 3]


def test_magics_do_not_stop_the_analysis():
    cells = ["%matplotlib inline\nfrom mlmcourse.utils.runtime import optional_import",
             "x = optional_import('transformers', 'y')"]  # fmt: skip
    assert plain_install_cells(cells) == [0, 1]


@pytest.mark.parametrize("chapter", [p.stem for p in mn.chapter_sources()])
def test_every_optional_cell_of_a_chapter_is_in_its_slice(chapter):
    code = [c.source for c in mn.editions(ROOT / "book" / f"{chapter}.md", mn.read_release())[
        "colab"].cells if c.cell_type == "code"][1:]  # fmt: skip
    kept = plain_install_cells(code)
    touching = [i for i, source in enumerate(code) if "optional_import(" in source]
    assert set(touching) <= set(kept)
    # the slice is the point: a chapter's optional parts never need most of the chapter
    assert len(kept) <= max(2, len(code) // 2), (chapter, kept)


# --- The book's execution cache ---------------------------------------------------------------

CHAPTER = """\
---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter

```{code-cell} ipython3
x = 6 * 7
```

Prose.

```{code-cell} ipython3
print(x)
```
"""


@pytest.fixture
def project(tmp_path):
    """A tiny project: _config.yml, one chapter, a package folder."""
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "x.md").write_text(CHAPTER)
    (tmp_path / "mlmcourse").mkdir()
    (tmp_path / "mlmcourse" / "__init__.py").write_text('__version__ = "0"\n')
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return tmp_path


def _executed(root: Path) -> nbformat.NotebookNode:
    """A learner's run of the chapter: an install cell first, then its two code cells."""
    nb = nbformat.v4.new_notebook()
    outputs = [[], [], [nbformat.v4.new_output("stream", name="stdout", text="42\n")]]
    for i, (source, out) in enumerate(
        zip(["# install", "x = 6 * 7", "print(x)"], outputs, strict=True)
    ):
        nb.cells.append(nbformat.v4.new_code_cell(source, execution_count=i + 1, outputs=out))
    return nb


def test_the_package_key_follows_the_package_files_only(project):
    key = book_cache.package_key(project)
    (project / "book" / "x.md").write_text(CHAPTER + "\nMore prose.\n")
    assert book_cache.package_key(project) == key
    (project / "mlmcourse" / "__init__.py").write_text('__version__ = "1"\n')
    assert book_cache.package_key(project) != key


def test_a_stored_run_is_current_until_the_code_or_the_package_changes(project):
    cache = project / "_build" / ".jupyter_cache"
    chapter = project / "book" / "x.md"
    key = book_cache.package_key(project)
    assert book_cache.stale(key, cache, project) == [chapter]
    book_cache.store(chapter, _executed(project), key, seconds=1.0, cache_dir=cache, root=project)
    assert book_cache.stale(key, cache, project) == []
    # prose is not code: the outputs stay current
    chapter.write_text(CHAPTER.replace("Prose.", "Other prose."))
    assert book_cache.stale(key, cache, project) == []
    # another package: stale, and prune removes it
    assert book_cache.stale("another", cache, project) == [chapter]
    assert book_cache.prune("another", cache) == 1
    assert book_cache.stale(key, cache, project) == [chapter]
    # a code cell edited: stale
    book_cache.store(chapter, _executed(project), key, cache_dir=cache, root=project)
    chapter.write_text(CHAPTER.replace("print(x)", "print(x + 1)"))
    assert book_cache.stale(key, cache, project) == [chapter]


def test_the_cached_notebook_is_the_chapter_with_the_learner_runs_outputs(project):
    cache = project / "_build" / ".jupyter_cache"
    chapter = project / "book" / "x.md"
    book_cache.store(chapter, _executed(project), "k", cache_dir=cache, root=project)
    from jupyter_cache import get_cache

    # what myst-nb does at build time: match the chapter as it reads it, merge the outputs
    _, merged = get_cache(str(cache)).merge_match_into_notebook(
        book_cache.book_notebook(chapter, project)
    )
    code = [c for c in merged.cells if c.cell_type == "code"]
    assert [c.source for c in code] == ["x = 6 * 7", "print(x)"]
    assert code[1].outputs[0]["text"] == "42\n" and [c.execution_count for c in code] == [1, 2]


def test_a_run_of_another_shape_is_refused(project):
    executed = _executed(project)
    executed.cells.pop()
    with pytest.raises(ValueError, match="has 1 code cells after its first 1, the chapter 2"):
        book_cache.with_outputs(project / "book" / "x.md", executed, root=project)


def test_stamp_marks_what_the_build_executed(project):
    cache = project / "_build" / ".jupyter_cache"
    chapter = project / "book" / "x.md"
    book_cache.store(chapter, _executed(project), "k", cache_dir=cache, root=project)
    stamps = cache / book_cache.STAMPS
    stamps.write_text("{}")  # as if the build had executed it: no stamp yet
    assert book_cache.stamp("k", cache) == 1
    assert book_cache.stale("k", cache, project) == []


@pytest.mark.parametrize("chapter", [p.stem for p in mn.chapter_sources()])
def test_each_chapters_learner_notebook_maps_onto_the_book_cell_for_cell(chapter):
    """The runner caches the Colab notebook's outputs for the book: same code, same order."""
    path = ROOT / "book" / f"{chapter}.md"
    colab = mn.editions(path, mn.read_release())["colab"]
    ours = book_cache.code_cells(book_cache.book_notebook(path))
    theirs = book_cache.code_cells(colab)[1:]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        # the Colab edition adds a form title to solutions and drops the solution markers
        assert (
            mn.strip_markers(a.source).strip() in b.source or a.source.strip() == b.source.strip()
        )
