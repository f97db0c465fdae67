"""The command line: ``python -m mlmcourse COMMAND`` (or ``mlmcourse COMMAND``), one module each.

- :mod:`~mlmcourse.cli.pretrain`: ``pretrain``, a model from a YAML config;
- :mod:`~mlmcourse.cli.continued`: ``continue-pretraining``, masked-LM domain adaptation of
  MiniLM (or a checkpoint) on your text files;
- :mod:`~mlmcourse.cli.ner`: ``ner-train``, a NER tagger fine-tuned on your CoNLL files, and
  ``tag``, its entities in raw text as JSON lines;
- :mod:`~mlmcourse.cli.fill_mask`: ``fill-mask``, the top words for each ``[MASK]`` of your
  lines, from the world model, a checkpoint folder or a Hugging Face model;
- :mod:`~mlmcourse.cli.common`: what they share: one line per mistake, the exit codes.

Each command calls the same functions as the chapters, so the CLI and the book cannot drift.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mlmcourse.cli import continued, fill_mask, ner, pretrain
from mlmcourse.cli.common import OneLineParser

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``mlmcourse`` parser with every subcommand (each sets ``run``)."""
    parser = OneLineParser(
        prog="mlmcourse",
        description="mlmcourse: masked language modeling from scratch.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (pretrain, continued, ner, fill_mask):
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; exit code 0 on success, 2 for a mistake in the command, its config or its
    files, 1 when training diverged, 130 after Ctrl-C (as shells report SIGINT).

    A user's mistake is one line on stderr, never a traceback; ``MLMCOURSE_DEBUG=1`` shows the
    traceback (for a bug in mlmcourse rather than in the command).
    """
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    return args.run(args)
