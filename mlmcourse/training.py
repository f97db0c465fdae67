"""A plain, readable pretraining loop: AdamW, warmup + decay, clipping, accumulation, evaluation.

No callback framework: :func:`train` is one loop a reader can follow top to bottom. What makes
it a *real* loop rather than a toy is what it guards against:

- weight decay only on weight matrices (never on biases or LayerNorm), as BERT does;
- a linear warmup, then cosine or linear decay, as a ``LambdaLR`` the checkpoint can save;
- gradient clipping and gradient accumulation;
- bf16 autocast on CUDA, plain fp32 on CPU (bf16 matmuls are slow on most CPUs);
- a NaN or inf loss stops the run with the step where it happened;
- evaluation on a fixed, pre-masked validation set, with accuracy weighted by token (not the
  mean of per-batch accuracies, a classic bug) and perplexity = exp(mean loss);
- every batch is a pure function of its index (:class:`MLMBatches`), so a resumed run sees the
  same data and masks as an uninterrupted one and reproduces its loss curve.

Side effects that must happen once per job (printing, progress bars, evaluation, checkpoints)
go through :func:`is_main_process`, so the same loop runs under ``torchrun`` as
``DistributedDataParallel`` (see :mod:`mlmcourse.distributed` and ``book/scaling.md``).
"""

from __future__ import annotations

import contextlib
import math
import re
import signal
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.utils.data import DistributedSampler

from mlmcourse.checks import (
    ConfigError,
    check_int,
    check_number,
    check_path_exists,
    check_probability,
    read_text,
)
from mlmcourse.distributed import all_reduce_sum, barrier, get_rank, get_world_size, rank_step_seed
from mlmcourse.masking import IGNORE_INDEX

if TYPE_CHECKING:
    from mlmcourse.tokenization import WordLevelTokenizer, WordPieceTokenizer

    Tokenizer = WordLevelTokenizer | WordPieceTokenizer

__all__ = [
    "TrainingConfig",
    "TrainResult",
    "TrainingDivergedError",
    "MLMBatches",
    "param_groups",
    "build_optimizer",
    "get_scheduler",
    "autocast_context",
    "evaluate",
    "train",
    "is_main_process",
    "SCHEDULES",
    "fixed_eval_batches",
    "lr_multiplier",
    "PretrainConfig",
    "HELP",
    "config_keys",
    "load_config",
    "pretrain",
    "PretrainRun",
    "read_yaml_mapping",
    "TrainingInterrupted",
]

SCHEDULES = ("cosine", "linear", "constant")
PRECISIONS = ("auto", "fp32", "bf16")


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


@dataclass
class TrainingConfig:
    """How to optimise: the knobs of :func:`train` (names follow ``transformers.TrainingArguments``)."""

    max_steps: int = 1000
    learning_rate: float = 5e-4
    weight_decay: float = 0.01
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    adam_epsilon: float = 1e-6
    lr_scheduler_type: str = "cosine"
    warmup_steps: int = 100
    min_lr_ratio: float = 0.0
    max_grad_norm: float = 1.0
    gradient_accumulation_steps: int = 1
    seed: int = 0
    logging_steps: int = 10
    eval_steps: int = 0
    save_steps: int = 0
    precision: str = "auto"
    final_evaluation: bool = True
    torch_compile: bool = False

    def __post_init__(self) -> None:
        _check_int(self.max_steps, "max_steps", minimum=1)
        _check_int(self.warmup_steps, "warmup_steps", minimum=0)
        _check_int(self.gradient_accumulation_steps, "gradient_accumulation_steps", minimum=1)
        _check_int(self.seed, "seed", minimum=0)
        for name in ("logging_steps", "eval_steps", "save_steps"):
            _check_int(getattr(self, name), name, minimum=0)
        if not (isinstance(self.learning_rate, int | float) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be a positive number, got {self.learning_rate!r}")
        if not (isinstance(self.weight_decay, int | float) and self.weight_decay >= 0):
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        if not (isinstance(self.max_grad_norm, int | float) and self.max_grad_norm >= 0):
            raise ValueError(
                f"max_grad_norm must be >= 0 (0 turns clipping off), got {self.max_grad_norm!r}"
            )
        check_probability(self.min_lr_ratio, "min_lr_ratio")
        check_number(self.learning_rate, "learning_rate", low=0, low_open=True)
        check_number(self.weight_decay, "weight_decay", low=0)
        for name in ("adam_beta1", "adam_beta2"):  # torch would refuse them only at step 1
            check_number(getattr(self, name), name, low=0, high=1, high_open=True)
        check_number(self.adam_epsilon, "adam_epsilon", low=0, low_open=True)
        if self.lr_scheduler_type not in SCHEDULES:
            raise ValueError(
                f"lr_scheduler_type must be one of {SCHEDULES}, got {self.lr_scheduler_type!r}"
            )
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> TrainingConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


def _check_int(value: Any, name: str, *, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`train` between two steps; ``checkpoint`` is where it was saved.

    A ``KeyboardInterrupt``, so code that does not know it still stops as on any Ctrl-C.
    ``step`` is the last completed step; ``checkpoint`` is ``None`` when no ``output_dir`` was
    given (nothing could be saved).
    """

    def __init__(self, message: str, *, step: int, checkpoint: Path | None):
        super().__init__(message)
        self.step = step
        self.checkpoint = checkpoint


class _StopRequest:
    """While active, the first Ctrl-C (SIGINT) asks the loop to stop after the current step.

    Stopping mid-step would leave the optimiser stepped but not the scheduler (or the reverse),
    and no checkpoint could resume from that. A second Ctrl-C stops at once, as usual. Only the
    main thread of a single process can take over SIGINT (``signal`` refuses elsewhere, and
    under torchrun every rank would have to stop at the same step), so elsewhere this does
    nothing and Ctrl-C behaves as always.
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

    def __enter__(self) -> _StopRequest:
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
    def tokens_per_second(self) -> float:
        return self.tokens_seen / self.train_seconds if self.train_seconds > 0 else float("nan")


# --------------------------------------------------------------------------------------------
# Distributed-aware helpers (single process today; rank 0 does the side effects under torchrun)
# --------------------------------------------------------------------------------------------


def is_main_process() -> bool:
    """True unless this is a non-zero rank of an initialised ``torch.distributed`` job."""
    dist = torch.distributed
    return not (dist.is_available() and dist.is_initialized()) or dist.get_rank() == 0


def _unwrap(model: nn.Module) -> nn.Module:
    """The model inside a ``DistributedDataParallel`` (or ``torch.compile``) wrapper."""
    model = getattr(model, "module", model)
    return getattr(model, "_orig_mod", model)


# --------------------------------------------------------------------------------------------
# Optimiser and schedule
# --------------------------------------------------------------------------------------------


def _no_decay(name: str, param: nn.Parameter) -> bool:
    """Biases and normalisation weights are not decayed: shrinking them towards 0 only hurts."""
    return param.ndim < 2 or name.endswith(".bias") or "LayerNorm" in name or "norm" in name


def param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Split parameters into a decayed group (weight matrices, embeddings) and a non-decayed one.

    Tied parameters (the MLM decoder sharing the embedding matrix) appear once, because
    ``named_parameters`` skips duplicates.
    """
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (no_decay if _no_decay(name, param) else decay).append(param)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


def build_optimizer(model: nn.Module, config: TrainingConfig) -> torch.optim.AdamW:
    """AdamW over :func:`param_groups`."""
    return torch.optim.AdamW(
        param_groups(model, config.weight_decay),
        lr=config.learning_rate,
        betas=(config.adam_beta1, config.adam_beta2),
        eps=config.adam_epsilon,
    )


def lr_multiplier(
    step: int, *, warmup_steps: int, total_steps: int, schedule: str, min_lr_ratio: float = 0.0
) -> float:
    """The factor applied to the peak learning rate at ``step`` (0-based optimiser steps).

    Linear warmup from ~0 to 1 over ``warmup_steps``, then ``schedule`` decays it to
    ``min_lr_ratio`` at ``total_steps``: ``cosine`` (half a cosine), ``linear`` or ``constant``.
    Warmup matters for Adam: its second-moment estimates are noise in the first steps.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    decay = 0.5 * (1.0 + math.cos(math.pi * progress)) if schedule == "cosine" else 1.0 - progress
    return min_lr_ratio + (1.0 - min_lr_ratio) * decay


def get_scheduler(
    optimizer: torch.optim.Optimizer,
    schedule: str,
    *,
    warmup_steps: int,
    total_steps: int,
    min_lr_ratio: float = 0.0,
) -> torch.optim.lr_scheduler.LambdaLR:
    """A ``LambdaLR`` following :func:`lr_multiplier` (its state goes into checkpoints)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")

    def factor(step: int) -> float:
        return lr_multiplier(
            step,
            warmup_steps=warmup_steps,
            total_steps=total_steps,
            schedule=schedule,
            min_lr_ratio=min_lr_ratio,
        )

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def autocast_context(device: torch.device, precision: str = "auto"):
    """bf16 autocast on CUDA (``auto`` or ``bf16``), fp32 elsewhere.

    On CPU bf16 is usually slower than fp32 and autocast would only add casts, so ``auto``
    means fp32 there; asking for ``bf16`` on CPU is honoured (it is useful to test the path).
    """
    import contextlib

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    use_bf16 = precision == "bf16" or (precision == "auto" and device.type == "cuda")
    if not use_bf16:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


# --------------------------------------------------------------------------------------------
# Data: every batch a pure function of its index
# --------------------------------------------------------------------------------------------


class MLMBatches:
    """Masked training batches where batch ``i`` depends only on ``(seed, i)``.

    Texts are visited in a fresh seeded permutation each epoch, and each batch is masked with a
    generator seeded from ``(seed, i)``. That is *dynamic masking* (a sentence gets new masks
    every epoch, unlike the static masks made once at data-building time), and it makes
    resuming exact: the batch after a restart is the batch the uninterrupted run would see.

    ``rank``/``world_size`` shard the data for DDP with ``torch.utils.data.DistributedSampler``,
    as a ``DataLoader`` would: each epoch, every rank builds the sampler of every rank (one
    permutation shared by all, seeded from ``(seed, epoch)``; rank ``r`` takes every
    ``world_size``-th index from ``r``), so the shards are disjoint and each rank knows the whole
    global batch of step ``i``. That global batch is masked with one generator seeded from
    ``(seed, i)`` and each rank keeps its rows (``r::world_size``). The ranks thus see different
    masks, yet a masked example does not depend on how many processes share the work: when
    ``world_size`` divides the number of texts, 2 processes with ``batch_size=32`` see exactly
    the rows 1 process with ``batch_size=64`` sees. (Otherwise the sampler pads each epoch by
    repeating its first indices, as it does in a ``DataLoader``.)
    ``collator`` is an :class:`mlmcourse.masking.MLMCollator` (it owns the masking settings);
    ``call(i)`` returns ``{input_ids, attention_mask, token_type_ids, labels}``.
    """

    def __init__(
        self,
        texts: Sequence[str],
        collator: Any,
        *,
        batch_size: int,
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
    ):
        if not texts:
            raise ValueError("MLMBatches needs at least one text, got an empty list")
        _check_int(batch_size, "batch_size", minimum=1)
        _check_int(world_size, "world_size", minimum=1)
        if not 0 <= rank < world_size:
            raise ValueError(f"rank must be in [0, world_size={world_size}), got {rank}")
        self.texts = list(texts)
        self.collator = collator
        self.batch_size = batch_size
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self._epoch_cache: tuple[int, list[list[int]]] | None = None

    def shards(self, epoch: int) -> list[list[int]]:
        """Every rank's text indices for ``epoch``, in order, from ``DistributedSampler``."""
        if self._epoch_cache is None or self._epoch_cache[0] != epoch:
            shards = []
            for rank in range(self.world_size):
                sampler = DistributedSampler(
                    range(len(self.texts)),
                    num_replicas=self.world_size,
                    rank=rank,
                    shuffle=True,
                    seed=self.seed * 1_000_003,  # the sampler draws with seed + epoch
                )
                sampler.set_epoch(epoch)
                shards.append(list(sampler))
            self._epoch_cache = (epoch, shards)
        return self._epoch_cache[1]

    def global_indices(self, index: int) -> list[int]:
        """The text indices of global batch ``index``: ``world_size * batch_size`` rows, where
        row ``j * world_size + r`` is rank ``r``'s ``j``-th example."""
        per_rank = len(self.shards(0)[0])
        out = []
        for pos in range(index * self.batch_size, (index + 1) * self.batch_size):
            epoch, offset = divmod(pos, per_rank)
            out.extend(shard[offset] for shard in self.shards(epoch))
        return out

    def indices(self, index: int) -> list[int]:
        """The text indices of batch ``index`` on this rank."""
        return self.global_indices(index)[self.rank :: self.world_size]

    def __call__(self, index: int) -> dict[str, torch.Tensor]:
        texts = [self.texts[i] for i in self.global_indices(index)]
        mask_seed = (self.seed * 1_000_003 + index) * 1009
        batch = self.collator(texts, generator=torch.Generator().manual_seed(mask_seed))
        if self.world_size == 1:
            return batch
        # Each rank masks the whole global batch (cheap next to the model) and keeps its rows:
        # padded to the global batch's length, exactly the rows a single process would see.
        return {k: v[self.rank :: self.world_size] for k, v in batch.items()}


def fixed_eval_batches(
    texts: Sequence[str], collator: Any, *, batch_size: int = 64, seed: int = 1234
) -> list[dict[str, torch.Tensor]]:
    """Mask the validation texts once, with a fixed seed, so every evaluation sees the same task.

    Re-masking validation text at each evaluation would add noise to the curve: a dip could be
    an easier draw of masks rather than a better model.
    """
    if not texts:
        raise ValueError("fixed_eval_batches needs at least one text, got an empty list")
    g = torch.Generator().manual_seed(seed)
    return [
        collator(list(texts[i : i + batch_size]), generator=g)
        for i in range(0, len(texts), batch_size)
    ]


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------


def _to_device(batch: Mapping[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """Move a batch to ``device``; for a GPU through pinned (page-locked) host memory, which
    lets the copy run asynchronously (``non_blocking``) instead of through a staging buffer."""
    if device.type == "cuda":
        batch = {k: v.pin_memory() if v.device.type == "cpu" else v for k, v in batch.items()}
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def _predicted_logits(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Logits at the labelled positions, ``(N, V)``, whichever layout the model returned.

    Our ``BertForMaskedLM`` already returns only those rows; a model returning ``(B, T, V)``
    (``transformers.BertForMaskedLM``) is indexed here.
    """
    if logits.dim() == labels.dim() + 1 and logits.shape[:-1] == labels.shape:
        return logits[labels != IGNORE_INDEX]
    return logits


def _targets(model: nn.Module, labels: torch.Tensor) -> torch.Tensor:
    """The labels as the model scores them: a causal LM shifts them by one (``shift_labels``)."""
    shift = getattr(_unwrap(model), "shift_labels", None)
    return shift(labels) if shift is not None else labels


@torch.no_grad()
def evaluate(
    model: nn.Module,
    batches: Iterable[Mapping[str, torch.Tensor]],
    *,
    device: torch.device | str | None = None,
    precision: str = "auto",
    max_batches: int | None = None,
) -> dict[str, float]:
    """Masked-token loss, accuracy and perplexity over ``batches``, weighted by token.

    Each batch's mean loss is multiplied by its number of labelled tokens before averaging, so a
    batch with 3 masked tokens does not count as much as one with 300. ``perplexity`` is
    ``exp(loss)``. The model is put in eval mode (no dropout) and restored afterwards.
    """
    device = torch.device(device) if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    loss_sum = torch.zeros((), dtype=torch.float64, device=device)
    correct = torch.zeros((), dtype=torch.long, device=device)
    n_tokens = torch.zeros((), dtype=torch.long, device=device)
    try:
        for i, batch in enumerate(batches):
            if max_batches is not None and i >= max_batches:
                break
            batch = _to_device(batch, device)
            labels = _targets(model, batch["labels"])
            n = (labels != IGNORE_INDEX).sum()
            if n.item() == 0:
                continue
            with autocast_context(device, precision):
                out = model(**batch)
            logits = _predicted_logits(out.logits, labels)
            loss_sum += out.loss.double() * n
            correct += (logits.argmax(-1) == labels[labels != IGNORE_INDEX]).sum()
            n_tokens += n
    finally:
        model.train(was_training)
    total = n_tokens.item()
    if total == 0:
        raise ValueError("evaluate() found no labelled (masked) tokens in the given batches")
    loss = (loss_sum / total).item()
    return {
        "loss": loss,
        "accuracy": correct.item() / total,
        "perplexity": math.exp(min(loss, 700.0)),
        "tokens": total,
    }


# --------------------------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------------------------


def _progress(total: int, initial: int, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        initial=initial,
        desc="pretraining",
        unit="step",
        disable=not enabled,
        dynamic_ncols=True,
    )


def train(
    model: nn.Module,
    get_batch: Callable[[int], Mapping[str, torch.Tensor]],
    config: TrainingConfig,
    *,
    eval_batches: Sequence[Mapping[str, torch.Tensor]] | None = None,
    device: torch.device | str | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    output_dir: str | Path | None = None,
    tokenizer: Tokenizer | None = None,
    resume_from: str | Path | None = None,
    extra_config: Mapping[str, Any] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
) -> TrainResult:
    """Train ``model`` for ``config.max_steps`` optimiser steps and return its history.

    ``get_batch(i)`` returns micro-batch ``i`` (a dict the model takes as keyword arguments,
    with ``labels``); optimiser step ``s`` uses micro-batches ``s * accum ... s * accum +
    accum - 1``. ``eval_batches`` (fixed, see :func:`fixed_eval_batches`) are evaluated every
    ``eval_steps`` steps and at the end. With ``output_dir``, checkpoints are written every
    ``save_steps`` steps and at the end; ``resume_from`` continues a checkpointed run exactly.
    ``extra_config`` (e.g. the CLI's settings) is saved with each checkpoint.
    """
    from mlmcourse.checkpoint import check_checkpoint_target, load_training_state, save_checkpoint

    device = torch.device(device) if device is not None else next(model.parameters()).device
    model.to(device)
    optimizer = optimizer or build_optimizer(model, config)
    scheduler = scheduler or get_scheduler(
        optimizer,
        config.lr_scheduler_type,
        warmup_steps=config.warmup_steps,
        total_steps=config.max_steps,
        min_lr_ratio=config.min_lr_ratio,
    )
    main = is_main_process()
    say = log if (main and log is not None) else (lambda _msg: None)
    if output_dir is not None and main:
        check_checkpoint_target(output_dir)  # now, not after hours of training

    result = TrainResult()
    start_step = 0
    if resume_from is not None:
        state = load_training_state(
            resume_from, model=model, optimizer=optimizer, scheduler=scheduler
        )
        start_step = state["step"]
        result.history = state.get("history") or result.history
        result.tokens_seen = state.get("tokens_seen", 0)
        say(f"resumed from {resume_from} at step {start_step}")
    if start_step >= config.max_steps:
        say(f"nothing to do: step {start_step} >= max_steps {config.max_steps}")

    def checkpoint(step: int) -> None:
        if output_dir is None:
            return
        if main:
            save_checkpoint(
                output_dir,
                _unwrap(model),
                tokenizer=tokenizer,
                optimizer=optimizer,
                scheduler=scheduler,
                step=step,
                training_config={**config.to_dict(), **dict(extra_config or {})},
                history=result.history,
                tokens_seen=result.tokens_seen,
            )
        barrier()  # the other ranks wait until rank 0's checkpoint is complete

    accum = config.gradient_accumulation_steps
    world_size = get_world_size()
    ddp = _wrap_ddp(model, device) if world_size > 1 else None
    forward = CompileFallback(ddp or model, enabled=config.torch_compile)
    model.train()
    bar = _progress(config.max_steps, start_step, progress and main)
    t0 = time.perf_counter()
    with _StopRequest(world_size == 1, say) as stop:
        for step in range(start_step, config.max_steps):
            if world_size > 1:  # each rank its own dropout stream, a function of (seed, rank, step)
                torch.manual_seed(rank_step_seed(config.seed, get_rank(), step))
            # ---- one optimiser step = `accum` micro-batches, gradients summed ----
            step_loss = torch.zeros((), device=device)
            step_tokens = 0
            micro = [_to_device(get_batch(step * accum + k), device) for k in range(accum)]
            total_labelled = sum(
                int((_targets(model, b["labels"]) != IGNORE_INDEX).sum()) for b in micro
            )
            if world_size > 1:  # labelled tokens of the global batch, over all ranks
                total_labelled = int(all_reduce_sum(torch.tensor(total_labelled, device=device)))
            for k, batch in enumerate(micro):
                n = int((_targets(model, batch["labels"]) != IGNORE_INDEX).sum())
                # DDP all-reduces gradients during backward; on all but the last micro-batch it
                # need not (the gradients are only summed locally), so skip the communication.
                last = k == accum - 1
                with contextlib.nullcontext() if ddp is None or last else ddp.no_sync():
                    with autocast_context(device, config.precision):
                        loss = forward(**batch).loss
                    # Weight each micro-batch by its share of the labelled tokens, so accumulating
                    # k micro-batches gives the same gradient as one batch k times larger. DDP
                    # averages gradients over the ranks, hence the world_size factor.
                    (loss * (n * world_size / max(1, total_labelled))).backward()
                step_loss += loss.detach().float() * n
                step_tokens += (
                    int(batch["attention_mask"].sum()) if "attention_mask" in batch else 0
                )
            if (
                world_size > 1
            ):  # the loss and token count of the global batch, the same on all ranks
                sums = all_reduce_sum(
                    torch.stack(
                        [step_loss.double(), step_loss.new_tensor(step_tokens, dtype=torch.float64)]
                    )
                )
                step_loss, step_tokens = sums[0].float(), int(sums[1])
            mean_loss = (step_loss / max(1, total_labelled)).item()
            if not math.isfinite(mean_loss):
                bar.close()
                raise TrainingDivergedError(
                    f"the training loss became {mean_loss} at step {step + 1} (lr "
                    f"{scheduler.get_last_lr()[0]:.3g}); lower the learning rate, keep warmup and "
                    f"gradient clipping on, or check the batch for empty labels",
                    step=step + 1,
                    history=result.history,
                )
            grad_norm = (
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm).item()
                if config.max_grad_norm > 0
                else float("nan")
            )
            lr = scheduler.get_last_lr()[0]
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            result.tokens_seen += step_tokens
            done = step + 1

            # ---- bookkeeping (rank 0 only) ----
            bar.update(1)
            if config.logging_steps and (
                done % config.logging_steps == 0 or done == config.max_steps
            ):
                result.history["train"].append(
                    {"step": done, "loss": mean_loss, "lr": lr, "grad_norm": grad_norm}
                )
                bar.set_postfix(loss=f"{mean_loss:.3f}", lr=f"{lr:.2e}")
            if (
                eval_batches is not None
                and config.eval_steps
                and done % config.eval_steps == 0
                and done < config.max_steps
            ):
                if main:  # the plain model, not the DDP wrapper: only this rank runs it
                    metrics = evaluate(
                        model, eval_batches, device=device, precision=config.precision
                    )
                    result.history["eval"].append({"step": done, **_prefixed(metrics)})
                    bar.set_postfix(loss=f"{mean_loss:.3f}", eval_acc=f"{metrics['accuracy']:.3f}")
                barrier()  # the other ranks wait for rank 0's evaluation
            if config.save_steps and done % config.save_steps == 0 and done < config.max_steps:
                result.train_seconds += time.perf_counter() - t0
                t0 = time.perf_counter()
                checkpoint(done)
            if stop.requested and done < config.max_steps:  # Ctrl-C: stop between steps
                bar.close()
                checkpoint(done)
                where = (
                    f"saved a checkpoint to {output_dir}"
                    if output_dir
                    else "nothing saved (set output_dir to make a run resumable)"
                )
                raise TrainingInterrupted(
                    f"interrupted after step {done} of {config.max_steps}: {where}",
                    step=done,
                    checkpoint=Path(output_dir) if output_dir else None,
                )
    bar.close()
    result.train_seconds += time.perf_counter() - t0
    result.step = max(start_step, config.max_steps)

    if eval_batches is not None and config.final_evaluation and main:
        result.final_eval = evaluate(model, eval_batches, device=device, precision=config.precision)
        result.history["eval"].append({"step": result.step, **_prefixed(result.final_eval)})
        fe = result.final_eval
        kind = "next" if hasattr(_unwrap(model), "shift_labels") else "masked"
        say(
            f"final evaluation ({fe['tokens']} {kind} tokens): loss {fe['loss']:.4f}, "
            f"accuracy {fe['accuracy']:.4f}, perplexity {fe['perplexity']:.2f}"
        )
    checkpoint(result.step)
    return result


def _prefixed(metrics: Mapping[str, float]) -> dict[str, float]:
    return {f"eval_{k}": v for k, v in metrics.items()}


def _wrap_ddp(model: nn.Module, device: torch.device) -> nn.Module:
    """``DistributedDataParallel``: it copies rank 0's weights to every rank at construction and
    averages the gradients over the ranks during ``backward``, so every rank takes the same step."""
    from torch.nn.parallel import DistributedDataParallel

    if isinstance(model, DistributedDataParallel):
        return model
    return DistributedDataParallel(
        model, device_ids=[device.index] if device.type == "cuda" else None
    )


class CompileFallback:
    """Call ``torch.compile(module)``, or ``module`` itself where compiling is not possible.

    ``torch.compile`` compiles lazily, at the first call, and needs a working backend (Triton
    on GPUs, a C++ compiler on CPUs). If compiling fails, at creation or at the first call,
    this warns once and continues eagerly: slower, never a crashed run. ``enabled=False`` is
    plain eager mode.
    """

    def __init__(self, module: nn.Module, *, enabled: bool = True):
        self.eager = module
        self.module: Callable[..., Any] = module
        self.pending = False  # compiled but not yet called successfully
        if enabled:
            try:
                self.module, self.pending = torch.compile(module), True
            except Exception as exc:  # noqa: BLE001 - any failure means: run eagerly
                self._fall_back(exc)

    def _fall_back(self, exc: Exception) -> None:
        warnings.warn(
            f"torch.compile is not available here ({type(exc).__name__}: {exc}); "
            f"continuing in eager mode",
            RuntimeWarning,
            stacklevel=3,
        )
        self.module, self.pending = self.eager, False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.pending:
            return self.module(*args, **kwargs)
        try:
            out = self.module(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a real error in the batch recurs eagerly
            self._fall_back(exc)
            return self.module(*args, **kwargs)
        self.pending = False
        return out


# --------------------------------------------------------------------------------------------
# The pretraining recipe behind `python -m mlmcourse pretrain --config <yaml>`
# --------------------------------------------------------------------------------------------

TRAINING_MODES = ("mlm", "clm")
IMPLEMENTED_TRAINING_MODES = ("mlm", "clm")
MASKING_STRATEGIES = ("token", "whole_word", "span")

# One line per key: `python -m mlmcourse pretrain --help` prints these, and a test checks that
# every key of PretrainConfig has one.
HELP: dict[str, str] = {
    "training_mode": "mlm (masked LM) or clm (causal LM, chapter 6)",
    "dataset": "world (the course's generated corpus), wikitext2, or a path to a UTF-8 text "
    "file with one text per line (its last 5% of lines are the validation split)",
    "tokenizer": "word (word-level, trained on the training split), wordpiece (trained), or a "
    "path to a tokenizer.json / vocab.txt",
    "vocab_size": "vocabulary size when the tokenizer is trained here (upper bound for word)",
    "max_length": "longest sequence in tokens, [CLS] and [SEP] included (longer is truncated); "
    "also the model's max_position_embeddings",
    "mlm_probability": "share of tokens selected for prediction",
    "mask_replace_prob": "of the selected tokens, share replaced by [MASK]",
    "random_replace_prob": "of the selected tokens, share replaced by a random token (the rest "
    "stay unchanged)",
    "masking_strategy": "token, whole_word (all pieces of a word together) or span",
    "hidden_size": "width of every token vector",
    "num_hidden_layers": "number of Transformer layers",
    "num_attention_heads": "attention heads per layer (must divide hidden_size)",
    "intermediate_size": "width of the feed-forward layer",
    "hidden_dropout_prob": "dropout on embeddings and layer outputs during training",
    "attention_probs_dropout_prob": "dropout on attention probabilities during training",
    "pre_layer_norm": "true for a pre-LayerNorm Transformer (easier to train deep)",
    "init_from": "continue pretraining from this checkpoint's weights and tokenizer (a path, or "
    "the name of a shipped checkpoint such as world); the model keys are then taken from it",
    "batch_size": "sequences per micro-batch (per process)",
    "eval_batch_size": "sequences per validation batch",
    "eval_seed": "seed of the fixed validation masks (the same for every evaluation)",
    "output_dir": "where checkpoints are written (empty: nowhere)",
    "resume_from_checkpoint": "a training checkpoint to continue exactly where it stopped",
    "device": "cpu, cuda, mps, or empty for the best available",
    "max_steps": "optimiser steps to train for",
    "learning_rate": "peak learning rate of AdamW",
    "weight_decay": "AdamW weight decay (not applied to biases and LayerNorm)",
    "adam_beta1": "AdamW beta1",
    "adam_beta2": "AdamW beta2",
    "adam_epsilon": "AdamW epsilon",
    "lr_scheduler_type": "cosine, linear or constant decay after warmup",
    "warmup_steps": "steps of linear warmup from 0 to the peak learning rate",
    "min_lr_ratio": "the learning rate at the end, as a fraction of the peak",
    "max_grad_norm": "clip the gradient norm to this (0: no clipping)",
    "gradient_accumulation_steps": "micro-batches summed per optimiser step",
    "seed": "seed of the initialisation, data order, masks and dropout",
    "logging_steps": "record the training loss every this many steps",
    "eval_steps": "evaluate every this many steps (0: only at the end)",
    "save_steps": "write a checkpoint every this many steps (0: only at the end)",
    "precision": "auto (bf16 autocast on CUDA, fp32 elsewhere), fp32 or bf16",
    "final_evaluation": "evaluate the whole validation split at the end",
    "torch_compile": "compile the model with torch.compile (falls back to eager mode, with a "
    "warning, where compiling fails)",
    "scale_lr_with_world_size": "under torchrun, multiply learning_rate by the number of "
    "processes (the linear scaling rule for a global batch that grows with them)",
}


@dataclass
class PretrainConfig(TrainingConfig):
    """Everything a pretraining run needs, as one flat set of YAML keys (see :data:`HELP`)."""

    training_mode: str = "mlm"
    dataset: str = "world"
    tokenizer: str = "word"
    vocab_size: int = 8000
    max_length: int = 64
    mlm_probability: float = 0.15
    mask_replace_prob: float = 0.8
    random_replace_prob: float = 0.1
    masking_strategy: str = "token"
    hidden_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    intermediate_size: int = 512
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    pre_layer_norm: bool = False
    init_from: str = ""
    batch_size: int = 32
    eval_batch_size: int = 64
    eval_seed: int = 1234
    output_dir: str = ""
    resume_from_checkpoint: str = ""
    device: str = ""
    scale_lr_with_world_size: bool = False

    def __post_init__(self) -> None:
        _check_types(self)  # first: it also reads `1e-3` (a string to PyYAML) as a number
        super().__post_init__()
        if self.training_mode not in TRAINING_MODES:
            raise ValueError(
                f"training_mode must be one of {TRAINING_MODES}, got {self.training_mode!r}"
            )
        if self.training_mode not in IMPLEMENTED_TRAINING_MODES:
            raise ValueError(
                f"training_mode {self.training_mode!r} is not implemented yet in this version "
                f"of mlmcourse (it comes with the CLM-vs-MLM chapter); use 'mlm'"
            )
        if self.masking_strategy not in MASKING_STRATEGIES:
            raise ValueError(
                f"masking_strategy must be one of {MASKING_STRATEGIES}, "
                f"got {self.masking_strategy!r}"
            )
        for name in ("mlm_probability", "mask_replace_prob", "random_replace_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        if self.mask_replace_prob + self.random_replace_prob > 1.0 + 1e-9:
            raise ValueError(
                f"mask_replace_prob + random_replace_prob must be <= 1 (the rest is kept "
                f"unchanged), got {self.mask_replace_prob} + {self.random_replace_prob}"
            )
        for name in ("batch_size", "eval_batch_size", "vocab_size", "max_length"):
            _check_int(getattr(self, name), name, minimum=1)
        check_int(self.max_length, "max_length", minimum=3)  # [CLS], one token, [SEP]
        check_int(self.eval_seed, "eval_seed", minimum=0)
        if not self.init_from:  # the model's keys, checked now rather than after the data loads
            self.encoder_config(vocab_size=self.vocab_size, pad_token_id=0)

    def encoder_config(self, *, vocab_size: int, pad_token_id: int) -> Any:
        """The :class:`~mlmcourse.model.EncoderConfig` of a fresh model for this config."""
        from mlmcourse.model import EncoderConfig

        return EncoderConfig(
            vocab_size=vocab_size,
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_length,
            hidden_dropout_prob=self.hidden_dropout_prob,
            attention_probs_dropout_prob=self.attention_probs_dropout_prob,
            pad_token_id=pad_token_id,
            pre_layer_norm=self.pre_layer_norm,
            is_causal=self.training_mode == "clm",
        )

    def training_config(self) -> TrainingConfig:
        """The subset :func:`train` uses."""
        return TrainingConfig.from_dict(self.to_dict())


_TYPES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
_FLOAT_LITERAL = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _check_types(config: PretrainConfig) -> None:
    """YAML gives strings, numbers and booleans; say which key has the wrong kind of value."""
    for f in fields(config):
        value, default = getattr(config, f.name), f.default
        expected = type(default)
        ok = isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            setattr(config, f.name, float(value))  # `learning_rate: 1` is fine
            ok = True
        if expected is float and isinstance(value, str) and _FLOAT_LITERAL.match(value.strip()):
            # PyYAML follows YAML 1.1, where `1e-3` (no dot) is a string, not a float.
            setattr(config, f.name, float(value))
            ok = True
        if not ok:
            raise ValueError(
                f"config key {f.name!r} must be {_TYPES[expected]}, got {value!r} "
                f"({type(value).__name__})"
            )


def config_keys() -> list[str]:
    """Every valid YAML key of a pretraining config, in documentation order."""
    return [f.name for f in fields(PretrainConfig)]


def load_config(
    source: str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> PretrainConfig:
    """A :class:`PretrainConfig` from a YAML file, a shipped config's name, or a mapping.

    ``overrides`` (e.g. from ``--set max_steps=10``) win over the file. An unknown key is an
    error that lists the valid ones (a typo silently ignored would train the wrong model).
    """
    import difflib

    if isinstance(source, Mapping):
        values = dict(source)
    elif isinstance(source, str | Path):
        values = read_yaml_mapping(_config_path(source))
    else:
        raise TypeError(
            f"load_config takes a YAML path, a shipped config's name or a mapping of keys, got "
            f"{type(source).__name__}: {source!r:.60}"
        )
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(
            f"overrides must be a mapping such as {{'max_steps': 10}}, got "
            f"{type(overrides).__name__}: {overrides!r:.60}"
        )
    values.update(overrides or {})
    valid = config_keys()
    unknown = [k for k in values if k not in valid]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(str(key), valid, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ConfigError(
            f"unknown config key(s) {', '.join(hints)}; valid keys are: {', '.join(valid)}"
        )
    return PretrainConfig(**values)


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """The ``key: value`` mapping of a YAML config file; every way it can be wrong is explained.

    A syntax error names the file, line and column (PyYAML's own message follows); an empty
    file (or one of only comments) is an error rather than a silent run on the defaults,
    since it is far more often the wrong file, or one not saved yet, than a wish.
    """
    import yaml

    text = read_text(path, "config file")
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and start is not None and mark is not None and start.line != mark.line:
            problem += f" ({context} that starts at line {start.line + 1})"
        raise ConfigError(
            f"{where}: YAML syntax error: {problem}. Each line should read `key: value`"
        ) from None
    if loaded is None:
        raise ConfigError(
            f"{path} is empty (no keys). Write the keys to change, e.g. `max_steps: 200`; to "
            f"train on the defaults on purpose, write `{{}}` or use --config world"
        )
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path} must hold a YAML mapping of key: value, got {loaded!r}")
    return loaded


def _config_path(source: str | Path) -> Path:
    import importlib.resources

    path = Path(source)
    if path.is_file():
        return path
    shipped = Path(str(importlib.resources.files("mlmcourse") / "configs"))
    named = shipped / f"{source}.yaml"
    if named.is_file():
        return named
    names = sorted(p.stem for p in shipped.glob("*.yaml")) if shipped.is_dir() else []
    raise FileNotFoundError(
        f"config {str(source)!r} is neither a file nor a shipped config; shipped configs: "
        f"{', '.join(names) or 'none'}"
    )


@dataclass
class PretrainRun:
    """What :func:`pretrain` gives back: the trained model, its tokenizer, the data it used."""

    model: nn.Module
    tokenizer: Any
    result: TrainResult
    config: PretrainConfig
    train_texts: list[str]
    eval_batches: list[dict[str, torch.Tensor]]
    collator: Any


def load_texts(dataset: str) -> tuple[list[str], list[str]]:
    """Training and validation texts of ``dataset`` (see ``HELP["dataset"]``)."""
    if dataset == "world":
        from mlmcourse.data import world_texts

        return world_texts("train"), world_texts("validation")
    if dataset == "wikitext2":
        from mlmcourse.data import load_wikitext2

        def clean(lines: list[str]) -> list[str]:  # drop blank lines and "= Heading =" lines
            return [s.strip() for s in lines if s.strip() and not s.strip().startswith("=")]

        return clean(load_wikitext2("train")), clean(load_wikitext2("validation"))
    path = Path(dataset)
    if not path.is_file():
        raise FileNotFoundError(
            f"dataset {dataset!r} is neither 'world', 'wikitext2' nor an existing text file"
        )
    lines = [s.strip() for s in read_text(path, "dataset file").splitlines() if s.strip()]
    if len(lines) < 20:
        raise ValueError(f"{path} has {len(lines)} non-empty lines; at least 20 are needed")
    cut = len(lines) - max(1, len(lines) // 20)
    return lines[:cut], lines[cut:]


def check_input_paths(config: PretrainConfig) -> None:
    """Every file or directory the config reads must exist: checked before any data loads."""
    if config.dataset not in ("world", "wikitext2"):
        check_path_exists(config.dataset, "dataset file (or 'world', 'wikitext2')", kind="file")
    if config.tokenizer not in ("word", "wordpiece") and not config.init_from:
        check_path_exists(config.tokenizer, "tokenizer file (or 'word', 'wordpiece')")
    if config.resume_from_checkpoint:
        from mlmcourse.checkpoint import recover_checkpoint_dir

        # A run killed between the two renames of a save left only the `.old-*` copy.
        recover_checkpoint_dir(config.resume_from_checkpoint)
        check_path_exists(config.resume_from_checkpoint, "checkpoint to resume from", kind="dir")
    if config.init_from and not Path(config.init_from).is_dir():
        from mlmcourse.checkpoint import shipped_checkpoint

        try:
            shipped_checkpoint(config.init_from)
        except FileNotFoundError as exc:
            raise FileNotFoundError(
                f"init_from={config.init_from!r} is neither a checkpoint directory nor the name "
                f"of a shipped checkpoint ({exc})"
            ) from None


def build_tokenizer(config: PretrainConfig, train_texts: Sequence[str]) -> Any:
    """Train the word-level or WordPiece tokenizer the config asks for, or load one."""
    from mlmcourse.tokenization import WordLevelTokenizer, WordPieceTokenizer, load_tokenizer

    if config.tokenizer == "word":
        return WordLevelTokenizer.train(train_texts, max_size=config.vocab_size)
    if config.tokenizer == "wordpiece":
        return WordPieceTokenizer.train(train_texts, vocab_size=config.vocab_size)
    return load_tokenizer(config.tokenizer)


def build_model(config: PretrainConfig, tokenizer: Any) -> nn.Module:
    """A fresh model sized by the config and the tokenizer: :class:`~mlmcourse.mlm.BertForMaskedLM`
    for ``training_mode: mlm``, :class:`~mlmcourse.clm.BertForCausalLM` (causal attention) for
    ``clm``."""
    from mlmcourse.clm import BertForCausalLM
    from mlmcourse.mlm import BertForMaskedLM

    causal = config.training_mode == "clm"
    return (BertForCausalLM if causal else BertForMaskedLM)(
        config.encoder_config(vocab_size=tokenizer.vocab_size, pad_token_id=tokenizer.pad_token_id)
    )


def pretrain(
    config: PretrainConfig | Mapping[str, Any],
    *,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
) -> PretrainRun:
    """The whole recipe: data, tokenizer, masking, model, :func:`train`, checkpoint.

    This is what ``python -m mlmcourse pretrain --config ...`` runs. With ``init_from``, the
    model and tokenizer come from a checkpoint (continued pretraining / domain adaptation):
    the new data is read with the old vocabulary, so the embeddings keep their meaning.
    """
    from mlmcourse.checkpoint import load_checkpoint, shipped_checkpoint
    from mlmcourse.masking import MLMCollator
    from mlmcourse.runtime import get_device, set_seed

    if not isinstance(config, PretrainConfig):
        config = load_config(config)
    check_input_paths(config)
    from mlmcourse.distributed import init_distributed

    set_seed(config.seed)  # the same seed on every rank: identical initial weights
    # Under torchrun, join the process group (gloo on CPU, nccl on CUDA, one GPU per process).
    dist_info = init_distributed(get_device(config.device or None))
    device = dist_info.device
    say = log if (log is not None and is_main_process()) else (lambda _msg: None)
    train_texts, validation_texts = load_texts(config.dataset)

    if config.init_from:
        source = Path(config.init_from)
        if not (source / "config.json").is_file():
            source = shipped_checkpoint(config.init_from)
        loaded = load_checkpoint(source)
        model, tokenizer = loaded.model.train(), loaded.tokenizer
        if tokenizer is None:
            raise FileNotFoundError(f"init_from={config.init_from!r} has no tokenizer.json")
        if model.config.is_causal != (config.training_mode == "clm"):
            raise ValueError(
                f"init_from={config.init_from!r} holds a "
                f"{'causal' if model.config.is_causal else 'masked'} LM but training_mode is "
                f"{config.training_mode!r}; continue a model with the objective it was trained on"
            )
        say(f"continuing from {source} (its model sizes and tokenizer are used)")
    else:
        tokenizer = build_tokenizer(config, train_texts)
        model = build_model(config, tokenizer)
    max_length = min(config.max_length, model.config.max_position_embeddings)

    if config.training_mode == "clm":  # every token is a target: pad only, mask nothing
        from mlmcourse.clm import CLMCollator

        collator = CLMCollator(tokenizer, max_length=max_length)
    else:
        collator = MLMCollator(
            tokenizer,
            mlm_probability=config.mlm_probability,
            mask_replace_prob=config.mask_replace_prob,
            random_replace_prob=config.random_replace_prob,
            strategy=config.masking_strategy,
            max_length=max_length,
            seed=config.seed,
        )
    rank, world_size = dist_info.rank, dist_info.world_size
    batches = MLMBatches(
        train_texts,
        collator,
        batch_size=config.batch_size,
        seed=config.seed,
        rank=rank,
        world_size=world_size,
    )
    eval_batches = fixed_eval_batches(
        validation_texts, collator, batch_size=config.eval_batch_size, seed=config.eval_seed
    )
    n_params = sum(p.numel() for p in model.parameters())
    say(
        f"pretraining ({config.training_mode}) on {config.dataset}: {len(train_texts)} train / "
        f"{len(validation_texts)} validation texts, vocab {tokenizer.vocab_size}, "
        f"{n_params / 1e6:.2f}M parameters, device {device}, effective batch "
        f"{world_size} x {config.batch_size} x {config.gradient_accumulation_steps} = "
        f"{world_size * config.batch_size * config.gradient_accumulation_steps} sequences"
    )
    training_config = config.training_config()
    if config.scale_lr_with_world_size and world_size > 1:
        training_config.learning_rate *= world_size
        say(f"learning rate x {world_size} processes = {training_config.learning_rate:.3g}")
    result = train(
        model,
        batches,
        training_config,
        eval_batches=eval_batches,
        device=device,
        output_dir=config.output_dir or None,
        tokenizer=tokenizer,
        resume_from=config.resume_from_checkpoint or None,
        extra_config=config.to_dict(),
        progress=progress,
        log=log,
    )
    if config.output_dir:
        say(f"checkpoint written to {config.output_dir}")
    return PretrainRun(model, tokenizer, result, config, list(train_texts), eval_batches, collator)
