"""The masked-LM head, ``BertForMaskedLM``, ``fill_mask`` and the predictions table.

The head turns each encoder vector back into a score for every word of the vocabulary:
dense -> GELU -> LayerNorm, then a decoder whose weight *is* the token-embedding matrix (tied)
plus a per-token bias. Tying means "the vector that reads a word in" and "the vector that
writes it out" are the same, which saves ``vocab_size x hidden_size`` parameters and trains
both from every occurrence.

Names follow ``transformers.BertForMaskedLM`` (``bert.*``, ``cls.predictions.*``), so a
checkpoint of ours loads there unchanged (:func:`export_hf`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.checks import check_positive_int
from mlmcourse.masking import IGNORE_INDEX
from mlmcourse.model import ACTIVATIONS, BertModel, EncoderConfig
from mlmcourse.runtime import is_compiling

__all__ = [
    "BertPredictionHeadTransform",
    "BertLMPredictionHead",
    "BertOnlyMLMHead",
    "TiedLMModel",
    "BertForMaskedLM",
    "MaskedLMOutput",
    "masked_lm_loss",
    "fill_mask",
    "fill_mask_accuracy",
    "probe_accuracy",
    "predictions_table",
    "unigram_baseline",
    "export_hf",
]


class BertPredictionHeadTransform(nn.Module):
    """dense -> activation -> LayerNorm: one more non-linear layer before reading out words."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.act = ACTIVATIONS[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.act(self.dense(hidden_states)))  # (..., H)


class BertLMPredictionHead(nn.Module):
    """Transform, then scores over the vocabulary: ``h @ E^T + b`` with ``E`` the embeddings."""

    def __init__(self, config: EncoderConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.decoder.weight = word_embeddings.weight  # tied: one (V, H) matrix, two uses
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.transform(hidden_states)) + self.bias  # (..., V)


class BertOnlyMLMHead(nn.Module):
    """The ``cls`` wrapper Hugging Face uses, kept so parameter names match theirs."""

    def __init__(self, config: EncoderConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(config, word_embeddings)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.predictions(hidden_states)


@dataclass
class MaskedLMOutput:
    """What :class:`BertForMaskedLM` returns (Hugging Face's field names).

    ``logits``: with ``labels``, only the labelled positions are scored, so it is ``(N, V)``
    with one row per position where ``labels != -100``, in row-major order (the order of
    ``labels[labels != -100]``); without ``labels`` it is ``(B, T, V)``.
    ``loss``: mean cross-entropy over the labelled positions; exactly ``0.0`` (still attached
    to the graph) when nothing is labelled, and ``None`` without ``labels``.
    """

    loss: torch.Tensor | None
    logits: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


def masked_lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of ``logits`` (N, V) against ``targets`` (N,), in fp32; 0 when N == 0.

    ``F.cross_entropy`` over zero targets is ``0/0 = NaN`` (a seed bug): its gradient happens
    to be zero, but the NaN loss stops a run that checks for divergence and spoils the logged
    means, and a hand-written masked mean would put NaN into every gradient. An empty batch
    contributes a zero loss that still has a gradient path.
    """
    if targets.numel() == 0:
        return logits.sum() * 0.0
    return F.cross_entropy(logits.float(), targets)


class TiedLMModel(nn.Module):
    """The encoder plus the LM head tied to its word embeddings: what MLM and CLM share.

    The two objectives differ only in the attention mask (``config.is_causal``) and in which
    token each position predicts (:meth:`targets`), which is what makes the CLM-vs-MLM
    comparison fair. With labels, vocabulary scores are computed only at the positions that
    have a target: the (H x V) read-out is the largest matmul of a small model.
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        if not isinstance(config, EncoderConfig):
            raise TypeError(
                f"{type(self).__name__} needs an EncoderConfig, got {type(config).__name__}"
            )
        self.config = config
        self.bert = BertModel(config)
        self.cls = BertOnlyMLMHead(config, self.bert.embeddings.word_embeddings)
        # BERT's initialisation for the head's transform; the decoder is the (already
        # initialised) embedding matrix and the output bias starts at zero.
        self.cls.predictions.transform.apply(self.bert._init_weights)

    output_type: type = MaskedLMOutput  # what forward returns; each model names its own

    def targets(self, labels: torch.Tensor) -> torch.Tensor:
        """The token each position predicts (``-100``: none). MLM: the labels themselves."""
        return labels

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        *,
        position_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        unpad: bool = False,
    ) -> Any:
        """An :attr:`output_type`: loss (with ``labels``), logits (N, V) at targets or (B, T, V).

        ``position_ids`` restarting at 0 mark packed rows (see :class:`~mlmcourse.model.BertModel`).
        """
        out = self.bert(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids=position_ids,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            unpad=unpad,
        )
        hidden = out.last_hidden_state  # (B, T, H)
        if labels is None:
            loss, logits = None, self.cls(hidden)
        else:
            self._check_labels(labels, input_ids)
            targets = self.targets(labels)
            selected = targets != IGNORE_INDEX  # (B, T)
            logits = self.cls(hidden[selected])  # (N, V): only the positions that are scored
            loss = masked_lm_loss(logits, targets[selected])
        return self.output_type(loss, logits, out.hidden_states, out.attentions)

    def _check_labels(self, labels: torch.Tensor, input_ids: torch.Tensor) -> None:
        if not isinstance(labels, torch.Tensor) or labels.shape != input_ids.shape:
            got = tuple(labels.shape) if isinstance(labels, torch.Tensor) else type(labels).__name__
            raise ValueError(
                f"labels must have the shape of input_ids {tuple(input_ids.shape)}, got {got}"
            )
        if labels.dtype.is_floating_point or labels.dtype == torch.bool:
            raise ValueError(f"labels must hold integer token ids (or -100), got {labels.dtype}")
        if is_compiling():
            return  # reading values back would break the graph; eager mode checks them
        scored = labels[labels != IGNORE_INDEX]
        if scored.numel() and (
            int(scored.min()) < 0 or int(scored.max()) >= self.config.vocab_size
        ):
            raise ValueError(
                f"labels must be token ids in [0, vocab_size={self.config.vocab_size}) or -100 "
                f"(ignored), got values from {int(scored.min())} to {int(scored.max())}"
            )

    def num_parameters(self) -> int:
        """Parameters learned (the tied decoder counted once)."""
        return sum(p.numel() for p in self.parameters())


class BertForMaskedLM(TiedLMModel):
    """The encoder plus the MLM head; ``forward`` returns a :class:`MaskedLMOutput`.

    When ``labels`` are given, vocabulary scores are computed only where ``labels != -100``
    (about 15% of tokens): the (H x V) read-out is the largest matmul of a small model, so
    skipping the 85% of positions that are never scored is a large saving.
    """

    output_type = MaskedLMOutput


# --------------------------------------------------------------------------------------------
# Inference
# --------------------------------------------------------------------------------------------


def _encode_masked(tokenizer: Any, text: str) -> tuple[list[int], list[int]]:
    """Token ids of ``text`` and the positions of its mask tokens (nothing is masked here)."""
    if not isinstance(text, str):
        raise TypeError(f"fill_mask needs a str, got {type(text).__name__}")
    ids = list(tokenizer.encode(text).ids)
    mask_id = tokenizer.mask_token_id
    positions = [i for i, t in enumerate(ids) if t == mask_id]
    if not positions:
        mask = tokenizer.convert_ids_to_tokens([mask_id])[0]
        raise ValueError(
            f"fill_mask needs text with at least one {mask} token to fill, got {text!r}; "
            f"write e.g. 'the capital of X is {mask} .'"
        )
    return ids, positions


def _sequence(tokenizer: Any, ids: Sequence[int], position: int, token: int) -> str:
    """The text with the mask at ``position`` filled by ``token`` (other masks kept)."""
    skip = {tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id}
    filled = [
        token if i == position else t for i, t in enumerate(ids) if t not in skip or i == position
    ]
    return tokenizer.decode(filled, skip_special_tokens=False)


@torch.no_grad()
def fill_mask(
    model: nn.Module,
    tokenizer: Any,
    text: str,
    top_k: int = 5,
    *,
    device: torch.device | str | None = None,
) -> list[dict[str, Any]] | list[list[dict[str, Any]]]:
    """Predict the words behind each ``[MASK]`` in ``text``, like ``pipeline("fill-mask")``.

    Returns the ``top_k`` candidates as dicts ``{score, token, token_str, sequence}`` (one list
    per mask when there are several). The input is used as written: it is never masked again
    (re-masking at inference hides words the model should see, a seed bug). Dropout is off
    (eval mode) while predicting, and the model's mode is restored after. Special tokens are
    never proposed; ``score`` is the softmax probability over the whole vocabulary.
    """
    check_positive_int(top_k, "top_k")
    ids, positions = _encode_masked(tokenizer, text)
    device = torch.device(device) if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        input_ids = torch.tensor([ids], device=device)  # (1, T)
        logits = model(input_ids, torch.ones_like(input_ids)).logits[0, positions]  # (M, V)
    finally:
        model.train(was_training)
    probs = logits.float().softmax(-1)
    never = [
        i
        for i in (tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id)
        + (tokenizer.mask_token_id,)
        if i is not None and i < probs.shape[-1]
    ]
    ranked = probs.clone()
    ranked[:, never] = -1.0
    k = min(top_k, probs.shape[-1] - len(never))
    results = []
    for row, position in enumerate(positions):
        top = ranked[row].topk(k).indices.tolist()
        results.append(
            [
                {
                    "score": float(probs[row, t]),
                    "token": t,
                    "token_str": tokenizer.convert_ids_to_tokens([t])[0],
                    "sequence": _sequence(tokenizer, ids, position, t),
                }
                for t in top
            ]
        )
    return results[0] if len(results) == 1 else results


def fill_mask_accuracy(
    model: nn.Module, tokenizer: Any, probes: Sequence[Any], *, device=None
) -> tuple[float, list[dict[str, Any]]]:
    """Top-1 accuracy of :func:`fill_mask` on probes (``text`` with one mask, ``answer``).

    Returns the accuracy and one row per probe (text, answer, prediction, score, correct), so
    a chapter can show what the model got wrong.
    """

    def best(text: str) -> dict[str, Any]:
        top = fill_mask(model, tokenizer, text, top_k=1, device=device)
        return top[0] if isinstance(top[0], dict) else top[0][0]

    return probe_accuracy(probes, best, "fill_mask_accuracy")


def probe_accuracy(
    probes: Sequence[Any], best: Callable[[str], dict[str, Any]], what: str
) -> tuple[float, list[dict[str, Any]]]:
    """Top-1 accuracy of ``best(text)`` (a prediction dict) against each probe's ``answer``.

    One row per probe (text, answer, prediction, score, correct), case-insensitive, so a
    chapter can show what the model got wrong; ``what`` names the caller in the error.
    """
    if not probes:
        raise ValueError(f"{what} needs at least one probe")
    rows = []
    for probe in probes:
        prediction = best(probe.text)
        rows.append(
            {
                "text": probe.text,
                "answer": probe.answer,
                "prediction": prediction["token_str"],
                "score": prediction["score"],
                "correct": prediction["token_str"].lower() == str(probe.answer).lower(),
            }
        )
    return sum(r["correct"] for r in rows) / len(rows), rows


@torch.no_grad()
def predictions_table(
    model: nn.Module,
    tokenizer: Any,
    batch: Mapping[str, torch.Tensor],
    *,
    max_rows: int = 8,
) -> list[dict[str, Any]]:
    """For each sequence of a masked batch: the original, masked and predicted tokens.

    Each row has ``original``, ``masked`` and ``predicted`` token lists (specials and padding
    removed) and ``scored``, the positions (in those lists) that carried a label, so a renderer
    can colour right and wrong predictions. Eval mode; the model's mode is restored.
    """
    for key in ("input_ids", "labels"):
        if key not in batch:
            raise ValueError(f"predictions_table needs a masked batch with {key!r}")
    device = next(model.parameters()).device
    input_ids = batch["input_ids"][:max_rows].to(device)
    labels = batch["labels"][:max_rows].to(device)
    attention_mask = batch.get("attention_mask")
    attention_mask = attention_mask[:max_rows].to(device) if attention_mask is not None else None
    was_training = model.training
    model.eval()
    try:
        logits = model(input_ids, attention_mask).logits  # (B, T, V)
    finally:
        model.train(was_training)
    predicted = logits.argmax(-1)  # (B, T)
    scored = labels != IGNORE_INDEX
    original = torch.where(scored, labels, input_ids)
    predicted = torch.where(scored, predicted, input_ids)
    specials = {tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id}
    rows = []
    for b in range(input_ids.shape[0]):
        keep = [t for t in range(input_ids.shape[1]) if int(original[b, t]) not in specials]
        if attention_mask is not None:
            keep = [t for t in keep if int(attention_mask[b, t])]

        def tokens(ids: torch.Tensor, keep: list[int] = keep) -> list[str]:
            return tokenizer.convert_ids_to_tokens([int(ids[t]) for t in keep])

        rows.append(
            {
                "original": tokens(original[b]),
                "masked": tokens(input_ids[b]),
                "predicted": tokens(predicted[b]),
                "scored": [i for i, t in enumerate(keep) if bool(scored[b, t])],
            }
        )
    return rows


def unigram_baseline(
    train_ids: Sequence[Sequence[int]] | torch.Tensor,
    eval_batches: Sequence[Mapping[str, torch.Tensor]],
    *,
    vocab_size: int,
    ignore_ids: Sequence[int] = (),
) -> dict[str, float]:
    """The best context-free guesser: always predict the most frequent training token.

    Its accuracy is that token's share of the masked positions; its perplexity is
    ``exp(cross-entropy)`` of the add-one-smoothed unigram distribution. A model that does not
    beat this has learnt word frequencies, not language.
    """
    counts = torch.ones(vocab_size, dtype=torch.float64)  # add-one smoothing
    for ids in train_ids:
        ids = torch.as_tensor(ids).flatten()
        counts += torch.bincount(ids, minlength=vocab_size)[:vocab_size].double()
    if ignore_ids:
        counts[list(ignore_ids)] = 0.0
    log_probs = (counts / counts.sum()).log()
    best = int(counts.argmax())
    loss_sum, correct, total = 0.0, 0, 0
    for batch in eval_batches:
        targets = batch["labels"][batch["labels"] != IGNORE_INDEX]
        loss_sum += float(-log_probs[targets].sum())
        correct += int((targets == best).sum())
        total += targets.numel()
    if total == 0:
        raise ValueError("unigram_baseline found no labelled tokens in eval_batches")
    loss = loss_sum / total
    return {
        "loss": loss,
        "accuracy": correct / total,
        "perplexity": float(torch.tensor(loss).exp()),
        "token": best,
    }


def export_hf(model: BertForMaskedLM, directory: str | Path, *, tokenizer: Any = None) -> Path:
    """Write ``model`` so ``transformers.BertForMaskedLM.from_pretrained(directory)`` loads it.

    Our parameter names already are Hugging Face's, so this is :func:`mlmcourse.hf.save_hf`
    with the ``BertForMaskedLM`` architecture, after refusing the variants transformers has
    no equivalent for.
    """
    from mlmcourse.hf import save_hf

    if not isinstance(model, BertForMaskedLM):
        raise TypeError(f"export_hf needs a BertForMaskedLM, got {type(model).__name__}")
    if model.config.pre_layer_norm or model.config.is_causal:
        raise ValueError(
            "transformers.BertForMaskedLM is post-LayerNorm and bidirectional; a model with "
            "pre_layer_norm=True or is_causal=True has no equivalent there"
        )
    return save_hf(
        model.state_dict(),
        model.config,
        directory,
        architectures=("BertForMaskedLM",),
        tokenizer=tokenizer,
    )
