"""Fixtures of the tests that run the notebooks as a learner's Colab runs them, and of the
tests that open the built book in Chromium (``browser`` and ``server``, shared by
``test_browser.py`` and ``test_accessibility.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.colab import Colab, colab_environment


@pytest.fixture(scope="session")
def colab(tmp_path_factory) -> Colab:
    """A fresh environment with torch and a kernel only (``tests/colab.py``), shared by the
    install-cell and Hub tests of one worker: each leaves it with this version installed."""
    return colab_environment(tmp_path_factory.mktemp("colab"))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium that can reach 127.0.0.1 only, with its console log kept."""
    from tests.book.test_browser import open_chromium

    driver = open_chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The built book served from 127.0.0.1, as a reader's browser gets it."""
    from tests.book.test_browser import serve_book

    httpd = serve_book()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
