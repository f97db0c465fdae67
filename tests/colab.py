"""A fresh environment shaped like Colab's, and running a notebook's cells in it as generated.

Colab's Python comes with torch and a Jupyter kernel already installed, system-wide: what a
notebook installs goes into the user's site and shadows them. ``scripts/test_notebooks.py``'s
``learner_environment`` builds such an environment (this checkout's torch and ipykernel, and
what they need, linked from outside it); here it gets a kernel registered.

:func:`kernel_env` cuts pip off from this machine's own configuration (its find-links, extra
indexes and constraints) and points it, and git, where a test says. :func:`run_cells` executes
cells of a generated notebook there, each run in an empty folder of its own, through
``scripts/test_notebooks.py``'s executor (the one that runs every chapter).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_notebooks  # noqa: E402
import test_notebooks as runner  # noqa: E402

RELEASE = make_notebooks.read_release()
PYPI = "https://pypi.org/simple/"
CLOSED = "http://127.0.0.1:9/simple/"  # the discard port: nothing listens there


@dataclass
class Colab:
    work: Path
    python: Path
    runs: list[str] = field(default_factory=list)


def colab_environment(work: Path) -> Colab:
    """A new venv with torch and ipykernel only (``learner_environment``), a kernel registered."""
    python = runner.learner_environment(work)
    runner.register_kernel(python, work / "env")
    return Colab(work, python)


def kernel_env(
    colab: Colab, *, index: str | None, extra: str | None = None, github: Path | None = None
) -> dict[str, str]:
    """The kernel's environment: pip sees only ``index`` (and ``extra``), held to
    requirements.txt's versions; git fetches the course repository from ``github`` (a bare
    clone) or from nowhere."""
    env = runner.learner_env(colab.work, strict=False)
    for name in [k for k in env if k.startswith("PIP_") and k != "PIP_CERT"]:
        del env[name]  # the machine's find-links, extra indexes, constraints
    gitconfig = colab.work / f"gitconfig-{len(colab.runs)}"
    target = github.as_uri() if github else "file:///nonexistent/mlmcourse.git"
    gitconfig.write_text(f'[url "{target}"]\n\tinsteadOf = {RELEASE.repository}\n')
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_INDEX_URL=index or CLOSED,
        PIP_CONSTRAINT=str(colab.work / "constraints.txt"),
        PIP_RETRIES="0",
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
    )
    if extra:
        env["PIP_EXTRA_INDEX_URL"] = extra
    return env


def run_cells(colab: Colab, cells: list, env: dict[str, str], chapter: Path) -> runner.Result:
    """``cells`` as a notebook, executed in the Colab environment in an empty folder."""
    name = f"{chapter.stem}-{len(colab.runs)}"
    colab.runs.append(name)
    nb = nbformat.v4.new_notebook(cells=cells)
    return runner.execute(name, chapter, nb, colab.work, env)


def shown(result: runner.Result, cell: int = 0) -> str:
    """What a cell showed the learner: its printed lines and its error."""
    parts = []
    for output in result.notebook.cells[cell].get("outputs", []):
        parts.append(output.get("text", ""))
        if output.get("output_type") == "error":
            parts.append(f"{output['ename']}: {output['evalue']}")
    return "".join(parts)


def installed(colab: Colab) -> tuple[str | None, str]:
    """mlmcourse's version in the environment (None: not installed) and its source: "index",
    or pip's ``direct_url.json`` (a git URL and commit, a file)."""
    probe = (
        "import importlib.metadata as m\n"
        "try:\n d = m.distribution('mlmcourse')\n"
        " print(d.version, (d.read_text('direct_url.json') or 'index').replace(chr(10), ' '))\n"
        "except m.PackageNotFoundError:\n print('- -')"
    )
    out = subprocess.run(
        [str(colab.python), "-c", probe], capture_output=True, text=True, cwd=colab.work,
        check=True,
    ).stdout.split(" ", 1)  # fmt: skip
    return (None if out[0] == "-" else out[0]), out[1].strip()


def pip(colab: Colab, *args: str) -> None:
    """pip in the Colab environment, with this machine's configuration (local wheels)."""
    subprocess.run([str(colab.python), "-m", "pip", "-q", *args], check=True, cwd=colab.work)


def colab_cells(chapter: Path) -> list:
    """The code cells of a chapter's Colab notebook, as generated (the install cell first)."""
    nb = make_notebooks.editions(chapter, RELEASE)["colab"]
    return [c for c in nb.cells if c.cell_type == "code"]


def install_from_index(colab: Colab, wheel: Path) -> None:
    """This version installed as a learner's first cell installs it, from an index serving
    ``wheel`` (PyPI for the dependencies); nothing to do if it is there already."""
    from tests.local_index import LocalIndex

    if installed(colab)[0] == RELEASE.version:
        return
    chapter = ROOT / "book" / "intro.md"
    with LocalIndex([wheel]) as index:
        env = kernel_env(colab, index=index.url, extra=PYPI)
        result = run_cells(colab, colab_cells(chapter)[:1], env, chapter)
    assert result.ok, result.report.get("error")
