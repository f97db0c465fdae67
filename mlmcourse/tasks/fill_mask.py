"""Fill-mask: the words a masked LM puts behind ``[MASK]``, and how often it is right.

:func:`fill_mask` is ``transformers``' ``pipeline("fill-mask")``: the text as written (never
masked again), the top-k words for each mask with their probability and the filled-in
sentence. :func:`fill_mask_accuracy` scores it on probes, :func:`predictions_table` shows a
masked batch's guesses, and :func:`unigram_baseline` is the guesser a model must beat;
:func:`held_out_scores` puts a model and that guesser side by side on the same masks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from mlmcourse.checkpoint.weights import check_vocab_fits
from mlmcourse.masking import MLMCollator
from mlmcourse.training import evaluate, fixed_eval_batches
from mlmcourse.utils.checks import check_positive_int
from mlmcourse.utils.labels import IGNORE_INDEX
from mlmcourse.utils.runtime import evaluating

__all__ = [
    "fill_mask",
    "fill_mask_accuracy",
    "held_out_scores",
    "predictions_table",
    "probe_accuracy",
    "unigram_baseline",
]


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

    The ``top_k`` candidates ``{score, token, token_str, sequence}`` (a list per mask when
    there are several), from the text as written (never masked again), dropout off. Specials
    and ids past the vocabulary are never proposed; ``score`` is the softmax over all ids."""
    top_k = check_positive_int(top_k, "top_k")
    check_vocab_fits(tokenizer, model.config.vocab_size, "fill_mask")
    ids, positions = _encode_masked(tokenizer, text)
    device = torch.device(device) if device is not None else next(model.parameters()).device
    with evaluating(model):
        input_ids = torch.tensor([ids], device=device)  # (1, T)
        logits = model(input_ids, torch.ones_like(input_ids)).logits[0, positions]  # (M, V)
    probs = logits.float().softmax(-1)  # (M, V)
    never = _never_proposed(tokenizer, probs.shape[-1])
    ranked = probs.index_fill(-1, torch.tensor(never, dtype=torch.long), -1.0)
    k = min(top_k, probs.shape[-1] - len(never))
    results = [
        [_candidate(tokenizer, ids, position, t, probs[row, t]) for t in ranked[row].topk(k)[1]]
        for row, position in enumerate(positions)
    ]
    return results[0] if len(results) == 1 else results


def _never_proposed(tokenizer: Any, width: int) -> list[int]:
    """The ids ``fill_mask`` never proposes: specials, and the rows past the tokenizer's
    vocabulary (an embedding matrix padded to a round size, as ModernBERT's, has rows no token
    owns)."""
    specials = (tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id)
    never = [i for i in (*specials, tokenizer.mask_token_id) if i is not None and i < width]
    return sorted(set(never) | set(range(tokenizer.vocab_size, width)))


def _candidate(
    tokenizer: Any, ids: list[int], position: int, token: Any, score: Any
) -> dict[str, Any]:
    """One candidate as the pipeline gives it. ``token_str`` is the token decoded alone: the
    token itself for WordPiece (``"##s"`` too), with its space for byte-level BPE (``"Ġparis"``
    is ``" paris"``)."""
    token = int(token)
    return {
        "score": float(score),
        "token": token,
        "token_str": tokenizer.decode([token], skip_special_tokens=False),
        "sequence": _sequence(tokenizer, ids, position, token),
    }


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

    One row per probe (text, answer, prediction, score, correct), case-insensitive and
    ignoring the space a byte-level BPE token carries (``" paris"``), so a chapter can show
    what the model got wrong; ``what`` names the caller in the error.
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
                "correct": prediction["token_str"].strip().lower()
                == str(probe.answer).strip().lower(),
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
    with evaluating(model):
        logits = model(input_ids, attention_mask).logits  # (B, T, V)
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


def held_out_scores(
    model: nn.Module,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    train_texts: Sequence[str],
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    seed: int = 1234,
) -> dict[str, float]:
    """A masked LM's accuracy and perplexity on ``texts``, beside the unigram baseline's on the
    same masks (its counts from ``train_texts``): the honest score of an MLM on real text.

    The texts are masked once (BERT's 80/10/10 at ``mlm_probability``, seeded by ``seed``), as
    :func:`~mlmcourse.training.fixed_eval_batches` does during training. There a tenth of the
    targets keep their own token, which a model can learn to copy; ``mask_replace_prob=1.0,
    random_replace_prob=0.0`` hides every target behind ``[MASK]`` instead (the plain
    fill-in-the-blank score). ``times_unigram`` is the model's accuracy over the baseline's:
    near 1, the model has learnt word frequencies only.
    """
    collator = MLMCollator(
        tokenizer,
        mlm_probability=mlm_probability,
        mask_replace_prob=mask_replace_prob,
        random_replace_prob=random_replace_prob,
        max_length=model.config.max_position_embeddings,
        seed=seed,
    )
    batches = fixed_eval_batches(list(texts), collator, seed=seed)  # 64 a batch
    scores = evaluate(model, batches)
    train_ids = [tokenizer.encode(t).ids for t in train_texts]
    special = list(tokenizer.all_special_ids)
    unigram = unigram_baseline(
        train_ids, batches, vocab_size=tokenizer.vocab_size, ignore_ids=special
    )
    return {
        "accuracy": scores["accuracy"],
        "perplexity": scores["perplexity"],
        "unigram_accuracy": unigram["accuracy"],
        "unigram_perplexity": unigram["perplexity"],
        "times_unigram": scores["accuracy"] / unigram["accuracy"],
        "tokens": scores["tokens"],
    }
