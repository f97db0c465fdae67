"""Settings and fixtures shared by the unit tests.

Fixtures: ``tiny_config`` and ``tiny_mlm`` (the tiny encoder of ``tests/tiny.py``), and the
tokenizers several files share, built once a session: ``minilm_tokenizer`` (real BERT
WordPiece) and ``world_tokenizer`` (word-level, on the world's sentences).

The property tests (``test_properties_*.py``) run a fixed, derandomized set of examples, so a
CI failure reproduces on a laptop, with no deadline (a 2-core machine shared with other jobs
has slow moments that are not bugs). ``HYPOTHESIS_PROFILE=thorough`` tries ten times more.
"""

from __future__ import annotations

import os

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
    from mlmcourse.mlm import BertForMaskedLM

    torch.manual_seed(0)
    return BertForMaskedLM(tiny_config).eval()


@pytest.fixture(scope="session")
def minilm_tokenizer():
    """The real BERT WordPiece tokenizer of all-MiniLM-L6-v2 (read-only: shared)."""
    return tiny.minilm_tokenizer()


@pytest.fixture(scope="session")
def world_tokenizer():
    """A word-level tokenizer on 300 world sentences (read-only: shared)."""
    return tiny.world_tokenizer()


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory, world_tokenizer):
    """A saved checkpoint (step 3) of a seeded tiny MLM with the world tokenizer.

    Shared by the session: copy it (``shutil.copytree``) before changing anything in it.
    """
    from mlmcourse.checkpoint import save_checkpoint
    from mlmcourse.mlm import BertForMaskedLM

    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size))
    path = tmp_path_factory.mktemp("tiny_checkpoint") / "run"
    return save_checkpoint(path, model, tokenizer=world_tokenizer, step=3)


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


def pytest_collection_modifyitems(items):
    """The longest tests first (``@pytest.mark.slow(seconds=N)`` says how long one takes), so
    that two workers do not end with one of them alone on a long test."""

    def seconds(item) -> float:
        marker = item.get_closest_marker("slow")
        return float(marker.kwargs.get("seconds", 1)) if marker else 0.0

    items.sort(key=lambda item: -seconds(item))  # stable: the rest keep their order
