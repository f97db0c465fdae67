"""Reading tokenizer files (``tokenizer.json``, ``vocab.txt``) with errors that name the path."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mlmcourse.tokenization.encoding import SPECIAL_TOKENS
from mlmcourse.utils.checks import FileFormatError, read_json, read_text

# What to do about a damaged tokenizer file, and the keys of the word-level tokenizer's file
# (see mlmcourse.utils.schema.check_keys; the vocabulary's entries are data, not keys).
FIX_TOKENIZER = (
    "put back the tokenizer file the model was saved with (a checkpoint's tokenizer.json), or "
    "save the tokenizer again with tokenizer.save(path)"
)
WORD_LEVEL_KEYS = {"format": "string", "lowercase?": "bool", "vocab": ["string"]}
# The top-level keys 🤗 tokenizers writes into every tokenizer.json (null where a step is
# absent). The library reads a file that lacks one as if the step were absent, so a lost
# "normalizer" silently stops lowercasing and a lost "post_processor" drops [CLS] and [SEP]:
# a missing key is refused here instead. Inside each step, the library checks its own keys.
HF_TOKENIZER_KEYS = {
    "version": "string",
    "truncation": "object|null",
    "padding": "object|null",
    "added_tokens": ["object"],
    "normalizer": "object|null",
    "pre_tokenizer": "object|null",
    "post_processor": "object|null",
    "decoder": "object|null",
    "model": {"type": "string"},
}


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
    if not any(tokens):
        raise FileFormatError(f"{path} is empty; a vocab.txt holds one token per line")
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
