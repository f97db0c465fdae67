"""Loading any tokenizer of the course from a file, whatever wrote it."""

from __future__ import annotations

from pathlib import Path

from mlmcourse.tokenization.base import BaseTokenizer
from mlmcourse.tokenization.files import FIX_TOKENIZER, WORD_LEVEL_KEYS, existing_file
from mlmcourse.tokenization.word_level import WORD_LEVEL_FORMAT, WordLevelTokenizer
from mlmcourse.tokenization.wordpiece import WordPieceTokenizer
from mlmcourse.utils.checks import FileFormatError, read_json, reading
from mlmcourse.utils.schema import check_keys


def load_tokenizer(path: str | Path) -> BaseTokenizer:
    """Load what :meth:`BaseTokenizer.save` wrote, a BERT ``tokenizer.json`` or a ``vocab.txt``.

    A directory is searched for ``tokenizer.json`` first, then ``vocab.txt``.
    """
    path = Path(path)
    if path.is_dir():
        for name in ("tokenizer.json", "vocab.txt"):
            if (path / name).is_file():
                return load_tokenizer(path / name)
        raise FileNotFoundError(f"{path} has neither tokenizer.json nor vocab.txt")
    path = existing_file(path)
    if path.suffix == ".txt":
        return WordPieceTokenizer.from_vocab_file(path)
    data = read_json(path, "a tokenizer file")
    if data.get("format") == WORD_LEVEL_FORMAT:
        check_keys(data, WORD_LEVEL_KEYS, str(path), fix=FIX_TOKENIZER)
        with reading(path, "a word-level tokenizer"):
            return WordLevelTokenizer.from_json(data)
    if "model" in data:
        return WordPieceTokenizer.from_file(path)
    raise FileFormatError(
        f"{path} is neither a tokenizer saved by mlmcourse (key format: "
        f"{WORD_LEVEL_FORMAT!r}) nor a 🤗 tokenizers tokenizer.json (key model); {FIX_TOKENIZER}"
    )
