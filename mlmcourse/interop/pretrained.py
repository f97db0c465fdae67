"""One loader for real checkpoints: a Hub name or a folder, into the course's own classes.

``from_pretrained("dslim/bert-base-NER")`` finds the files (:mod:`~mlmcourse.interop.hub`),
reads ``config.json``, builds the class its ``architectures`` names and fills it:

==================================  ========================  ===================================
``architectures`` in config.json    task                      our model
==================================  ========================  ===================================
``BertForMaskedLM``,                ``fill-mask``             :class:`~mlmcourse.heads.BertForMaskedLM`
``BertForPreTraining``
``BertForTokenClassification``      ``token-classification``  :class:`~mlmcourse.heads.BertForTokenClassification`
``BertForSequenceClassification``   ``text-classification``   :class:`~mlmcourse.heads.BertForSequenceClassification`
``BertForQuestionAnswering``        ``question-answering``    :class:`~mlmcourse.heads.BertForQuestionAnswering`
``BertModel``                       ``feature-extraction``    :class:`~mlmcourse.model.BertModel`
``ModernBertForMaskedLM``           ``fill-mask``             ``BertForMaskedLM``, modern switches on
``ModernBertModel``                 ``feature-extraction``    ``BertModel``, modern switches on
==================================  ========================  ===================================

``task="feature-extraction"`` takes the encoder of any of them; a config without
``architectures`` needs ``task=``. A classifier's labels come from its ``id2label``.

The weights are safetensors only and load strictly: every name and shape is checked. What a
checkpoint may hold that our model does not is left out by name, as ``transformers`` leaves it
out too: an old ``position_ids`` buffer, BERT's next-sentence head (``cls.seq_relationship``)
and a pooler where the task has none (masked LM, tokens, answers). A decoder tied to the
embeddings may be saved twice; the copy must then equal the embeddings. ModernBERT's head has no
biases where ours has them; ours hold zeros there, which is the same function.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch import nn

from mlmcourse.checkpoint.files import CONFIG_NAME
from mlmcourse.checkpoint.weights import (
    BENIGN_KEYS,
    ENCODER_PREFIX,
    WeightsMismatchError,
    load_state_strict,
    split_encoder_state,
)
from mlmcourse.heads import (
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from mlmcourse.interop.bert import config_from_hf, hf_tokenizer, read_hf_weights
from mlmcourse.interop.hub import HubUnavailableError, card_example, checkpoint_folder
from mlmcourse.interop.modernbert import config_from_modernbert, encoder_state_from_modernbert
from mlmcourse.model import BertModel, EncoderConfig, ModernBertModel
from mlmcourse.model.config import ACTIVATIONS
from mlmcourse.utils.checks import ConfigError, check_choice, read_json

__all__ = ["TASKS", "TASK_OF_ARCHITECTURE", "Pretrained", "from_pretrained", "pretrained_or_skip"]

TASKS: dict[str, type[nn.Module]] = {  # Hugging Face's pipeline names
    "fill-mask": BertForMaskedLM,
    "token-classification": BertForTokenClassification,
    "text-classification": BertForSequenceClassification,
    "question-answering": BertForQuestionAnswering,
    "feature-extraction": BertModel,
}

TASK_OF_ARCHITECTURE = {
    "BertForMaskedLM": "fill-mask",
    "BertForPreTraining": "fill-mask",  # the masked-LM head; the next-sentence head is left out
    "BertForTokenClassification": "token-classification",
    "BertForSequenceClassification": "text-classification",
    "BertForQuestionAnswering": "question-answering",
    "BertModel": "feature-extraction",
    "ModernBertForMaskedLM": "fill-mask",
    "ModernBertModel": "feature-extraction",
}

# Saved in checkpoints of each task, and in no model transformers builds for it either.
_LEFT_OUT = {
    "fill-mask": ("cls.seq_relationship.", "bert.pooler."),
    "token-classification": ("bert.pooler.",),
    "question-answering": ("bert.pooler.",),
    "text-classification": (),
    "feature-extraction": (),
}

# Saved twice by older transformers versions: (the copy, the tensor it is tied to).
_BERT_TIED = (
    ("cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight"),
    ("cls.predictions.decoder.bias", "cls.predictions.bias"),
)

_MODERNBERT_HEAD = (  # (ModernBERT's name, ours)
    ("head.dense.", "cls.predictions.transform.dense."),
    ("head.norm.", "cls.predictions.transform.LayerNorm."),
    ("decoder.bias", "cls.predictions.bias"),
)


class Pretrained(NamedTuple):
    """What :func:`from_pretrained` returns: the model (eval mode), its tokenizer (``None``
    when the folder has none; see :func:`~mlmcourse.interop.bert.hf_tokenizer`),
    ``config.json`` as read, and the folder."""

    model: nn.Module
    tokenizer: Any
    config: dict[str, Any]
    folder: Path


def from_pretrained(
    name_or_path: str | os.PathLike,
    *,
    task: str | None = None,
    revision: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    device: torch.device | str = "cpu",
) -> Pretrained:
    """Load a real checkpoint (a Hub name or a local folder) into our classes, in eval mode.

    ``task`` (one of :data:`TASKS`) is needed only when ``config.json`` names no architecture,
    or to take the encoder alone (``"feature-extraction"``). ``revision`` and ``cache_dir``
    are the Hub's (see :func:`~mlmcourse.interop.hub.checkpoint_folder`). Errors: a
    :class:`~mlmcourse.interop.hub.HubUnavailableError` line when the files cannot be had here;
    :class:`~mlmcourse.checkpoint.WeightsMismatchError` naming every weight that does not fit.
    """
    folder = checkpoint_folder(name_or_path, revision=revision, cache_dir=cache_dir)
    config_path = folder / CONFIG_NAME
    if not config_path.is_file():
        raise FileNotFoundError(f"{folder} has no {CONFIG_NAME}, so it is not a model folder")
    hf_config = read_json(config_path, "a Hugging Face config")
    task = _task(hf_config, task, str(config_path))
    build = _modernbert if hf_config.get("model_type") == "modernbert" else _bert
    model, state = build(hf_config, read_hf_weights(folder), task, str(folder))
    ignore = (*BENIGN_KEYS, *(ENCODER_PREFIX + key for key in BENIGN_KEYS), *_LEFT_OUT[task])
    load_state_strict(model, state, source=str(folder), ignore=ignore)
    tokenizer = hf_tokenizer(folder, model.config.vocab_size, f"from_pretrained({name_or_path!r})")
    return Pretrained(model.to(device).eval(), tokenizer, hf_config, folder)


def pretrained_or_skip(name_or_path: str, purpose: str, **options: Any) -> Pretrained | None:
    """:func:`from_pretrained`, or ``None`` after one line saying what was skipped and why (and
    a second with the model card's published example, where the card shows one).

    What a chapter cell calls: offline, or without ``huggingface_hub``, the notebook goes on.
    """
    try:
        return from_pretrained(name_or_path, **options)
    except HubUnavailableError as error:
        print(f"Skipped {purpose}: {error}")
        if (card := card_example(name_or_path)) is not None:
            print(card)
        return None


def _task(hf_config: Mapping[str, Any], task: str | None, source: str) -> str:
    """The task to load: the one the architecture has, or ``task`` where that agrees."""
    architecture = (hf_config.get("architectures") or [None])[0]
    if task is not None:
        task = check_choice(task, "task", tuple(TASKS))
    if architecture is None:
        if task is None:
            raise ConfigError(f"{source} names no architecture: pass task=, one of {list(TASKS)}")
        return task
    saved = TASK_OF_ARCHITECTURE.get(architecture)
    if task == "feature-extraction":
        return task  # the encoder of any BERT
    if saved is None:
        raise ConfigError(
            f"{source} names the architecture {architecture!r}; this loader reads "
            f"{', '.join(TASK_OF_ARCHITECTURE)} (and the encoder of any BERT, with "
            f"task='feature-extraction')"
        )
    if task not in (None, saved):
        raise ConfigError(
            f"{source} is a {architecture} ({saved}), with no {task} head: load its encoder "
            f"with task='feature-extraction' and put a new head on it (e.g. "
            f"BertForTokenClassification.from_encoder(model, num_labels=...))"
        )
    return saved


def _bert(
    hf_config: Mapping[str, Any], state: dict[str, torch.Tensor], task: str, source: str
) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """A BERT checkpoint: our names are ``transformers``' already."""
    config = config_from_hf(hf_config)
    if task == "feature-extraction":
        encoder, _ = split_encoder_state(state)  # a head's layers are left out
        has_pooler = any(key.startswith("pooler.") for key in encoder)
        return BertModel(config, add_pooling_layer=has_pooler), encoder
    if task == "fill-mask":
        state = dict(state)
        for copy, original in _BERT_TIED:
            _merge_tied(state, copy, original, source)
    keys = _label_keys(hf_config) if task.endswith("-classification") else {}
    return TASKS[task].from_head_config(config, keys, source), state


def _label_keys(hf_config: Mapping[str, Any]) -> dict[str, Any]:
    """A classifier's keys as our heads read them: ``transformers`` writes only ``id2label``
    (``num_labels`` is its length; 2 without names, ``transformers``' default)."""
    id2label = hf_config.get("id2label")
    keys = {
        "num_labels": len(id2label) if id2label else hf_config.get("num_labels", 2),
        "classifier_dropout": hf_config.get("classifier_dropout"),
    }
    return {**keys, "id2label": id2label} if id2label else keys


def _modernbert(
    hf_config: Mapping[str, Any], state: dict[str, torch.Tensor], task: str, source: str
) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """A ModernBERT checkpoint: the encoder renamed as in :mod:`~mlmcourse.interop.modernbert`,
    its MLM head (``head.dense``, ``head.norm``, ``decoder``) onto ours."""
    config = config_from_modernbert(hf_config)
    if task == "feature-extraction":
        return ModernBertModel(config), encoder_state_from_modernbert(state)
    if task != "fill-mask":
        raise ConfigError(f"{source}: a ModernBERT loads here as fill-mask or feature-extraction")
    activation = hf_config.get("classifier_activation", "gelu")
    if activation not in ACTIVATIONS:
        raise ConfigError(
            f"{source}: classifier_activation {activation!r} is none of {list(ACTIVATIONS)}"
        )
    config = dataclasses.replace(config, hidden_act=activation)  # the head's activation
    state = dict(state)
    _merge_tied(state, "decoder.weight", "model.embeddings.tok_embeddings.weight", source)
    ours = {ENCODER_PREFIX + k: v for k, v in encoder_state_from_modernbert(state).items()}
    for name, tensor in state.items():
        if name.startswith(("head.", "decoder.")):  # unmapped names stay, and are reported
            ours[_renamed(name, _MODERNBERT_HEAD)] = tensor
    for key, zeros in _absent_biases(hf_config, config).items():
        ours.setdefault(key, zeros)
    return BertForMaskedLM(config), ours


def _renamed(name: str, renames: tuple[tuple[str, str], ...]) -> str:
    for theirs, ours in renames:
        if name.startswith(theirs):
            return ours + name[len(theirs) :]
    return name


def _absent_biases(hf_config: Mapping[str, Any], config: EncoderConfig) -> dict[str, torch.Tensor]:
    """Zeros for the biases ModernBERT's head goes without (``classifier_bias``, ``norm_bias``
    and ``decoder_bias`` false): a zero bias is no bias."""
    hidden, vocab = config.hidden_size, config.vocab_size
    biases = {  # ModernBERT's switch: (our bias, its size, transformers' default)
        "classifier_bias": ("cls.predictions.transform.dense.bias", hidden, False),
        "norm_bias": ("cls.predictions.transform.LayerNorm.bias", hidden, False),
        "decoder_bias": ("cls.predictions.bias", vocab, True),
    }
    return {
        key: torch.zeros(size)
        for switch, (key, size, default) in biases.items()
        if not hf_config.get(switch, default)
    }


def _merge_tied(state: dict[str, torch.Tensor], copy: str, original: str, source: str) -> None:
    """Keep a tied tensor once: our decoder *is* the embedding matrix, so a checkpoint's copy
    of it must be equal (one whose decoder differs cannot load into a tied model)."""
    if copy not in state:
        return
    tensor = state.pop(copy)
    if original not in state:
        state[original] = tensor
    elif not torch.equal(tensor, state[original]):
        raise WeightsMismatchError(
            f"{source}: {copy} differs from {original}; our model ties them (one tensor), so a "
            f"checkpoint that trained them apart cannot load into it"
        )
