"""Real-data loaders: parsers on small fixtures, fetching without a network, and the real files.

No test here touches the network: downloads go to ``file://`` URLs of fixtures, and the real
WNUT-17 and WikiText-2 files are read through ``MLMCOURSE_DATA_DIR`` when the course's shared
data folder exists (the tests skip cleanly when it does not).
"""

import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from mlmcourse.data import Sentence, load_sst2, load_wikitext2, load_wnut17, read_conll
from mlmcourse.data import real as R

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
SHARED = Path(
    os.environ.get("MLMCOURSE_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "data"
)
needs_shared = pytest.mark.skipif(
    not (SHARED / "wnut17" / "wnut17train.conll").is_file(), reason="no shared data folder"
)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty download cache and no local data folder."""
    monkeypatch.setenv("MLMCOURSE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MLMCOURSE_DATA_DIR", raising=False)
    return tmp_path / "cache"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _register(monkeypatch, name: str, source: Path | str, sha: str, local: str) -> None:
    url = source.as_uri() if isinstance(source, Path) else source
    monkeypatch.setitem(R.REGISTRY, name, R.RemoteFile((url,), sha, local))


# --- parsers -----------------------------------------------------------------------------------


def test_read_conll_2003_format_takes_first_and_last_columns():
    sentences = read_conll(FIXTURES / "conll2003_small.txt")
    assert sentences == [
        Sentence(
            ("Tarvo", "Meskin", "visited", "Orlen", "."), ("B-PER", "I-PER", "O", "B-LOC", "O")
        ),
        Sentence(("Kelso", "rose"), ("B-ORG", "O")),  # no blank line at the end of the file
    ]


def test_wnut_format_lone_tab_separators_and_tokens_with_spaces():
    path = FIXTURES / "wnut17_small.conll"
    sentences = R.read_conll(path, labels=R.WNUT17_LABELS, sep="\t")
    assert [len(s.tokens) for s in sentences] == [8, 5, 3]
    assert sentences[2].tokens[1] == "Blue Hawks" and sentences[2].tags[1] == "B-group"
    assert sentences[0].tags[2:4] == ("B-person", "I-person")


def test_missing_tag_names_file_and_line():
    path = FIXTURES / "wnut17_missing_tag.conll"
    with pytest.raises(R.ConllFormatError, match=r"wnut17_missing_tag\.conll, line 3: .*no tag"):
        read_conll(path, labels=R.WNUT17_LABELS, sep="\t")


def test_tag_outside_label_set_names_file_and_line():
    path = FIXTURES / "conll2003_bad_tag.txt"
    with pytest.raises(R.ConllFormatError, match=r"conll2003_bad_tag\.txt, line 3: tag 'B-PLACE'"):
        read_conll(path, labels=["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    # Without a label set the scheme itself is checked: B-PLACE is valid BIO, "PER" is not.
    assert len(read_conll(path)) == 1
    with pytest.raises(R.ConllFormatError, match=r"<string>, line 1: tag 'PER' is not O, B-"):
        R.parse_conll(["Tarvo PER"], "<string>")


def test_read_conll_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no CoNLL file at"):
        read_conll(tmp_path / "nope.conll")


def test_clean_wikitext_undoes_placeholders():
    assert R.clean_wikitext(" a state @-@ of @-@ the @-@ art , 1 @,@ 200 at 3 @.@ 5 % \n") == (
        "a state-of-the-art , 1,200 at 3.5 %"
    )


def test_parse_wikitext_drops_headings_and_blank_lines():
    lines = (FIXTURES / "wikitext_small.raw").read_text(encoding="utf-8").splitlines(True)
    paragraphs = R.parse_wikitext(lines)
    assert paragraphs == [
        "Tarvo Meskin ( born 12 March 1901 ) was a state-of-the-art boat builder who sold 1,200"
        " boats at 3.5 percent profit .",
        "Meskin grew up in Orlen .",
    ]
    assert R.parse_wikitext(lines, keep_headings=True)[0] == "= Tarvo Meskin ="


# --- fetching ----------------------------------------------------------------------------------


def test_fetch_downloads_checks_and_caches(cache, monkeypatch, tmp_path):
    source = tmp_path / "mirror" / "wnut17train.conll"
    source.parent.mkdir()
    source.write_bytes((FIXTURES / "wnut17_small.conll").read_bytes())
    _register(monkeypatch, "wnut17/train", source, _sha(source), "wnut17/wnut17train.conll")
    assert len(load_wnut17("train")) == 3
    cached = cache / "wnut17" / "wnut17train.conll"
    assert cached.read_bytes() == source.read_bytes()
    source.unlink()  # the second call needs no source: the cache is enough
    assert len(load_wnut17("train")) == 3


def test_wrong_checksum_is_rejected_and_nothing_is_cached(cache, monkeypatch):
    source = FIXTURES / "wnut17_small.conll"
    _register(monkeypatch, "wnut17/dev", source, "0" * 64, "wnut17/emerging.dev.conll")
    with pytest.raises(R.ChecksumError) as info:
        load_wnut17("dev")
    message = str(info.value)
    assert source.as_uri() in message and str(cache / "wnut17" / "emerging.dev.conll") in message
    assert not [p for p in cache.rglob("*") if p.is_file()]  # no file, no temporary left over


def test_offline_error_names_url_cache_path_and_the_manual_route(cache, monkeypatch):
    url = "http://127.0.0.1:9/emerging.test.annotated"  # port 9 refuses: fails at once
    _register(monkeypatch, "wnut17/test", url, "1" * 64, "wnut17/emerging.test.annotated")
    with pytest.raises(R.DownloadError) as info:
        R.fetch("wnut17/test")
    message = str(info.value)
    assert url in message
    assert str(cache / "wnut17" / "emerging.test.annotated") in message
    assert "MLMCOURSE_DATA_DIR" in message and "1" * 64 in message
    assert not [p for p in cache.rglob("*") if p.is_file()]


def test_local_data_dir_is_used_and_checked(cache, monkeypatch, tmp_path):
    local = tmp_path / "local"
    (local / "wnut17").mkdir(parents=True)
    copy = local / "wnut17" / "wnut17train.conll"
    copy.write_bytes((FIXTURES / "wnut17_small.conll").read_bytes())
    monkeypatch.setenv("MLMCOURSE_DATA_DIR", str(local))
    _register(
        monkeypatch, "wnut17/train", "http://127.0.0.1:9/x", _sha(copy), "wnut17/wnut17train.conll"
    )
    assert R.fetch("wnut17/train") == copy
    copy.write_text("corrupted\tO\n", encoding="utf-8")
    with pytest.raises(R.ChecksumError, match="MLMCOURSE_DATA_DIR"):
        R.fetch("wnut17/train")


def test_wikitext_raw_zip_is_read_without_extracting(cache, monkeypatch, tmp_path):
    archive = tmp_path / "wikitext-2-raw-v1.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(FIXTURES / "wikitext_small.raw", "wikitext-2-raw/wiki.test.raw")
    _register(monkeypatch, "wikitext2/raw", archive, _sha(archive), "wikitext-2-raw-v1.zip")
    paragraphs = load_wikitext2("test")
    assert paragraphs[-1] == "Meskin grew up in Orlen ." and "1,200" in paragraphs[0]


def test_bad_names_are_clear_errors(cache):
    with pytest.raises(ValueError, match="'train', 'dev' or 'test'; got 'validation'"):
        load_wnut17("validation")
    with pytest.raises(ValueError, match="got 'valid'"):
        load_wikitext2("valid")
    with pytest.raises(KeyError, match="unknown data file"):
        R.fetch("conll2003/train")


def test_sst2_tsv_is_parsed_and_fetched_with_its_checksum(cache, monkeypatch):
    source = FIXTURES / "sst2_small.tsv"
    _register(monkeypatch, "sst2/dev", source, _sha(source), "sst2/dev.tsv")
    assert load_sst2("dev") == [
        ("it 's a charming and often affecting journey .", 1),
        ("unflinchingly bleak and desperate", 0),
    ]
    assert (cache / "sst2" / "dev.tsv").is_file()


def test_sst2_malformed_line_names_file_and_line():
    path = FIXTURES / "sst2_bad.tsv"
    with pytest.raises(ValueError, match=r"sst2_bad\.tsv, line 3: expected a sentence, a tab"):
        R.parse_sst2(path.read_text().splitlines(), str(path))
    with pytest.raises(ValueError, match="GLUE's test has no labels"):
        load_sst2("test")


# --- the real files, through MLMCOURSE_DATA_DIR ------------------------------------------------


@needs_shared
def test_real_wnut17_through_the_local_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("MLMCOURSE_DATA_DIR", str(SHARED))
    monkeypatch.setenv("MLMCOURSE_CACHE", str(tmp_path / "cache"))
    sizes = {split: len(load_wnut17(split)) for split in ("train", "dev", "test")}
    assert sizes == {"train": 3394, "dev": 1009, "test": 1287}
    train = load_wnut17("train")
    assert {t for s in train for t in s.tags} == set(R.WNUT17_LABELS)
    assert not (tmp_path / "cache").exists()  # nothing was downloaded


@needs_shared
def test_real_wikitext2_tokenized_validation_through_the_local_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("MLMCOURSE_DATA_DIR", str(SHARED))
    monkeypatch.setenv("MLMCOURSE_CACHE", str(tmp_path / "cache"))
    paragraphs = load_wikitext2("validation")
    assert len(paragraphs) > 1000
    assert not any("@-@" in p or "@,@" in p or "@.@" in p for p in paragraphs)
    assert not any(p.startswith("= ") for p in paragraphs)
    words = sum(len(p.split()) for p in paragraphs)
    assert 190_000 < words < 230_000  # about 217k words including headings


@needs_shared
def test_real_sst2_through_the_local_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("MLMCOURSE_DATA_DIR", str(SHARED))
    monkeypatch.setenv("MLMCOURSE_CACHE", str(tmp_path / "cache"))
    train, dev = load_sst2("train"), load_sst2("dev")
    assert (len(train), len(dev)) == (67349, 872)
    assert sum(label for _, label in dev) == 444  # GLUE's dev: 444 positive, 428 negative
    assert not (tmp_path / "cache").exists()
