"""One fine-tuning recipe for every task head: a batch order, a short warmup, then :func:`train`.

Tagging (NER), sentence classification and question answering differ only in how a batch is
made from a few examples; the order of the examples, the schedule and the loop are the same,
so they live here once, and each task gives only its ``make_batch``
(:func:`mlmcourse.tasks.ner.fine_tune_tagger`, :func:`mlmcourse.tasks.classification.fine_tune_classifier`,
:func:`mlmcourse.tasks.qa.fine_tune_qa`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from mlmcourse.training.batches import EpochPlan
from mlmcourse.training.config import fine_tuning_config
from mlmcourse.training.loop import TrainResult, train
from mlmcourse.utils.checks import (
    ConfigError,
    check_positive_int,
    check_seed,
)

__all__ = ["fine_tune"]

MakeBatch = Callable[[list[Any], torch.Generator], Mapping[str, torch.Tensor]]


def fine_tune(
    model: nn.Module,
    examples: Sequence[Any],
    make_batch: MakeBatch,
    *,
    lengths: Sequence[int] | None = None,
    epochs: int | None = None,
    steps: int | None = None,
    max_steps: int | None = None,
    batch_size: int = 16,
    learning_rate: float,
    lr_scheduler_type: str = "linear",
    seed: int = 0,
    unpad: bool = False,
    device: torch.device | str | None = None,
    progress: bool = False,
) -> TrainResult:
    """Train ``model`` on ``examples``, ``make_batch(examples_of_batch, generator)`` at a time.

    Give ``epochs`` or ``steps``. With ``epochs``, each epoch visits every example once, in
    batches of similar ``lengths`` (:class:`EpochPlan`: little padding); with ``steps``, batch
    ``i`` draws ``batch_size`` examples with replacement. ``max_steps`` stops earlier (a CPU
    budget). Either way batch ``i`` depends only on ``(seed, i)``, and so does the generator
    ``make_batch`` gets (for anything random in a batch, such as word dropout), so a run is
    reproducible. Warmup is 10% of the steps and the loss is logged ten times a run.
    """
    if not examples:
        raise ValueError("fine_tune needs at least one training example")
    if (steps is None) == (epochs is None):
        raise ConfigError("fine_tune needs steps= or epochs= (one of them, not both)")
    batch_size = check_positive_int(batch_size, "batch_size")
    seed = check_seed(seed)
    plan = None
    if epochs is not None:
        epochs = check_positive_int(epochs, "epochs")
        plan = EpochPlan(lengths, batch_size, seed)
        steps = epochs * plan.per_epoch
    steps = check_positive_int(steps, "steps")
    if max_steps is not None:
        steps = min(steps, check_positive_int(max_steps, "max_steps"))

    def get_batch(i: int) -> Mapping[str, torch.Tensor]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + i)
        if plan is not None:
            rows = plan.rows(i)
        else:
            rows = torch.randint(len(examples), (batch_size,), generator=generator).tolist()
        return make_batch([examples[r] for r in rows], generator)

    config = fine_tuning_config(
        steps, learning_rate=learning_rate, lr_scheduler_type=lr_scheduler_type, seed=seed,
        unpad=unpad,
    )  # fmt: skip
    return train(model, get_batch, config, device=device, progress=progress, log=None)
