"""A plain, readable training loop: AdamW, warmup + decay, clipping, accumulation, evaluation.

No callback framework: :func:`train` is one loop a reader can follow top to bottom. What makes
it a *real* loop rather than a toy is what it guards against, one module each:

- :mod:`~mlmcourse.training.config`: :class:`TrainingConfig`, every knob checked on creation;
- :mod:`~mlmcourse.training.optim`: weight decay only on weight matrices (never on biases or
  LayerNorm), as BERT does; a linear warmup, then cosine or linear decay, as a ``LambdaLR``;
- :mod:`~mlmcourse.training.batches`: every batch a pure function of its index
  (:class:`MLMBatches`), so a resumed run sees the same data and masks as an uninterrupted one;
- :mod:`~mlmcourse.training.evaluation`: a fixed, pre-masked validation set, with accuracy
  weighted by token (not the mean of per-batch accuracies, a classic bug) and
  perplexity = exp(mean loss);
- :mod:`~mlmcourse.training.step`: gradient accumulation, clipping, one optimiser step;
- :mod:`~mlmcourse.training.stopping`: a NaN or inf loss stops the run with the step where it
  happened; Ctrl-C stops between two steps and saves a checkpoint;
- :mod:`~mlmcourse.training.hardware`: bf16 autocast on CUDA, plain fp32 on CPU,
  ``torch.compile``, and ``DistributedDataParallel`` under ``torchrun``;
- :mod:`~mlmcourse.training.loop`: :func:`train` itself;
- :mod:`~mlmcourse.training.fine_tuning`: :func:`fine_tune` and :class:`FineTuneRecipe`, the
  one recipe every task head is fine-tuned with;
- :mod:`~mlmcourse.training.distributed` and :mod:`~mlmcourse.training.packing`: several
  processes under ``torchrun``, and rows packed with several texts.

The loop knows nothing of pretraining: the recipe behind ``python -m mlmcourse pretrain``
(YAML configs, tokenizer, model, data) is :mod:`mlmcourse.pretraining`, built on it.
"""

from __future__ import annotations

from mlmcourse.training.batches import (
    EpochPlan,
    MLMBatches,
    fixed_eval_batches,
    length_grouped_batches,
)
from mlmcourse.training.config import PRECISIONS, SCHEDULES, TrainingConfig
from mlmcourse.training.evaluation import evaluate, targets, to_device
from mlmcourse.training.fine_tuning import FineTuneRecipe, check_recipe, fine_tune
from mlmcourse.training.hardware import (
    CompileFallback,
    autocast_context,
    is_main_process,
    on_main_process,
    unwrap_model,
    wrap_ddp,
)
from mlmcourse.training.loop import Checkpointer, CheckpointPlan, TrainResult, train
from mlmcourse.training.optim import (
    build_optimizer,
    build_scheduler,
    get_scheduler,
    lr_multiplier,
    param_groups,
)
from mlmcourse.training.stopping import StopRequest, TrainingDivergedError, TrainingInterrupted

__all__ = [
    "TrainingConfig",
    "FineTuneRecipe",
    "check_recipe",
    "fine_tune",
    "TrainResult",
    "TrainingDivergedError",
    "TrainingInterrupted",
    "MLMBatches",
    "EpochPlan",
    "param_groups",
    "build_optimizer",
    "build_scheduler",
    "get_scheduler",
    "autocast_context",
    "evaluate",
    "train",
    "is_main_process",
    "on_main_process",
    "SCHEDULES",
    "PRECISIONS",
    "fixed_eval_batches",
    "length_grouped_batches",
    "lr_multiplier",
    "CompileFallback",
    "CheckpointPlan",
    "Checkpointer",
    "StopRequest",
    "to_device",
    "targets",
    "unwrap_model",
    "wrap_ddp",
]
