"""``make quick``: the checks that what you changed touches, in minutes instead of a full run.

What differs from the base (``origin/main`` where the checkout has it, else ``HEAD``; choose
another with ``BASE=<rev>``), committed or not, untracked files included:

1. **lint**: ``ruff check`` and ``ruff format --check`` on the changed Python files;
2. **tests**: the fast tests (``not slow and not book``) that import a changed module, directly
   or through the package's own imports (a test of ``mlmcourse.training`` runs when
   ``mlmcourse/masking/core.py`` changed, since training imports masking), every changed test
   file, the tests that name a changed data file, and the book's own checks when a chapter
   changed;
3. **chapters**: each chapter whose source changed, and those that import a changed module
   that at most two chapters import (a module most chapters use is left to ``make test``),
   executed in this environment (``pytest --nbval-lax book/<chapter>.md``).

It prints what it chose and why, then runs it. ``--dry-run`` only prints.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK_CHECKS = [
    "tests/book/test_prose.py",
    "tests/book/test_book.py",
    "tests/book/test_notebooks.py",
]
MAX_CHAPTERS_PER_MODULE = 2
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def base_revision(requested: str | None) -> str:
    """``requested``, else ``origin/main`` if it exists, else ``HEAD``."""
    if requested:
        return requested
    has_origin = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "origin/main"], cwd=ROOT, capture_output=True
    ).returncode == 0  # fmt: skip
    return git("merge-base", "HEAD", "origin/main").strip() if has_origin else "HEAD"


def changed_files(base: str) -> list[str]:
    """Files that differ from ``base`` in the working tree, and untracked ones git does not ignore."""
    changed = git("diff", "--name-only", base).split()
    untracked = git("ls-files", "--others", "--exclude-standard").split()
    return sorted({p for p in changed + untracked if (ROOT / p).exists()})


def module_name(path: str) -> str | None:
    """``mlmcourse/masking/core.py`` -> ``mlmcourse.masking.core``; scripts and tests too."""
    if not path.endswith(".py"):
        return None
    parts = Path(path).with_suffix("").parts
    if parts[0] == "scripts":
        return f"scripts.{parts[-1]}"
    if parts[0] not in ("mlmcourse", "tests"):
        return None
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``source`` imports (``from a.b import c`` counts ``a.b``,
    and ``a.b.c`` when that is a module; a script is imported by its bare name)."""
    found: set[str] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return found
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            for candidate in (name, f"scripts.{name}"):
                if candidate in known:
                    found.add(candidate)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each module of the package, the tests and the scripts, with the modules it imports."""
    paths = [
        p for folder in ("mlmcourse", "tests", "scripts") for p in (ROOT / folder).rglob("*.py")
    ]
    modules = {module_name(str(p.relative_to(ROOT))): p for p in paths}
    modules.pop(None, None)
    known = set(modules)
    return {m: imported_modules(p.read_text(encoding="utf-8"), known) for m, p in modules.items()}


def importers(graph: dict[str, set[str]], changed: Iterable[str]) -> set[str]:
    """Every module that imports one of ``changed``, directly or through others (and them)."""
    reached, frontier = set(changed), set(changed)
    while frontier:
        frontier = {m for m, deps in graph.items() if deps & frontier} - reached
        reached |= frontier
    return reached


def chapter_imports(path: Path, known: set[str]) -> set[str]:
    """The package modules a chapter's code cells import (read line by line: a cell's options
    and magics are not Python)."""
    found: set[str] = set()
    for cell in _CELL.finditer(path.read_text(encoding="utf-8")):
        for line in cell.group(1).splitlines():
            if line.lstrip().startswith(("from mlmcourse", "import mlmcourse")):
                found |= imported_modules(line.strip().rstrip("(\\") + _closing(line), known)
    return found


def _closing(line: str) -> str:
    """A line that opens a parenthesised import list, closed so that it parses (its names are
    on the next lines; the module is what counts)."""
    return " x)" if line.rstrip().endswith("(") else ""


def plan(files: list[str]) -> dict[str, dict[str, str]]:
    """What to run, each with the reason: ``{"lint": {file: why}, "tests": ..., "chapters": ...}``."""
    graph = import_graph()
    chapters = sorted((ROOT / "book").glob("*.md"))
    uses = {
        c.stem: chapter_imports(c, set(graph))
        for c in chapters
        if "jupytext" in c.read_text()[:500]
    }
    out: dict[str, dict[str, str]] = {"lint": {}, "tests": {}, "chapters": {}}
    for path in files:
        name = module_name(path)
        if path.endswith(".py"):
            out["lint"][path] = "changed"
        if name and name.startswith("tests.") and Path(path).name.startswith("test_"):
            out["tests"].setdefault(path, "changed")
        if name and not name.startswith("tests."):
            for module in sorted(importers(graph, [name])):
                test = _test_file(module)
                if test:
                    out["tests"].setdefault(test, f"imports {name}")
            readers = sorted(c for c, mods in uses.items() if name in mods)
            if 0 < len(readers) <= MAX_CHAPTERS_PER_MODULE:
                for chapter in readers:
                    out["chapters"].setdefault(chapter, f"imports {name}")
        if path.startswith("book/") and path.endswith(".md"):
            if Path(path).stem in uses:
                out["chapters"][Path(path).stem] = "changed"
            for test in BOOK_CHECKS:
                out["tests"].setdefault(test, f"checks {path}")
        if path.startswith("experiments/") or (
            path.startswith("mlmcourse/") and not path.endswith(".py")
        ):
            for test in _tests_naming(Path(path)):
                out["tests"].setdefault(test, f"names {Path(path).name}")
    return out


def _test_file(module: str) -> str | None:
    if not module.startswith("tests."):
        return None
    path = Path(*module.split(".")).with_suffix(".py")
    return str(path) if path.name.startswith("test_") and (ROOT / path).is_file() else None


def _tests_naming(data_file: Path) -> list[str]:
    """Test files that name a data file of the package or an experiment: a checkpoint's folder
    name, a config's or a results file's name quoted (``"english"``), a script's file name."""
    parts = data_file.parts
    if "checkpoints" in parts[:-1]:
        keys = [f'"{parts[parts.index("checkpoints") + 1]}"']
    else:
        keys = [data_file.name] if data_file.suffix == ".py" else [f'"{data_file.stem}"']
    return sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "tests").rglob("test_*.py")
        if any(key in p.read_text(encoding="utf-8") for key in keys)
    )


def run(plan_: dict[str, dict[str, str]], python: str) -> int:
    """Lint, then the tests, then the chapters; the first failure's status."""
    steps = []
    if plan_["lint"]:
        files = sorted(plan_["lint"])
        steps += [
            [python, "-m", "ruff", "check", *files],
            [python, "-m", "ruff", "format", "--check", *files],
        ]
    if plan_["tests"]:
        steps.append([python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2",
                      "-m", "not slow and not book", *sorted(plan_["tests"])])  # fmt: skip
    if plan_["chapters"]:
        books = [f"book/{c}.md" for c in sorted(plan_["chapters"])]
        steps.append([python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval-lax",
                      "--nbval-current-env", "-n", str(min(2, len(books))), *books])  # fmt: skip
    env = {**os.environ, "MLMCOURSE_STRICT_EXERCISES": "1"}
    for step in steps:
        print("+", " ".join(step[1:]), flush=True)
        status = subprocess.run(step, cwd=ROOT, env=env).returncode
        if status not in (0, 5):  # 5: pytest collected nothing
            return status
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=os.environ.get("BASE") or None)
    parser.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    args = parser.parse_args(argv)
    base = base_revision(args.base)
    files = changed_files(base)
    chosen = plan(files)
    print(f"{len(files)} file(s) differ from {base}")
    for kind, items in chosen.items():
        print(f"{kind}: {len(items)}")
        for item, why in sorted(items.items()):
            print(f"  {item}  ({why})")
    if args.dry_run or not any(chosen.values()):
        return 0
    return run(chosen, sys.executable)


if __name__ == "__main__":
    sys.exit(main())
