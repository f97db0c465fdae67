"""``pretrain``: ``python -m mlmcourse pretrain --config world`` (or ``mlmcourse pretrain ...``).

The YAML file is a flat mapping of the keys listed by ``python -m mlmcourse pretrain --help``;
``--set key=value`` overrides one key without editing the file. The same function the chapter
calls (:func:`mlmcourse.pretraining.pretrain`) does the work, so the CLI and the book cannot drift.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from functools import partial
from typing import Any

import yaml

from mlmcourse import pretraining
from mlmcourse.cli.common import error, guarded, report_interrupted_run
from mlmcourse.pretraining.loading import RepeatedKeyError, load_yaml
from mlmcourse.training.distributed import barrier, destroy_distributed
from mlmcourse.utils.checks import ConfigError, repeated_key
from mlmcourse.utils.options import keys_by_group, options_help

COMMAND = "pretrain"

# The groups `--help` shows the keys in, from the fields of PretrainConfig.
KEY_GROUPS: dict[str, tuple[str, ...]] = keys_by_group(
    pretraining.PretrainConfig, pretraining.GROUPS
)

EXAMPLES = """
example:
  python -m mlmcourse pretrain --config world --set max_steps=200 --set output_dir=runs/world

on 2 processes (GPUs, or CPU processes with gloo):
  torchrun --nproc_per_node=2 -m mlmcourse pretrain --config world

Ctrl-C stops after the current step, saves a checkpoint to output_dir (if set) and prints the \
command that resumes the run."""


def keys_help() -> str:
    """Every config key with its default and meaning, grouped, for ``--help``."""
    return options_help(pretraining.PretrainConfig, pretraining.GROUPS) + "\n" + EXAMPLES


def parse_overrides(pairs: Sequence[str]) -> dict[str, object]:
    """``--set KEY=VALUE`` pairs as a mapping, each value read as YAML; a key set twice is an
    error (which one was meant?)."""
    overrides, given = {}, {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {pair!r}")
        key = key.strip()
        if key in given:
            raise ConfigError(repeated_key(f"--set {given[key]} and --set {pair}", key))
        given[key] = pair
        try:
            overrides[key] = load_yaml(value) if value.strip() else ""
        except RepeatedKeyError as exc:
            raise ConfigError(repeated_key(f"--set {pair}", exc.key)) from None
        except yaml.YAMLError:
            raise ValueError(
                f"--set {pair}: the value is not valid YAML; quote it, e.g. --set '{key}=\"...\"'"
            ) from None
    return overrides


def resume_command(args: argparse.Namespace, checkpoint: str) -> str:
    """The command that continues an interrupted run: the same settings, plus the checkpoint."""
    kept = [o for o in args.overrides if o.partition("=")[0].strip() != "resume_from_checkpoint"]
    words = ["python", "-m", "mlmcourse", "pretrain", "--config", args.config]
    for override in [*kept, f"resume_from_checkpoint={checkpoint}"]:
        words += ["--set", override]
    if args.no_progress:
        words.append("--no-progress")
    return shlex.join(words)


def add_parser(commands: Any) -> None:
    """Add ``pretrain`` to the subcommands."""
    parser = commands.add_parser(
        COMMAND,
        help="pretrain a BERT-style model with masked (or causal) language modeling",
        description=(
            "Pretrain a BERT-style encoder with masked language modeling (or, with "
            "training_mode: clm, causal language modeling), print progress and a final "
            "evaluation, and write a checkpoint to output_dir."
        ),
        epilog=keys_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        required=True,
        help="a YAML file of the keys below, or a shipped config's name (world, wikitext2)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config key (repeatable); VALUE is read as YAML",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Load the config, then pretrain; a mistake in the config or its files exits 2."""
    try:
        config = pretraining.load_config(args.config, parse_overrides(args.overrides))
    except (ValueError, TypeError, OSError) as exc:
        error(COMMAND, exc)
        return 2

    def work() -> int:
        # Under torchrun, pretrain joins the process group; leave it cleanly at the end.
        pretraining.pretrain(config, progress=not args.no_progress)
        barrier()
        return 0

    resume = partial(resume_command, args)
    interrupted = partial(
        report_interrupted_run, COMMAND, output_dir=config.output_dir, resume=resume
    )
    try:
        return guarded(COMMAND, work, interrupted=interrupted)
    finally:
        destroy_distributed()
