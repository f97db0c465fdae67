"""How a run stops early: Ctrl-C between two steps, or a loss that is no longer a number.

Stopping mid-step would leave the optimiser stepped but not the scheduler (or the reverse), and
no checkpoint could resume from that; so the first Ctrl-C only asks the loop to stop after the
current step. A NaN or inf loss stops the run at once, naming the step where it happened.
"""

from __future__ import annotations

import math
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["TrainingInterrupted", "StopRequest", "TrainingDivergedError", "check_finite_loss"]


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`~mlmcourse.training.train` between two steps; ``checkpoint`` is
    where it was saved.

    A ``KeyboardInterrupt``, so code that does not know it still stops as on any Ctrl-C.
    ``step`` is the last completed step; ``checkpoint`` is ``None`` when no ``output_dir`` was
    given (nothing could be saved).
    """

    def __init__(self, message: str, *, step: int, checkpoint: Path | None):
        super().__init__(message)
        self.step = step
        self.checkpoint = checkpoint

    @classmethod
    def after(cls, step: int, max_steps: int, output_dir: str | Path | None) -> TrainingInterrupted:
        """The interruption after ``step``, saying whether a checkpoint was saved."""
        where = (
            f"saved a checkpoint to {output_dir}"
            if output_dir
            else "nothing saved (set output_dir to make a run resumable)"
        )
        return cls(
            f"interrupted after step {step} of {max_steps}: {where}",
            step=step,
            checkpoint=Path(output_dir) if output_dir else None,
        )


class StopRequest:
    """While active, the first Ctrl-C (SIGINT) asks the loop to stop after the current step.

    A second Ctrl-C stops at once, as usual. Only the main thread of a single process can take
    over SIGINT (``signal`` refuses elsewhere, and under torchrun every rank would have to stop
    at the same step), so elsewhere this does nothing and Ctrl-C behaves as always.
    """

    def __init__(self, enabled: bool, say: Callable[[str], None]):
        self.requested = False
        self.enabled = enabled
        self.say = say
        self.previous: Any = None

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested:  # the second Ctrl-C: the user does not want to wait
            raise KeyboardInterrupt
        self.requested = True
        self.say("\nCtrl-C: stopping after this step (press Ctrl-C again to stop at once)")

    def __enter__(self) -> StopRequest:
        if self.enabled:
            try:
                self.previous = signal.signal(signal.SIGINT, self._handler)
            except ValueError:  # not the main thread
                self.enabled = False
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            signal.signal(signal.SIGINT, self.previous)


class TrainingDivergedError(FloatingPointError):
    """The loss became NaN or inf; ``step`` says when and ``history`` holds the run so far."""

    def __init__(self, message: str, *, step: int, history: dict[str, list[dict]]):
        super().__init__(message)
        self.step = step
        self.history = history


def check_finite_loss(loss: float, step: int, lr: float, history: dict[str, list[dict]]) -> None:
    """Stop the run if ``loss`` (of 1-based ``step``, at learning rate ``lr``) is NaN or inf."""
    if not math.isfinite(loss):
        raise TrainingDivergedError(
            f"the training loss became {loss} at step {step} (lr {lr:.3g}); lower the learning "
            f"rate, keep warmup and gradient clipping on, or check the batch for empty labels",
            step=step,
            history=history,
        )
