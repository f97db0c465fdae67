"""What every command shares: one line per mistake, the exit codes, and checked numbers.

A user's mistake (a missing file, a malformed line, ``--epochs 0``) is one line on stderr and
exit code 2, never a traceback: the traceback points into mlmcourse, the mistake is in the
command. ``MLMCOURSE_DEBUG=1`` shows the traceback (for a bug in mlmcourse itself). A run that
diverged exits 1, Ctrl-C 130 (as shells report SIGINT).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from mlmcourse.checkpoint import CONFIG_NAME
from mlmcourse.training import TrainingInterrupted
from mlmcourse.utils.checks import ConfigError, FileFormatError, read_json


class UsageError(ValueError):
    """A mistake in what a command was given (an empty text, two sources of texts)."""


# Errors whose message already says what to do; others get a pointer to MLMCOURSE_DEBUG.
CLEAR_ERRORS = (OSError, ConfigError, FileFormatError, ModuleNotFoundError, UsageError)


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a wrong command line reported like every other mistake: one line."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def error(command: str, message: object) -> None:
    print(f"mlmcourse {command}: error: {message}", file=sys.stderr)


def debugging() -> bool:
    return bool(os.environ.get("MLMCOURSE_DEBUG"))


def guarded(
    command: str,
    work: Callable[[], int],
    *,
    clear: tuple[type[Exception], ...] = (),
    interrupted: Callable[[KeyboardInterrupt], None] | None = None,
) -> int:
    """Run ``work()`` and turn what it raises into an exit code and one line on stderr.

    ``clear`` adds error types whose messages need no traceback; ``interrupted`` reports a
    Ctrl-C (default: one line).
    """
    try:
        return work()
    except KeyboardInterrupt as stop:  # TrainingInterrupted too
        if interrupted is not None:
            interrupted(stop)
        else:
            print(f"mlmcourse {command}: interrupted", file=sys.stderr)
        return 130
    except FloatingPointError as exc:  # TrainingDivergedError: the run, not the command
        if debugging():
            raise
        error(command, exc)
        return 1
    except (ValueError, TypeError, OSError, ModuleNotFoundError) as exc:
        if debugging():
            raise
        ours = isinstance(exc, CLEAR_ERRORS + clear)
        error(command, exc if ours else f"{exc} (set MLMCOURSE_DEBUG=1 to see the traceback)")
        return 2


def is_course_checkpoint(directory: Path) -> bool:
    """Whether a folder is a checkpoint of this course rather than a Hugging Face model folder:
    only ours has ``is_causal`` in its ``config.json`` (both have ``is_decoder``)."""
    config = directory / CONFIG_NAME
    return config.is_file() and "is_causal" in read_json(config, "a model config")


def report_interrupted_run(
    command: str, stop: KeyboardInterrupt, output_dir: str, resume: Callable[[str], str]
) -> None:
    """After Ctrl-C, say what was saved and the command (``resume(checkpoint)``) that resumes.

    Between steps the loop saved a checkpoint (:class:`TrainingInterrupted`); before the first
    step or after the last (loading data, the final evaluation) the last one is in output_dir.
    """
    if isinstance(stop, TrainingInterrupted):
        print(f"mlmcourse {command}: {stop}", file=sys.stderr)
        if stop.checkpoint is not None:
            print(f"resume with:\n  {resume(str(stop.checkpoint))}", file=sys.stderr)
        return
    state = Path(output_dir) / "trainer_state.json" if output_dir else None
    if state is None or not state.is_file():
        print(f"mlmcourse {command}: interrupted; no checkpoint was saved", file=sys.stderr)
        return
    step = json.loads(state.read_text(encoding="utf-8")).get("step")
    print(
        f"mlmcourse {command}: interrupted; the last checkpoint (step {step}) is in "
        f"{output_dir}\nresume with:\n  {resume(output_dir)}",
        file=sys.stderr,
    )


# --- numbers on the command line (argparse types) ---------------------------------------------


def _read(text: str, kind: type, ok: Callable[[Any], bool], what: str) -> Any:
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1: steps, epochs, a batch size."""
    return _read(text, int, lambda v: v >= 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """An integer >= 0: a seed."""
    return _read(text, int, lambda v: v >= 0, "an integer >= 0")


def positive_float(text: str) -> float:
    """A finite number > 0: a learning rate."""
    return _read(text, float, lambda v: math.isfinite(v) and v > 0, "a positive number")


def add_numbers(
    parser: argparse.ArgumentParser, options: Mapping[str, tuple[Callable[[str], Any], Any, str]]
) -> None:
    """Add ``--NAME`` options of checked numbers: ``{NAME: (type, default, help)}``; ``--help``
    shows each default."""
    for name, (kind, default, help_text) in options.items():
        parser.add_argument(
            f"--{name}", type=kind, default=default, help=f"{help_text} (default: %(default)s)"
        )
