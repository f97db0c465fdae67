"""Generation: a causal LM continues a prompt; a masked LM can only fill the blanks it is given.

A causal LM (:class:`~mlmcourse.heads.BertForCausalLM`) continues a prompt one token at a time
(:func:`generate`: greedy, top-k, temperature), while an MLM can only fill blanks it is given;
:func:`mask_predict` makes it "generate" by filling a run of ``[MASK]`` tokens iteratively, and
shows what that costs (the length must be chosen in advance, and the blanks are filled
independently of each other at each step). :func:`continue_prompts` runs the three decoders
the chapter compares, and :func:`generation_quality` scores what they write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from mlmcourse.checkpoint.weights import check_vocab_fits
from mlmcourse.tasks.fill_mask import probe_accuracy
from mlmcourse.utils.checks import check_number, check_positive_int
from mlmcourse.utils.runtime import evaluating, seeded_generator

__all__ = [
    "PROMPT_WORDS",
    "generate",
    "mask_predict",
    "mask_predict_rounds",
    "next_token",
    "next_word",
    "next_word_accuracy",
    "left_context",
    "trigrams",
    "corpus_trigrams",
    "generation_quality",
    "continue_prompts",
]


# --------------------------------------------------------------------------------------------
# Inference helpers
# --------------------------------------------------------------------------------------------

PROMPT_WORDS = 2  # how many words of a reference :func:`continue_prompts` gives as the prompt


def _device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


def _never(tokenizer: Any) -> list[int]:
    """Ids a language model should never propose as a word: padding, [CLS], [MASK], [UNK]."""
    ids = (
        tokenizer.pad_token_id,
        tokenizer.cls_token_id,
        tokenizer.mask_token_id,
        tokenizer.unk_token_id,
    )
    return sorted({i for i in ids if i is not None})


def _prompt_ids(tokenizer: Any, prompt: str) -> list[int]:
    """``[CLS] prompt`` without the closing ``[SEP]``: the sentence is still open."""
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
    if not prompt.strip():  # an empty prompt: generate from the start of a sentence
        return [tokenizer.cls_token_id]
    ids = list(tokenizer.encode(prompt).ids)
    if ids and ids[-1] == tokenizer.sep_token_id:
        ids = ids[:-1]
    return ids


def _check_causal(model: nn.Module, what: str) -> None:
    if not getattr(model.config, "is_causal", False):
        raise ValueError(
            f"{what} needs a causal LM (config.is_causal=True, e.g. BertForCausalLM); a "
            f"bidirectional model's next-token scores are meaningless. For a masked LM use "
            f"mlmcourse.tasks.fill_mask.fill_mask or mask_predict"
        )


def _check_sampling(
    max_new_tokens: Any, temperature: Any, top_k: Any
) -> tuple[int, float, int | None]:
    """:func:`generate`'s numbers as Python numbers: a count, a temperature > 0 (lower is
    greedier), and ``top_k`` (``None``: every token)."""
    max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
    temperature = check_number(temperature, "temperature", low=0.0, low_open=True)
    if top_k is not None:
        top_k = check_positive_int(top_k, "top_k")
    return max_new_tokens, temperature, top_k


@torch.no_grad()
def _next_token_logits(model: nn.Module, ids: Sequence[int]) -> torch.Tensor:
    input_ids = torch.tensor([list(ids)], device=_device(model))  # (1, T)
    return model(input_ids).logits[0, -1].float()  # (V,): the distribution of token T


def next_token(
    logits: torch.Tensor,
    do_sample: bool,
    temperature: float,
    top_k: int | None,
    generator: torch.Generator | None,
) -> int:
    """The next token from ``logits`` (V,): the most probable one, or with ``do_sample`` a draw
    from the softmax of ``logits / temperature`` over the ``top_k`` best (all when None),
    ``generator`` making the draws repeatable."""
    if not do_sample:
        return int(logits.argmax())
    logits = logits / temperature
    if top_k is not None and top_k < logits.numel():
        kth = logits.topk(top_k).values[-1]
        logits[logits < kth] = float("-inf")
    return int(torch.multinomial(logits.softmax(-1).cpu(), 1, generator=generator))


def generate(
    model: nn.Module,
    tokenizer: Any,
    prompt: str = "",
    *,
    max_new_tokens: int = 20,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> str:
    """Continue ``prompt`` one token at a time until ``[SEP]`` (end of sentence) or the limit.

    Greedy by default; ``do_sample=True`` samples (:func:`next_token`, Hugging Face's argument
    names). ``[PAD]``, ``[CLS]``, ``[MASK]`` and ``[UNK]`` are never produced. No key/value
    cache: each step re-reads the whole sequence, fine for a few dozen tokens."""
    _check_causal(model, "generate")
    max_new_tokens, temperature, top_k = _check_sampling(max_new_tokens, temperature, top_k)
    check_vocab_fits(tokenizer, model.config.vocab_size, "generate")
    ids, never = _prompt_ids(tokenizer, prompt), _never(tokenizer)
    room = model.config.max_position_embeddings - len(ids)  # positions left
    with evaluating(model):
        for _ in range(min(max_new_tokens, room)):
            logits = _next_token_logits(model, ids)  # (V,)
            logits[never] = float("-inf")
            token = next_token(logits, do_sample, temperature, top_k, generator)
            if token == tokenizer.sep_token_id:
                break
            ids.append(token)
    return tokenizer.decode(ids, skip_special_tokens=True)


@torch.no_grad()
def mask_predict(
    model: nn.Module,
    tokenizer: Any,
    prompt: str = "",
    *,
    num_tokens: int = 8,
    iterations: int | None = None,
) -> str:
    """ "Generate" with a masked LM: append ``num_tokens`` masks and fill them iteratively.

    Mask-Predict (Ghazvininejad et al., 2019), in :func:`mask_predict_rounds`, for
    ``iterations`` rounds (default ``num_tokens``). Its limits are the point: the length is
    fixed before any word is chosen, and the blanks of one round are filled independently of
    each other. Greedy and deterministic. Returns prompt + continuation as text.
    """
    if getattr(model.config, "is_causal", False):
        raise ValueError(
            "mask_predict needs a masked LM (is_causal=False); for a causal LM use generate"
        )
    num_tokens = check_positive_int(num_tokens, "num_tokens")
    iterations = check_positive_int(num_tokens if iterations is None else iterations, "iterations")
    check_vocab_fits(tokenizer, model.config.vocab_size, "mask_predict")
    prompt_ids = _prompt_ids(tokenizer, prompt)
    start = len(prompt_ids)
    ids = prompt_ids + [tokenizer.mask_token_id] * num_tokens + [tokenizer.sep_token_id]
    if len(ids) > model.config.max_position_embeddings:
        raise ValueError(
            f"prompt ({start} tokens) + num_tokens ({num_tokens}) + [SEP] is longer than the "
            f"model's max_position_embeddings={model.config.max_position_embeddings}"
        )
    input_ids = torch.tensor([ids], device=_device(model))  # (1, T)
    with evaluating(model):
        blank, never = slice(start, start + num_tokens), _never(tokenizer)
        mask_predict_rounds(model, input_ids, blank, iterations, never, tokenizer.mask_token_id)
    return tokenizer.decode(input_ids[0].tolist(), skip_special_tokens=True)


def mask_predict_rounds(
    model: nn.Module,
    input_ids: torch.Tensor,
    blank: slice,
    iterations: int,
    never: list[int],
    mask_token_id: int,
) -> None:
    """Fill the masks of ``input_ids[0, blank]`` in place: predict every masked position at
    once, keep the predictions, then mask again the ``n * (T - t) / T`` least confident of
    them and predict those again, for ``iterations`` rounds. ``never``: ids never chosen."""
    n = blank.stop - blank.start
    confidence = torch.zeros(n, device=input_ids.device)  # (n,)
    masked = torch.ones(n, dtype=torch.bool, device=input_ids.device)
    for t in range(iterations):
        logits = model(input_ids).logits[0, blank].float()  # (n, V)
        logits[:, never] = float("-inf")
        probs, tokens = logits.softmax(-1).max(-1)  # (n,), (n,)
        input_ids[0, blank] = torch.where(masked, tokens, input_ids[0, blank])
        confidence = torch.where(masked, probs, confidence)
        n_remask = n * (iterations - 1 - t) // iterations
        if n_remask == 0:
            break
        masked = torch.zeros_like(masked)
        masked[confidence.topk(n_remask, largest=False).indices] = True
        input_ids[0, blank] = input_ids[0, blank].masked_fill(masked, mask_token_id)


def left_context(text: str, mask_token: str = "[MASK]") -> str:
    """The words before the first ``mask_token``: all a left-to-right model may read."""
    if not isinstance(text, str) or mask_token not in text:
        raise ValueError(f"expected a text with a {mask_token} to predict, got {text!r}")
    return text.split(mask_token, 1)[0].rstrip()


def next_word(model: nn.Module, tokenizer: Any, text: str, top_k: int = 5) -> list[dict[str, Any]]:
    """The ``top_k`` most probable next tokens after ``text``, in ``fill_mask``'s format.

    ``text`` is a left context; if it holds a ``[MASK]``, everything from the mask on is cut
    off (a causal LM scores the blank from the words before it only). Each candidate is
    ``{score, token, token_str, sequence}``; ``score`` is the softmax probability over the
    whole vocabulary, and ``[SEP]`` (shown as the end of the sentence) may be a candidate.
    """
    _check_causal(model, "next_word")
    top_k = check_positive_int(top_k, "top_k")
    mask_token = tokenizer.convert_ids_to_tokens([tokenizer.mask_token_id])[0]
    prefix = left_context(text, mask_token) if mask_token in text else text
    ids = _prompt_ids(tokenizer, prefix)
    with evaluating(model):
        probs = _next_token_logits(model, ids).softmax(-1)  # (V,)
    ranked = probs.clone()
    ranked[_never(tokenizer)] = -1.0
    top = ranked.topk(min(top_k, probs.numel())).indices.tolist()
    return [
        {
            "score": float(probs[t]),
            "token": t,
            "token_str": tokenizer.convert_ids_to_tokens([t])[0],
            "sequence": tokenizer.decode(ids + [t], skip_special_tokens=True),
        }
        for t in top
    ]


def next_word_accuracy(
    model: nn.Module, tokenizer: Any, probes: Sequence[Any]
) -> tuple[float, list[dict[str, Any]]]:
    """Top-1 accuracy of a causal LM on fill-in probes, reading only the left context.

    The mirror of :func:`mlmcourse.tasks.fill_mask.fill_mask_accuracy` (same rows: text, answer,
    prediction, score, correct): the answer must be the most probable next token after the
    words before ``[MASK]``. The words after the mask are never read, which is the point.
    """
    return probe_accuracy(
        probes,
        lambda text: next_word(model, tokenizer, text, top_k=1)[0],
        "next_word_accuracy",
    )


# --------------------------------------------------------------------------------------------
# Judging generated text (the CLM vs MLM chapter's generation test)
# --------------------------------------------------------------------------------------------


def trigrams(words: Sequence[str]) -> set[tuple[str, str, str]]:
    """Every window of three consecutive words, the sentence's start and end included.

    ``["Tival", "is"]`` gives ``("<s>", "Tival", "is")`` and ``("Tival", "is", "</s>")``: the
    marks make a sentence that starts or stops where no corpus sentence does fail the check.
    """
    padded = ["<s>", *words, "</s>"]
    return {tuple(padded[i : i + 3]) for i in range(len(padded) - 2)}


def corpus_trigrams(texts: Sequence[str]) -> set[tuple[str, str, str]]:
    """The :func:`trigrams` of every text of a corpus: what :func:`generation_quality` knows."""
    return set().union(*(trigrams(t.split()) for t in texts))


def generation_quality(
    sentences: Sequence[str], known: set[tuple[str, str, str]]
) -> dict[str, float]:
    """Shares of ``sentences`` that are ``well-formed`` and that have a ``repeated word``.

    A sentence is well-formed when each of its :func:`trigrams` is in ``known`` (the
    :func:`corpus_trigrams` of the training texts): the world is written from templates, so a
    sentence that passes is almost always grammatical, and one that fails holds a word
    sequence the corpus never produces. A repeated word (``the the``) is a typical slip of
    blanks filled independently of each other.
    """
    words = [s.split() for s in sentences]
    repeated = [any(a == b for a, b in zip(w, w[1:], strict=False)) for w in words]
    return {
        "well-formed": sum(trigrams(w) <= known for w in words) / len(words),
        "repeated word": sum(repeated) / len(words),
    }


def continue_prompts(
    clm: nn.Module,
    mlm: nn.Module,
    tokenizer: Any,
    references: Sequence[str],
    *,
    top_k: int = 10,
    seed: int = 0,
) -> tuple[list[str], dict[str, list[str]]]:
    """Each reference's first two words as a prompt, continued by three decoders: prompts, outputs.

    ``CLM greedy`` and ``CLM top-10 sampling`` (one generator seeded with ``seed`` for all the
    draws) use :func:`generate`; ``MLM mask-predict`` is told the reference's true number of
    remaining words, which helps it (:func:`mask_predict`). Score the outputs with
    :func:`generation_quality`.
    """
    prompts = [" ".join(r.split()[:PROMPT_WORDS]) for r in references]
    g = seeded_generator(seed)
    outputs = {
        "CLM greedy": [generate(clm, tokenizer, p) for p in prompts],
        f"CLM top-{top_k} sampling": [
            generate(clm, tokenizer, p, do_sample=True, top_k=top_k, generator=g) for p in prompts
        ],
        "MLM mask-predict": [
            mask_predict(mlm, tokenizer, p, num_tokens=len(r.split()) - PROMPT_WORDS)
            for p, r in zip(prompts, references, strict=True)
        ],
    }
    return prompts, outputs
