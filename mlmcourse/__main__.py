"""Command line: ``python -m mlmcourse pretrain --config world`` (or ``mlmcourse pretrain ...``).

The YAML file is a flat mapping of the keys listed by ``python -m mlmcourse pretrain --help``;
``--set key=value`` overrides one key without editing the file. The same function the chapter
calls (:func:`mlmcourse.pretraining.pretrain`) does the work, so the CLI and the book cannot drift.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from mlmcourse import pretraining
from mlmcourse.checks import ConfigError, FileFormatError
from mlmcourse.distributed import barrier, destroy_distributed
from mlmcourse.options import keys_by_group, options_help
from mlmcourse.training import TrainingInterrupted

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


def _parse_overrides(pairs: Sequence[str]) -> dict[str, object]:
    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {pair!r}")
        try:
            overrides[key.strip()] = yaml.safe_load(value) if value.strip() else ""
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


def _interrupted_outside_the_loop(args: argparse.Namespace, output_dir: str) -> None:
    """Ctrl-C before the first step or after the last: point at the checkpoint there is, if any."""
    state = Path(output_dir) / "trainer_state.json" if output_dir else None
    if state is None or not state.is_file():
        print("mlmcourse pretrain: interrupted; no checkpoint was saved", file=sys.stderr)
        return
    step = json.loads(state.read_text(encoding="utf-8")).get("step")
    print(
        f"mlmcourse pretrain: interrupted; the last checkpoint (step {step}) is in {output_dir}\n"
        f"resume with:\n  {resume_command(args, output_dir)}",
        file=sys.stderr,
    )


def _error(message: object) -> None:
    print(f"mlmcourse pretrain: error: {message}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlmcourse",
        description="mlmcourse: masked language modeling from scratch.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    pretrain = commands.add_parser(
        "pretrain",
        help="pretrain a BERT-style model with masked (or causal) language modeling",
        description=(
            "Pretrain a BERT-style encoder with masked language modeling (or, with "
            "training_mode: clm, causal language modeling), print progress and a final "
            "evaluation, and write a checkpoint to output_dir."
        ),
        epilog=keys_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pretrain.add_argument(
        "--config",
        required=True,
        help="a YAML file of the keys below, or a shipped config's name (world, wikitext2)",
    )
    pretrain.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config key (repeatable); VALUE is read as YAML",
    )
    pretrain.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; exit code 0 on success, 2 for a mistake in the config or its files,
    1 when training diverged, 130 after Ctrl-C (as shells report SIGINT).

    A user's mistake is one line on stderr, never a traceback; ``MLMCOURSE_DEBUG=1`` shows the
    traceback (for a bug in mlmcourse rather than in the config).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = pretraining.load_config(args.config, _parse_overrides(args.overrides))
    except (ValueError, TypeError, OSError) as exc:
        _error(exc)
        return 2
    debug = bool(os.environ.get("MLMCOURSE_DEBUG"))
    try:  # under torchrun, pretrain joins the process group; leave it cleanly at the end
        pretraining.pretrain(config, progress=not args.no_progress)
        barrier()
    except TrainingInterrupted as stop:
        print(f"mlmcourse pretrain: {stop}", file=sys.stderr)
        if stop.checkpoint is not None:
            print(f"resume with:\n  {resume_command(args, str(stop.checkpoint))}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # outside the steps: loading data, the final evaluation...
        _interrupted_outside_the_loop(args, config.output_dir)
        return 130
    except FloatingPointError as exc:  # TrainingDivergedError: the run, not the config
        if debug:
            raise
        _error(exc)
        return 1
    except (ValueError, TypeError, OSError) as exc:  # a config found wrong once data is loaded
        if debug:
            raise
        ours = isinstance(exc, OSError | ConfigError | FileFormatError)
        _error(exc if ours else f"{exc} (set MLMCOURSE_DEBUG=1 to see the traceback)")
        return 2
    finally:
        destroy_distributed()
    return 0


if __name__ == "__main__":
    sys.exit(main())
