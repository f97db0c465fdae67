"""``fill-mask``: the words a masked LM puts behind each ``[MASK]`` of your lines.

:func:`~mlmcourse.tasks.fill_mask.fill_mask` on the command line, with the chapters' models: the
shipped world model (the default), a checkpoint folder of this course
(:func:`~mlmcourse.heads.load_checkpoint`), or a Hugging Face folder or Hub name
(:func:`~mlmcourse.interop.from_pretrained`). Each non-blank line is one text; its candidates
are printed under it, or as one JSON line with ``--json``.

A line without ``[MASK]`` (or too long for the model) is one error line on stderr naming the
file and line; the other lines are still filled, and the exit code is 2 at the end. A word the
tokenizer does not know is no error: the model reads ``[UNK]`` there, and a note on stderr says
so (the world model knows only the small world's words).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from mlmcourse.checkpoint import WeightsMismatchError, shipped_checkpoint
from mlmcourse.cli.common import (
    UsageError,
    add_numbers,
    error,
    guarded,
    is_course_checkpoint,
    positive_int,
)
from mlmcourse.heads import BertForMaskedLM, load_checkpoint
from mlmcourse.interop import from_pretrained
from mlmcourse.tasks.fill_mask import fill_mask
from mlmcourse.tokenization.stats import unknown_words
from mlmcourse.utils.checks import read_text

COMMAND = "fill-mask"
WORLD = "world"  # --model's name for the shipped world model
STDIN = "-"

EXAMPLE = """
examples:
  echo "The capital of Shaplath Isles is [MASK] ." | python -m mlmcourse fill-mask
  python -m mlmcourse fill-mask --model google-bert/bert-base-uncased --top-k 3 lines.txt

prints each line, then the top candidates of each [MASK] (numbered when there are several)
with their probability:
  The capital of Shaplath Isles is [MASK] .
    [MASK]: Pleallax 0.68 | Graikden 0.17 | Deitrus 0.07 | Nedrikfi 0.02 | Daioxbrak 0.01

A line without [MASK] is reported on stderr (file and line) and skipped; the other lines are
still filled, and the exit code is then 2. A word the model does not know is no error: it reads
[UNK] there, and a note on stderr says so."""


def add_parser(commands: Any) -> None:
    """Add ``fill-mask`` to the subcommands."""
    parser = commands.add_parser(
        COMMAND,
        help="predict the words behind [MASK] in your lines of text",
        description=(
            "Fill each [MASK] of each line with a masked language model and print its top\n"
            "candidates with their probabilities, as transformers' fill-mask pipeline does.\n"
            "Lines come from the files, or from standard input; blank lines are skipped."
        ),
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="UTF-8 files with one text per line; - or none: standard input",
    )
    parser.add_argument(
        "--model",
        default=WORLD,
        help="world (the course's model of the small world, shipped with the package), a "
        "checkpoint folder of this course (from pretrain or continue-pretraining), a Hugging "
        "Face model folder, or a Hub name such as google-bert/bert-base-uncased "
        "(default: %(default)s)",
    )
    add_numbers(parser, {"top-k": (positive_int, 5, "candidates shown for each [MASK]")})
    parser.add_argument(
        "--json",
        action="store_true",
        help='print one JSON line per text instead, for scripts: {"text": ..., "predictions": '
        "...}, the predictions being fill_mask's (a list of {score, token, token_str, "
        "sequence}; one such list per mask when there are several)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Fill every line; 2 if a line could not be filled (each said on stderr)."""
    return guarded(
        COMMAND, lambda: _fill_until_the_reader_stops(args), clear=(WeightsMismatchError,)
    )


def _fill_until_the_reader_stops(args: argparse.Namespace) -> int:
    """:func:`_fill`, ending quietly (exit code 0) when the output's reader stops (``| head``)."""
    try:
        return _fill(args)
    except BrokenPipeError:  # Python's recipe: stdout to devnull, so exiting cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _fill(args: argparse.Namespace) -> int:
    sources = _sources(args.files)  # files are read first: a missing one is said at once
    model, tokenizer = load_masked_lm(args.model)
    filled = failed = 0
    for where, text in _texts(sources):
        try:
            predictions = _predict(model, tokenizer, text, args.top_k)
        except ValueError as exc:  # no [MASK], or longer than the model's positions
            error(COMMAND, f"{where}: {exc}")
            failed += 1
            continue
        if args.json:
            print(json.dumps({"text": text, "predictions": predictions}, ensure_ascii=False))
        else:
            print(text + "\n" + candidates_text(predictions, tokenizer.mask_token))
        sys.stdout.flush()  # before a note or an error on stderr, and line by line in a pipe
        _note_unknown(where, text, tokenizer, args.model)
        filled += 1
    if not filled + failed:
        names = ", ".join(name for name, _ in sources)
        raise UsageError(f"{names} held no text to fill (only blank lines)")
    return 2 if failed else 0


# --- the model ---------------------------------------------------------------------------------


def load_masked_lm(source: str) -> tuple[BertForMaskedLM, Any]:
    """The masked LM and tokenizer ``--model`` names, or an error saying what it is instead.

    ``world``; else a course checkpoint folder (its ``config.json`` has our ``is_causal`` key);
    else a Hugging Face folder or Hub name, for :func:`~mlmcourse.interop.from_pretrained`.
    """
    path = Path(source).expanduser()
    if source == WORLD:
        loaded: Any = load_checkpoint(shipped_checkpoint(WORLD))
    elif is_course_checkpoint(path):
        loaded = load_checkpoint(path)
    else:
        loaded = from_pretrained(source, task="fill-mask")
    model = loaded.model
    if not isinstance(model, BertForMaskedLM) or model.config.is_causal:
        raise UsageError(
            f"--model {source} holds a {type(model).__name__}, not a masked language model; "
            f"give world, a folder from pretrain or continue-pretraining, or a Hugging Face "
            f"masked LM such as google-bert/bert-base-uncased"
        )
    if loaded.tokenizer is None:
        raise FileNotFoundError(
            f"--model {source} has no tokenizer (a tokenizer.json or a vocab.txt beside the "
            f"weights); the text must be read with the model's own one"
        )
    return model, loaded.tokenizer


# --- the lines ---------------------------------------------------------------------------------


def _sources(files: Sequence[str]) -> list[tuple[str, Iterable[str]]]:
    """``(name, lines)`` of each FILE, read now; ``-`` (or no FILE) is standard input, read
    as it comes, so each line typed is filled at once."""
    return [
        ("standard input", _stdin_lines()) if name == STDIN else (name, _file_lines(name))
        for name in files or [STDIN]
    ]


def _file_lines(name: str) -> list[str]:
    if "[MASK]" in name and not Path(name).exists():  # a text where a file was expected
        raise UsageError(
            f"FILE arguments are files, and there is no file {name!r}; to fill a text, give "
            f"it on standard input: echo '{name}' | python -m mlmcourse {COMMAND}"
        )
    return read_text(name, "text file").splitlines()


def _stdin_lines() -> Iterator[str]:
    if sys.stdin.isatty():
        print("reading texts from standard input, one per line (Ctrl-D ends)", file=sys.stderr)
    for line in sys.stdin:
        yield line.rstrip("\r\n")


def _texts(sources: Iterable[tuple[str, Iterable[str]]]) -> Iterator[tuple[str, str]]:
    """``(where, text)`` of each non-blank line, ``where`` naming its file and line number."""
    for name, lines in sources:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                yield f"{name}, line {number}", line


# --- predicting and printing -------------------------------------------------------------------


def _predict(model: BertForMaskedLM, tokenizer: Any, text: str, top_k: int) -> list[Any]:
    """:func:`fill_mask`'s candidates; a text without a mask is an error that says what to do."""
    mask = tokenizer.mask_token
    if tokenizer.mask_token_id not in tokenizer.encode(text).ids:
        raise ValueError(
            f"no {mask} to fill; write {mask} (in capitals) where a word should be predicted, "
            f"e.g. 'The capital of France is {mask} .'"
        )
    return fill_mask(model, tokenizer, text, top_k=top_k)


def candidates_text(predictions: list[Any], mask: str = "[MASK]") -> str:
    """One line per mask: ``  [MASK] 1: paris 0.87 | lyon 0.05 | ...`` (numbered when several)."""
    per_mask = predictions if isinstance(predictions[0], list) else [predictions]
    lines = []
    for number, candidates in enumerate(per_mask, start=1):
        label = mask if len(per_mask) == 1 else f"{mask} {number}"
        words = " | ".join(f"{c['token_str'].strip()} {c['score']:.2f}" for c in candidates)
        lines.append(f"  {label}: {words}")
    return "\n".join(lines)


def _note_unknown(where: str, text: str, tokenizer: Any, source: str) -> None:
    """A note on stderr naming the words the tokenizer read as ``[UNK]``: no error, but the
    model's guess cannot use them."""
    unknown = unknown_words(tokenizer, text)
    if not unknown:
        return
    words = ", ".join(repr(word) for word in unknown)
    why = (
        "the world model knows only the small world's words"
        if source == WORLD
        else f"the tokenizer of {source} has no pieces for them"
    )
    print(
        f"mlmcourse {COMMAND}: note: {where}: {why}, so it read {words} as "
        f"{tokenizer.unk_token} (an unknown word)",
        file=sys.stderr,
    )
