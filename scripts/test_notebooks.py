"""Run every chapter once, as learners get it: built wheel, fresh environment, empty folder.

1. The wheel (``dist/``, built once by ``make dist``; built here when none is given).
2. A fresh virtual environment shaped like Colab's: torch and a Jupyter kernel already there
   (linked from this interpreter's, outside the environment), then a plain
   ``pip install mlmcourse`` (the exact versions of ``requirements.txt`` as constraints).
3. The plain-install check: in each chapter with optional parts, the cells that use them and the
   set-up cells they need (``optional_cells.py``), executed in that environment. They must run
   through, each skipped part saying so.
4. The ``course`` extra added to the same environment. Every chapter's Colab notebook (what the
   book's Colab button opens, solutions included) executed once, each in an empty folder of its
   own far from the repository, two at a time on one thread each, with
   ``MLMCOURSE_STRICT_EXERCISES=1`` (every reference solution must score full marks). Its
   outputs go into the book's execution cache (``book_cache.py``), so the book build renders
   them instead of executing the chapter again.

A failing cell is reported with its chapter, its line in ``book/<chapter>.md`` and the error.
The time of every chapter (and of its slowest cells) is printed and written to
``_build/chapters/times.json``.

    python scripts/test_notebooks.py                   # every chapter (make chapters)
    python scripts/test_notebooks.py --only masking    # one chapter (make chapter NAME=masking)
    python scripts/test_notebooks.py --wheel dist/mlmcourse-0.2.0-py3-none-any.whl --keep
"""

from __future__ import annotations

import argparse
import copy
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import book_cache  # noqa: E402
from make_notebooks import ROOT, chapter_sources, editions, read_release  # noqa: E402
from optional_cells import plain_install_cells  # noqa: E402

KERNEL = "mlmcourse-learner"
TIMES = ROOT / "_build" / "chapters" / "times.json"
CELL_TIMEOUT = 900  # seconds; a chapter's whole budget is 3 minutes on one thread


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run(cmd, check=True, **kwargs)


def build(out: Path) -> Path:
    """The sdist and wheel, built without network access (no build isolation)."""
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        stdout=subprocess.DEVNULL)  # fmt: skip
    (wheel,) = out.glob("mlmcourse-*.whl")
    return wheel


# What Colab's Python has before a notebook installs anything.
PRESENT = ("torch", "ipykernel")


def with_dependencies(names: tuple[str, ...]) -> list[importlib.metadata.Distribution]:
    """The distributions installed here that ``names`` need, themselves included (no extras)."""
    from packaging.requirements import Requirement

    found: dict[str, importlib.metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in found:
            continue
        try:
            found[key] = dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # an optional dependency not installed here
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return list(found.values())


def learner_environment(work: Path) -> Path:
    """A fresh venv that has torch and a Jupyter kernel, as Colab's Python has, and nothing
    else; its python.

    Like Colab's, they are installed outside the environment: linked from this interpreter's
    site-packages (with what they need) through a ``.pth`` file, so nothing is copied and pip
    never changes them; what pip installs goes into the environment, which comes first on
    ``sys.path``. The exact versions of ``requirements.txt`` are written as constraints.
    """
    env = work / "env"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run([str(python), "-c", purelib], capture_output=True, text=True, check=True)
    present = work / "present"
    present.mkdir()
    for dist in with_dependencies(PRESENT):
        base = Path(dist.locate_file(""))
        for top in {f.parts[0] for f in dist.files or [] if f.parts[0] != ".."}:
            if (base / top).exists() and not (present / top).exists():
                (present / top).symlink_to(base / top)
    (Path(site.stdout.strip()) / "present.pth").write_text(f"{present}\n")
    pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line]
    (work / "constraints.txt").write_text("\n".join(pins) + "\n")
    return python


def pip_install(python: Path, work: Path, *requirements: str) -> None:
    """pip install into the learner's venv, pinned by requirements.txt's versions."""
    tic = time.perf_counter()
    cmd = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
           "-c", str(work / "constraints.txt"), *requirements]  # fmt: skip
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    # pip's warnings about this machine's extra package index are noise; anything else shows
    noise = "WARNING: Location 'file:"
    print("".join(x for x in done.stderr.splitlines(True) if not x.startswith(noise)), end="")
    if done.returncode != 0:
        raise SystemExit(f"pip install {' '.join(requirements)} failed:\n{done.stdout}")
    print(f"  ({time.perf_counter() - tic:.0f} s)", flush=True)


def register_kernel(python: Path, env: Path) -> None:
    run([str(python), "-m", "ipykernel", "install", "--prefix", str(env), "--name", KERNEL],
        stdout=subprocess.DEVNULL)  # fmt: skip


def learner_env(work: Path, strict: bool) -> dict[str, str]:
    """The kernel's environment: no trace of our sources, one thread, the learner's kernel."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env.pop("MLMCOURSE_STRICT_EXERCISES", None)
    if strict:
        env["MLMCOURSE_STRICT_EXERCISES"] = "1"
    env["JUPYTER_PATH"] = str(work / "env" / "share" / "jupyter")
    env["OMP_NUM_THREADS"] = "1"  # two notebooks at once share the two cores
    return env


def check_isolation(python: Path, folder: Path, env: Path) -> None:
    """From an empty folder, the kernel's Python imports the installed wheel, not our sources."""
    found = subprocess.run(
        [str(python), "-c", "import mlmcourse; print(mlmcourse.__file__)"],
        cwd=folder, env=learner_env(env.parent, False), capture_output=True, text=True,
        check=True,
    ).stdout.strip()  # fmt: skip
    if not Path(found).resolve().is_relative_to(env.resolve()):
        raise SystemExit(f"the learner kernel imports mlmcourse from {found}, not from {env}")
    print(f"learner kernel imports {found}")


# --- Executing one notebook (in a process of its own) -----------------------------------------


def execute_file(path: Path, timeout: int) -> int:
    """Execute the notebook at ``path`` in its folder; write it back with outputs, and a report.

    Runs in a child process (``--execute``) whose environment is the kernel's.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, kernel_name=KERNEL, timeout=timeout, record_timing=True,
        resources={"metadata": {"path": str(path.parent)}},
    )  # fmt: skip
    report: dict = {"ok": True}
    tic = time.perf_counter()
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as exc:
        failed = next(
            (i for i, c in enumerate(nb.cells) if c.cell_type == "code" and _errored(c)), None
        )
        report = {"ok": False, "cell": failed, "error": str(exc)[-6000:]}
    report["seconds"] = time.perf_counter() - tic
    report["cells"] = [_cell_seconds(c) for c in nb.cells]
    nbformat.write(nb, path)
    path.with_suffix(".json").write_text(json.dumps(report))
    return 0 if report["ok"] else 1


def _errored(cell) -> bool:
    return any(o.get("output_type") == "error" for o in cell.get("outputs", [])) or (
        "execution" in cell.metadata and "shell.execute_reply" not in cell.metadata.execution
    )


def _cell_seconds(cell) -> float | None:
    """How long a cell ran, from nbclient's timestamps (ISO 8601, "Z" for UTC)."""
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not start or not end:
        return None
    start, end = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (start, end))
    return (end - start).total_seconds()


# --- Running notebooks, two at a time ----------------------------------------------------------


@dataclass
class Result:
    name: str
    chapter: Path
    ok: bool
    seconds: float
    notebook: nbformat.NotebookNode
    report: dict = field(default_factory=dict)


def execute(name: str, chapter: Path, nb, work: Path, env: dict[str, str]) -> Result:
    """Execute ``nb`` in an empty folder of its own, in a child process with ``env``."""
    folder = work / "run" / name
    folder.mkdir(parents=True)
    path = folder / f"{chapter.stem}.ipynb"
    nbformat.write(nb, path)
    print(f"  {name}: started", flush=True)
    cmd = [sys.executable, __file__, "--execute", str(path), "--timeout", str(CELL_TIMEOUT)]
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True)
    report_path = path.with_suffix(".json")
    if not report_path.exists():
        raise SystemExit(f"{name}: the executor died:\n{done.stdout}\n{done.stderr}")
    report = json.loads(report_path.read_text())
    path.with_suffix(".json").unlink()
    executed = nbformat.read(path, as_version=4)
    result = Result(name, chapter, report["ok"], report["seconds"], executed, report)
    print(f"  {name}: {'passed' if result.ok else 'FAILED'} in {result.seconds:.0f} s", flush=True)
    if not result.ok:
        print(describe_failure(result), flush=True)
    return result


def describe_failure(result: Result) -> str:
    """Where in ``book/<chapter>.md`` the failing cell is, and its error."""
    cell, where = result.report.get("cell"), ""
    if cell is not None:
        code = [i for i, c in enumerate(result.notebook.cells) if c.cell_type == "code"]
        number = code.index(cell) if cell in code else None
        line = _source_line(result.chapter, number - 1) if number else None
        where = f" at code cell {number}" + (
            f" (book/{result.chapter.name}:{line})" if line else ""
        )
    return f"FAILED {result.name}{where}:\n{result.report.get('error', '')}"


def _source_line(chapter: Path, code_index: int) -> int | None:
    """The line of the chapter's ``code_index``-th code cell in its MyST source."""
    nb = book_cache.book_notebook(chapter)
    lines = nb.metadata.get("source_map", [])
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    if 0 <= code_index < len(code) and code[code_index] < len(lines):
        return lines[code[code_index]] + 1
    return None


def run_all(jobs: list[tuple[str, Path, object]], work: Path, env: dict, workers: int) -> list:
    """Execute every job, ``workers`` at a time, the longest (by the last timings) first."""
    last = json.loads(TIMES.read_text()).get("chapters", {}) if TIMES.exists() else {}
    jobs = sorted(jobs, key=lambda j: -last.get(j[1].stem, {}).get("seconds", len(str(j[2]))))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(execute, name, ch, nb, work, env) for name, ch, nb in jobs]
        return [f.result() for f in futures]


def plain_notebook(nb) -> nbformat.NotebookNode | None:
    """The install cell and the cells a plain install must run; None if it has none."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    keep = plain_install_cells([c.source for c in code[1:]])
    if not keep:
        return None
    out = copy.deepcopy(nb)
    out.cells = [code[0]] + [code[i + 1] for i in keep]
    return out


def write_times(results: list[Result], plain: list[Result]) -> None:
    def slowest(r: Result) -> list:
        cells = [(s or 0.0, i) for i, s in enumerate(r.report.get("cells", []))]
        return [[i, round(s, 1)] for s, i in sorted(cells, reverse=True)[:3]]

    TIMES.parent.mkdir(parents=True, exist_ok=True)
    previous = json.loads(TIMES.read_text()) if TIMES.exists() else {}
    data = {
        "threads": 1,
        "chapters": {
            **previous.get("chapters", {}),
            **{
                r.chapter.stem: {"seconds": round(r.seconds, 1), "slowest_cells": slowest(r)}
                for r in results
            },
        },
        "plain_install": {r.chapter.stem: round(r.seconds, 1) for r in plain},
    }
    TIMES.write_text(json.dumps(data, indent=1) + "\n")


def store(results: list[Result], sources: dict[Path, str], package: str) -> None:
    """Cache each passing chapter's outputs for the book, unless its source or the package
    changed while it ran (the outputs would then be those of another chapter or package)."""
    if book_cache.package_key() != package:
        print("the package changed during the run: no outputs cached for the book")
        return
    for r in results:
        if not r.ok:
            continue
        if r.chapter.read_text(encoding="utf-8") != sources[r.chapter]:
            print(f"  {r.chapter.stem}: its source changed during the run, outputs not cached")
            continue
        book_cache.store(r.chapter, r.notebook, package, seconds=r.seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="CHAPTER", help="only these chapters")
    parser.add_argument("--wheel", type=Path, help="the wheel to install (built if not given)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks at once (one thread each)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help="do not store the outputs for the book")  # fmt: skip
    parser.add_argument("--execute", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.execute:
        return execute_file(args.execute, args.timeout)

    start = time.time()
    chapters = [p for p in chapter_sources() if not args.only or p.stem in args.only]
    unknown = set(args.only or []) - {p.stem for p in chapters}
    if unknown:
        raise SystemExit(f"no chapter named {', '.join(sorted(unknown))} in book/")
    release = read_release()
    notebooks = {p: editions(p, release)["colab"] for p in chapters}
    sources = {p: p.read_text(encoding="utf-8") for p in chapters}
    package = book_cache.package_key()
    work = Path(tempfile.mkdtemp(prefix="mlmcourse-learner-"))
    try:
        wheel = args.wheel.resolve() if args.wheel else build(work / "dist")
        python = learner_environment(work)
        pip_install(python, work, "ipykernel", str(wheel))  # a plain `pip install mlmcourse`
        register_kernel(python, work / "env")
        plain_jobs = [
            (f"{p.stem} (plain install)", p, plain)
            for p, nb in notebooks.items()
            if (plain := plain_notebook(nb)) is not None
        ]
        print(f"plain install: {len(plain_jobs)} chapters with optional parts", flush=True)
        plain = run_all(plain_jobs, work, learner_env(work, strict=False), args.jobs)
        pip_install(python, work, f"{wheel}[course]")
        empty = work / "empty"
        empty.mkdir()
        check_isolation(python, empty, work / "env")
        print(f"set-up and plain install took {time.time() - start:.0f} s "
              f"(mlmcourse {release.version})", flush=True)  # fmt: skip
        jobs = [(p.stem, p, nb) for p, nb in notebooks.items()]
        results = run_all(jobs, work, learner_env(work, strict=True), args.jobs)
        if args.cache:
            store(results, sources, package)
        write_times(results, plain)
        failed = [r.name for r in plain + results if not r.ok]
        cells = sum(len([c for c in r.notebook.cells if c.cell_type == "code"]) for r in results)
        plain_cells = sum(len(r.notebook.cells) for r in plain)
        print(f"chapters: {len(results)} executed once ({cells} code cells), plain install "
              f"{len(plain)} ({plain_cells} cells); {time.time() - start:.0f} s in all; "
              f"failed: {', '.join(failed) or 'none'}")  # fmt: skip
        for r in sorted(results, key=lambda r: -r.seconds):
            print(f"  {r.chapter.stem:<12} {r.seconds:6.1f} s")
        return 1 if failed else 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
