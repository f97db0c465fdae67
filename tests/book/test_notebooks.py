"""The notebooks learners open: self-contained, solutions absent (students) or collapsed (Colab),
graded the way nbgrader grades, and installing the right package.

Executing the chapters from the built wheel in a fresh environment is
``scripts/test_notebooks.py``, which ``make test`` runs after this suite; the classroom
assignments (the student and instructor editions) are executed and autograded by nbgrader in
``tests/course/test_assignments.py``.
"""

from __future__ import annotations

import ast
import base64
import html
import json
import re
import subprocess
import sys
import zipfile
from functools import cache
from pathlib import Path

import pytest
from sphinx.config import Config
from sphinx.directives.code import LiteralIncludeReader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import make_diagrams  # noqa: E402
import make_notebooks as mn  # noqa: E402
from myst_markdown import RAW_MYST, Context, MystConversionError, to_commonmark  # noqa: E402

CHAPTERS = mn.chapter_sources()
IDS = [p.stem for p in CHAPTERS]
# The check the team's pre-stop hook runs over book/*.ipynb, kept word for word.
HOOK_RAW_MYST = re.compile(r"^(```|:::)\{|\{(doc|ref|numref|glue)[:}]", re.M)


@cache
def editions(stem: str) -> dict:
    return mn.editions(ROOT / "book" / f"{stem}.md", mn.read_release())


def code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def markdown(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


# --- Self-contained markdown -------------------------------------------------------------------


@pytest.mark.parametrize("stem", IDS)
def test_no_myst_syntax_is_left_in_any_edition(stem):
    for edition, nb in editions(stem).items():
        for text in markdown(nb):
            for pattern in (RAW_MYST, HOOK_RAW_MYST):
                match = pattern.search(text)
                assert match is None, f"{stem} ({edition}): raw MyST {text[match.start() :][:80]!r}"


@pytest.mark.parametrize("stem", IDS)
def test_every_listing_is_in_the_notebook_and_names_its_source(stem):
    source = (ROOT / "book" / f"{stem}.md").read_text(encoding="utf-8")
    includes = re.findall(r"```\{literalinclude\} \.\./(\S+)\n((?::[^\n]*\n)*)```", source)
    text = "\n".join(markdown(editions(stem)["colab"]))
    shown = 0
    for path, option_lines in includes:
        options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", option_lines, re.M))
        obj = options.get("pyobject")
        if obj is None:
            continue
        shown += 1
        assert f"[`{path}`](" in text and f"`{obj}`:" in text, (path, obj)
        # the listing holds the lines the book shows, as Sphinx reads them
        if "dedent" in options:
            options["dedent"] = int(options["dedent"])
        code, _ = LiteralIncludeReader(str(ROOT / path), options, Config({}, {})).read()
        assert f"```python\n{code.rstrip()}\n```" in text, obj
        if not {"start-after", "end-before", "lines"} & set(options):  # the whole definition
            name = obj.split(".")[-1]
            assert re.search(rf"```python\n\s*(@.*\n\s*)*(async )?(def|class) {name}\b", text)
    assert text.count("```python\n") >= shown


def test_committed_colab_notebooks_hold_the_listings():
    """The shipped book/*.ipynb are the converted ones (the staleness test pins the rest)."""
    nb = json.loads((ROOT / "book" / "masking.ipynb").read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "def choose_each(" in text and "literalinclude" not in text


def _context(tmp_path: Path) -> Context:
    chapter = tmp_path / "book" / "x.md"
    chapter.parent.mkdir(parents=True, exist_ok=True)
    return Context(chapter, tmp_path, "https://example.org/book/", "https://git.example/blob/v1/")


def test_admonitions_roles_and_links_become_commonmark(tmp_path):
    text = (
        "See [masking](masking.md#why) and {doc}`the encoder <encoder>` or {doc}`pretraining`.\n"
        "(my-label)=\n"
        "```{admonition} Common mistakes\n:class: warning\n\nDo not do `{this}` here.\n```\n"
        "```{note}\nA note with {math}`x^2`.\n```\n"
        "```python\nprint('{doc}`kept as code`')\n```"
    )
    out = to_commonmark(text, _context(tmp_path))
    assert "[masking](https://example.org/book/book/masking.html#why)" in out
    assert "[the encoder](https://example.org/book/book/encoder.html)" in out
    assert "[pretraining](https://example.org/book/book/pretraining.html)" in out
    assert "> **Common mistakes**" in out and "> Do not do `{this}` here." in out
    assert "> **Note**" in out and "$x^2$" in out
    assert "print('{doc}`kept as code`')" in out  # code blocks are not rewritten
    assert "(my-label)=" not in out


@pytest.mark.parametrize(
    "text, message",
    [
        ("```{image} a.png\n```", "the directive {image}"),
        ("```{figure} a.svg\n:alt: a picture\n```", "the figure a.svg does not exist"),
        ("Text with {abbr}`MLM (masked)`.", "the role {abbr}"),
        ("```{admonition} never closed\ntext", "never closed"),
        ("```{literalinclude} missing.py\n```", "missing file"),
        ("```{figure} no_alt.svg\n```", "has no :alt: text"),
    ],
)
def test_unconvertible_myst_is_an_error_naming_the_chapter_and_line(tmp_path, text, message):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "no_alt.svg").write_text("<svg/>")
    with pytest.raises(MystConversionError, match=re.escape(message)) as info:
        to_commonmark(text, _context(tmp_path))
    assert "x.md, markdown line" in str(info.value)


# --- Install cell ------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", IDS)
def test_checks_of_the_texts_claims_start_collapsed(stem):
    """Proof out of the reading path: check cells are hidden in the book and collapsed here."""
    colab = editions(stem)["colab"]
    for cell in colab.cells:
        if mn.is_checks(cell):
            assert "hide-cell" in mn.tags(cell)
            assert cell.source.startswith(mn.CHECKS_TITLE)
            assert cell.metadata["jupyter"] == {"source_hidden": True}


@pytest.mark.parametrize("stem", IDS)
def test_every_figure_is_embedded_with_its_alt_text(stem):
    """A learner's notebook has no figures/ folder: each picture travels inside its cell."""
    figures = make_diagrams.chapter_figures(ROOT / "book" / f"{stem}.md")
    for edition in ("colab", "instructor", "student"):  # the classroom editions too
        text = "\n".join(markdown(editions(stem)[edition]))
        for src, alt in figures:
            svg = (ROOT / "book" / src).read_bytes()
            data = base64.b64encode(svg).decode("ascii")
            image = f'<img src="data:image/svg+xml;base64,{data}" alt="{html.escape(alt)}"'
            assert image in text, (edition, src)
        assert text.count("data:image/svg+xml;base64,") == len(figures), edition


@pytest.mark.parametrize("stem", IDS)
def test_every_edition_starts_by_installing_this_exact_version(stem):
    release = mn.read_release()
    for edition, nb in editions(stem).items():
        first = nb.cells[0].source
        assert f'MLMCOURSE_VERSION = "{release.version}"' in first, edition
        assert 'f"mlmcourse[course]=={MLMCOURSE_VERSION}"' in first
        assert f"git+{release.repository}@v{{MLMCOURSE_VERSION}}" in first
        compile(first, f"{stem}-install", "exec")


def test_the_install_cell_does_nothing_when_the_version_is_installed():
    import mlmcourse

    cell = mn.install_cell(mn.read_release())
    calls = []
    namespace = {}
    real_run = subprocess.run
    subprocess.run = lambda *a, **k: calls.append(a)  # must not be reached
    try:
        exec(compile(cell, "install", "exec"), namespace)
    finally:
        subprocess.run = real_run
    assert namespace["installed"] == mlmcourse.__version__ and calls == []


# --- Exercises: student, instructor, Colab -----------------------------------------------------


def _solution_cells(nb):
    return [c for c in nb.cells if mn.is_solution(c)]


def _solution_lines(nb) -> set[str]:
    """Lines of solution regions that appear nowhere else in the chapter."""
    inside, lines = False, set()
    for cell in _solution_cells(nb):
        for line in cell.source.split("\n"):
            if mn.BEGIN in line:
                inside = True
            elif mn.END in line:
                inside = False
            elif inside and line.strip() and not line.strip().startswith("#"):
                lines.add(line.strip())
    rest = "\n".join(c.source for c in nb.cells if not mn.is_solution(c))
    return {line for line in lines if line not in rest}


@pytest.mark.parametrize("stem", IDS)
def test_no_solution_code_is_in_the_student_notebook(stem):
    instructor, student = editions(stem)["instructor"], editions(stem)["student"]
    secret = _solution_lines(instructor)
    if stem != "intro" or _solution_cells(instructor):
        assert secret, f"{stem}: no solution found"
    text = "\n".join(c.source for c in student.cells)
    leaked = [line for line in secret if line in text]
    assert not leaked, f"{stem}: solution lines in the student notebook: {leaked}"
    for cell in _solution_cells(instructor):
        stub = student.cells[instructor.cells.index(cell)].source
        assert "raise NotImplementedError()" in stub and mn.BEGIN not in stub
        compile(stub, f"{stem}-stub", "exec")


@pytest.mark.parametrize("stem", IDS)
def test_every_solution_is_graded_and_no_later_cell_uses_it(stem):
    nb = editions(stem)["instructor"]
    solved = {}
    for i, cell in enumerate(nb.cells):
        if mn.is_solution(cell):
            for name in mn.solution_names(cell):
                solved[name] = i
    graded = set()
    for i, cell in enumerate(nb.cells):
        call = mn.graded_call(cell)
        if call is not None:
            graded.add(ast.unparse(call.args[0]))
            assert cell.metadata["nbgrader"]["grade"] and cell.metadata["nbgrader"]["locked"]
            assert cell.metadata["nbgrader"]["points"] > 0
            continue
        if mn.is_solution(cell) and cell.metadata["nbgrader"]["grade"]:  # graded by hand
            assert cell.metadata["nbgrader"]["points"] > 0
            graded.update(mn.solution_names(cell))
        if mn.is_solution(cell) or cell.cell_type != "code":
            continue
        for name, at in solved.items():
            # A learner's answer is only ever called by the checker: nothing later needs it.
            if i > at and re.search(rf"\b{name}\s*\(", cell.source):
                assert re.search(rf"^def {name}\(", cell.source, re.M), (stem, name, i)
    assert set(solved) <= graded, f"{stem}: solutions without a graded cell: {set(solved) - graded}"


@pytest.mark.parametrize("stem", IDS)
def test_colab_solutions_start_collapsed_and_keep_their_code(stem):
    colab = editions(stem)["colab"]
    chapter = mn.base_notebook(ROOT / "book" / f"{stem}.md", mn.read_release())
    assert len(colab.cells) == len(chapter.cells)  # the whole chapter, cell for cell
    solutions = _solution_cells(chapter)
    if stem != "intro" or solutions:
        assert solutions, f"{stem}: no solution found"
    for cell in solutions:
        shown = colab.cells[chapter.cells.index(cell)]
        assert shown.source.startswith("#@title Solution")
        assert 'display-mode: "form"' in shown.source.split("\n")[0]
        assert shown.metadata["jupyter"] == {"source_hidden": True}
        assert mn.BEGIN not in shown.source
        assert shown.source.split("\n", 1)[1] == mn.strip_markers(cell.source)


def test_classroom_writes_both_editions_and_a_zip_of_each(tmp_path):
    mn.write_classroom(tmp_path)
    version = mn.read_release().version
    for edition in ("student", "instructor"):
        names = sorted(p.name for p in (tmp_path / edition).glob("*.ipynb"))
        assert names == sorted(f"{s}.ipynb" for s in IDS)
        archive = zipfile.ZipFile(tmp_path / f"mlmcourse-{version}-{edition}.zip")
        assert sorted(Path(n).name for n in archive.namelist()) == names
        for name in names:  # the assignments: each chapter's exercises, as editions() makes them
            written = (tmp_path / edition / name).read_text(encoding="utf-8")
            assert written == mn.dumps(editions(Path(name).stem)[edition])


# --- What a plain `pip install mlmcourse` can run ----------------------------------------------

CORE = {"mlmcourse", "torch", "numpy", "matplotlib", "ipywidgets", "IPython", "tokenizers",
        "yaml", "safetensors", "tqdm", "pooch"}  # fmt: skip


@pytest.mark.parametrize("stem", IDS)
def test_chapters_import_only_core_packages_or_go_through_optional_import(stem):
    for source in code(editions(stem)["colab"])[1:]:
        tree = ast.parse("\n".join(x for x in source.split("\n") if not x.startswith("%")))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top in CORE or top in sys.stdlib_module_names, (
                    f"{stem}: `import {name}` fails after a plain pip install mlmcourse; use "
                    "mlmcourse.utils.runtime.optional_import and skip that part when it is missing"
                )


def test_no_chapter_reads_files_from_the_repository():
    for path in CHAPTERS:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"""["'](\.\./)?(benchmarks|tests|scripts)/""", text), path
