"""Fixtures of the tests that run the notebooks as a learner's Colab runs them."""

from __future__ import annotations

import pytest

from tests.colab import Colab, colab_environment


@pytest.fixture(scope="session")
def colab(tmp_path_factory) -> Colab:
    """A fresh environment with torch and a kernel only (``tests/colab.py``), shared by the
    install-cell and Hub tests of one worker: each leaves it with this version installed."""
    return colab_environment(tmp_path_factory.mktemp("colab"))
