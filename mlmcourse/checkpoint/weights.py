"""Loading weights into a model, strictly: the one place that decides whether weights fit.

Every loader of the package ends here: :func:`mlmcourse.heads.load_checkpoint` (our
checkpoints), :func:`mlmcourse.interop.bert.load_bert` (a Hugging Face directory) and
:meth:`mlmcourse.heads.BertForTokenClassification.from_encoder` (a pretrained encoder under a new
head). A partial load is the worst failure a loader can have: the model runs, with random
weights where the file had none, and only the scores say something is wrong. So a tensor the
model lacks, a tensor the file lacks, or a shape that differs is an error listing all of
them, never a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

__all__ = [
    "BENIGN_KEYS",
    "ENCODER_PREFIX",
    "WeightsMismatchError",
    "check_vocab_fits",
    "load_state_strict",
    "split_encoder_state",
]

# Saved by older transformers versions; a constant we recompute, so safe to ignore.
BENIGN_KEYS = ("embeddings.position_ids",)
# A model with a head (BertForMaskedLM, ...) names its encoder's tensors under this prefix.
ENCODER_PREFIX = "bert."


class WeightsMismatchError(ValueError):
    """Weights, config and tokenizer do not fit together: missing, unexpected or misshapen
    tensors, or a tokenizer whose ids have no embedding row."""


def split_encoder_state(
    state: Mapping[str, torch.Tensor],
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """``(encoder, head)`` tensors of a state dict: the encoder's with ``bert.`` stripped (bare
    ``BertModel`` names), the head's (``cls.*``, ``classifier.*``) under their own names. A
    bare encoder's state dict is all encoder."""
    if not any(key.startswith(ENCODER_PREFIX) for key in state):
        return dict(state), {}
    encoder = {
        k[len(ENCODER_PREFIX) :]: v for k, v in state.items() if k.startswith(ENCODER_PREFIX)
    }
    return encoder, {k: v for k, v in state.items() if not k.startswith(ENCODER_PREFIX)}


def _listing(keys: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(keys[:limit])
    return shown + (f", ... and {len(keys) - limit} more" if len(keys) > limit else "")


def _tied(model: nn.Module) -> dict[str, set[str]]:
    """Each state-dict key -> the keys sharing its storage (a tied decoder and embedding)."""
    by_storage: dict[tuple[int, int], set[str]] = {}
    own = model.state_dict(keep_vars=True)
    for key, tensor in own.items():
        by_storage.setdefault((tensor.data_ptr(), tensor.numel()), set()).add(key)
    return {key: by_storage[(t.data_ptr(), t.numel())] for key, t in own.items()}


def _problems(
    model: nn.Module, given: Mapping[str, torch.Tensor], source: str
) -> tuple[list[str], list[str], list[str]]:
    """(missing, unexpected, misshapen) keys of ``given`` against ``model``'s state dict."""
    own, tied = model.state_dict(), _tied(model)
    # A tied tensor is stored once (safetensors keeps no aliases): one name of it is enough.
    missing = sorted(k for k in set(own) - set(given) if not tied[k] & set(given))
    unexpected = sorted(set(given) - set(own))
    misshapen = sorted(
        f"{k}: {tuple(given[k].shape)} in {source} vs {tuple(own[k].shape)} in the model"
        for k in set(own) & set(given)
        if given[k].shape != own[k].shape
    )
    return missing, unexpected, misshapen


def _vocabulary_hint(model: nn.Module, given: Mapping[str, torch.Tensor], source: str) -> str:
    """Name the vocabulary when the word embeddings differ: the usual cause of a misfit."""
    own = model.state_dict()
    for key, tensor in given.items():
        if key.endswith("word_embeddings.weight") and key in own:
            rows, ours = tensor.shape[0], own[key].shape[0]
            if rows != ours:
                return (
                    f"  the vocabulary differs: {source} has {rows} word embeddings, the model "
                    f"was built with vocab_size {ours}"
                )
    return ""


def load_state_strict(
    model: nn.Module,
    state_dict: Mapping[str, torch.Tensor],
    *,
    source: str = "the checkpoint",
    ignore: Sequence[str] = BENIGN_KEYS,
    hint: str = "is config.json the one these weights were saved with?",
) -> nn.Module:
    """Copy ``state_dict`` into ``model``; any misfit raises one report of every problem.

    Keys starting with an entry of ``ignore`` may be present without being used (documented
    as harmless: an old ``position_ids`` buffer, a pooler the task does not use). ``hint``
    ends the report with the likely cause. Returns ``model``.
    """
    given = {k: v for k, v in state_dict.items() if not k.startswith(tuple(ignore))}
    missing, unexpected, misshapen = _problems(model, given, source)
    if missing or unexpected or misshapen:
        lines = [f"the weights in {source} do not fit {type(model).__name__}:"]
        if missing:
            lines.append(f"  missing from {source} ({len(missing)}): {_listing(missing)}")
        if unexpected:
            lines.append(f"  unexpected in {source} ({len(unexpected)}): {_listing(unexpected)}")
        if misshapen:
            lines.append(f"  shape mismatches ({len(misshapen)}): {_listing(misshapen, 4)}")
        lines += [line for line in (_vocabulary_hint(model, given, source), f"  ({hint})") if line]
        raise WeightsMismatchError("\n".join(lines))
    model.load_state_dict(given, strict=False)  # complete by the checks above (ties aside)
    return model


def check_vocab_fits(tokenizer: Any, vocab_size: int, where: str) -> None:
    """Every id the tokenizer can produce needs an embedding row; ``where`` names the caller."""
    if int(tokenizer.vocab_size) > int(vocab_size):
        raise WeightsMismatchError(
            f"{where}: the tokenizer has {tokenizer.vocab_size} tokens but the model's "
            f"vocab_size is {vocab_size} (embedding rows); token ids past the embedding "
            f"matrix would crash or be silently wrong. Use the tokenizer the model was "
            f"trained with."
        )
