"""Write the notebooks learners open, from the chapters ``book/*.md`` (the single source).

Three editions, each a self-contained notebook per chapter (no MyST left in its markdown, see
``myst_markdown.py``), each starting with a cell that installs this exact version of the
package with the ``course`` extra:

- **colab** (``book/<chapter>.ipynb``, committed): what the book's Colab button opens, for
  self-study. Exercise solutions are there but start collapsed (JupyterLab's
  ``jupyter.source_hidden`` and a Colab form title), so a reader must choose to look.
- **instructor**: solutions inside ``### BEGIN SOLUTION`` / ``### END SOLUTION`` and nbgrader
  metadata: solution cells, and graded cells (``grade(fn, CASES, points=N)``) locked with
  their points. This is a valid nbgrader *source* notebook.
- **student**: the instructor edition with every solution region replaced by nbgrader's stub
  (``raise NotImplementedError()``), exactly as ``nbgrader generate_assignment`` does.

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
    """Install this exact version with everything the chapters import, when it is missing."""
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
    for source in sources:
        print(f"installing {{source}} ...")
        if subprocess.run([sys.executable, "-m", "pip", "install", "-q", source]).returncode == 0:
            break
    else:
        raise RuntimeError("mlmcourse could not be installed: see pip's messages above")
    if "mlmcourse" in sys.modules:
        print("mlmcourse was already imported: restart the kernel to use the new version")
if "google.colab" in sys.modules:  # Colab draws ipywidgets 8 through its custom manager
    from google.colab import output

    output.enable_custom_widget_manager()'''


def chapter_sources() -> list[Path]:
    """Every jupytext chapter in ``book/``."""
    return sorted(p for p in BOOK.glob("*.md") if "jupytext" in p.read_text(encoding="utf-8")[:500])


# --- Exercises: which cells hold solutions, which are graded ----------------------------------


def is_solution(cell) -> bool:
    return cell.cell_type == "code" and BEGIN in cell.source


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


def solution_names(cell) -> list[str]:
    """The functions a solution cell defines: what the learner writes."""
    return [n.name for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]


def clear_solutions(source: str) -> str:
    """Replace each solution region by the stub, indented like its marker (nbgrader's rule)."""
    out, inside = [], False
    for line in source.split("\n"):
        if BEGIN in line:
            if inside:
                raise ValueError(f"nested {BEGIN} in:\n{source}")
            inside = True
            indent = re.match(r"\s*", line).group(0)
            out.extend(indent + stub for stub in CODE_STUB.split("\n"))
        elif END in line:
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} without {END} in:\n{source}")
    return "\n".join(out)


def strip_markers(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if BEGIN not in line and END not in line)


# --- Building the editions ----------------------------------------------------------------------


def base_notebook(source: Path, release: Release) -> nbformat.NotebookNode:
    """The chapter as a plain notebook: install cell, converted markdown, stable cell ids."""
    nb = jupytext.read(source)
    context = Context(
        chapter=source,
        repo_root=ROOT,
        book_url=release.book_url,
        source_url=f"{release.repository}/blob/{release.tag}/",
    )
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
    nb = copy.deepcopy(nb)
    nb.metadata["colab"] = {"provenance": [], "name": f"{stem}.ipynb"}
    for cell in nb.cells:
        if is_solution(cell):
            cell.source = f"{COLAB_TITLE}\n{strip_markers(cell.source)}"
            cell.metadata["jupyter"] = {"source_hidden": True}
            cell.metadata["cellView"] = "form"
    return nb


def defines_cases(cell) -> bool:
    """A cell that defines reference cases (``NAME_CASES = [...]``)."""
    return cell.cell_type == "code" and re.search(r"^[A-Z_]*CASES\s*=", cell.source, re.M)


GRADER_IMPORT = "from mlmcourse.exercises import grade  # the course's checker, always\n\n"


def instructor_edition(nb: nbformat.NotebookNode, stem: str) -> nbformat.NotebookNode:
    """nbgrader metadata (schema 3): solution cells; graded cells, locked, with their points;
    and the cells that define the reference cases, locked (nbgrader restores locked cells
    before it grades, so a submission cannot change the cases)."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        call = graded_call(cell)
        if is_solution(cell):
            names = "-".join(solution_names(cell)) or cell["id"]
            cell.metadata["nbgrader"] = _nbgrader(f"{stem}-{names}", solution=True)
        elif call is not None:
            target = ast.unparse(call.args[0]) if call.args else cell["id"]
            cell.source = GRADER_IMPORT + cell.source  # a learner's own `grade` cannot grade
            cell.metadata["nbgrader"] = _nbgrader(
                f"{stem}-{target}-check", grade=True, locked=True, points=grade_points(call)
            )
        elif defines_cases(cell):
            cell.metadata["nbgrader"] = _nbgrader(f"{stem}-{cell['id']}-cases", locked=True)
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
    nb = copy.deepcopy(instructor)
    for cell in nb.cells:
        if is_solution(cell):
            cell.source = clear_solutions(cell.source)
    return nb


def editions(source: Path, release: Release) -> dict[str, nbformat.NotebookNode]:
    """All three editions of one chapter."""
    base = base_notebook(source, release)
    instructor = instructor_edition(base, source.stem)
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
    """``out/student/`` and ``out/instructor/``, one notebook per chapter, and a zip of each."""
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
        "--classroom", type=Path, metavar="DIR", help="write both classroom editions"
    )
    args = parser.parse_args(argv)
    if args.classroom:
        write_classroom(args.classroom)
        return 0
    return write_colab(args.check)


if __name__ == "__main__":
    sys.exit(main())
