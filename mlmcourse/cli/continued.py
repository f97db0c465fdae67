"""``continue-pretraining``: masked-LM domain adaptation on your own text files.

It is :func:`mlmcourse.pretraining.pretrain` with ``init_from`` (MiniLM with its fitted MLM
head, or a course checkpoint) and ``dataset`` (your files), so the loop, the progress bar,
Ctrl-C and the checkpoints are those of ``pretrain``; only the defaults differ, chosen for a
real pretrained encoder rather than a model trained from scratch.
"""

from __future__ import annotations

import argparse
import shlex
from functools import partial
from typing import Any

from mlmcourse import pretraining
from mlmcourse.cli.common import (
    add_numbers,
    guarded,
    non_negative_int,
    positive_float,
    positive_int,
    report_interrupted_run,
)

COMMAND = "continue-pretraining"

DOMAIN_ADAPTATION = {"max_steps": 1000, "batch_size": 16, "learning_rate": 5e-5, "max_length": 128}
"""Defaults for continuing a real encoder: a short run at the small learning rate of
fine-tuning (``transformers``' ``run_mlm.py`` uses 5e-5), since a large one would wash out
what the encoder knows; sequences of 128 pieces, a paragraph of ordinary text."""

EXAMPLE = """
example:
  python -m mlmcourse continue-pretraining --text notes.txt more_notes.txt \\
      --output-dir runs/notes-mlm --max-steps 500

then fine-tune a tagger on the adapted encoder:
  python -m mlmcourse ner-train --model runs/notes-mlm --train my.conll --output-dir runs/tagger

The files are read in order as one text, one text per line; the last 5% of lines are held out
and scored at the end. Ctrl-C stops after the current step, saves a checkpoint to --output-dir
and prints the command that resumes the run."""


def add_parser(commands: Any) -> None:
    """Add ``continue-pretraining`` to the subcommands."""
    parser = commands.add_parser(
        COMMAND,
        help="continue masked-LM pretraining on your own text files (domain adaptation)",
        description=(
            "Continue pretraining a masked language model on your text, so that its encoder "
            "knows the words and style of your domain before you fine-tune it, and write a "
            "checkpoint that load_checkpoint and transformers' BertForMaskedLM both open."
        ),
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--model",
        default="minilm",
        help="minilm (all-MiniLM-L6-v2 with the course's fitted MLM head), or a checkpoint "
        "folder of a masked LM from pretrain or continue-pretraining (default: %(default)s)",
    )
    parser.add_argument(
        "--text",
        required=True,
        nargs="+",
        metavar="FILE",
        help="one or more UTF-8 text files, one text per line",
    )
    parser.add_argument(
        "--output-dir",
        required=True,
        metavar="DIR",
        help="where the checkpoint is written: a new, empty or checkpoint folder",
    )
    defaults = DOMAIN_ADAPTATION
    add_numbers(
        parser,
        {
            "max-steps": (positive_int, defaults["max_steps"], "optimiser steps; 10%% warm up"),
            "batch-size": (positive_int, defaults["batch_size"], "texts per step"),
            "learning-rate": (
                positive_float,
                defaults["learning_rate"],
                "peak learning rate of AdamW, cosine decay",
            ),
            "seed": (non_negative_int, 0, "seed of the batches, masks and dropout"),
            "max-length": (
                positive_int,
                defaults["max_length"],
                "longest sequence in pieces, [CLS] and [SEP] included; longer texts are cut",
            ),
        },
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run from the checkpoint in --output-dir",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run)


def pretrain_config(args: argparse.Namespace) -> pretraining.PretrainConfig:
    """The pretraining config these options stand for (every other key keeps its default)."""
    return pretraining.load_config(
        {
            "init_from": args.model,
            "dataset": list(args.text),
            "output_dir": args.output_dir,
            "max_steps": args.max_steps,
            "warmup_steps": max(1, args.max_steps // 10),
            "batch_size": args.batch_size,
            "learning_rate": args.learning_rate,
            "seed": args.seed,
            "max_length": args.max_length,
            "resume_from_checkpoint": args.output_dir if args.resume else "",
        }
    )


def resume_command(args: argparse.Namespace, checkpoint: str) -> str:
    """The same command with ``--resume`` (the checkpoint is always --output-dir's)."""
    words = ["python", "-m", "mlmcourse", COMMAND, "--model", args.model, "--text", *args.text]
    for option in ("output_dir", "max_steps", "batch_size", "learning_rate", "seed", "max_length"):
        words += ["--" + option.replace("_", "-"), str(getattr(args, option))]
    words.append("--resume")
    if args.no_progress:
        words.append("--no-progress")
    return shlex.join(words)


def run(args: argparse.Namespace) -> int:
    """Continue pretraining with the recipe of ``pretrain``; say how to use the result."""

    def work() -> int:
        pretraining.pretrain(pretrain_config(args), progress=not args.no_progress)
        example = ["python", "-m", "mlmcourse", "ner-train", "--model", args.output_dir]
        print(
            f"fine-tune a tagger on it with:\n  {shlex.join(example)} --train FILE --output-dir DIR"
        )
        return 0

    interrupted = partial(
        report_interrupted_run,
        COMMAND,
        output_dir=args.output_dir,
        resume=partial(resume_command, args),
    )
    return guarded(COMMAND, work, interrupted=interrupted)
