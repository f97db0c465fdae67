"""Measured rows when the data is here, the committed ones (and why) when it is not."""

import pytest

from mlmcourse.course import measured
from mlmcourse.course.results import load_results

# a few paragraphs of each release: the tokenized one hides rare words behind <unk>
PROSE = [f"The {w} river flows past the old town of {w}ton in spring ." for w in "abcdefghij"]


@pytest.fixture
def copy_here(monkeypatch):
    def use(paragraphs):
        monkeypatch.setattr(measured, "local_wikitext2_validation", lambda: paragraphs)

    return use


def test_a_tokenized_copy_is_measured(copy_here):
    copy_here([p.replace("spring", "<unk>") for p in PROSE])
    rows, note, here = measured.wikitext2_tokenizer_rows()
    assert here and {r["corpus"] for r in rows} == {"WikiText-2"}
    assert {r["tokenizer"] for r in rows} == {"word-level", "WordPiece"}
    assert note == "WikiText-2: trained on 8 paragraphs, measured on 2"


@pytest.mark.parametrize(
    ("paragraphs", "why"),
    [(None, "WikiText-2 is not on this machine"), (PROSE, "is the raw release")],
    ids=["no copy", "raw release"],
)
def test_otherwise_the_committed_rows_are_shown_and_the_note_says_why(copy_here, paragraphs, why):
    copy_here(paragraphs)
    rows, note, here = measured.wikitext2_tokenizer_rows()
    committed = load_results("tokenizers_wikitext2")["rows"]
    assert not here and why in note and "MLMCOURSE_DATA_DIR" in note
    assert rows == [{**r, "corpus": "WikiText-2 *"} for r in committed]


def test_no_copy_means_no_download(monkeypatch, tmp_path):
    monkeypatch.delenv("MLMCOURSE_DATA_DIR", raising=False)
    monkeypatch.setattr(measured, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(measured, "load_wikitext2", pytest.fail)  # would download
    assert measured.local_wikitext2_validation() is None
