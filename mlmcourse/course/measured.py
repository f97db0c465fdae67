"""Rows a chapter measures when the data is on this machine, else the committed ones.

A chapter never waits on a download: without a local copy it shows the committed results of
the same measurement, marked ``*``, and says in one line where they come from. A copy that is
not what the committed run measured (the raw WikiText-2 release instead of the tokenized one)
is not compared with it: the chapter shows the committed rows and says why.
"""

from __future__ import annotations

from typing import Any

from mlmcourse.course.results import load_results
from mlmcourse.data import load_wikitext2
from mlmcourse.data.real import REGISTRY, cache_dir, data_dir
from mlmcourse.tokenization import wikitext2_comparison

__all__ = ["local_wikitext2_validation", "wikitext2_tokenizer_rows"]


def local_wikitext2_validation() -> list[str] | None:
    """WikiText-2's validation paragraphs when a copy is here (``MLMCOURSE_DATA_DIR`` or the
    download cache), else ``None``: nothing is downloaded."""
    if data_dir() is None and not (cache_dir() / REGISTRY["wikitext2/raw"].local).is_file():
        return None
    try:
        return load_wikitext2("validation")
    except OSError:  # e.g. MLMCOURSE_DATA_DIR holds no WikiText-2 and we are offline
        return None


def wikitext2_tokenizer_rows(
    others: dict[str, Any] | None = None,
) -> tuple[list[dict], str, bool]:
    """The tokenizers chapter's WikiText-2 rows, a line saying where they come from, and
    whether they were measured here.

    Measured (:func:`~mlmcourse.tokenization.wikitext2_comparison`, with ``others`` such as
    BERT's tokenizer) on a local copy of the tokenized release, the one
    ``tokenizers_wikitext2.json`` was measured on; otherwise that file's rows, their corpus
    ``"WikiText-2 *"``.
    """
    paragraphs = local_wikitext2_validation()
    if paragraphs is not None and any("<unk>" in p for p in paragraphs):
        rows, n_train, n_test = wikitext2_comparison(paragraphs, others)
        return rows, f"WikiText-2: trained on {n_train:,} paragraphs, measured on {n_test:,}", True
    committed = load_results("tokenizers_wikitext2")
    why = (
        "WikiText-2 is not on this machine"
        if paragraphs is None
        else "This copy of WikiText-2 is the raw release, and the committed rows were measured "
        "on the tokenized one (rare words replaced by <unk>), so they are not comparable"
    )
    note = (
        f"{why}: its rows (*) are the committed results of {committed['command']!r}. To measure "
        "them here, set MLMCOURSE_DATA_DIR to a folder holding wikitext-2/valid.txt (the "
        "tokenized release)."
    )
    return [{**row, "corpus": "WikiText-2 *"} for row in committed["rows"]], note, False
