"""Settings and fixtures shared by the unit tests.

Fixtures: ``tiny_config`` and ``tiny_mlm`` (the tiny encoder of ``tests/tiny.py``), and the
tokenizers several files share, built once a session: ``minilm_tokenizer`` (real BERT
WordPiece) and ``world_tokenizer`` (word-level, on the world's sentences).

The property tests (``test_properties_*.py``) run a fixed, derandomized set of examples, so a
CI failure reproduces on a laptop, with no deadline (a 2-core machine shared with other jobs
has slow moments that are not bugs). ``HYPOTHESIS_PROFILE=thorough`` tries ten times more.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from tests import tiny
from tests.tiny import tiny_encoder_config

# Under pytest-xdist every worker is a process of its own: with torch's default of one thread
# per core, two workers (and the processes their tests start) ask for twice the cores there
# are, and OpenMP threads waiting on each other made the suite several times slower (the world
# retrain took 481 s instead of about 150). One thread per worker, and per child process.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the property tests skip themselves without hypothesis
    pass
else:
    _COMMON = {
        "deadline": None,
        "derandomize": True,
        "database": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    }
    settings.register_profile("mlmcourse", max_examples=200, **_COMMON)
    settings.register_profile("thorough", max_examples=2000, **_COMMON)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "mlmcourse"))


@pytest.fixture
def tiny_config():
    """A 2-layer, 32-wide encoder config (see ``tests/tiny.py``)."""
    return tiny_encoder_config()


@pytest.fixture
def tiny_mlm(tiny_config):
    """A seeded ``BertForMaskedLM`` on the tiny config, in eval mode."""
    from mlmcourse.heads import BertForMaskedLM

    torch.manual_seed(0)
    return BertForMaskedLM(tiny_config).eval()


@pytest.fixture(scope="session")
def minilm_tokenizer():
    """The real BERT WordPiece tokenizer of all-MiniLM-L6-v2 (read-only: shared)."""
    return tiny.load_minilm_tokenizer()


@pytest.fixture(scope="session")
def world_tokenizer():
    """A word-level tokenizer on 300 world sentences (read-only: shared)."""
    return tiny.train_world_tokenizer()


@pytest.fixture(scope="session")
def shipped_world():
    """The shipped world model's checkpoint (read-only: shared)."""
    from mlmcourse.checkpoint import shipped_checkpoint
    from mlmcourse.heads import load_checkpoint

    return load_checkpoint(shipped_checkpoint("world"))


@pytest.fixture(scope="session")
def world_tagger(shipped_world):
    """A tagger on the shipped world encoder with the world labels and a seeded, untrained
    classifier (read-only: shared)."""
    from mlmcourse.data import WORLD_LABELS
    from mlmcourse.heads import BertForTokenClassification

    torch.manual_seed(0)
    return BertForTokenClassification.from_encoder(
        shipped_world.model, len(WORLD_LABELS), id2label=WORLD_LABELS
    ).eval()


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory, world_tokenizer):
    """A saved checkpoint (step 3) of a seeded tiny MLM with the world tokenizer.

    Shared by the session: copy it (``shutil.copytree``) before changing anything in it.
    """
    from mlmcourse.checkpoint import TrainingState, save_checkpoint
    from mlmcourse.heads import BertForMaskedLM

    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size))
    path = tmp_path_factory.mktemp("tiny_checkpoint") / "run"
    return save_checkpoint(path, model, tokenizer=world_tokenizer, state=TrainingState(step=3))


@pytest.fixture(scope="session")
def distributions(tmp_path_factory) -> list:
    """The sdist and the wheel: ``make``'s (``$MLMCOURSE_DIST``, built once for the chapters and
    these tests, current by make's rule) or, without it, built here."""
    import subprocess
    import sys
    from pathlib import Path

    given = os.environ.get("MLMCOURSE_DIST")
    out = Path(given) if given else None
    if out is None or not (out / ".built").exists():
        out = tmp_path_factory.mktemp("dist")
        root = Path(__file__).resolve().parent.parent
        subprocess.run(
            [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(root)],
            check=True, capture_output=True,
        )  # fmt: skip
    return sorted(p for p in out.iterdir() if p.name.endswith((".whl", ".tar.gz")))


@pytest.fixture(scope="session")
def wheel(distributions):
    """The built wheel (see ``distributions``)."""
    (path,) = [p for p in distributions if p.suffix == ".whl"]
    return path


# How long each test took in the last full run (setup, call and teardown, in ``make test``'s
# stages: two workers beside the chapters), recorded by that run (``make unit`` and ``make slow``
# set MLMCOURSE_RECORD_DURATIONS=tests/durations.json, the file to write) and committed, so a
# clean clone balances its workers by what the tests took, not by numbers typed into markers.
DURATIONS = Path(__file__).with_name("durations.json")
LONG = 5.0  # seconds: a test this long is dealt to a worker; shorter ones keep their file order


def recorded_seconds(path: Path = DURATIONS) -> dict[str, float]:
    """``{test id: seconds}`` from the last recorded run; empty when there is none."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


_measured: dict[str, float] = {}
_failed: set[str] = set()


def pytest_runtest_logreport(report):
    """Add up each test's phases (on the controller, which sees every worker's reports)."""
    if os.environ.get("MLMCOURSE_RECORD_DURATIONS") and not os.environ.get("PYTEST_XDIST_WORKER"):
        _measured[report.nodeid] = _measured.get(report.nodeid, 0.0) + report.duration
        if report.failed:
            _failed.add(report.nodeid)


def merged_durations(
    recorded: dict[str, float], measured: dict[str, float], failed: set[str]
) -> dict[str, float]:
    """``recorded`` updated with this run's times, sorted by test id; a test that failed keeps
    its recorded time (a failure that ends early would make it look short)."""
    merged = dict(recorded)
    for nodeid, seconds in measured.items():
        if nodeid not in failed or nodeid not in merged:
            merged[nodeid] = round(seconds, 1)
    return dict(sorted(merged.items()))


def pytest_sessionfinish(session, exitstatus):
    """Write this run's durations into :data:`DURATIONS` (on the controller only)."""
    if _measured and not os.environ.get("PYTEST_XDIST_WORKER"):
        path = Path(os.environ["MLMCOURSE_RECORD_DURATIONS"])
        merged = merged_durations(recorded_seconds(path), _measured, _failed)
        path.write_text(json.dumps(merged, indent=0) + "\n", encoding="utf-8")


# Session fixtures that cost a worker a minute or more to build: every test using one goes to the
# same worker, which builds it once. `colab` is a Colab-like environment into which the first
# test installs this version from a package index (pip resolving the course extra on PyPI).
ONE_WORKER_FIXTURES = ("colab",)


def one_worker_fixture(item) -> str | None:
    """The first of ``ONE_WORKER_FIXTURES`` that ``item`` uses, if any."""
    names = getattr(item, "fixturenames", ())
    return next((name for name in ONE_WORKER_FIXTURES if name in names), None)


def balanced_order(items: list, workers: int, seconds: dict[str, float]) -> list:
    """The order in which ``workers`` xdist workers share the longest tests evenly.

    pytest-xdist's worksteal scheduler first hands each worker a contiguous share of the
    collection (the first ``n // workers`` tests to the first, and so on). Here each share
    starts with its long tests (``seconds[test id]`` at least :data:`LONG`), dealt longest first
    to the share with the least seconds so far (two long tests on one worker would run one after
    the other while the other worker idles), except that the long tests using one of
    ``ONE_WORKER_FIXTURES`` follow the first of them; the other tests fill the shares in their
    collection order, so a file stays together.
    """

    def took(item) -> float:
        return seconds.get(item.nodeid, 0.0)

    long = sorted((i for i in items if took(i) >= LONG), key=took)[::-1]
    rest = [i for i in items if took(i) < LONG]
    if not long or workers < 2:
        return long + rest
    sizes, left = [], len(items)
    for k in range(workers):  # as xdist splits: left // workers still to serve
        sizes.append(left // (workers - k))
        left -= sizes[-1]
    shares, load = [[] for _ in sizes], [0.0] * workers
    placed: dict[str, int] = {}  # fixture -> the share of its first test
    for item in long:
        open_shares = [k for k in range(workers) if len(shares[k]) < sizes[k]]
        fixture = one_worker_fixture(item)
        k = placed.get(fixture)
        if k not in open_shares:
            k = min(open_shares, key=load.__getitem__)
        if fixture:
            placed.setdefault(fixture, k)
        shares[k].append(item)
        load[k] += took(item)
    rest_iter = iter(rest)
    for k, share in enumerate(shares):
        share.extend(next(rest_iter) for _ in range(sizes[k] - len(share)))
    return [item for share in shares for item in share]


@pytest.hookimpl(trylast=True)  # after `-m` has deselected: these are the tests that run
def pytest_collection_modifyitems(items):
    """The long tests (by :data:`DURATIONS`) first, shared evenly by the workers."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = balanced_order(items, workers, recorded_seconds())
