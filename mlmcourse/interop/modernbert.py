"""Load a ``transformers`` ModernBERT checkpoint folder into our encoder, switches and all.

ModernBERT (Warner et al., 2024) is BERT's encoder with the changes of :mod:`mlmcourse.model.modern`:
rotary positions (theta 160,000 in global layers, 10,000 in local ones), GeGLU, pre-LayerNorm
without biases, no biases in projections, no segment embeddings, and local attention (a window
of 128 tokens) in two layers of every three. Its ``config.json`` maps onto
:class:`~mlmcourse.model.ModernConfig`, and its weights load under their own names, which our
modern encoder uses too. What each one is:

=====================================  ===============================================
ModernBERT's name (and ours)           role
=====================================  ===============================================
``embeddings.tok_embeddings``          the token vectors (BERT's ``word_embeddings``)
``embeddings.norm``                    the norm of the embeddings
``layers.i.attn_norm`` (i > 0)         the norm before attention (W_Q, W_K, W_V's input)
``layers.i.attn.Wqkv`` (3H rows)       W_Q, W_K and W_V, stacked (all heads' queries first)
``layers.i.attn.Wo``                   W_O, the heads back to H
``layers.i.mlp_norm``                  the norm before the feed-forward block
``layers.i.mlp.Wi`` (2I rows)          W_1, up: GeGLU's values, then its gates
``layers.i.mlp.Wo``                    W_2, back down to H
``final_norm``                         the norm after the last layer
=====================================  ===============================================

A checkpoint with a head (``ModernBertForMaskedLM``) prefixes these with ``model.``; the head's
own weights (``head.*``, ``decoder.*``) are not part of the encoder and are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from mlmcourse.checkpoint import load_state_strict
from mlmcourse.checkpoint.files import CONFIG_NAME
from mlmcourse.interop.bert import hf_tokenizer, read_hf_weights
from mlmcourse.model import ModernBertModel, ModernConfig
from mlmcourse.utils.checks import read_json

__all__ = ["config_from_modernbert", "encoder_state_from_modernbert", "load_modernbert"]

_ACTIVATION_TO_FFN = {"gelu": "geglu", "silu": "swiglu", "swish": "swiglu"}


def _global_every(layer_types: list[str]) -> int:
    """ModernBERT's layer pattern as ``global_attn_every_n_layers``; other patterns are refused."""
    n_layers = len(layer_types)
    for every in range(1, n_layers + 1):
        expected = [
            "full_attention" if i % every == 0 else "sliding_attention" for i in range(n_layers)
        ]
        if layer_types == expected:
            return every
    raise ValueError(
        f"layer_types {layer_types} is not 'global every n layers, starting with the first'; "
        f"our encoder has no other pattern"
    )


def config_from_modernbert(hf_config: Mapping[str, Any]) -> ModernConfig:
    """Translate a ModernBERT ``config.json`` into a :class:`ModernConfig` with its switches."""
    model_type = hf_config.get("model_type")
    if model_type != "modernbert":
        raise ValueError(
            f"expected a ModernBERT config (model_type 'modernbert'), got {model_type!r}"
        )
    switches = modernbert_switches(hf_config)
    return ModernConfig(
        vocab_size=hf_config["vocab_size"],
        hidden_size=hf_config["hidden_size"],
        num_hidden_layers=int(hf_config["num_hidden_layers"]),
        num_attention_heads=hf_config["num_attention_heads"],
        intermediate_size=hf_config["intermediate_size"],
        max_position_embeddings=hf_config.get("max_position_embeddings", 8192),
        type_vocab_size=0,
        hidden_dropout_prob=float(hf_config.get("mlp_dropout", 0.0)),
        attention_probs_dropout_prob=float(hf_config.get("attention_dropout", 0.0)),
        layer_norm_eps=hf_config.get("norm_eps", 1e-5),
        pad_token_id=hf_config.get("pad_token_id") or 0,
        initializer_range=hf_config.get("initializer_range", 0.02),
        **switches,
    )


def modernbert_switches(hf_config: Mapping[str, Any]) -> dict[str, Any]:
    """Each of :class:`ModernConfig`'s switches (:data:`~mlmcourse.model.modern.MODERN_FIELDS`,
    every one named, BERT's value included) as a ModernBERT ``config.json`` sets it."""
    biases = {k: bool(hf_config.get(k, False)) for k in ("attention_bias", "mlp_bias", "norm_bias")}
    if len(set(biases.values())) != 1:
        raise ValueError(
            f"our encoder has one bias switch for all layers; this config has {biases}"
        )
    activation = hf_config.get("hidden_activation", "gelu")
    if activation not in _ACTIVATION_TO_FFN:
        raise ValueError(f"hidden_activation {activation!r} has no gated block here (gelu or silu)")
    every = hf_config.get("global_attn_every_n_layers", 3)
    if hf_config.get("layer_types") is not None:
        every = _global_every(list(hf_config["layer_types"]))
    rope = hf_config.get("rope_parameters") or {}
    global_theta = (rope.get("full_attention") or {}).get("rope_theta") or hf_config.get(
        "global_rope_theta", 160_000.0
    )
    local_theta = (rope.get("sliding_attention") or {}).get("rope_theta") or hf_config.get(
        "local_rope_theta", 10_000.0
    )
    return {
        "pre_layer_norm": True,
        "position_embedding_type": "rotary",
        "rope_theta": float(global_theta),
        "local_rope_theta": float(local_theta),
        "ffn_type": _ACTIVATION_TO_FFN[activation],
        "norm_type": "layernorm",  # ModernBERT's norms are LayerNorms (without bias)
        "bias": biases["attention_bias"],
        "local_attention": int(hf_config.get("local_attention", 128)) if every > 1 else 0,
        "global_attn_every_n_layers": every,
    }


def encoder_state_from_modernbert(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """ModernBERT's encoder weights, as our modern encoder names them (the same names, without
    a head checkpoint's ``model.`` prefix); a head's weights are dropped."""
    head = ("head.", "decoder.", "classifier.")
    stripped = {name.removeprefix("model."): tensor for name, tensor in state.items()}
    return {name: tensor for name, tensor in stripped.items() if not name.startswith(head)}


def load_modernbert(
    directory: str | Path, *, device: torch.device | str = "cpu"
) -> tuple[ModernBertModel, Any]:
    """Load a local ModernBERT folder as ``(ModernBertModel in eval mode, tokenizer or None)``.

    Like :func:`mlmcourse.interop.bert.load_bert`: ``config.json`` gives the switches, the weights load
    strictly (every missing, unexpected or misshapen tensor is reported), and
    ``tokenizer.json``, when present, is loaded too.
    """
    directory = Path(directory)
    if not (directory / CONFIG_NAME).is_file():
        raise FileNotFoundError(f"{directory} has no {CONFIG_NAME}, so it is not a model folder")
    config = config_from_modernbert(read_json(directory / CONFIG_NAME, "a ModernBERT config"))
    model = ModernBertModel(config)
    state = encoder_state_from_modernbert(read_hf_weights(directory))
    load_state_strict(model, state, source=str(directory))
    tokenizer = hf_tokenizer(directory, config.vocab_size, f"load_modernbert({directory})")
    return model.to(device).eval(), tokenizer
