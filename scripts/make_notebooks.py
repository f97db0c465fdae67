"""Write the notebooks learners open, from the chapters ``book/*.md`` (the single source).

Three editions, each a self-contained notebook (no MyST left in its markdown, see
``myst_markdown.py``), each starting with a cell that installs this exact version of the
package with the ``course`` extra:

- **colab** (``book/<chapter>.ipynb``, committed): the whole chapter, what the book's Colab
  button opens, for self-study. Exercise solutions (and the graders' hidden tests) are there
  but start collapsed (JupyterLab's ``jupyter.source_hidden`` and a Colab form title), so a
  reader must choose to look. Its code cells are the chapter's, one for one.
- **instructor**: the chapter's *assignment*, its ``## Exercises`` section on its own: a title
  that links the chapter, the section's set-up cell (tagged ``exercise-setup``: it loads
  everything the exercises use from the package in seconds), then the exercises, with
  solutions inside ``### BEGIN SOLUTION`` / ``### END SOLUTION`` and nbgrader metadata. Each
  graded cell reloads the checker and holds the chapter's ``hidden-tests`` cell between
  ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``. An exercise whose graded cell is
  tagged ``manually-graded`` (an experiment that needs a training run) is a manually graded
  answer: its solution cell carries the points and the rubric. A valid nbgrader *source*
  notebook.
- **student**: the instructor edition with every solution region replaced by nbgrader's stub
  (``raise NotImplementedError()``) and every hidden-test region removed, exactly as
  ``nbgrader generate_assignment`` does.

    python scripts/make_notebooks.py                    # regenerate book/*.ipynb
    python scripts/make_notebooks.py --check            # fail if any is stale or missing
    python scripts/make_notebooks.py --classroom DIR    # DIR/{student,instructor}/ + one zip each
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from myst_markdown import Context, to_commonmark  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
EDITIONS = ("colab", "instructor", "student")
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"  # nbgrader's default code stub
COLAB_TITLE = '#@title Solution (try the exercise first) { display-mode: "form" }'
CHECKS_TITLE = '#@title Checks of what the text claims { display-mode: "form" }'
EXPECTED_TITLE = '#@title What the check expects (after your prediction) { display-mode: "form" }'


@dataclass(frozen=True)
class Release:
    """What the generated notebooks point at: this version, its tag and the published book."""

    version: str
    repository: str  # https://github.com/OWNER/REPO
    book_url: str

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    @property
    def pip_source_fallback(self) -> str:
        return f"mlmcourse[course] @ git+{self.repository}@{self.tag}"


def read_release(root: Path = ROOT) -> Release:
    """The version from ``mlmcourse/__init__.py``, the URLs from ``_config.yml``."""
    init = (root / "mlmcourse" / "__init__.py").read_text(encoding="utf-8")
    version = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    if version is None:
        raise SystemExit("mlmcourse/__init__.py has no __version__ line")
    return Release(version[1], config["repository"]["url"].rstrip("/"), config["html"]["baseurl"])


def install_cell(release: Release) -> str:
    """Install this exact version with everything the chapters import, when it is missing.

    pip's and git's own output is kept back: a learner sees one line per source tried, and when
    neither can be reached, one short message saying what to do (the last error line of each
    attempt included, for whoever has to look into it), not pages of pip and git output.
    """
    return f'''\
# Set-up, run me first: install the course package (this exact version, with the `course`
# extra that brings everything the chapters use) from PyPI, or else from the course
# repository at the matching tag. Nothing happens when this version is installed already;
# any other version of mlmcourse is replaced by this one.
import importlib.metadata
import subprocess
import sys

MLMCOURSE_VERSION = "{release.version}"
try:
    installed = importlib.metadata.version("mlmcourse")
except importlib.metadata.PackageNotFoundError:
    installed = None
if installed != MLMCOURSE_VERSION:
    sources = [
        f"mlmcourse[course]=={{MLMCOURSE_VERSION}}",
        f"mlmcourse[course] @ git+{release.repository}@v{{MLMCOURSE_VERSION}}",
    ]
    failures = []
    for source in sources:
        print(f"installing {{source}} ...")
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-color",
               "--disable-pip-version-check"]
        done = subprocess.run([*pip, source], capture_output=True, text=True)
        if done.returncode == 0:
            break
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        said = [line for line in lines if line.startswith(("ERROR:", "fatal:"))] or lines
        failures.append(f"  {{source}}: {{(said or ['no message'])[-1][:200]}}")
    else:  # one short message, no traceback (IPython shows a UsageError as its text)
        from IPython.core.error import UsageError

        raise UsageError(
            f"mlmcourse {{MLMCOURSE_VERSION}} could not be installed:\\n" + "\\n".join(failures)
            + "\\nCheck the internet connection and run this cell again, or install it "
            f"yourself: pip install 'mlmcourse[course]=={{MLMCOURSE_VERSION}}'"
        )
    if "mlmcourse" in sys.modules:
        print("mlmcourse was already imported: restart the kernel to use the new version")
if "google.colab" in sys.modules:  # Colab draws ipywidgets 8 through its custom manager
    from google.colab import output

    output.enable_custom_widget_manager()'''


def chapter_sources() -> list[Path]:
    """Every jupytext chapter in ``book/``."""
    return sorted(p for p in BOOK.glob("*.md") if "jupytext" in p.read_text(encoding="utf-8")[:500])


# --- Exercises: which cells hold solutions, which are graded ----------------------------------

SETUP_TAG, HIDDEN_TAG, MANUAL_TAG = "exercise-setup", "hidden-tests", "manually-graded"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
HIDDEN_TITLE = '#@title Hidden tests (the grader runs them too) { display-mode: "form" }'
# Every graded cell starts by loading the checker afresh: a submission that reassigned `grade`
# or patched mlmcourse.course.exercises is graded by the course's own code.
GRADER_IMPORT = """\
import importlib

import mlmcourse.course.exercises

grade = importlib.reload(mlmcourse.course.exercises).grade  # the course's checker, loaded afresh

"""


def tags(cell) -> list[str]:
    return list(cell.metadata.get("tags", []))


def is_solution(cell) -> bool:
    return cell.cell_type == "code" and BEGIN in cell.source


def is_setup(cell) -> bool:
    return cell.cell_type == "code" and SETUP_TAG in tags(cell)


def is_hidden_tests(cell) -> bool:
    return cell.cell_type == "code" and HIDDEN_TAG in tags(cell)


def is_checks(cell) -> bool:
    """A cell of checks of what the text claims (tagged ``checks``): run, shown collapsed."""
    return "checks" in tags(cell)


def is_expected(cell) -> bool:
    """An experiment's expected outcome (tagged ``expected``): shown collapsed, after the cell
    where the learner writes a prediction."""
    return "expected" in tags(cell)


def is_manual(cell) -> bool:
    return cell.cell_type == "code" and MANUAL_TAG in tags(cell)


def graded_call(cell) -> ast.Call | None:
    """The ``grade(fn, CASES, points=N)`` call a graded cell ends with, if it is one."""
    if cell.cell_type != "code" or "grade(" not in cell.source:
        return None
    try:
        body = ast.parse(cell.source).body
    except SyntaxError:
        return None
    last = body[-1] if body else None
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        func = last.value.func
        if isinstance(func, ast.Name) and func.id == "grade":
            return last.value
    return None


def grade_points(call: ast.Call) -> int | float:
    for keyword in call.keywords:
        if keyword.arg == "points":
            return ast.literal_eval(keyword.value)
    return 1


def graded_function(call: ast.Call) -> str:
    return ast.unparse(call.args[0])


def solution_names(cell) -> list[str]:
    """The functions a solution cell defines: what the learner writes."""
    return [n.name for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]


def _cut_regions(source: str, begin: str, end: str, stub: str | None) -> str:
    """Each ``begin`` ... ``end`` region replaced by ``stub`` (indented like its marker) or
    removed; nbgrader's rule for solutions and for hidden tests."""
    out, inside = [], False
    for line in source.split("\n"):
        if begin in line:
            if inside:
                raise ValueError(f"nested {begin} in:\n{source}")
            inside = True
            if stub is not None:
                indent = re.match(r"\s*", line).group(0)
                out.extend(indent + x for x in stub.split("\n"))
        elif end in line:
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{begin} without {end} in:\n{source}")
    return "\n".join(out)


def clear_solutions(source: str) -> str:
    """Replace each solution region by the stub, indented like its marker (nbgrader's rule)."""
    return _cut_regions(source, BEGIN, END, CODE_STUB)


def clear_hidden_tests(source: str) -> str:
    """Remove each hidden-test region, markers included (nbgrader's ``ClearHiddenTests``)."""
    return _cut_regions(source, BEGIN_HIDDEN.removeprefix("### "), END_HIDDEN.removeprefix("### "),
                        None)  # fmt: skip


def strip_markers(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if BEGIN not in line and END not in line)


def defines_cases(cell) -> bool:
    """A cell that defines reference cases (``NAME_CASES = [...]``)."""
    return cell.cell_type == "code" and bool(re.search(r"^[A-Z_]*CASES\s*=", cell.source, re.M))


# --- Building the editions ----------------------------------------------------------------------


def _context(source: Path, release: Release) -> Context:
    return Context(
        chapter=source,
        repo_root=ROOT,
        book_url=release.book_url,
        source_url=f"{release.repository}/blob/{release.tag}/",
    )


def base_notebook(source: Path, release: Release) -> nbformat.NotebookNode:
    """The chapter as a plain notebook: install cell, converted markdown, stable cell ids."""
    nb = jupytext.read(source)
    context = _context(source, release)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = to_commonmark(cell.source, context)
    install = nbformat.v4.new_code_cell(install_cell(release), metadata={"tags": ["remove-cell"]})
    nb.cells.insert(0, install)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{source.stem}-{i:03d}"  # stable ids keep the files diff-friendly
        cell.metadata.pop("lines_to_next_cell", None)
    nb.metadata.pop("jupytext", None)
    nb.metadata.setdefault("language_info", {"name": "python"})
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def colab_edition(nb: nbformat.NotebookNode, stem: str) -> nbformat.NotebookNode:
    """The whole chapter; solutions, hidden tests, the checks of the text's claims and the
    experiments' expected outcomes start collapsed (a form in Colab)."""
    nb = copy.deepcopy(nb)
    nb.metadata["colab"] = {"provenance": [], "name": f"{stem}.ipynb"}
    for cell in nb.cells:
        if is_solution(cell):
            cell.source = f"{COLAB_TITLE}\n{strip_markers(cell.source)}"
        elif is_hidden_tests(cell):
            cell.source = f"{HIDDEN_TITLE}\n{cell.source}"
        elif is_checks(cell):
            cell.source = f"{CHECKS_TITLE}\n{cell.source}"
        elif is_expected(cell):
            cell.source = f"{EXPECTED_TITLE}\n{cell.source}"
        else:
            continue
        cell.metadata["jupyter"] = {"source_hidden": True}
        cell.metadata["cellView"] = "form"
    return nb


def _headings(text: str) -> list[int]:
    """Indices of the lines of ``text`` that are level-2 headings (outside code blocks)."""
    found, fence = [], None
    for i, line in enumerate(text.split("\n")):
        marker = re.match(r"^(`{3,}|~{3,})", line)
        if marker and fence is None:
            fence = marker[1]
        elif marker and fence is not None and line.strip() == fence:
            fence = None
        elif fence is None and line.startswith("## "):
            found.append(i)
    return found


def exercise_section(nb: nbformat.NotebookNode) -> list:
    """The cells of the chapter's exercise section: from the ``## `` heading above its set-up
    cell (``exercise-setup``) to the next ``## `` heading; markdown cells cut at the headings."""
    setups = [i for i, cell in enumerate(nb.cells) if is_setup(cell)]
    if len(setups) != 1:
        raise ValueError(f"{len(setups)} cells tagged {SETUP_TAG}, expected one per chapter")
    (setup,) = setups
    first = next(
        (i for i in range(setup - 1, -1, -1)
         if nb.cells[i].cell_type == "markdown" and _headings(nb.cells[i].source)),
        None,
    )  # fmt: skip
    if first is None:
        raise ValueError(f"no ## heading above the {SETUP_TAG} cell")
    cells = []
    for i in range(first, len(nb.cells)):
        cell = copy.deepcopy(nb.cells[i])
        if cell.cell_type == "markdown":
            lines, heads = cell.source.split("\n"), _headings(cell.source)
            if i == first:
                lines = lines[heads[-1] :]
            elif heads:  # the next section starts here
                before = "\n".join(lines[: heads[0]]).strip()
                if before:
                    cell.source = before
                    cells.append(cell)
                break
            cell.source = "\n".join(lines).strip()
        cells.append(cell)
    return cells


def chapter_title(nb: nbformat.NotebookNode) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^# (.+)$", cell.source, re.M)
            if match:
                return match[1].strip()
    raise ValueError("the chapter has no # title")


def assignment_intro(title: str, url: str) -> str:
    return f"""\
# Exercises: {title}

The exercises of the chapter [{title}]({url}), on their own. Run the first cell (it installs
the course package) and the set-up cell under "Exercises" (it loads everything the exercises
use, in seconds); then work through the exercises in order. Each one has a **solution cell**,
where you write your function in place of `raise NotImplementedError()`, and a **graded
cell**, which checks your function and shows the points you earned. When your notebook is
graded, the graded cells run more cases than you see here, so a function that only handles
the cases shown does not score. An experiment marked *graded by hand* is read by your
teacher: your function, and your explanation in its comments."""


# An embedded picture as ``myst_markdown`` writes a figure: the image line, then its caption.
EMBEDDED_FIGURE = re.compile(
    r'^<img src="data:image/[^"]+" alt="[^"]*"[^>]*>(?:\n\n\*.+\*)?$', re.M
)


def chapter_figures(nb: nbformat.NotebookNode) -> str:
    """The chapter's diagrams, embedded with their alt text and captions, for its assignment: a
    learner who has only the assignment still has the pictures the exercises build on."""
    figures = [
        match[0]
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for match in EMBEDDED_FIGURE.finditer(cell.source)
    ]
    if not figures:
        return ""
    return "\n\n**The chapter's diagrams**, for reference:\n\n" + "\n\n".join(figures)


def assignment(nb: nbformat.NotebookNode, source: Path, release: Release) -> list:
    """The assignment's cells as the chapter has them: install, title and the chapter's
    diagrams, the exercise section."""
    url = _context(source, release).page_url(source.name)
    intro = nbformat.v4.new_markdown_cell(
        assignment_intro(chapter_title(nb), url) + chapter_figures(nb)
    )
    try:
        section = exercise_section(nb)
    except ValueError as error:
        raise ValueError(f"book/{source.name}: {error}") from error
    return [copy.deepcopy(nb.cells[0]), intro, *section]


def manual_feedback(call: ast.Call) -> str:
    """What stands in a manually graded exercise's graded cell: the check, for the learner."""
    points = grade_points(call)
    return f"""\
# Graded by hand ({points:g} point{"s" if points != 1 else ""}): your teacher reads your function \
and your explanation.
# This check runs the whole experiment, training runs included: run it yourself (the
# autograder skips it).
import os

if os.environ.get("NBGRADER_EXECUTION") != "autograde":
    check({graded_function(call)}, {ast.unparse(call.args[1])})"""


def _merge_hidden(graded, hidden, where: str) -> str:
    """The graded cell with the hidden tests folded in, ending ``grade(fn, CASES + HIDDEN)``."""
    call, theirs = graded_call(graded), graded_call(hidden)
    if theirs is None or not isinstance(theirs.args[1], ast.Name):
        raise ValueError(f"{where}: a {HIDDEN_TAG} cell ends with grade(fn, NAME_HIDDEN, points=N)")
    if (graded_function(theirs), grade_points(theirs)) != (
        graded_function(call),
        grade_points(call),
    ):
        raise ValueError(f"{where}: its {HIDDEN_TAG} cell grades another function or points")
    name = theirs.args[1].id
    final = copy.deepcopy(call)
    final.args[1] = ast.BinOp(call.args[1], ast.Add(), ast.Name(name))
    before = _all_but_last_statement(graded.source)
    return (
        GRADER_IMPORT
        + (f"{before}\n\n" if before else "")
        + f"{name} = []  # the grader's own cases: filled in when your notebook is graded\n"
        + f"{BEGIN_HIDDEN}\n{_all_but_last_statement(hidden.source)}\n{END_HIDDEN}\n"
        + ast.unparse(final)
    )


def _all_but_last_statement(source: str) -> str:
    last = ast.parse(source).body[-1]
    return "\n".join(source.split("\n")[: last.lineno - 1]).strip()


def _mark(cell, stem: str, by_hand: dict[str, ast.Call], hidden) -> None:
    """Give one exercise cell its nbgrader role (and a graded cell its hidden tests)."""
    call = graded_call(cell)
    if is_solution(cell):
        names = solution_names(cell)
        graded = [by_hand[n] for n in names if n in by_hand]  # a manually graded answer
        cell.metadata["nbgrader"] = _nbgrader(
            f"{stem}-{'-'.join(names)}", solution=True, grade=bool(graded),
            points=grade_points(graded[0]) if graded else None,
        )  # fmt: skip
    elif call is not None and is_manual(cell):
        cell.source = manual_feedback(call)
        cell.metadata["nbgrader"] = _nbgrader(
            f"{stem}-{graded_function(call)}-feedback", locked=True
        )
    elif call is not None:
        where = f"{stem}, the graded cell of {graded_function(call)}"
        cell.source = _merge_hidden(cell, hidden, where) if hidden else GRADER_IMPORT + cell.source
        cell.metadata["nbgrader"] = _nbgrader(
            f"{stem}-{graded_function(call)}-check", grade=True, locked=True,
            points=grade_points(call),
        )  # fmt: skip
    elif is_setup(cell):
        cell.metadata["nbgrader"] = _nbgrader(f"{stem}-setup", locked=True)
    elif defines_cases(cell):
        first = re.search(r"^([A-Z_]*CASES)\s*=", cell.source, re.M)[1]
        cell.metadata["nbgrader"] = _nbgrader(f"{stem}-{first.lower()}", locked=True)


def instructor_edition(cells: list, stem: str) -> nbformat.NotebookNode:
    """nbgrader metadata (schema 3): solution cells; graded cells, locked, with their points and
    hidden tests; manually graded answers; and the set-up cell and the cells that define the
    reference cases, locked (nbgrader restores locked cells before it grades, so a submission
    cannot change them). An experiment's expected outcome starts collapsed."""
    cells = copy.deepcopy(cells)
    by_hand = {graded_function(graded_call(c)): graded_call(c) for c in cells if is_manual(c)}
    out = []
    for cell, after in zip(cells, [*cells[1:], None], strict=True):
        if is_hidden_tests(cell):
            continue  # folded into the graded cell above it
        _mark(cell, stem, by_hand, after if after is not None and is_hidden_tests(after) else None)
        for tag in (HIDDEN_TAG, MANUAL_TAG):
            if tag in tags(cell):
                cell.metadata["tags"].remove(tag)
        if is_expected(cell):  # an experiment's expected outcome: collapsed, as in the chapter
            cell.metadata["jupyter"] = {"source_hidden": True}
        cell["id"] = f"{stem}-exercises-{len(out):03d}"
        out.append(cell)
    nb = nbformat.v4.new_notebook(cells=out)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def _nbgrader(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        meta["points"] = points
    return meta


def student_edition(instructor: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """What ``nbgrader generate_assignment`` gives: solutions stubbed, hidden tests removed."""
    nb = copy.deepcopy(instructor)
    for cell in nb.cells:
        if is_solution(cell):
            cell.source = clear_solutions(cell.source)
        if cell.cell_type == "code" and BEGIN_HIDDEN in cell.source:
            cell.source = clear_hidden_tests(cell.source)
    return nb


def editions(source: Path, release: Release) -> dict[str, nbformat.NotebookNode]:
    """All three editions of one chapter: the whole chapter for Colab, the assignment twice."""
    base = base_notebook(source, release)
    instructor = instructor_edition(assignment(base, source, release), source.stem)
    return {
        "colab": colab_edition(base, source.stem),
        "instructor": instructor,
        "student": student_edition(instructor),
    }


def dumps(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


# --- Command line -------------------------------------------------------------------------------


def write_colab(check: bool) -> int:
    release = read_release()
    stale = []
    sources = chapter_sources()
    expected = {source.with_suffix(".ipynb") for source in sources}
    for source in sources:
        target = source.with_suffix(".ipynb")
        text = dumps(editions(source, release)["colab"])
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target)
        if not check:
            target.write_text(text, encoding="utf-8")
    for orphan in [p for p in BOOK.glob("*.ipynb") if p not in expected]:
        stale.append(orphan)
        if not check:
            orphan.unlink()
    if check and stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"stale notebooks: {names}; run `make notebooks`", file=sys.stderr)
        return 1
    if not check:
        print(f"{len(sources)} notebooks up to date ({len(stale)} written or removed)")
    return 0


def write_classroom(out: Path) -> None:
    """``out/student/`` and ``out/instructor/``, one assignment per chapter, and a zip of each."""
    release = read_release()
    for edition in ("student", "instructor"):
        folder = out / edition
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.ipynb"):
            old.unlink()
        for source in chapter_sources():
            text = dumps(editions(source, release)[edition])
            (folder / f"{source.stem}.ipynb").write_text(text, encoding="utf-8")
        archive = out / f"mlmcourse-{release.version}-{edition}.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(folder.glob("*.ipynb")):
                zf.write(path, f"mlmcourse-{release.version}-{edition}/{path.name}")
        print(f"{edition}: {folder} and {archive}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale notebooks")
    parser.add_argument(
        "--classroom", type=Path, metavar="DIR", help="write the classroom assignments"
    )
    args = parser.parse_args(argv)
    if args.classroom:
        write_classroom(args.classroom)
        return 0
    return write_colab(args.check)


if __name__ == "__main__":
    sys.exit(main())
