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

from mlmcourse import atomic
from mlmcourse.atomic import recover_checkpoint_dir
from mlmcourse.checks import ConfigError, check_path_exists, read_json, reading
from mlmcourse.encoder_config import SIZE_FIELDS
from mlmcourse.runtime import rng_state, set_rng_state
from mlmcourse.weights import WeightsMismatchError, check_vocab_fits, load_state_strict

__all__ = [
    "CONFIG_NAME",
    "WEIGHTS_NAME",
    "TOKENIZER_NAME",
    "STATE_NAME",
    "CheckpointMismatchError",
    "Checkpoint",
    "save_checkpoint",
    "save_encoder",
    "load_checkpoint",
    "load_encoder",
    "load_weights",
    "load_training_state",
    "check_config_matches",
    "recover_checkpoint_dir",
    "check_checkpoint_target",
    "tokenizer_fingerprint",
    "shipped_checkpoint",
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
# The keys of a token-classification head, as transformers names them (a tagger's only).
LABEL_KEYS = ("num_labels", "id2label", "label2id", "classifier_dropout")
TAGGER = "BertForTokenClassification"

# Config keys that change the shape or meaning of the weights; dropout rates and the
# initialiser range do not, so a checkpoint may be loaded into a model that differs there.
ARCHITECTURE_KEYS = (
    *SIZE_FIELDS,
    "hidden_act",
    "pre_layer_norm",
    "is_causal",
)


# A checkpoint that does not fit the model or tokenizer it is loaded with: the error of the one
# strict loader (mlmcourse.weights), under the name checkpoint code has always caught.
CheckpointMismatchError = WeightsMismatchError


@dataclass
class Checkpoint:
    """A loaded checkpoint: the model (eval mode), its tokenizer, its config and training info."""

    model: nn.Module
    tokenizer: Any
    config: dict[str, Any]
    step: int | None
    training_config: dict[str, Any] | None


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
            raise CheckpointMismatchError(
                f"{where}: {TOKENIZER_NAME} is not the tokenizer these weights were saved with "
                f"(its vocabulary of {tokenizer.vocab_size} tokens differs from the one "
                f"recorded in {CONFIG_NAME}), so token ids would mean other words. Put the "
                f"original {TOKENIZER_NAME} back, or train a new model with this tokenizer."
            )
    elif "vocab_size" in config and tokenizer.vocab_size != int(config["vocab_size"]):
        # A checkpoint from before fingerprints: the sizes must at least agree.
        raise CheckpointMismatchError(
            f"{where}: the tokenizer has {tokenizer.vocab_size} tokens but the model's "
            f"vocab_size is {config['vocab_size']}: it is not the tokenizer the model was "
            f"trained with. Use that one."
        )


def _hf_keys(config: Mapping[str, Any]) -> dict[str, Any]:
    """What makes ``config.json`` a ``transformers`` BERT config (``position_embedding_type``
    is one of our fields); none for a pre-LN model or one with a modern encoder's switch."""
    from mlmcourse.encoder_config import MODERN_FIELDS, EncoderConfig

    bert = EncoderConfig()
    modern = any(config.get(f, getattr(bert, f)) != getattr(bert, f) for f in MODERN_FIELDS)
    if config.get("pre_layer_norm") or modern or "is_causal" not in config:
        return {}
    return {"model_type": "bert", "is_decoder": config["is_causal"]}


def _label_keys(model: nn.Module) -> dict[str, Any]:
    """A tagger's labels and head dropout, as ``transformers`` writes them; none for others.

    JSON keys are strings, so ``id2label`` is ``{"0": "O", ...}`` as in any Hub model.
    """
    from mlmcourse.ner.model import BertForTokenClassification

    if not isinstance(model, BertForTokenClassification):
        return {}
    keys: dict[str, Any] = {"num_labels": model.num_labels, "classifier_dropout": model.dropout.p}
    if model.id2label is not None:
        keys["id2label"] = {str(i): name for i, name in model.id2label.items()}
        keys["label2id"] = {name: i for i, name in model.id2label.items()}
    return keys


def _tagger_arguments(config: Mapping[str, Any], source: str) -> dict[str, Any]:
    """``BertForTokenClassification``'s label arguments from the keys :func:`_label_keys` wrote."""
    num_labels = config.get("num_labels")
    if not isinstance(num_labels, int) or isinstance(num_labels, bool) or num_labels < 1:
        raise ConfigError(f"{source}: a tagger needs num_labels >= 1, got {num_labels!r}")
    arguments: dict[str, Any] = {
        "num_labels": num_labels,
        "classifier_dropout": config.get("classifier_dropout"),
    }
    id2label = config.get("id2label")
    if id2label is None:
        return arguments
    expected = [str(i) for i in range(num_labels)]
    if not isinstance(id2label, Mapping) or set(id2label) != set(expected):
        raise ConfigError(
            f"{source}: id2label must name each of the {num_labels} labels once, with the keys "
            f"'0'..'{num_labels - 1}'; got {id2label!r:.200}"
        )
    names = [id2label[key] for key in expected]
    label2id = {name: i for i, name in enumerate(names)}
    if config.get("label2id", label2id) != label2id:
        raise ConfigError(f"{source}: label2id contradicts id2label; was it edited by hand?")
    arguments["id2label"] = dict(enumerate(names))
    return arguments


def save_checkpoint(
    directory: str | Path,
    model: nn.Module,
    *,
    tokenizer: Any = None,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: Any = None,
    step: int | None = None,
    training_config: Mapping[str, Any] | None = None,
    history: Mapping[str, Any] | None = None,
    tokens_seen: int = 0,
) -> Path:
    """Write ``model`` (and optionally its tokenizer and training state) to ``directory``.

    The weights keep the model's own parameter names (Hugging Face's), so a
    :class:`~mlmcourse.mlm.BertForMaskedLM` exports to ``transformers`` without renaming (see
    :func:`mlmcourse.mlm.export_hf`). Returns the directory.
    """
    from safetensors.torch import save_model

    directory = Path(directory)
    config = _model_config(model)
    if tokenizer is not None:
        _check_tokenizer(config, tokenizer, "save_checkpoint")
    config_json = {
        "architectures": [type(model).__name__],
        **config,
        **_hf_keys(config),
        **_label_keys(model),
    }
    fingerprint = tokenizer_fingerprint(tokenizer) if tokenizer is not None else None
    if fingerprint is not None:
        config_json[FINGERPRINT_KEY] = fingerprint
    check_checkpoint_target(directory)
    with atomic.atomic_directory(directory) as tmp:
        (tmp / CONFIG_NAME).write_text(json.dumps(config_json, indent=2) + "\n")
        # save_model stores a tied (shared) tensor once and load_model re-ties it.
        save_model(model, str(tmp / WEIGHTS_NAME), metadata={"format": "pt"})
        if tokenizer is not None:
            tokenizer.save(tmp / TOKENIZER_NAME)
        if optimizer is not None or step is not None:
            torch.save(
                {
                    "step": step or 0,
                    "optimizer": optimizer.state_dict() if optimizer is not None else None,
                    "scheduler": scheduler.state_dict() if scheduler is not None else None,
                    "rng": rng_state(),
                    "tokens_seen": tokens_seen,
                },
                tmp / STATE_NAME,
            )
            trainer_state = {
                "step": step or 0,
                "tokens_seen": tokens_seen,
                "training_config": dict(training_config or {}),
                "history": dict(history or {}),
            }
            (tmp / TRAINER_STATE_NAME).write_text(json.dumps(trainer_state, indent=1) + "\n")
    return directory


def save_encoder(directory: str | Path, model: nn.Module, *, tokenizer: Any = None) -> Path:
    """Save only the encoder of an MLM model (its ``.bert``), for downstream tasks such as NER."""
    encoder = getattr(model, "bert", model)
    return save_checkpoint(directory, encoder, tokenizer=tokenizer)


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _read_config(directory: Path) -> dict[str, Any]:
    recover_checkpoint_dir(directory)
    path = directory / CONFIG_NAME
    if not path.is_file():
        if not directory.exists():
            raise FileNotFoundError(f"no checkpoint at {directory}: the directory does not exist")
        raise FileNotFoundError(
            f"{directory} is not a checkpoint: it has no {CONFIG_NAME} "
            f"(expected {CONFIG_NAME}, {WEIGHTS_NAME} and usually {TOKENIZER_NAME})"
        )
    return read_json(path, "a checkpoint config")


def check_config_matches(model: nn.Module, saved: Mapping[str, Any], *, where: str = "") -> None:
    """Refuse a checkpoint whose architecture differs from ``model``'s, naming every difference."""
    ours = _model_config(model)
    diffs = [
        f"{key}: checkpoint {saved[key]!r} vs model {ours[key]!r}"
        for key in ARCHITECTURE_KEYS
        if key in saved and key in ours and saved[key] != ours[key]
    ]
    if diffs:
        raise CheckpointMismatchError(
            f"the checkpoint{' ' + where if where else ''} does not match the model: "
            + "; ".join(diffs)
            + ". Build the model from the checkpoint's config.json (load_checkpoint does)."
        )


def load_weights(model: nn.Module, directory: str | Path) -> nn.Module:
    """Load ``directory``'s weights into ``model`` after checking that the configs match."""
    from safetensors.torch import load_file

    directory = Path(directory)
    check_config_matches(model, _read_config(directory), where=str(directory))
    path = directory / WEIGHTS_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{directory} has no {WEIGHTS_NAME}: the checkpoint has no weights")
    with reading(path, "safetensors weights"):
        state = load_file(path)
    hint = f"was {CONFIG_NAME} edited, or copied from another checkpoint?"
    return load_state_strict(model, state, source=str(path), hint=hint)


def _encoder_config(config: Mapping[str, Any], source: str = CONFIG_NAME) -> Any:
    """The :class:`EncoderConfig` of a checkpoint's ``config.json``; unknown keys are an error.

    An unknown key is a typo (``hidden_sise``) or a setting this version cannot honour; either
    way, building the model without it would silently give another model than intended.
    """
    from mlmcourse.model import EncoderConfig

    known = list(EncoderConfig.__dataclass_fields__)
    unknown = sorted(k for k in config if k not in known and k not in METADATA_KEYS)
    if unknown:
        hint = (
            " (a Hugging Face directory? use mlmcourse.hf.load_bert)"
            if "model_type" in config and "is_causal" not in config
            else ""
        )
        raise ConfigError(
            f"{source} has unknown key(s) {unknown}{hint}; valid keys are "
            f"{', '.join(known + list(METADATA_KEYS))}"
        )
    encoder_config = EncoderConfig.from_dict({k: v for k, v in config.items() if k in known})
    written = {k: config[k] for k in HF_KEYS if k in config}
    if written and written != _hf_keys(encoder_config.to_dict()):
        raise ConfigError(
            f"{source}: {written} contradicts the model's own keys (is_causal "
            f"{encoder_config.is_causal}, pre_layer_norm {encoder_config.pre_layer_norm}); "
            f"was it edited by hand?"
        )
    return encoder_config


def _build_model(config: Mapping[str, Any], source: str = CONFIG_NAME) -> nn.Module:
    from mlmcourse.model import BertModel

    architecture = (config.get("architectures") or ["BertModel"])[0]
    if architecture == TAGGER:  # the label keys are the head's, not the encoder's
        from mlmcourse.ner.model import BertForTokenClassification

        encoder = {k: v for k, v in config.items() if k not in LABEL_KEYS}
        arguments = _tagger_arguments(config, source)
        return BertForTokenClassification(_encoder_config(encoder, source), **arguments)
    encoder_config = _encoder_config(config, source)
    if architecture == "BertForMaskedLM":
        from mlmcourse.mlm import BertForMaskedLM

        return BertForMaskedLM(encoder_config)
    if architecture == "BertForCausalLM":
        from mlmcourse.clm import BertForCausalLM

        return BertForCausalLM(encoder_config)
    if architecture == "BertModel":
        return BertModel(encoder_config)
    raise CheckpointMismatchError(
        f"config.json names the architecture {architecture!r}; this loader knows "
        f"'BertForMaskedLM', 'BertForCausalLM', 'BertModel' and '{TAGGER}'"
    )


def load_checkpoint(directory: str | Path, *, device: torch.device | str = "cpu") -> Checkpoint:
    """Rebuild the model a checkpoint describes, load its weights and tokenizer (eval mode)."""
    directory = Path(directory)
    config = _read_config(directory)
    model = _build_model(config, str(directory / CONFIG_NAME))
    load_weights(model, directory)
    tokenizer = None
    if (directory / TOKENIZER_NAME).is_file():
        from mlmcourse.tokenization import load_tokenizer

        with reading(directory / TOKENIZER_NAME, "a tokenizer"):
            tokenizer = load_tokenizer(directory / TOKENIZER_NAME)
        _check_tokenizer_belongs(config, tokenizer, f"load_checkpoint({directory})")
    step, training_config = None, None
    if (directory / TRAINER_STATE_NAME).is_file():
        trainer_state = read_json(directory / TRAINER_STATE_NAME, "a trainer state")
        step, training_config = trainer_state["step"], trainer_state["training_config"]
    return Checkpoint(model.to(device).eval(), tokenizer, config, step, training_config)


def load_encoder(directory: str | Path, *, device: torch.device | str = "cpu") -> nn.Module:
    """The encoder (``BertModel``) of a checkpoint, whether it holds an MLM model or an encoder."""
    model = load_checkpoint(directory, device=device).model
    return getattr(model, "bert", model)


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
    if not (directory / STATE_NAME).is_file():
        raise FileNotFoundError(
            f"cannot resume from {directory}: it has no {STATE_NAME} (it is a model-only "
            f"checkpoint; start a new run that loads its weights instead)"
        )
    load_weights(model, directory)
    with reading(directory / STATE_NAME, "a training state (torch.save)"):
        state = torch.load(directory / STATE_NAME, map_location="cpu", weights_only=True)
    if optimizer is not None and state["optimizer"] is not None:
        optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None and state["scheduler"] is not None:
        scheduler.load_state_dict(state["scheduler"])
    set_rng_state(state["rng"])
    trainer_state = read_json(directory / TRAINER_STATE_NAME, "a trainer state")
    return {
        "step": int(state["step"]),
        "tokens_seen": int(state.get("tokens_seen", 0)),
        "history": trainer_state.get("history"),
        "training_config": trainer_state.get("training_config"),
    }


def shipped_checkpoint(name: str = "world") -> Path:
    """The path of a checkpoint shipped inside the package (``mlmcourse/checkpoints/<name>``)."""
    import importlib.resources

    root = Path(str(importlib.resources.files("mlmcourse") / "checkpoints"))
    path = root / name
    if not (path / CONFIG_NAME).is_file():
        available = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise FileNotFoundError(
            f"no shipped checkpoint named {name!r}; available: {available or 'none'}"
        )
    return path
