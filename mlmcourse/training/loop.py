"""The training loop: :func:`train`, one function a reader follows top to bottom.

Each step sums the gradients of a few micro-batches, checks the loss is still a number, clips
and steps (:mod:`mlmcourse.training.step`); around it the loop records the history, evaluates on
a fixed validation set, writes checkpoints and stops cleanly on Ctrl-C. Every batch is a pure
function of its index, so a run resumed from a checkpoint reproduces the uninterrupted one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm.auto import tqdm

from mlmcourse import checkpoint
from mlmcourse.model.inputs import check_batch_for
from mlmcourse.model.speed import speed_path
from mlmcourse.training.config import TrainingConfig
from mlmcourse.training.distributed import barrier, get_world_size
from mlmcourse.training.evaluation import evaluate, to_device
from mlmcourse.training.hardware import (
    CompileFallback,
    is_main_process,
    on_main_process,
    unwrap_model,
    wrap_ddp,
)
from mlmcourse.training.optim import build_optimizer, build_scheduler
from mlmcourse.training.step import forward_backward, optimizer_step, seed_dropout
from mlmcourse.training.stopping import StopRequest, TrainingInterrupted, check_finite_loss

__all__ = ["train", "training_steps", "CheckpointPlan", "Run", "TrainResult", "Checkpointer"]

Batch = Mapping[str, torch.Tensor]


@dataclass
class TrainResult:
    """What :func:`train` gives back: the history of the run and the final evaluation."""

    history: dict[str, list[dict[str, float]]] = field(
        default_factory=lambda: {"train": [], "eval": []}
    )
    final_eval: dict[str, float] | None = None
    step: int = 0
    train_seconds: float = 0.0
    tokens_seen: int = 0

    @property
    def final_loss(self) -> float:
        """The last logged training loss."""
        return self.history["train"][-1]["loss"]

    @property
    def tokens_per_second(self) -> float:
        return self.tokens_seen / self.train_seconds if self.train_seconds > 0 else float("nan")


@dataclass(frozen=True)
class CheckpointPlan:
    """Where :func:`train` writes its checkpoints, what they hold besides the run, and the
    checkpoint it continues.

    ``output_dir`` gets a checkpoint every ``save_steps`` steps and at the end (none when it
    is ``None``); ``tokenizer`` is saved beside the weights; ``extra_config`` is written into
    ``trainer_state.json`` beside the :class:`TrainingConfig` (a pretraining run's whole
    config); ``resume_from`` is a checkpoint of this run to continue exactly.
    """

    output_dir: str | Path | None = None
    tokenizer: Any = None
    extra_config: Mapping[str, Any] | None = None
    resume_from: str | Path | None = None


def train(
    model: nn.Module,
    get_batch: Callable[[int], Batch],
    config: TrainingConfig,
    *,
    eval_batches: Sequence[Batch] | None = None,
    device: torch.device | str | None = None,
    checkpoints: CheckpointPlan | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
) -> TrainResult:
    """Train ``model`` for ``config.max_steps`` optimiser steps and return its history.

    Step ``s`` uses micro-batches ``get_batch(s * accum + k)`` for ``k < accum``. ``eval_batches``
    are evaluated every ``eval_steps`` steps and at the end; ``checkpoints`` says where the run
    is saved and what it resumes (:class:`CheckpointPlan`). ``log`` receives the messages.
    With ``config.unpad`` the run is on the encoder's speed path
    (:func:`~mlmcourse.model.speed.speed_path`), and ``model`` leaves with its classes as it came.
    """
    device = _place(model, device)
    optimizer = build_optimizer(model, config)
    scheduler = build_scheduler(optimizer, config)
    say = on_main_process(log)
    plan = checkpoints or CheckpointPlan()
    saved_config = {**config.to_dict(), **dict(plan.extra_config or {})}
    checkpointer = Checkpointer(
        plan.output_dir, model, optimizer, scheduler, plan.tokenizer, saved_config
    )
    result = TrainResult()
    if plan.resume_from is not None:
        result = checkpointer.resume(plan.resume_from, config, say)
    # unpad: the real tokens only, on the encoder's speed path until the run ends
    with speed_path(model) if config.unpad else nullcontext():
        ddp = _ddp_or_none(model, device)
        forward = CompileFallback(ddp or model, enabled=config.torch_compile)
        if config.unpad:
            forward = partial(forward, unpad=True)
        evaluate_now = None
        if eval_batches is not None:
            evaluate_now = partial(
                evaluate, model, eval_batches, device=device, precision=config.precision
            )
        run = Run(
            model, forward, ddp, device, optimizer, scheduler, checkpointer, config, evaluate_now
        )
        model.train()
        bar = _progress_bar(config, result.step, progress)
        with bar, StopRequest(ddp is None, say) as stop:
            training_steps(run, get_batch, result, bar, stop)
        if evaluate_now is not None and config.final_evaluation and is_main_process():
            _final_evaluation(evaluate_now, model, result, say)
    checkpointer.save(result)
    return result


@dataclass
class Run:
    """What every step of a run uses, set up once by :func:`train`."""

    model: nn.Module
    forward: Callable[..., Any]  # the model, maybe compiled, in DDP, or on the speed path
    ddp: nn.Module | None
    device: torch.device
    optimizer: torch.optim.Optimizer
    scheduler: Any
    checkpoints: Checkpointer
    config: TrainingConfig
    evaluate_now: Callable[[], dict[str, float]] | None


def training_steps(
    run: Run, get_batch: Callable[[int], Batch], result: TrainResult, bar: Any, stop: StopRequest
) -> None:
    """From ``result.step`` to ``max_steps``: an optimiser step, then log, evaluate, save."""
    config, first_step, accum = run.config, result.step, run.config.gradient_accumulation_steps
    for step in range(first_step, config.max_steps):
        tic = time.perf_counter()  # the steps' own time: evaluations and saves are not counted
        seed_dropout(config.seed, step)  # under torchrun: each rank its own dropout masks
        micro = [get_batch(step * accum + k) for k in range(accum)]
        if step == first_step:  # the data, once, where it comes in (on the CPU: free)
            check_batch_for(run.model, micro[0])
        micro = [to_device(batch, run.device) for batch in micro]
        loss, tokens = forward_backward(run.model, run.forward, micro, config.precision, run.ddp)
        check_finite_loss(loss, step + 1, run.scheduler.get_last_lr()[0], result.history)
        grad_norm, lr = optimizer_step(
            run.model, run.optimizer, run.scheduler, config.max_grad_norm
        )
        result.step, result.tokens_seen = step + 1, result.tokens_seen + tokens
        result.train_seconds += time.perf_counter() - tic
        bar.update(1)
        if _due(result.step, config.logging_steps, config.max_steps, at_end=True):
            _log_step(result, bar, loss=loss, lr=lr, grad_norm=grad_norm)
        if run.evaluate_now and _due(result.step, config.eval_steps, config.max_steps):
            _evaluate_during(run.evaluate_now, result, bar, loss)
        if _due(result.step, config.save_steps, config.max_steps):
            run.checkpoints.save(result)
        if stop.requested and result.step < config.max_steps:  # Ctrl-C: stop between steps
            _save_and_stop(run, result)


def _save_and_stop(run: Run, result: TrainResult) -> None:
    """Ctrl-C between two steps: save a checkpoint (when the run has a folder), then stop."""
    run.checkpoints.save(result)
    raise TrainingInterrupted.after(result.step, run.config.max_steps, run.checkpoints.output_dir)


# --- around the steps -------------------------------------------------------------------------


def _place(model: nn.Module, device: torch.device | str | None) -> torch.device:
    """Move ``model`` to ``device`` (by default, where its parameters already are)."""
    device = torch.device(device) if device is not None else next(model.parameters()).device
    model.to(device)
    return device


def _ddp_or_none(model: nn.Module, device: torch.device) -> nn.Module | None:
    """``model`` in ``DistributedDataParallel`` under torchrun; ``None`` in a single process."""
    return wrap_ddp(model, device) if get_world_size() > 1 else None


def _progress_bar(config: TrainingConfig, start: int, enabled: bool):
    """A tqdm bar over the steps, shown by rank 0 only."""
    return tqdm(
        total=config.max_steps,
        initial=start,
        desc="training",
        unit="step",
        disable=not (enabled and is_main_process()),
        dynamic_ncols=True,
    )


def _due(step: int, every: int, max_steps: int, *, at_end: bool = False) -> bool:
    """True every ``every`` steps (never when it is 0). At the last step only ``at_end``: the
    end of the run has its own evaluation and checkpoint."""
    if not every:
        return False
    return at_end if step == max_steps else step % every == 0


def _log_step(result: TrainResult, bar: Any, *, loss: float, lr: float, grad_norm: float) -> None:
    result.history["train"].append(
        {"step": result.step, "loss": loss, "lr": lr, "grad_norm": grad_norm, **_progress(result)}
    )
    bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.2e}")


def _progress(result: TrainResult) -> dict[str, float]:
    """How far the run is, beside each logged row: tokens seen and seconds of training."""
    return {"tokens": result.tokens_seen, "seconds": round(result.train_seconds, 3)}


def _prefixed(metrics: Mapping[str, float]) -> dict[str, float]:
    return {f"eval_{k}": v for k, v in metrics.items()}


def _evaluate_during(
    evaluate_now: Callable[[], dict[str, float]], result: TrainResult, bar: Any, loss: float
) -> None:
    """Rank 0 evaluates the plain model (a DDP forward would need every rank); the others wait."""
    if is_main_process():
        metrics = evaluate_now()
        result.history["eval"].append(
            {"step": result.step, **_progress(result), **_prefixed(metrics)}
        )
        bar.set_postfix(loss=f"{loss:.3f}", eval_acc=f"{metrics['accuracy']:.3f}")
    barrier()


def _final_evaluation(
    evaluate_now: Callable[[], dict[str, float]],
    model: nn.Module,
    result: TrainResult,
    say: Callable[[str], None],
) -> None:
    """Evaluate the whole validation set once more and say how the run ended."""
    result.final_eval = metrics = evaluate_now()
    result.history["eval"].append({"step": result.step, **_progress(result), **_prefixed(metrics)})
    causal = getattr(getattr(unwrap_model(model), "config", None), "is_causal", False)
    kind = "next" if causal is True else "masked"
    say(
        f"final evaluation ({metrics['tokens']} {kind} tokens): loss "
        f"{metrics['loss']:.4f}, accuracy {metrics['accuracy']:.4f}, perplexity "
        f"{metrics['perplexity']:.2f}"
    )


# --- checkpoints ------------------------------------------------------------------------------


@dataclass
class Checkpointer:
    """Saves the run to ``output_dir`` (nowhere when it is ``None``) and resumes runs.

    A checkpoint holds the weights, the tokenizer, the optimiser, the schedule, the RNG states
    and the history: everything :func:`train` needs to continue as if never stopped.
    """

    output_dir: str | Path | None
    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: Any
    tokenizer: Any = None
    training_config: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.output_dir is not None and is_main_process():
            checkpoint.check_checkpoint_target(self.output_dir)  # now, not after hours of training

    def save(self, result: TrainResult) -> None:
        """Rank 0 writes the checkpoint; the other ranks wait until it is complete."""
        if self.output_dir is None:
            return
        if is_main_process():
            state = checkpoint.TrainingState(
                step=result.step,
                optimizer=self.optimizer,
                scheduler=self.scheduler,
                training_config=self.training_config,
                history=result.history,
                tokens_seen=result.tokens_seen,
            )
            checkpoint.save_checkpoint(
                self.output_dir, unwrap_model(self.model), tokenizer=self.tokenizer, state=state
            )
        barrier()

    def resume(
        self, directory: str | Path, config: TrainingConfig, say: Callable[[str], None]
    ) -> TrainResult:
        """Load ``directory``'s weights, optimiser, schedule and RNG states; the run so far."""
        state = checkpoint.load_training_state(
            directory, model=self.model, optimizer=self.optimizer, scheduler=self.scheduler
        )
        result = TrainResult(step=state["step"], tokens_seen=state.get("tokens_seen", 0))
        result.history = state.get("history") or result.history
        logged = result.history["train"][-1:] or [{}]
        result.train_seconds = logged[0].get("seconds", 0.0)  # the clock goes on from there
        say(f"resumed from {directory} at step {result.step}")
        if result.step >= config.max_steps:
            say(f"nothing to do: step {result.step} >= max_steps {config.max_steps}")
        return result
