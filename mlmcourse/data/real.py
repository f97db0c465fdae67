"""Real data: WNUT-17 (NER on tweets), WikiText-2 (Wikipedia prose), SST-2 (sentiment), SQuAD
(questions, read by :mod:`mlmcourse.tasks.qa`) and your own CoNLL files.

Files are fetched from their public source with ``pooch``, checked against a known sha256 and
kept in a cache (``~/.cache/mlmcourse``, or ``$MLMCOURSE_CACHE``). Two ways to work offline:

- set ``MLMCOURSE_DATA_DIR`` to a folder laid out like this (the layout of the course's shared
  data folder); a file found there is used instead of downloading::

      wnut17/wnut17train.conll  wnut17/emerging.dev.conll  wnut17/emerging.test.annotated
      wikitext-2-raw-v1.zip     (or wikitext-2-raw/wiki.valid.raw ..., or the tokenized
                                 release wikitext-2/valid.txt ...)
      sst2/train.tsv  sst2/dev.tsv  squad/train-v1.1.json  squad/dev-v1.1.json

- or copy the file by hand to the cache path that the error message names.

A download is written to a temporary file next to its cache path and moved there only after
its sha256 matched, so a failed or corrupted download never leaves anything in the cache.
CoNLL-2003 itself is never downloaded: its licence forbids redistribution; read your own copy
with :func:`read_conll`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mlmcourse.data.sentence import Sentence
from mlmcourse.utils.checks import FileFormatError, decode_text, read_text

__all__ = [
    "WNUT17_LABELS",
    "ChecksumError",
    "ConllFormatError",
    "DownloadError",
    "RemoteFile",
    "SST2_LABELS",
    "cache_dir",
    "clean_wikitext",
    "fetch",
    "load_sst2",
    "load_wikitext2",
    "load_wnut17",
    "parse_sst2",
    "parse_conll",
    "read_conll",
]

WNUT17_TYPES = ["corporation", "creative-work", "group", "location", "person", "product"]
WNUT17_LABELS = ["O"] + [f"{p}-{t}" for t in WNUT17_TYPES for p in ("B", "I")]
"""The 13 BIO labels of WNUT-17, ``"O"`` first."""

_WNUT_BASE = "https://raw.githubusercontent.com/leondz/emerging_entities_17/master/"
_SST2_BASE = (
    "https://raw.githubusercontent.com/eyalbd2/Reproducing-AutoPrompt/"
    "53e9e221b58e5ed882a56c9d8be838b895351165/glue_data/SST-2/"
)
_SQUAD_BASE = "https://rajpurkar.github.io/SQuAD-explorer/dataset/"


@dataclass(frozen=True)
class RemoteFile:
    """A file we know: where to get it, its sha256, and its place in a local data folder."""

    urls: tuple[str, ...]
    sha256: str
    local: str  # path relative to MLMCOURSE_DATA_DIR, and to the cache


REGISTRY: dict[str, RemoteFile] = {
    "wnut17/train": RemoteFile(
        (_WNUT_BASE + "wnut17train.conll",),
        "731820e13f71af324c6b55a1575ec2ce59fbaa2a0806f8f0400b98d56cd6a7a5",
        "wnut17/wnut17train.conll",
    ),
    "wnut17/dev": RemoteFile(
        (_WNUT_BASE + "emerging.dev.conll",),
        "e053b752b8155113ca66e7db08af5f2f5f43ab993694e4774f1ec5bad42312d8",
        "wnut17/emerging.dev.conll",
    ),
    "wnut17/test": RemoteFile(
        (_WNUT_BASE + "emerging.test.annotated",),
        "2aa79b764e56ec9264a1b30fdd9b70195bd00ff400b62edd8f399d5f13c178f0",
        "wnut17/emerging.test.annotated",
    ),
    # The raw release (real words, no <unk>) as Salesforce published it, and a mirror of the
    # same bytes that llama.cpp's CI uses. 4,721,645 bytes.
    "wikitext2/raw": RemoteFile(
        (
            "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-2-raw-v1.zip",
            "https://huggingface.co/datasets/ggml-org/ci/resolve/main/wikitext-2-raw-v1.zip",
        ),
        "ef7edb566e3e2b2d31b29c1fdb0c89a4cc683597484c3dc2517919c615435a11",
        "wikitext-2-raw-v1.zip",
    ),
    # The tokenized release's validation split, as the course's shared data folder holds it.
    "wikitext2/tokenized-validation": RemoteFile(
        (
            "https://raw.githubusercontent.com/pytorch/examples/main/"
            "word_language_model/data/wikitext-2/valid.txt",
        ),
        "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8",
        "wikitext-2/valid.txt",
    ),
    # Its test split: with the validation split, the course's English corpus (data.english).
    "wikitext2/tokenized-test": RemoteFile(
        (
            "https://raw.githubusercontent.com/pytorch/examples/main/"
            "word_language_model/data/wikitext-2/test.txt",
        ),
        "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0",
        "wikitext-2/test.txt",
    ),
    # GLUE's SST-2 (the tsv files of GLUE's SST-2.zip), from a copy on GitHub pinned by commit.
    "sst2/train": RemoteFile(
        (_SST2_BASE + "train_full.tsv",),
        "48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1",
        "sst2/train.tsv",
    ),
    "sst2/dev": RemoteFile(
        (_SST2_BASE + "dev.tsv",),
        "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0",
        "sst2/dev.tsv",
    ),
    # SQuAD v1.1 as its authors publish it.
    "squad/train-v1.1": RemoteFile(
        (_SQUAD_BASE + "train-v1.1.json",),
        "3527663986b8295af4f7fcdff1ba1ff3f72d07d61a20f487cb238a6ef92fd955",
        "squad/train-v1.1.json",
    ),
    "squad/dev-v1.1": RemoteFile(
        (_SQUAD_BASE + "dev-v1.1.json",),
        "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9",
        "squad/dev-v1.1.json",
    ),
}


class DownloadError(OSError):
    """A file could not be fetched; the message says how to place it by hand."""


class ChecksumError(ValueError):
    """A file's sha256 is not the one we know; the file was not kept."""


class ConllFormatError(FileFormatError):
    """A CoNLL line is malformed; the message names the file and the line number."""


# --- fetching ----------------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where downloads are kept: ``$MLMCOURSE_CACHE``, else ``~/.cache/mlmcourse``."""
    return Path(os.environ.get("MLMCOURSE_CACHE") or Path.home() / ".cache" / "mlmcourse")


def data_dir() -> Path | None:
    """The local data folder from ``$MLMCOURSE_DATA_DIR``, or ``None`` when it is not set."""
    value = os.environ.get("MLMCOURSE_DATA_DIR")
    return Path(value) if value else None


def sha256sum(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_downloader(url: str, output_file, pooch=None, check_only: bool = False):
    """A pooch downloader for ``file://`` URLs: a local mirror, and offline tests."""
    source = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    if check_only:
        return source.is_file()
    with open(source, "rb") as src:
        if isinstance(output_file, str | os.PathLike):
            with open(output_file, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfileobj(src, output_file)
    return None


def _how_to_place(remote: RemoteFile, target: Path) -> str:
    return (
        f"To work offline, download it yourself from {remote.urls[0]} and copy it to {target} "
        f"(sha256 {remote.sha256}), or set MLMCOURSE_DATA_DIR to a folder that holds "
        f"{remote.local}."
    )


def fetch(name: str) -> Path:
    """The local path of a known file: from ``$MLMCOURSE_DATA_DIR``, the cache, or a download.

    ``name`` is a key of ``REGISTRY`` (``"wnut17/train"``, ``"wikitext2/raw"``...); its URLs
    are tried in order (``file://`` URLs work too). Every file is checked against the
    registry's sha256, wherever it comes from.
    """
    import pooch
    import requests

    if name not in REGISTRY:
        raise KeyError(f"unknown data file {name!r}; known: {', '.join(sorted(REGISTRY))}")
    remote = REGISTRY[name]
    local_dir = data_dir()
    if local_dir is not None and (local_dir / remote.local).is_file():
        path = local_dir / remote.local
        actual = sha256sum(path)
        if actual != remote.sha256:
            raise ChecksumError(
                f"{path} (from MLMCOURSE_DATA_DIR) has sha256 {actual}, expected "
                f"{remote.sha256}: it is not the file {name!r} should be. Replace it with a "
                f"fresh copy from {remote.urls[0]}."
            )
        return path
    target = cache_dir() / remote.local
    stale = target.is_file() and sha256sum(target) != remote.sha256
    errors = []
    for url in remote.urls:
        downloader = _file_downloader if url.startswith("file:") else None
        try:
            fetched = pooch.retrieve(
                url,
                known_hash=f"sha256:{remote.sha256}",
                fname=target.name,
                path=target.parent,
                downloader=downloader,
                progressbar=False,
            )
            return Path(fetched)
        except ValueError as e:  # pooch's hash mismatch; its temporary file is already gone
            if "hash" not in str(e):
                raise
            raise ChecksumError(
                f"the file downloaded from {url} does not have the expected sha256 "
                f"{remote.sha256}, so it was rejected and nothing was written to {target} "
                f"({e}). A proxy or an upstream change can cause this. "
                + _how_to_place(remote, target)
            ) from e
        except (OSError, requests.exceptions.RequestException) as e:
            reason = str(e) if len(str(e)) < 200 else str(e)[:200] + "..."
            errors.append(f"{url}: {e.__class__.__name__}: {reason}")
    note = f" The copy already at {target} has the wrong sha256." if stale else ""
    raise DownloadError(
        f"could not download {name!r} ({'; '.join(errors)}).{note} " + _how_to_place(remote, target)
    )


# --- CoNLL -------------------------------------------------------------------------------------


_BIO = re.compile(r"^(O|[BI]-\S+)$")


def parse_conll(
    lines: Iterable[str],
    source: str,
    *,
    labels: Sequence[str] | None = None,
    sep: str | None = None,
) -> list[Sentence]:
    """Sentences from CoNLL lines: one token per line, its tag in the last column.

    Blank lines (or lines of only whitespace, as WNUT-17 has) end a sentence; ``-DOCSTART-``
    lines are skipped. ``sep`` splits columns (``None``: any whitespace; ``"\\t"`` for WNUT-17,
    whose tokens may hold spaces). A line without a tag, or a tag outside ``labels`` (or, with no
    ``labels``, not ``O``/``B-X``/``I-X``), is an error naming ``source`` and the line number.
    """
    allowed = set(labels) if labels is not None else None
    width: tuple[int, int] | None = None  # (columns, line) of the first token line
    sentences: list[Sentence] = []
    tokens: list[str] = []
    tags: list[str] = []
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        if number == 1:
            line = line.removeprefix("\ufeff")  # a byte-order mark is not part of the token
        if not line.strip():
            if tokens:
                sentences.append(Sentence(tuple(tokens), tuple(tags)))
                tokens, tags = [], []
            continue
        if line.split(maxsplit=1)[0] == "-DOCSTART-":  # whatever the separator after it
            continue
        columns = line.split(sep) if sep is not None else line.split()
        if len(columns) < 2 or not columns[-1].strip():
            raise ConllFormatError(
                f"{source}, line {number}: expected a token and a tag separated by "
                f"{'a tab' if sep == chr(9) else 'whitespace'}, got {line!r} (no tag); put the "
                f"line's tag after its token, in the last column"
            )
        width = width or (len(columns), number)
        if len(columns) != width[0]:
            raise ConllFormatError(
                f"{source}, line {number}: {len(columns)} columns where line {width[1]} has "
                f"{width[0]}; every line holds the same columns (token first, tag last): "
                f"{line!r:.80}"
            )
        tag = columns[-1].strip()
        if (allowed is not None and tag not in allowed) or (
            allowed is None and not _BIO.match(tag)
        ):
            expected = (
                f"one of {sorted(allowed)}" if allowed is not None else "O, B-<type> or I-<type>"
            )
            raise ConllFormatError(
                f"{source}, line {number}: tag {tag!r} is not {expected}; correct the tag, or "
                f"pass labels= listing your tag set"
            )
        tokens.append(columns[0])
        tags.append(tag)
    if tokens:
        sentences.append(Sentence(tuple(tokens), tuple(tags)))
    return sentences


def read_conll(
    path: str | os.PathLike, *, labels: Sequence[str] | None = None, sep: str | None = None
) -> list[Sentence]:
    """Read a CoNLL-2003-format file you supply (token first, NER tag last, blank between).

    See :func:`parse_conll` for ``labels`` and ``sep``.
    """
    text = read_text(path, "CoNLL file")
    sentences = parse_conll(text.splitlines(), str(path), labels=labels, sep=sep)
    if not sentences:
        raise ConllFormatError(
            f"{path} holds no sentences (it is empty, or only blank and -DOCSTART- lines); a "
            f"CoNLL file has one token and its tag per line, a blank line between sentences"
        )
    return sentences


def load_wnut17(split: str = "train") -> list[Sentence]:
    """WNUT-17 emerging entities: ``"train"`` (3,394 tweets), ``"dev"`` (1,009), ``"test"``.

    Tags use :data:`WNUT17_LABELS`. CC-BY 4.0: cite Derczynski et al. (2017).
    """
    if split not in ("train", "dev", "test"):
        raise ValueError(f"split must be 'train', 'dev' or 'test'; got {split!r}")
    path = fetch(f"wnut17/{split}")
    return parse_conll(read_text(path).splitlines(), str(path), labels=WNUT17_LABELS, sep="\t")


# --- WikiText-2 --------------------------------------------------------------------------------

_WIKITEXT_SPLITS = {"train": "train", "validation": "valid", "test": "test"}
_PLACEHOLDER = re.compile(r" @([-,.])@ ")
_HEADING = re.compile(r"^\s*(=+) .* \1\s*$")


def clean_wikitext(line: str) -> str:
    """Undo WikiText's number and hyphen placeholders: ``1 @,@ 000`` -> ``1,000``.

    ``@-@``, ``@,@`` and ``@.@`` stand for a hyphen, a thousands separator and a decimal point
    that were split off as tokens; joining them back gives ``state-of-the-art`` and ``3.5``.
    """
    return _PLACEHOLDER.sub(r"\1", line).strip()


def parse_wikitext(lines: Iterable[str], *, keep_headings: bool = False) -> list[str]:
    """Paragraphs of a WikiText file, cleaned; empty lines dropped, ``= Headings =`` too."""
    out = []
    for line in lines:
        if not line.strip() or (not keep_headings and _HEADING.match(line)):
            continue
        out.append(clean_wikitext(line))
    return out


def load_wikitext2(split: str = "validation", *, keep_headings: bool = False) -> list[str]:
    """WikiText-2 paragraphs (``"train"``, ``"validation"``, ``"test"``), placeholders cleaned.

    Uses the raw release (``wikitext-2-raw-v1``: real words). With ``MLMCOURSE_DATA_DIR`` set,
    a local copy is used instead, in this order: ``wikitext-2-raw-v1.zip``,
    ``wikitext-2-raw/wiki.<split>.raw``, then the tokenized release ``wikitext-2/<split>.txt``
    (whose rare words are ``<unk>``). CC-BY-SA 3.0: cite Merity et al. (2016).
    """
    if split not in _WIKITEXT_SPLITS:
        raise ValueError(f"split must be 'train', 'validation' or 'test'; got {split!r}")
    short = _WIKITEXT_SPLITS[split]
    local = data_dir()
    if local is not None and not (local / REGISTRY["wikitext2/raw"].local).is_file():
        raw_split = local / f"wikitext-2-raw/wiki.{short}.raw"
        tokenized = local / f"wikitext-2/{short}.txt"
        path = raw_split if raw_split.is_file() else tokenized if tokenized.is_file() else None
        if path == tokenized and f"wikitext2/tokenized-{split}" in REGISTRY:
            path = fetch(f"wikitext2/tokenized-{split}")  # a file we know: check its sha256
        if path is not None:
            return parse_wikitext(read_text(path).splitlines(), keep_headings=keep_headings)
    archive = fetch("wikitext2/raw")
    member = f"wikitext-2-raw/wiki.{short}.raw"
    with zipfile.ZipFile(archive) as z:
        text = decode_text(z.read(member), f"{archive}:{member}")
    return parse_wikitext(text.splitlines(), keep_headings=keep_headings)


# --- SST-2 -------------------------------------------------------------------------------------

SST2_LABELS = ["negative", "positive"]
"""SST-2's labels: 0 is negative, 1 positive."""


def parse_sst2(lines: Iterable[str], source: str) -> list[tuple[str, int]]:
    """``(sentence, label)`` pairs from GLUE's SST-2 tsv: a ``sentence<TAB>label`` header, then
    one sentence (lower-cased and tokenized, as the treebank has it) and its 0/1 label per line.
    A malformed line is an error naming ``source`` and the line number."""
    rows = []
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n").removeprefix("\ufeff" if number == 1 else "")
        if number == 1 and line.split("\t")[:2] == ["sentence", "label"]:
            continue
        if not line.strip():
            continue
        sentence, _, label = line.rpartition("\t")
        if not sentence.strip() or label.strip() not in ("0", "1"):
            raise ValueError(
                f"{source}, line {number}: expected a sentence, a tab and the label 0 or 1, "
                f"got {line[:80]!r}"
            )
        rows.append((sentence.strip(), int(label)))
    return rows


def load_sst2(split: str = "train") -> list[tuple[str, int]]:
    """GLUE SST-2 sentiment: ``"train"`` (67,349 sentences and phrases) or ``"dev"`` (872).

    GLUE's test split has no public labels, so dev is the split papers report. Labels follow
    :data:`SST2_LABELS`. Cite Socher et al. (2013) and Wang et al. (2018).
    """
    if split not in ("train", "dev"):
        raise ValueError(
            f"split must be 'train' or 'dev' (GLUE's test has no labels); got {split!r}"
        )
    path = fetch(f"sst2/{split}")
    return parse_sst2(read_text(path).splitlines(), str(path))
