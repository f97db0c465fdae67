"""Checkpoints on disk: one folder a reader can open, written atomically, resumable exactly.

File input and output only; which model class a folder holds is decided one layer up, in
:mod:`mlmcourse.heads.auto` (:func:`~mlmcourse.heads.load_checkpoint`). In reading order:

- :mod:`~mlmcourse.checkpoint.atomic`: a folder is written beside its target and renamed into
  place, so a crash never leaves half a checkpoint where the last good one was;
- :mod:`~mlmcourse.checkpoint.weights`: the one strict loader of state dicts, whose errors
  name every missing, unexpected and misshapen tensor;
- :mod:`~mlmcourse.checkpoint.files`: ``config.json``, ``model.safetensors``,
  ``tokenizer.json`` and the training state: :func:`save_checkpoint` (a run's
  :class:`TrainingState` too), :func:`load_weights`, :func:`load_encoder`,
  :func:`load_training_state`.
"""

from mlmcourse.checkpoint.files import (
    CONFIG_NAME,
    STATE_NAME,
    TOKENIZER_NAME,
    WEIGHTS_NAME,
    TrainingState,
    check_checkpoint_target,
    load_encoder,
    load_training_state,
    load_weights,
    save_checkpoint,
    save_encoder,
    shipped_checkpoint,
)
from mlmcourse.checkpoint.weights import WeightsMismatchError, load_state_strict

__all__ = [
    "CONFIG_NAME",
    "STATE_NAME",
    "TOKENIZER_NAME",
    "WEIGHTS_NAME",
    "TrainingState",
    "WeightsMismatchError",
    "check_checkpoint_target",
    "load_encoder",
    "load_state_strict",
    "load_training_state",
    "load_weights",
    "save_checkpoint",
    "save_encoder",
    "shipped_checkpoint",
]
