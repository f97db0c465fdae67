"""How to optimise: :class:`TrainingConfig`, the knobs of :func:`~mlmcourse.training.train`.

Each field says what it means, which ``--help`` group it belongs to and how it is checked
(:func:`mlmcourse.utils.options.option`); names follow ``transformers.TrainingArguments``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from functools import partial
from typing import Any

from mlmcourse.utils.checks import (
    check_bool,
    check_choice,
    check_non_negative_int,
    check_number,
    check_positive_int,
    check_probability,
    check_seed,
)
from mlmcourse.utils.options import check_options, option

__all__ = [
    "TrainingConfig",
    "SCHEDULES",
    "PRECISIONS",
    "OPTIMISATION",
    "EVALUATION",
    "SPEED",
]

SCHEDULES = ("cosine", "linear", "constant")
PRECISIONS = ("auto", "fp32", "bf16")

# The `--help` groups of these keys.
OPTIMISATION = "optimisation"
EVALUATION = "evaluation, logging and checkpoints"
SPEED = "scaling out and speed (torchrun, GPUs)"

_optimisation = partial(option, group=OPTIMISATION)
_evaluation = partial(option, group=EVALUATION)
_speed = partial(option, group=SPEED)

_positive = partial(check_number, low=0, low_open=True)  # (0, inf)
_non_negative = partial(check_number, low=0)  # [0, inf)
_beta = partial(check_number, low=0, high=1, high_open=True)  # torch refuses others at step 1
_schedule = partial(check_choice, choices=SCHEDULES)
_precision = partial(check_choice, choices=PRECISIONS)


@dataclass
class TrainingConfig:
    """How to optimise: the knobs of :func:`~mlmcourse.training.train`."""

    max_steps: int = _optimisation(1000, "optimiser steps to train for", check_positive_int)
    learning_rate: float = _optimisation(5e-4, "peak learning rate of AdamW", _positive)
    weight_decay: float = _optimisation(
        0.01, "AdamW weight decay (not applied to biases and LayerNorm)", _non_negative
    )
    adam_beta1: float = _optimisation(0.9, "AdamW beta1", _beta)
    adam_beta2: float = _optimisation(0.98, "AdamW beta2", _beta)
    adam_epsilon: float = _optimisation(1e-6, "AdamW epsilon", _positive)
    lr_scheduler_type: str = _optimisation(
        "cosine", "cosine, linear or constant decay after warmup", _schedule
    )
    warmup_steps: int = _optimisation(
        100, "steps of linear warmup from 0 to the peak learning rate", check_non_negative_int
    )
    min_lr_ratio: float = _optimisation(
        0.0, "the learning rate at the end, as a fraction of the peak", check_probability
    )
    max_grad_norm: float = _optimisation(
        1.0, "clip the gradient norm to this (0: no clipping)", _non_negative
    )
    gradient_accumulation_steps: int = _optimisation(
        1, "micro-batches summed per optimiser step", check_positive_int
    )
    seed: int = _optimisation(
        0, "seed of the initialisation, data order, masks and dropout", check_seed
    )
    logging_steps: int = _evaluation(
        10, "record the training loss every this many steps", check_non_negative_int
    )
    eval_steps: int = _evaluation(
        0, "evaluate every this many steps (0: only at the end)", check_non_negative_int
    )
    save_steps: int = _evaluation(
        0, "write a checkpoint every this many steps (0: only at the end)", check_non_negative_int
    )
    precision: str = _optimisation(
        "auto", "auto (bf16 autocast on CUDA, fp32 elsewhere), fp32 or bf16", _precision
    )
    final_evaluation: bool = _evaluation(
        True, "evaluate the whole validation split at the end", check_bool
    )
    torch_compile: bool = _speed(
        False,
        "compile the model with torch.compile (falls back to eager mode, with a warning, "
        "where compiling fails)",
        check_bool,
    )
    unpad: bool = _speed(
        False,
        "compute on the real tokens only, padding them into rows only around attention "
        "(the speed path, mlmcourse.model.speed): faster on batches with much padding; the same losses",
        check_bool,
    )

    def __post_init__(self) -> None:
        check_options(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> TrainingConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})
