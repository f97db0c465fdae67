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
go through :func:`is_main_process`, so the same loop can later run under ``torchrun``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

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
        if not 0.0 <= self.min_lr_ratio <= 1.0:
            raise ValueError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio!r}")
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

    ``rank``/``world_size`` give each process its own slice of the global batch (for DDP).
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
        if not 0 <= rank < world_size:
            raise ValueError(f"rank must be in [0, world_size={world_size}), got {rank}")
        self.texts = list(texts)
        self.collator = collator
        self.batch_size = batch_size
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self._epoch_cache: tuple[int, list[int]] | None = None

    def _order(self, epoch: int) -> list[int]:
        if self._epoch_cache is None or self._epoch_cache[0] != epoch:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._epoch_cache = (epoch, torch.randperm(len(self.texts), generator=g).tolist())
        return self._epoch_cache[1]

    def indices(self, index: int) -> list[int]:
        """The text indices of batch ``index`` on this rank."""
        global_size = self.batch_size * self.world_size
        start = index * global_size + self.rank * self.batch_size
        out = []
        for pos in range(start, start + self.batch_size):
            epoch, offset = divmod(pos, len(self.texts))
            out.append(self._order(epoch)[offset])
        return out

    def __call__(self, index: int) -> dict[str, torch.Tensor]:
        texts = [self.texts[i] for i in self.indices(index)]
        mask_seed = (self.seed * 1_000_003 + index) * 1009 + self.rank
        return self.collator(texts, generator=torch.Generator().manual_seed(mask_seed))


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
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def _predicted_logits(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Logits at the labelled positions, ``(N, V)``, whichever layout the model returned.

    Our ``BertForMaskedLM`` already returns only those rows; a model returning ``(B, T, V)``
    (``transformers.BertForMaskedLM``) is indexed here.
    """
    if logits.dim() == labels.dim() + 1 and logits.shape[:-1] == labels.shape:
        return logits[labels != -100]
    return logits


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
            labels = batch["labels"]
            n = (labels != -100).sum()
            if n.item() == 0:
                continue
            with autocast_context(device, precision):
                out = model(**batch)
            logits = _predicted_logits(out.logits, labels)
            loss_sum += out.loss.double() * n
            correct += (logits.argmax(-1) == labels[labels != -100]).sum()
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
    from mlmcourse.checkpoint import load_training_state, save_checkpoint

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
        if main and output_dir is not None:
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

    accum = config.gradient_accumulation_steps
    model.train()
    bar = _progress(config.max_steps, start_step, progress and main)
    t0 = time.perf_counter()
    for step in range(start_step, config.max_steps):
        # ---- one optimiser step = `accum` micro-batches, gradients summed ----
        step_loss = torch.zeros((), device=device)
        step_tokens = 0
        micro = [_to_device(get_batch(step * accum + k), device) for k in range(accum)]
        total_labelled = sum(int((b["labels"] != -100).sum()) for b in micro)
        for batch in micro:
            n = int((batch["labels"] != -100).sum())
            with autocast_context(device, config.precision):
                loss = model(**batch).loss
            # Weight each micro-batch by its share of the labelled tokens, so accumulating
            # k micro-batches gives the same gradient as one batch k times larger.
            (loss * (n / max(1, total_labelled))).backward()
            step_loss += loss.detach().float() * n
            step_tokens += int(batch["attention_mask"].sum()) if "attention_mask" in batch else 0
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
        if config.logging_steps and (done % config.logging_steps == 0 or done == config.max_steps):
            result.history["train"].append(
                {"step": done, "loss": mean_loss, "lr": lr, "grad_norm": grad_norm}
            )
            bar.set_postfix(loss=f"{mean_loss:.3f}", lr=f"{lr:.2e}")
        if (
            eval_batches is not None
            and config.eval_steps
            and done % config.eval_steps == 0
            and done < config.max_steps
            and main
        ):
            metrics = evaluate(model, eval_batches, device=device, precision=config.precision)
            result.history["eval"].append({"step": done, **_prefixed(metrics)})
            bar.set_postfix(loss=f"{mean_loss:.3f}", eval_acc=f"{metrics['accuracy']:.3f}")
        if config.save_steps and done % config.save_steps == 0 and done < config.max_steps:
            result.train_seconds += time.perf_counter() - t0
            t0 = time.perf_counter()
            checkpoint(done)
    bar.close()
    result.train_seconds += time.perf_counter() - t0
    result.step = max(start_step, config.max_steps)

    if eval_batches is not None and config.final_evaluation and main:
        result.final_eval = evaluate(model, eval_batches, device=device, precision=config.precision)
        result.history["eval"].append({"step": result.step, **_prefixed(result.final_eval)})
        fe = result.final_eval
        say(
            f"final evaluation ({fe['tokens']} masked tokens): loss {fe['loss']:.4f}, "
            f"accuracy {fe['accuracy']:.4f}, perplexity {fe['perplexity']:.2f}"
        )
    checkpoint(result.step)
    return result


def _prefixed(metrics: Mapping[str, float]) -> dict[str, float]:
    return {f"eval_{k}": v for k, v in metrics.items()}
