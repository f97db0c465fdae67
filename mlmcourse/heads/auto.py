"""From an architecture name to its class: how a saved folder becomes the right model again.

``config.json`` names the class that wrote it (``"architectures": ["BertForMaskedLM"]``), as
in ``transformers``; :data:`MODEL_FOR_ARCHITECTURE` maps that name back to our class, and
:func:`load_checkpoint` rebuilds the model (with a head's own keys, such as a classifier's
labels), loads its weights, its tokenizer and its training step. Every head reloads through
this one path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from mlmcourse.checkpoint.files import (
    CONFIG_NAME,
    FIX_CONFIG,
    HEAD_KEYS,
    encoder_config,
    load_tokenizer_of,
    load_weights,
    read_config,
    read_trainer_state,
)
from mlmcourse.checkpoint.weights import WeightsMismatchError
from mlmcourse.heads.base import refuse_head_keys
from mlmcourse.heads.causal_lm import BertForCausalLM
from mlmcourse.heads.masked_lm import BertForMaskedLM
from mlmcourse.heads.question_answering import BertForQuestionAnswering
from mlmcourse.heads.sequence_classification import BertForSequenceClassification
from mlmcourse.heads.token_classification import BertForTokenClassification
from mlmcourse.model import BertModel, ModernBertModel, encoder_for
from mlmcourse.utils.checks import FileFormatError
from mlmcourse.utils.schema import check_keys

__all__ = ["MODEL_FOR_ARCHITECTURE", "Checkpoint", "load_checkpoint", "model_from_config"]

MODEL_FOR_ARCHITECTURE: dict[str, type[nn.Module]] = {
    cls.__name__: cls
    for cls in (
        BertModel,
        ModernBertModel,
        BertForMaskedLM,
        BertForCausalLM,
        BertForTokenClassification,
        BertForSequenceClassification,
        BertForQuestionAnswering,
    )
}


@dataclass
class Checkpoint:
    """A loaded checkpoint: the model (eval mode), its tokenizer, its config and training info."""

    model: nn.Module
    tokenizer: Any
    config: dict[str, Any]
    step: int | None
    training_config: dict[str, Any] | None


def model_from_config(config: Mapping[str, Any], source: str = CONFIG_NAME) -> nn.Module:
    """A new model (random weights) of the class and sizes a ``config.json`` names."""
    architecture = _architecture(config, source)
    cls = MODEL_FOR_ARCHITECTURE.get(architecture)
    if cls is None:
        raise WeightsMismatchError(
            f"config.json names the architecture {architecture!r}; this loader knows "
            f"{', '.join(repr(name) for name in MODEL_FOR_ARCHITECTURE)}"
        )
    encoder = encoder_config(config, source)
    keys = {k: config[k] for k in HEAD_KEYS if k in config}
    if cls in (BertModel, ModernBertModel):  # an encoder alone: BERT's or the modern one
        refuse_head_keys(keys, source)
        return encoder_for(encoder)
    return cls.from_head_config(encoder, keys, source)


def _architecture(config: Mapping[str, Any], source: str) -> str:
    """The class ``config.json``'s ``architectures`` names (one, as ``save_checkpoint`` writes)."""
    check_keys(config, {"architectures": ["string"]}, source, fix=FIX_CONFIG)
    if len(config["architectures"]) != 1:
        raise FileFormatError(
            f'{source}: key architectures must name one class, e.g. ["BertForMaskedLM"], got '
            f"{config['architectures']!r:.80}; {FIX_CONFIG}"
        )
    return config["architectures"][0]


def load_checkpoint(directory: str | Path, *, device: torch.device | str = "cpu") -> Checkpoint:
    """Rebuild the model a checkpoint describes, load its weights and tokenizer (eval mode)."""
    directory = Path(directory)
    config = read_config(directory)
    model = model_from_config(config, str(directory / CONFIG_NAME))
    load_weights(model, directory)
    tokenizer = load_tokenizer_of(directory, config)
    state = read_trainer_state(directory)
    step, training_config = (
        (None, None) if state is None else (state["step"], state["training_config"])
    )
    return Checkpoint(model.to(device).eval(), tokenizer, config, step, training_config)
