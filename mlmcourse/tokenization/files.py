"""Reading tokenizer files (``tokenizer.json``, ``vocab.txt``) with errors that name the path."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mlmcourse.tokenization.encoding import SPECIAL_TOKENS
from mlmcourse.utils.checks import read_json, read_text


def existing_file(path: str | Path) -> Path:
    """``path`` as a :class:`~pathlib.Path`, or a ``FileNotFoundError`` that names it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no tokenizer file at {path}")
    return path


def read_vocab_txt(path: Path) -> dict[str, int]:
    """BERT's ``vocab.txt``: one token per line, the line number is its id (first one wins)."""
    tokens = read_text(path, "vocab.txt").split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    vocab: dict[str, int] = {}
    for index, token in enumerate(tokens):
        vocab.setdefault(token, index)
    return vocab


def guess_lowercase(vocab_path: Path, vocab: Mapping[str, int]) -> bool:
    """Whether a ``vocab.txt`` belongs to an uncased model.

    ``do_lower_case`` in a ``tokenizer_config.json`` beside it decides; without one, a
    vocabulary with no upper-case letters is taken to be uncased.
    """
    config = vocab_path.parent / "tokenizer_config.json"
    if config.is_file():
        setting = read_json(config, "a tokenizer config").get("do_lower_case")
        if isinstance(setting, bool):
            return setting
    return not any(
        t.lower() != t for t in vocab if t not in SPECIAL_TOKENS and not t.startswith("[")
    )
