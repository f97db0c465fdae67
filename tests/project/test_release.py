"""The release path: one version, a changelog entry for it, and distributions that pass
``twine check``. The workflows that publish them are checked in ``test_workflows.py``."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import mlmcourse

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_lives_in_one_place():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "mlmcourse.__version__" }' in pyproject
    assert not re.search(r"^version\s*=\s*\"", pyproject, re.M)  # no literal version


def test_the_changelog_starts_with_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    first = re.search(r"^## (\S+)", changelog, re.M)
    assert first and first[1] == mlmcourse.__version__


@pytest.mark.slow  # builds the distributions (or reads make's)
def test_sdist_and_wheel_pass_twine_check(distributions):
    assert {p.suffix for p in distributions} == {".gz", ".whl"}
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, distributions)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


@pytest.mark.slow  # builds the distributions (or reads make's)
def test_the_sdist_carries_what_the_wheel_is_built_from(distributions):
    import tarfile

    (sdist,) = [p for p in distributions if p.suffix == ".gz"]
    names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "mlmcourse/__init__.py"} <= names
    assert "mlmcourse/course/results/ddp_cpu.json" in names


def test_every_package_data_pattern_names_a_file():
    tomllib = pytest.importorskip("tomllib")
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["mlmcourse"]
    empty = [p for p in patterns if not any((ROOT / "mlmcourse").glob(p))]
    assert empty == [], f"pyproject.toml's package data names no file: {empty}"
