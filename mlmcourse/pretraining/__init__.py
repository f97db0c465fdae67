"""Pretraining a BERT-style model: the recipe behind ``python -m mlmcourse pretrain``.

- :mod:`~mlmcourse.pretraining.config`: :class:`PretrainConfig`, every YAML key with its help,
  group and check;
- :mod:`~mlmcourse.pretraining.loading`: :func:`load_config` from a YAML file, a shipped
  config's name or a mapping, with errors that name the file, line and key;
- :mod:`~mlmcourse.pretraining.recipe`: :func:`pretrain`: data, tokenizer, masking, model, then
  the generic loop :func:`mlmcourse.training.train`.
"""

from __future__ import annotations

from mlmcourse.pretraining.config import GROUPS, HELP, PretrainConfig, config_keys
from mlmcourse.pretraining.loading import load_config, read_yaml_mapping
from mlmcourse.pretraining.recipe import (
    PretrainRun,
    build_collator,
    build_model,
    build_tokenizer,
    check_input_paths,
    checked_config,
    load_texts,
    pretrain,
)

__all__ = [
    "PretrainConfig",
    "PretrainRun",
    "HELP",
    "GROUPS",
    "config_keys",
    "load_config",
    "read_yaml_mapping",
    "pretrain",
    "load_texts",
    "check_input_paths",
    "checked_config",
    "build_tokenizer",
    "build_model",
    "build_collator",
]
