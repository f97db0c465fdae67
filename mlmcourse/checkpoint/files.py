"""Checkpoints: one directory a reader can open, written atomically, resumable exactly.

A checkpoint is a Hugging Face model folder plus the training state. It holds

- ``config.json``: the model configuration, with the keys ``transformers`` reads
  (``model_type``, ``is_decoder``, ...), so ``transformers.BertForMaskedLM.from_pretrained``
  loads the folder as it is (a pre-LayerNorm model, which ``transformers``' BERT cannot
  express, leaves them out, so ``transformers`` refuses it instead of loading a wrong model);
  a NER tagger's also names its labels as ``transformers`` does (``num_labels``,
  ``id2label``, ``label2id``), so ``BertForTokenClassification.from_pretrained`` opens it;
- ``model.safetensors``: the weights, with Hugging Face parameter names; a tied decoder is
  stored once;
- ``tokenizer.json``: the tokenizer the model was trained with (ids must match rows);
- ``training_state.pt`` and ``trainer_state.json`` (only for training checkpoints): optimiser,
  scheduler, step, RNG states and the history, so a run can continue as if never stopped.

The directory is written to a temporary sibling and renamed into place, so a crash mid-write
never leaves a half-written checkpoint where the last good one was; the next save or load
cleans up what a killed save left (:func:`recover_checkpoint_dir`). Loading checks that the
files fit together (``config.json`` against the weights' shapes and the tokenizer's
vocabulary) and names the file when one is damaged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from mlmcourse.checkpoint import atomic
from mlmcourse.checkpoint.atomic import recover_checkpoint_dir
from mlmcourse.checkpoint.weights import (
    WeightsMismatchError,
    check_vocab_fits,
    load_state_strict,
    split_encoder_state,
)
from mlmcourse.model import BertModel, EncoderConfig, ModernConfig, config_from_dict, encoder_for
from mlmcourse.model.config import SIZE_FIELDS
from mlmcourse.model.modern import MODERN_FIELDS
from mlmcourse.tokenization import load_tokenizer
from mlmcourse.utils.checks import (
    ConfigError,
    FileFormatError,
    WrongTypeError,
    check_path_exists,
    read_json,
    reading,
)
from mlmcourse.utils.runtime import rng_state, set_rng_state
from mlmcourse.utils.schema import check_keys, shape_of

__all__ = [
    "CONFIG_NAME",
    "HEAD_KEYS",
    "WEIGHTS_NAME",
    "TOKENIZER_NAME",
    "STATE_NAME",
    "TrainingState",
    "check_checkpoint_target",
    "check_config_matches",
    "encoder_config",
    "load_encoder",
    "load_tokenizer_of",
    "load_training_state",
    "load_weights",
    "read_config",
    "read_trainer_state",
    "save_checkpoint",
    "save_encoder",
    "shipped_checkpoint",
    "tokenizer_fingerprint",
]

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
TOKENIZER_NAME = "tokenizer.json"
STATE_NAME = "training_state.pt"
TRAINER_STATE_NAME = "trainer_state.json"
# config.json's record of the tokenizer the weights were saved with (see tokenizer_fingerprint).
FINGERPRINT_KEY = "tokenizer_vocab_sha256"
# Keys of config.json besides EncoderConfig's fields.
# The keys transformers' BertConfig needs besides ours (our is_causal is its is_decoder).
HF_KEYS = ("model_type", "is_decoder")
METADATA_KEYS = ("architectures", FINGERPRINT_KEY, *HF_KEYS)
# The keys a head adds (its head_config()), as transformers names them: a classifier's labels.
HEAD_KEYS = ("num_labels", "id2label", "label2id", "classifier_dropout")

# The keys of each file and their types (see mlmcourse.utils.schema.check_keys; ``?``: may be
# missing). In config.json, the ARCHITECTURE_KEYS of EncoderConfig are required (without them
# the weights would be read into another model; encoder_config checks them, EncoderConfig the
# types of its fields); every other field takes its default (older checkpoints lack the newer
# fields), as do these keys.
CONFIG_KEYS: dict[str, Any] = {
    "architectures?": ["string"],
    f"{FINGERPRINT_KEY}?": "string",
    "model_type?": "string",
    "is_decoder?": "bool",
    "num_labels?": "int",
    "id2label?": {"*": "string"},
    "label2id?": {"*": "int"},
    "classifier_dropout?": "number|null",
}
TRAINER_STATE_KEYS: dict[str, Any] = {
    "step": "int",
    "tokens_seen": "int",
    "training_config": "object",  # the run's settings, as written; read by people, not code
    "history": {  # a run saved before its first log has no rows: [] then
        "train?": [{"step": "int", "loss": "number", "lr": "number", "grad_norm": "number"}],
        "eval?": [{"step": "int", "*": "number"}],  # eval_loss, eval_accuracy, ... per task
    },
}
STATE_KEYS: dict[str, Any] = {
    "step": "int",
    "tokens_seen?": "int",  # 0 when missing: checkpoints from before it was recorded
    "optimizer": "object|null",  # null: saved without an optimizer
    "scheduler": "object|null",
    "rng": {"torch": "tensor", "python": "list", "numpy": "list", "cuda?": "list"},
}
# Any torch optimizer's state_dict; its hyperparameters are checked against the optimizer's own.
OPTIMIZER_KEYS = {"state": {"*": {"*": "tensor|number"}}, "param_groups": [{"params": ["int"]}]}
FIX_CONFIG = (
    f"put back the {CONFIG_NAME} this checkpoint was saved with (it must describe the "
    f"weights in {WEIGHTS_NAME})"
)
FIX_STATE = (
    "restore the checkpoint from a good copy, or start a new run from its weights (init_from: "
    "the checkpoint's directory) instead of resuming"
)

# Config keys that change the shape or meaning of the weights; dropout rates and the
# initialiser range do not, so a checkpoint may be loaded into a model that differs there.
ARCHITECTURE_KEYS = (
    *SIZE_FIELDS,
    "hidden_act",
    "is_causal",
)
# The modern encoder's switches change the meaning of the weights too; BERT's config.json
# leaves them out (a checkpoint of 0.2.0 writes pre_layer_norm: false), so a missing one is
# its default.
_SWITCH_DEFAULTS = {name: ModernConfig.__dataclass_fields__[name].default for name in MODERN_FIELDS}


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def check_checkpoint_target(directory: str | Path) -> None:
    """Refuse to replace a file, or a folder that is not a checkpoint: a save swaps the whole
    directory, so ``output_dir`` pointing at a project folder would delete that folder.
    :func:`~mlmcourse.training.train` calls it before its first step, not after the run."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise FileExistsError(
            f"cannot write a checkpoint to {directory}: it is a file; a checkpoint is a "
            f"directory, so give a new or empty directory (e.g. runs/my-run)"
        )
    if directory.is_dir() and not (directory / CONFIG_NAME).is_file():
        present = sorted(p.name for p in directory.iterdir())
        if present:
            raise FileExistsError(
                f"refusing to write a checkpoint to {directory}: it exists, is not a "
                f"checkpoint and holds {present[:5]}{' ...' if len(present) > 5 else ''}, "
                f"which saving would delete. Give a new or empty directory (e.g. runs/my-run)"
            )


def _model_config(model: nn.Module) -> dict[str, Any]:
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "to_dict"):
        raise TypeError(
            f"save_checkpoint needs a model with a .config that has to_dict() (an "
            f"EncoderConfig), got {type(model).__name__} without one"
        )
    return dict(config.to_dict())


def tokenizer_fingerprint(tokenizer: Any) -> str | None:
    """The sha256 of a tokenizer's vocabulary (its tokens in id order), or ``None``.

    ``config.json`` records it, so a ``tokenizer.json`` swapped for another one (a different
    or smaller vocabulary, whose ids mean other words) is refused on load instead of
    predicting garbage. Tokenizers without ``get_vocab`` have no fingerprint.
    """
    get_vocab = getattr(tokenizer, "get_vocab", None)
    if get_vocab is None:
        return None
    by_id = sorted(get_vocab().items(), key=lambda item: item[1])
    return hashlib.sha256(json.dumps(by_id, ensure_ascii=False).encode()).hexdigest()


def _check_tokenizer(config: Mapping[str, Any], tokenizer: Any, where: str) -> None:
    if "vocab_size" in config:
        check_vocab_fits(tokenizer, config["vocab_size"], where)


def _check_tokenizer_belongs(config: Mapping[str, Any], tokenizer: Any, where: str) -> None:
    """On load, the tokenizer must be the one the weights were saved with (ids are rows)."""
    _check_tokenizer(config, tokenizer, where)
    saved = config.get(FINGERPRINT_KEY)
    if saved is not None:
        if tokenizer_fingerprint(tokenizer) != saved:
            raise WeightsMismatchError(
                f"{where}: {TOKENIZER_NAME} is not the tokenizer these weights were saved with "
                f"(its vocabulary of {tokenizer.vocab_size} tokens differs from the one "
                f"recorded in {CONFIG_NAME}), so token ids would mean other words. Put the "
                f"original {TOKENIZER_NAME} back, or train a new model with this tokenizer."
            )
    elif "vocab_size" in config and tokenizer.vocab_size != int(config["vocab_size"]):
        # A checkpoint from before fingerprints: the sizes must at least agree.
        raise WeightsMismatchError(
            f"{where}: the tokenizer has {tokenizer.vocab_size} tokens but the model's "
            f"vocab_size is {config['vocab_size']}: it is not the tokenizer the model was "
            f"trained with. Use that one."
        )


def _hf_keys(config: Mapping[str, Any]) -> dict[str, Any]:
    """What makes ``config.json`` a ``transformers`` BERT config (``position_embedding_type``
    is one of our fields); none for a pre-LN model or one with a modern encoder's switch."""
    modern = any(config.get(f, default) != default for f, default in _SWITCH_DEFAULTS.items())
    if modern or config.get("type_vocab_size") == 0 or "is_causal" not in config:
        return {}
    return {"model_type": "bert", "is_decoder": config["is_causal"]}


def _architecture_name(model: nn.Module) -> str:
    """The class ``config.json`` names: the model's, or for an encoder its kind (BERT's encoder
    on the speed path is still a ``BertModel``: the same weights, a faster forward)."""
    if isinstance(model, BertModel):
        return "BertModel"
    return type(model).__name__


def head_config(model: nn.Module) -> dict[str, Any]:
    """The keys a head adds to ``config.json`` (its ``head_config()``); none for an encoder."""
    keys = dict(getattr(model, "head_config", dict)())
    unknown = sorted(set(keys) - set(HEAD_KEYS))
    if unknown:
        raise ValueError(f"{type(model).__name__}.head_config() returned unknown keys {unknown}")
    return keys


@dataclass(frozen=True)
class TrainingState:
    """What a checkpoint holds to continue a run, besides the weights and the tokenizer: the
    optimiser, the schedule, the step and the tokens seen (``training_state.pt``, with the RNG
    states), and the run's settings and history (``trainer_state.json``)."""

    step: int = 0
    optimizer: torch.optim.Optimizer | None = None
    scheduler: Any = None
    training_config: Mapping[str, Any] | None = None
    history: Mapping[str, Any] | None = None
    tokens_seen: int = 0


def save_checkpoint(
    directory: str | Path,
    model: nn.Module,
    *,
    tokenizer: Any = None,
    state: TrainingState | None = None,
) -> Path:
    """Write ``model`` (and optionally its tokenizer and the ``state`` of its run) to ``directory``.

    The weights keep the model's own parameter names (Hugging Face's), so a
    :class:`~mlmcourse.heads.BertForMaskedLM` exports to ``transformers`` without renaming (see
    :func:`mlmcourse.interop.bert.export_hf`). A head's own keys (a classifier's labels) come
    from its ``head_config()``. Without ``state`` the checkpoint is the model only (it cannot
    be resumed). Returns the directory.
    """
    from safetensors.torch import save_model

    directory = Path(directory)
    config = _model_config(model)
    if tokenizer is not None:
        _check_tokenizer(config, tokenizer, "save_checkpoint")
    config_json = {
        "architectures": [_architecture_name(model)],
        **config,
        **_hf_keys(config),
        **head_config(model),
    }
    fingerprint = tokenizer_fingerprint(tokenizer) if tokenizer is not None else None
    if fingerprint is not None:
        config_json[FINGERPRINT_KEY] = fingerprint
    check_checkpoint_target(directory)
    with atomic.atomic_directory(directory) as tmp:  # looked up here: crash tests wrap it
        (tmp / CONFIG_NAME).write_text(json.dumps(config_json, indent=2) + "\n")
        # save_model stores a tied (shared) tensor once and load_model re-ties it.
        save_model(model, str(tmp / WEIGHTS_NAME), metadata={"format": "pt"})
        if tokenizer is not None:
            tokenizer.save(tmp / TOKENIZER_NAME)
        if state is not None:
            _write_training_state(tmp, state)
    return directory


def _write_training_state(directory: Path, state: TrainingState) -> None:
    """``training_state.pt`` (optimiser, schedule, RNG states) and ``trainer_state.json``."""
    optimizer, scheduler = state.optimizer, state.scheduler
    torch.save(
        {
            "step": state.step,
            "optimizer": optimizer.state_dict() if optimizer is not None else None,
            "scheduler": scheduler.state_dict() if scheduler is not None else None,
            "rng": rng_state(),
            "tokens_seen": state.tokens_seen,
        },
        directory / STATE_NAME,
    )
    trainer_state = {
        "step": state.step,
        "tokens_seen": state.tokens_seen,
        "training_config": dict(state.training_config or {}),
        "history": dict(state.history or {}),
    }
    (directory / TRAINER_STATE_NAME).write_text(json.dumps(trainer_state, indent=1) + "\n")


def save_encoder(directory: str | Path, model: nn.Module, *, tokenizer: Any = None) -> Path:
    """Save only the encoder of an MLM model (its ``.bert``), for downstream tasks such as NER."""
    encoder = getattr(model, "bert", model)
    return save_checkpoint(directory, encoder, tokenizer=tokenizer)


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def read_config(directory: str | Path) -> dict[str, Any]:
    """``config.json`` of a checkpoint directory (after cleaning up what a killed save left)."""
    directory = Path(directory)
    recover_checkpoint_dir(directory)
    path = directory / CONFIG_NAME
    if not path.is_file():
        if not directory.exists():
            raise FileNotFoundError(f"no checkpoint at {directory}: the directory does not exist")
        raise FileNotFoundError(
            f"{directory} is not a checkpoint: it has no {CONFIG_NAME} "
            f"(expected {CONFIG_NAME}, {WEIGHTS_NAME} and usually {TOKENIZER_NAME})"
        )
    config = read_json(path, "a checkpoint config")
    check_keys(config, CONFIG_KEYS, str(path), fix=FIX_CONFIG)
    return config


def check_config_matches(model: nn.Module, saved: Mapping[str, Any], *, where: str = "") -> None:
    """Refuse a checkpoint whose architecture differs from ``model``'s, naming every difference."""
    ours = _model_config(model)
    diffs = [
        f"{key}: checkpoint {saved[key]!r} vs model {ours[key]!r}"
        for key in ARCHITECTURE_KEYS
        if key in saved and key in ours and saved[key] != ours[key]
    ]
    diffs += [
        f"{key}: checkpoint {saved.get(key, default)!r} vs model {ours.get(key, default)!r}"
        for key, default in _SWITCH_DEFAULTS.items()
        if saved.get(key, default) != ours.get(key, default)
    ]
    if diffs:
        raise WeightsMismatchError(
            f"the checkpoint{' ' + where if where else ''} does not match the model: "
            + "; ".join(diffs)
            + ". Build the model from the checkpoint's config.json (load_checkpoint does)."
        )


def load_weights(model: nn.Module, directory: str | Path) -> nn.Module:
    """Load ``directory``'s weights into ``model`` after checking that the configs match."""
    directory = Path(directory)
    check_config_matches(model, read_config(directory), where=str(directory))
    state = read_weights(directory)
    hint = f"was {CONFIG_NAME} edited, or copied from another checkpoint?"
    return load_state_strict(model, state, source=str(directory / WEIGHTS_NAME), hint=hint)


def encoder_config(config: Mapping[str, Any], source: str = CONFIG_NAME) -> EncoderConfig:
    """The :class:`EncoderConfig` of a checkpoint's ``config.json``; unknown keys are an error.

    A head's own keys (:data:`HEAD_KEYS`) are left to the head.

    An unknown key is a typo (``hidden_sise``) or a setting this version cannot honour; either
    way, building the model without it would silently give another model than intended.
    """
    config = {k: v for k, v in config.items() if k not in HEAD_KEYS}
    known = list(ModernConfig.__dataclass_fields__)  # BERT's fields, then the switches
    unknown = sorted(k for k in config if k not in known and k not in METADATA_KEYS)
    if unknown:
        hint = (
            " (a Hugging Face directory? use mlmcourse.interop.from_pretrained)"
            if "model_type" in config and "is_causal" not in config
            else ""
        )
        raise ConfigError(
            f"{source} has unknown key(s) {unknown}{hint}; valid keys are "
            f"{', '.join(known + list(METADATA_KEYS))}"
        )
    check_keys(config, dict.fromkeys(ARCHITECTURE_KEYS, "any"), source, fix=FIX_CONFIG)
    try:
        encoder_config = config_from_dict({k: v for k, v in config.items() if k in known})
    except (ConfigError, WrongTypeError) as exc:  # names the key, not the file
        raise ConfigError(f"{source}: {exc}; {FIX_CONFIG}") from None
    written = {k: config[k] for k in HF_KEYS if k in config}
    expected = _hf_keys(encoder_config.to_dict())
    if written and written != expected:
        keys = [k for k in HF_KEYS if written.get(k) != expected.get(k)]
        raise ConfigError(
            f"{source}: key(s) {', '.join(keys)} contradicts the model's own keys (should be "
            f"{[expected.get(k) for k in keys]} for is_causal {encoder_config.is_causal}, "
            f"pre_layer_norm {getattr(encoder_config, 'pre_layer_norm', False)}; got "
            f"{[written.get(k) for k in keys]}); was it edited by hand? {FIX_CONFIG}"
        )
    return encoder_config


def read_weights(directory: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of ``model.safetensors``, with the file named if it is missing or damaged."""
    from safetensors.torch import load_file

    path = Path(directory) / WEIGHTS_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{directory} has no {WEIGHTS_NAME}: the checkpoint has no weights")
    with reading(path, "safetensors weights"):
        return load_file(path)


def load_encoder(directory: str | Path, *, device: torch.device | str = "cpu") -> BertModel:
    """The encoder (``BertModel``, eval mode) of any checkpoint: an encoder's or any head's.

    Only the encoder's tensors are read into it (``bert.*`` of a head); a head's own layers
    are left out, so this works for every head, including ones this version does not know.
    """
    directory = Path(directory)
    source = str(directory / CONFIG_NAME)
    config = encoder_config(read_config(directory), source)
    state, _ = split_encoder_state(read_weights(directory))
    encoder = encoder_for(config, add_pooling_layer=any(k.startswith("pooler.") for k in state))
    hint = f"was {CONFIG_NAME} edited, or copied from another checkpoint?"
    load_state_strict(encoder, state, source=str(directory / WEIGHTS_NAME), hint=hint)
    return encoder.to(device).eval()


def load_tokenizer_of(directory: str | Path, config: Mapping[str, Any]) -> Any:
    """The checkpoint's ``tokenizer.json`` (``None`` without one), refused if it is not the
    tokenizer the weights were saved with."""
    path = Path(directory) / TOKENIZER_NAME
    if not path.is_file():
        return None
    with reading(path, "a tokenizer"):
        tokenizer = load_tokenizer(path)
    _check_tokenizer_belongs(config, tokenizer, f"load_checkpoint({directory})")
    return tokenizer


def read_trainer_state(directory: str | Path) -> dict[str, Any] | None:
    """``trainer_state.json`` (step, training config, history), or ``None`` for a model only."""
    path = Path(directory) / TRAINER_STATE_NAME
    if not path.is_file():
        return None
    state = read_json(path, "a trainer state")
    check_keys(state, TRAINER_STATE_KEYS, str(path), fix=FIX_STATE)
    return state


def load_training_state(
    directory: str | Path,
    *,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Any = None,
) -> dict[str, Any]:
    """Restore weights, optimiser, scheduler and RNG states; return step, history, tokens seen."""
    directory = recover_checkpoint_dir(directory)
    check_path_exists(directory, "checkpoint to resume from", kind="dir")
    path = directory / STATE_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"cannot resume from {directory}: it has no {STATE_NAME} (it is a model-only "
            f"checkpoint; start a new run that loads its weights instead)"
        )
    trainer_state = read_trainer_state(directory)
    if trainer_state is None:
        raise FileNotFoundError(f"cannot resume from {directory}: it has no {TRAINER_STATE_NAME}")
    load_weights(model, directory)
    state = _read_state(path)
    if optimizer is not None and state["optimizer"] is not None:
        _load_optimizer(optimizer, state["optimizer"], path)
    if scheduler is not None and state["scheduler"] is not None:
        own = _numbers_required(shape_of(scheduler.state_dict()))
        check_keys(state["scheduler"], own, str(path), fix=FIX_STATE, at=("scheduler",))
        _load_part(scheduler, state["scheduler"], path, "scheduler")
    with reading(path, "the random generators' states", key="rng"):
        set_rng_state(state["rng"])
    return {
        "step": int(state["step"]),
        "tokens_seen": int(state.get("tokens_seen", 0)),
        "history": {"train": [], "eval": [], **trainer_state["history"]},
        "training_config": trainer_state["training_config"],
    }


def _read_state(path: Path) -> dict[str, Any]:
    """``training_state.pt``, its keys checked (:data:`STATE_KEYS`)."""
    with reading(path, "a training state (torch.save)"):
        state = torch.load(path, map_location="cpu", weights_only=True)
    check_keys(state, STATE_KEYS, str(path), fix=FIX_STATE)
    return state


def _numbers_required(shape: dict[str, Any]) -> dict[str, Any]:
    """A torch state_dict's ``shape`` with its numbers (``lr``, ``betas``, ``last_epoch``)
    required and its flags (``foreach``, ``fused``) optional: torch fills those in for a state
    saved by an older version, but a missing number would restart a schedule or stop a step.
    A flag that is ``None`` (``foreach``: torch decides) may be true or false instead."""
    return {
        k if v == "number" or isinstance(v, list) else f"{k}?": "bool|null" if v == "any" else v
        for k, v in shape.items()
    }


def _load_part(target: Any, saved: dict[str, Any], path: Path, key: str) -> None:
    """``target.load_state_dict(saved)`` (an optimizer or a scheduler); any failure names the
    file and the key."""
    with reading(path, f"the state of a {type(target).__name__}", key=key):
        target.load_state_dict(saved)


def _load_optimizer(optimizer: torch.optim.Optimizer, saved: dict[str, Any], path: Path) -> None:
    """Load the optimizer's state; every moment must have the shape of its parameter (torch
    would accept another and fail at the next step)."""
    check_keys(saved, OPTIMIZER_KEYS, str(path), fix=FIX_STATE, at=("optimizer",))
    own = optimizer.state_dict()["param_groups"]
    for index, group in enumerate(saved["param_groups"][: len(own)]):
        shape = _numbers_required({k: v for k, v in shape_of(own[index]).items() if k != "params"})
        check_keys(group, shape, str(path), fix=FIX_STATE, at=("optimizer", "param_groups", index))
    names = {name for state in saved["state"].values() for name in state}
    for index, state in saved["state"].items():  # a moment lost from one parameter's state
        for name in sorted(names - set(state)):
            raise FileFormatError(
                f"{path}: key optimizer.state[{index}].{name} is missing (the other "
                f"parameters have it); {FIX_STATE}"
            )
    _load_part(optimizer, saved, path, "optimizer")
    for group in optimizer.param_groups:
        for param in group["params"]:
            for name, value in optimizer.state.get(param, {}).items():
                if isinstance(value, torch.Tensor) and value.dim() and value.shape != param.shape:
                    raise FileFormatError(
                        f"{path}: the optimizer's {name} has shape {tuple(value.shape)} for a "
                        f"parameter of shape {tuple(param.shape)} (key optimizer.state); "
                        f"{FIX_STATE}"
                    )


def shipped_checkpoint(name: str = "world") -> Path:
    """The path of a checkpoint shipped inside the package (``mlmcourse/assets/checkpoints/<name>``)."""
    import importlib.resources

    root = Path(str(importlib.resources.files("mlmcourse") / "assets" / "checkpoints"))
    path = root / name
    if not (path / CONFIG_NAME).is_file():
        available = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise FileNotFoundError(
            f"no shipped checkpoint named {name!r}; available: {available or 'none'}"
        )
    return path
