"""Checkpoints: one directory a reader can open, written atomically, resumable exactly.

A checkpoint directory holds

- ``config.json``: the model configuration (plus ``architectures``, as Hugging Face writes it);
- ``model.safetensors``: the weights, with Hugging Face parameter names; a tied decoder is
  stored once;
- ``tokenizer.json``: the tokenizer the model was trained with (ids must match rows);
- ``training_state.pt`` and ``trainer_state.json`` (only for training checkpoints): optimiser,
  scheduler, step, RNG states and the history, so a run can continue as if never stopped.

The directory is written to a temporary sibling and renamed into place, so a crash mid-write
never leaves a half-written checkpoint where the last good one was.
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import uuid
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

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
    "shipped_checkpoint",
]

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
TOKENIZER_NAME = "tokenizer.json"
STATE_NAME = "training_state.pt"
TRAINER_STATE_NAME = "trainer_state.json"

# Config keys that change the shape or meaning of the weights; dropout rates and the
# initialiser range do not, so a checkpoint may be loaded into a model that differs there.
ARCHITECTURE_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
    "hidden_act",
    "pre_layer_norm",
    "is_causal",
)


class CheckpointMismatchError(ValueError):
    """A checkpoint does not fit the model or tokenizer it is being loaded with."""


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


@contextlib.contextmanager
def _atomic_directory(directory: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``directory``; on success it replaces ``directory``."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = directory.parent / f".{directory.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if directory.exists():
        old = directory.parent / f".{directory.name}.old-{uuid.uuid4().hex[:8]}"
        directory.rename(old)
    tmp.rename(directory)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _model_config(model: nn.Module) -> dict[str, Any]:
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "to_dict"):
        raise TypeError(
            f"save_checkpoint needs a model with a .config that has to_dict() (an "
            f"EncoderConfig), got {type(model).__name__} without one"
        )
    return dict(config.to_dict())


def _vocab_size(tokenizer: Any) -> int:
    return int(tokenizer.vocab_size)


def _check_tokenizer(config: Mapping[str, Any], tokenizer: Any, where: str) -> None:
    if "vocab_size" in config and _vocab_size(tokenizer) > int(config["vocab_size"]):
        raise CheckpointMismatchError(
            f"{where}: the tokenizer has {_vocab_size(tokenizer)} tokens but the model's "
            f"vocab_size is {config['vocab_size']}; token ids past the embedding matrix would "
            f"crash or be silently wrong. Use the tokenizer the model was trained with."
        )


def _rng_state() -> dict[str, Any]:
    import numpy as np

    np_state = np.random.get_state()
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": (np_state[0], torch.from_numpy(np_state[1].astype("int64")), *np_state[2:]),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: Mapping[str, Any]) -> None:
    import numpy as np

    torch.set_rng_state(state["torch"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, keys.numpy().astype("uint32"), pos, has_gauss, cached))
    if "cuda" in state and torch.cuda.is_available():
        saved, present = list(state["cuda"]), torch.cuda.device_count()
        if len(saved) != present:
            # Resuming on another machine is fine (our batches and dropout seeds are functions
            # of the step); only the GPUs both machines have get their generator back.
            warnings.warn(
                f"checkpoint holds CUDA RNG states for {len(saved)} GPU(s), this machine has "
                f"{present}: restoring the first {min(len(saved), present)}",
                stacklevel=3,
            )
        for index, gpu_state in enumerate(saved[:present]):
            torch.cuda.set_rng_state(gpu_state, index)


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
    config_json = {"architectures": [type(model).__name__], **config}
    with _atomic_directory(directory) as tmp:
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
                    "rng": _rng_state(),
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
    path = directory / CONFIG_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"{directory} is not a checkpoint: it has no {CONFIG_NAME} "
            f"(expected {CONFIG_NAME}, {WEIGHTS_NAME} and usually {TOKENIZER_NAME})"
        )
    return json.loads(path.read_text())


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


def load_weights(model: nn.Module, directory: str | Path, *, strict: bool = True) -> nn.Module:
    """Load ``directory``'s weights into ``model`` after checking that the configs match."""
    from safetensors.torch import load_model

    directory = Path(directory)
    check_config_matches(model, _read_config(directory), where=str(directory))
    missing, unexpected = load_model(model, str(directory / WEIGHTS_NAME), strict=False)
    if strict and (missing or unexpected):
        raise CheckpointMismatchError(
            f"the weights in {directory} do not fit {type(model).__name__}: missing "
            f"{sorted(missing)[:5]}, unexpected {sorted(unexpected)[:5]}"
        )
    return model


def _build_model(config: Mapping[str, Any]) -> nn.Module:
    from mlmcourse.model import BertModel, EncoderConfig

    architecture = (config.get("architectures") or ["BertModel"])[0]
    # Keep EncoderConfig's fields; the rest is metadata (architectures, model_type, ...).
    known = EncoderConfig.__dataclass_fields__
    encoder_config = EncoderConfig.from_dict({k: v for k, v in config.items() if k in known})
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
        f"'BertForMaskedLM', 'BertForCausalLM' and 'BertModel'"
    )


def load_checkpoint(directory: str | Path, *, device: torch.device | str = "cpu") -> Checkpoint:
    """Rebuild the model a checkpoint describes, load its weights and tokenizer (eval mode)."""
    directory = Path(directory)
    config = _read_config(directory)
    model = _build_model(config)
    load_weights(model, directory)
    tokenizer = None
    if (directory / TOKENIZER_NAME).is_file():
        from mlmcourse.tokenization import load_tokenizer

        tokenizer = load_tokenizer(directory / TOKENIZER_NAME)
        _check_tokenizer(config, tokenizer, f"load_checkpoint({directory})")
    step, training_config = None, None
    if (directory / TRAINER_STATE_NAME).is_file():
        trainer_state = json.loads((directory / TRAINER_STATE_NAME).read_text())
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
    directory = Path(directory)
    if not (directory / STATE_NAME).is_file():
        raise FileNotFoundError(
            f"cannot resume from {directory}: it has no {STATE_NAME} (it is a model-only "
            f"checkpoint; start a new run that loads its weights instead)"
        )
    load_weights(model, directory)
    state = torch.load(directory / STATE_NAME, map_location="cpu", weights_only=True)
    if optimizer is not None and state["optimizer"] is not None:
        optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None and state["scheduler"] is not None:
        scheduler.load_state_dict(state["scheduler"])
    _set_rng_state(state["rng"])
    trainer_state = json.loads((directory / TRAINER_STATE_NAME).read_text())
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
