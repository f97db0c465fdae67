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
