"""One fine-tuning recipe for every task head: the settings as data, a batch order, :func:`train`.

Tagging (NER), sentence classification and question answering differ only in how a batch is
made from a few examples; the settings (:class:`FineTuneRecipe`), the order of the examples,
the schedule and the loop are the same, so they live here once, and each task gives only its
``make_batch`` and its default recipe (:func:`mlmcourse.tasks.ner.fine_tune_tagger`,
:func:`mlmcourse.tasks.classification.fine_tune_classifier`,
:func:`mlmcourse.tasks.qa.fine_tune_qa`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from functools import partial
from typing import Any

import torch
from torch import nn

from mlmcourse.training.batches import EpochPlan
from mlmcourse.training.config import SCHEDULES, TrainingConfig
from mlmcourse.training.loop import TrainResult, train
from mlmcourse.utils.checks import (
    ConfigError,
    check_bool,
    check_choice,
    check_number,
    check_positive_int,
    check_probability,
    check_seed,
)

__all__ = ["FineTuneRecipe", "check_recipe", "fine_tune"]

MakeBatch = Callable[[list[Any], torch.Generator], Mapping[str, torch.Tensor]]


def _optional(check: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """``check``, letting ``None`` (not set) through."""
    return lambda value, name: None if value is None else check(value, name)


def _setting(check: Callable[[Any, str], Any], default: Any = MISSING) -> Any:
    """A recipe field and the check its value passes when a recipe is made."""
    return field(default=default, metadata={"check": check})


# The settings only one task reads; another task refuses a recipe that changes them.
_ONE_TASK = {"unk_rate": "fine_tune_tagger", "doc_stride": "fine_tune_qa"}


@dataclass(frozen=True, kw_only=True)
class FineTuneRecipe:
    """How a task head is fine-tuned, as data: every value checked when the recipe is made.

    Give ``epochs`` or ``steps``. With ``epochs``, each epoch visits every example once, in
    batches of similar length (little padding), and ``steps``, if given too, stops the run
    earlier (a CPU budget: the first ``steps`` batches of that order). With ``steps`` alone,
    batch ``i`` draws ``batch_size`` examples with replacement. A recipe with neither is a
    starting point: ``dataclasses.replace(recipe, steps=300)`` makes a run of it.

    Each task has its default, a named instance (``TAGGER_RECIPE``, ``CLASSIFIER_RECIPE``,
    ``WORLD_QA_RECIPE``); ``unk_rate`` is the tagger's and ``doc_stride`` question answering's.
    """

    epochs: int | None = _setting(_optional(check_positive_int), None)
    steps: int | None = _setting(_optional(check_positive_int), None)
    batch_size: int = _setting(check_positive_int, 16)
    learning_rate: float = _setting(partial(check_number, low=0, low_open=True))  # the peak
    lr_scheduler_type: str = _setting(partial(check_choice, choices=SCHEDULES), "linear")
    warmup_ratio: float = _setting(check_probability, 0.1)  # of the steps: a linear warmup
    weight_decay: float = _setting(partial(check_number, low=0), 0.01)  # AdamW's
    unpad: bool = _setting(check_bool, False)  # the real tokens only (the speed path)
    freeze_word_embeddings: bool = _setting(check_bool, False)  # kept as they are
    unk_rate: float = _setting(check_probability, 0.0)  # the tagger's word dropout
    max_length: int | None = _setting(_optional(check_positive_int), None)  # None: the model's
    doc_stride: int = _setting(check_positive_int, 128)  # question answering's window overlap

    def __post_init__(self) -> None:
        for f in fields(self):  # Python numbers from NumPy's or torch's, so it writes to JSON
            object.__setattr__(self, f.name, f.metadata["check"](getattr(self, f.name), f.name))

    def run_steps(self, lengths: Sequence[int] | None, seed: int) -> tuple[int, EpochPlan | None]:
        """How many steps a run takes, and with ``epochs`` the order of its batches (examples
        of these ``lengths`` batched by length)."""
        if self.epochs is None and self.steps is None:
            raise ConfigError(
                "the recipe gives neither steps nor epochs; give one, e.g. "
                "dataclasses.replace(recipe, steps=300) or dataclasses.replace(recipe, epochs=2)"
            )
        if self.epochs is None:
            return self.steps, None
        plan = EpochPlan(lengths, self.batch_size, seed)
        steps = self.epochs * plan.per_epoch
        return (steps if self.steps is None else min(steps, self.steps)), plan

    def training_config(self, steps: int, seed: int) -> TrainingConfig:
        """The optimiser settings of a run of ``steps`` steps: a warmup over ``warmup_ratio``
        of them (at least one step), then the decay; the loss logged ten times a run."""
        warmup = max(1, int(steps * self.warmup_ratio)) if self.warmup_ratio else 0
        return TrainingConfig(
            max_steps=steps,
            learning_rate=self.learning_rate,
            lr_scheduler_type=self.lr_scheduler_type,
            warmup_steps=warmup,
            weight_decay=self.weight_decay,
            logging_steps=max(1, steps // 10),
            seed=seed,
            unpad=self.unpad,
        )

    def max_length_for(self, model: nn.Module) -> int:
        """The longest input in tokens: ``max_length``, never more than ``model`` reads."""
        limit = model.config.max_position_embeddings
        return limit if self.max_length is None else min(self.max_length, limit)


def check_recipe(recipe: Any, task: str) -> FineTuneRecipe:
    """``recipe``, if it is a :class:`FineTuneRecipe` that changes no setting only another task
    reads (``unk_rate`` is the tagger's word dropout: a classifier would ignore it)."""
    if not isinstance(recipe, FineTuneRecipe):
        raise TypeError(
            f"{task}'s recipe must be a FineTuneRecipe, got {type(recipe).__name__}; change a "
            f"named one with dataclasses.replace(recipe, learning_rate=..., ...)"
        )
    for name, owner in _ONE_TASK.items():
        default = FineTuneRecipe.__dataclass_fields__[name].default
        if owner != task and getattr(recipe, name) != default:
            raise ConfigError(
                f"{name}={getattr(recipe, name)} is a setting of {owner}, which {task} does "
                f"not read; leave it at {default}"
            )
    return recipe


def fine_tune(
    model: nn.Module,
    examples: Sequence[Any],
    make_batch: MakeBatch,
    *,
    lengths: Sequence[int] | None = None,
    recipe: FineTuneRecipe,
    seed: int = 0,
    device: torch.device | str | None = None,
    progress: bool = False,
) -> TrainResult:
    """Train ``model`` on ``examples``, ``make_batch(examples_of_batch, generator)`` at a time.

    The ``recipe`` says how (:class:`FineTuneRecipe`); ``lengths`` (one per example) are what
    its epochs batch by. Either way batch ``i`` depends only on ``(seed, i)``, and so does the
    generator ``make_batch`` gets (for anything random in a batch, such as word dropout), so a
    run is reproducible.
    """
    if not examples:
        raise ValueError("fine_tune needs at least one training example")
    if not isinstance(recipe, FineTuneRecipe):  # the tasks check theirs: check_recipe
        raise TypeError(f"recipe must be a FineTuneRecipe, got {type(recipe).__name__}")
    seed = check_seed(seed)
    steps, plan = recipe.run_steps(lengths, seed)
    _train_word_embeddings(model, not recipe.freeze_word_embeddings)

    def get_batch(i: int) -> Mapping[str, torch.Tensor]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + i)
        if plan is not None:
            rows = plan.rows(i)
        else:
            rows = torch.randint(len(examples), (recipe.batch_size,), generator=generator).tolist()
        return make_batch([examples[r] for r in rows], generator)

    config = recipe.training_config(steps, seed)
    return train(model, get_batch, config, device=device, progress=progress, log=None)


def _train_word_embeddings(model: nn.Module, trainable: bool) -> None:
    """Train the encoder's word embeddings, or keep them as they are (half of MiniLM's weights:
    each step then updates half as many numbers, and words a small training set never shows
    keep their pretrained vectors, as the words it does show)."""
    encoder = getattr(model, "bert", model)
    if not hasattr(encoder, "get_input_embeddings"):
        if not trainable:
            raise TypeError(
                f"freeze_word_embeddings needs a model with word embeddings (a BERT encoder or "
                f"a head on one), got {type(model).__name__}"
            )
        return
    encoder.get_input_embeddings().weight.requires_grad_(trainable)
