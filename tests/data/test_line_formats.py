"""Line formats (CoNLL, plain text, vocab.txt): an empty file, a wrong column count, an unknown
tag and bytes that are not UTF-8 each name the file (and line) and say what to do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlmcourse.data.real import WNUT17_LABELS, ConllFormatError, read_conll
from mlmcourse.pretraining.recipe import load_texts
from mlmcourse.tokenization import load_tokenizer
from mlmcourse.utils.checks import FileFormatError, TextEncodingError
from tests.clear_errors import clear_error

GOOD = "EU B-ORG\nrejects O\n\nPeter B-PER\nBlackburn I-PER\n"


def _wnut_lines() -> list[str]:
    """The first lines of WNUT-17's train split (a real file), or a stand-in without it."""
    folder = os.environ.get("MLMCOURSE_DATA_DIR")
    files = sorted(Path(folder).rglob("*wnut*train*")) if folder else []
    if not files:
        return ["@paul\tO", "went\tO", "to\tO", "Paris\tB-location", "", "hi\tO", ""]
    return files[0].read_text(encoding="utf-8").splitlines()[:60]


BROKEN = {
    "empty": (b"", "holds no sentences"),
    "blank lines only": (b"\n  \n\n", "holds no sentences"),
    "a line without a tag": (b"EU B-ORG\nrejects\n", "line 2: expected a token and a tag"),
    "a wrong column count": (b"EU NNP B-ORG\nrejects O\n", "line 2: 2 columns where line 1 has 3"),
    "an unknown tag": (b"EU B_ORG\n", "line 1: tag 'B_ORG' is not O, B-<type> or I-<type>"),
    "not UTF-8": ("EU B-ORG\nZürich B-LOC\n".encode("latin-1"), "line 2: not UTF-8"),
}


@pytest.mark.parametrize("case", BROKEN, ids=str)
def test_a_broken_conll_file_names_the_file_line_and_fix(case, tmp_path):
    data, expected = BROKEN[case]
    path = tmp_path / "my_data.conll"
    path.write_bytes(data)
    error = clear_error(read_conll, path)
    assert isinstance(error, FileFormatError)
    assert str(path) in str(error) and expected in str(error), str(error)
    assert ";" in str(error)  # then what to do


def test_a_real_wnut17_file_corrupted_line_by_line(tmp_path):
    lines = _wnut_lines()
    path = tmp_path / "wnut.conll"
    tagged = [i for i, line in enumerate(lines) if "\t" in line][1:15]  # line 1 sets the columns
    for index in tagged:
        token, tag = lines[index].split("\t")[0], lines[index].split("\t")[-1]
        for bad, what in [
            (token, "expected a token and a tag"),
            (f"{token}\tX\t{tag}", "columns where line"),
            (f"{token}\tB-nonsense", "is not one of"),
        ]:
            changed = [*lines[:index], bad, *lines[index + 1 :]]
            path.write_text("\n".join(changed) + "\n", encoding="utf-8")
            error = clear_error(read_conll, path, labels=WNUT17_LABELS, sep="\t")
            assert isinstance(error, ConllFormatError)
            assert f"{path}, line {index + 1}:" in str(error) and what in str(error)


@pytest.mark.parametrize(
    "data, expected",
    [(b"", "0 non-empty lines"), (b"caf\xe9\n" * 30, "not UTF-8")],
    ids=["empty", "latin-1"],
)
def test_a_broken_plain_text_corpus_names_the_file(data, expected, tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    error = clear_error(load_texts, [str(path)])
    assert str(path) in str(error) and expected in str(error)


@pytest.mark.parametrize(
    "data, error_type", [(b"", FileFormatError), (b"[PAD]\n[UNK]\ncaf\xe9\n", TextEncodingError)]
)
def test_a_broken_vocab_txt_names_the_file(data, error_type, tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(data)
    error = clear_error(load_tokenizer, path)
    assert isinstance(error, error_type) and str(path) in str(error)
