"""The first cell of every notebook, run as generated against a package index and a git tag.

Every other test installs the wheel first, so the install cell finds its version present and
does nothing. Here it runs in a fresh environment that has only torch and a Jupyter kernel, as
Colab has (``tests/colab.py``), with pip cut off from this machine's own configuration, against:

- a package index on 127.0.0.1 serving the built wheel, with PyPI as the extra index for the
  dependencies: it installs this version with the ``course`` extra, and the chapter's first
  cells then run; run again, it does nothing; over an older version, it replaces it;
- an index without mlmcourse (PyPI alone, as before the first release): it falls back to the
  repository at the version's tag, here a local bare clone of this checkout standing in for
  GitHub (through git's ``url.<base>.insteadOf``);
- neither reachable: the learner gets one short message saying what to do, not pages of pip
  and git output.

The dependencies are held to requirements.txt's versions (``PIP_CONSTRAINT``), so the run
tests our cell, not the newest release of every library on the day.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.colab import PYPI, RELEASE, ROOT, installed, kernel_env, pip, run_cells, shown
from tests.local_index import LocalIndex

sys.path.insert(0, str(ROOT / "scripts"))
import make_notebooks as mn  # noqa: E402

CHAPTER = ROOT / "book" / "intro.md"


def first_cells(n: int) -> list:
    """The install cell and the chapter's next ``n - 1`` code cells, as generated for Colab."""
    nb = mn.editions(CHAPTER, RELEASE)["colab"]
    return [c for c in nb.cells if c.cell_type == "code"][:n]


def older_wheel(tmp: Path) -> Path:
    """This package under an older version number (what a learner installed last term)."""
    source = tmp / "old"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "mlmcourse", source / "mlmcourse", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    init = source / "mlmcourse" / "__init__.py"
    init.write_text(init.read_text().replace(f'"{RELEASE.version}"', '"0.0.1"'))
    build = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp)]
    subprocess.run([*build, str(source)], check=True, capture_output=True)
    return next(tmp.glob("mlmcourse-0.0.1-*.whl"))


@pytest.fixture(scope="module")
def github(tmp_path_factory) -> Path:
    """This checkout's commits as a bare repository, tagged ``v<version>`` at HEAD."""
    bare = tmp_path_factory.mktemp("github") / "mlmcourse.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(ROOT), str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "tag", "-f", RELEASE.tag, "HEAD"], check=True)
    return bare


@pytest.mark.slow
def test_the_install_cell_on_every_path(colab, wheel, github, tmp_path):
    if installed(colab)[0] is not None:  # the Hub test of this worker installed it first
        pip(colab, "uninstall", "-y", "mlmcourse")
    install = f"installing mlmcourse[course]=={RELEASE.version} ..."

    # Neither an index nor the repository: one short message, the kernel's run stopped.
    result = run_cells(colab, first_cells(1), kernel_env(colab, index=None), CHAPTER)
    message = shown(result)
    assert (
        not result.ok
        and f"UsageError: mlmcourse {RELEASE.version} could not be installed:" in message
    )
    assert "Check the internet connection" in message and "pip install" in message, message
    assert len(message.splitlines()) <= 6 and "Traceback" not in message, message
    assert installed(colab)[0] is None

    with LocalIndex([wheel]) as index:
        # A package index with this version: installed with the course extra, first cells run.
        env = kernel_env(colab, index=index.url, extra=PYPI)
        result = run_cells(colab, first_cells(3), env, CHAPTER)
        assert result.ok, result.report.get("error")
        assert f"GET /files/{wheel.name} 200" in index.log
        assert shown(result).strip() == install
        assert f"mlmcourse {RELEASE.version}, running on cpu" in shown(result, 1)
        assert installed(colab) == (RELEASE.version, "index")

        # Run again: nothing to do, nothing asked of the index.
        served = len(index.log)
        result = run_cells(colab, first_cells(1), env, CHAPTER)
        assert result.ok and shown(result) == "" and len(index.log) == served

        # Over an older version: replaced by this one.
        pip(colab, "install", "--no-deps", str(older_wheel(tmp_path)))
        assert installed(colab)[0] == "0.0.1"
        result = run_cells(colab, first_cells(1), env, CHAPTER)
        assert result.ok and shown(result).strip() == install, result.report.get("error")
        assert installed(colab) == (RELEASE.version, "index")

    # An index without mlmcourse (before the first release): the repository at the tag.
    pip(colab, "uninstall", "-y", "mlmcourse")
    result = run_cells(colab, first_cells(3), kernel_env(colab, index=PYPI, github=github), CHAPTER)
    assert result.ok, result.report.get("error")
    assert shown(result).strip().splitlines() == [
        install,
        f"installing {RELEASE.pip_source_fallback} ...",
    ]
    version, source = installed(colab)
    assert version == RELEASE.version and re.search(r'"vcs": "git"', source), source
    assert f"mlmcourse {RELEASE.version}, running on cpu" in shown(result, 1)
    pip(colab, "install", "--no-deps", "--force-reinstall", str(wheel))  # the wheel, for the rest
