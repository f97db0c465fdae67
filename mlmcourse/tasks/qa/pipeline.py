"""A fine-tuned reader at work: answers to questions about a text, and SQuAD's scores.

:func:`answer` has the interface and output (``{"score", "start", "end", "answer"}``) of the
question-answering pipeline of ``transformers`` 4 (version 5 removed it). :func:`predict_answers` does the work for a list
of examples: windows (:mod:`~mlmcourse.tasks.qa.features`), logits in eval mode, the best spans
(:mod:`~mlmcourse.tasks.qa.decoding`). :func:`evaluate_qa` scores its answers with the official
SQuAD metric (:mod:`~mlmcourse.tasks.qa.squad`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from mlmcourse.checkpoint.weights import check_vocab_fits
from mlmcourse.tasks.qa.decoding import decode_answers
from mlmcourse.tasks.qa.features import QAFeature, feature_batch, prepare_validation_features
from mlmcourse.tasks.qa.squad import QAExample, score_predictions
from mlmcourse.tokenization.base import as_text_list
from mlmcourse.utils.batching import LengthOrder
from mlmcourse.utils.checks import check_int, check_positive_int
from mlmcourse.utils.runtime import evaluating

__all__ = ["answer", "evaluate_qa", "predict_answers", "window_logits"]

DEFAULT_MAX_LENGTH = 384  # BERT's SQuAD recipe, and the pipeline's default
DEFAULT_DOC_STRIDE = 128


def window_logits(
    model: nn.Module, features: Sequence[QAFeature], pad_token_id: int, *, batch_size: int = 32
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``(start_logits, end_logits)`` of each window, each (T_i,) without padding, in eval mode.

    Windows are batched by length (little padding) and the model put back in its mode after.
    """
    device = next(model.parameters()).device
    by_length = LengthOrder(features, longest_first=False)
    out: list[tuple[torch.Tensor, torch.Tensor]] = []  # in the order they are computed
    with evaluating(model):
        with torch.inference_mode():
            for rows in by_length.batches(batch_size):
                batch = feature_batch(
                    [features[r] for r in rows], pad_token_id, with_positions=False
                )
                output = model(**{k: v.to(device) for k, v in batch.items()})
                for j, r in enumerate(rows):
                    n = len(features[r])  # the window's own tokens, padding cut off
                    start, end = output.start_logits[j, :n], output.end_logits[j, :n]
                    out.append((start.float().cpu(), end.float().cpu()))
    return by_length.restore(out)


def _limits(model: nn.Module, max_length: int | None, doc_stride: int | None) -> tuple[int, int]:
    """The window length and overlap: given, or the pipeline's defaults for this model."""
    limit = model.config.max_position_embeddings
    if max_length is None:
        max_length = min(DEFAULT_MAX_LENGTH, limit)
    max_length = check_int(max_length, "max_length", minimum=4)
    if max_length > limit:
        raise ValueError(
            f"max_length={max_length} is longer than the model reads "
            f"(max_position_embeddings={limit})"
        )
    if doc_stride is None:  # transformers' pipeline: min(max_length // 2, 128)
        doc_stride = min(max_length // 2, DEFAULT_DOC_STRIDE)
    return max_length, doc_stride


def predict_answers(
    model: nn.Module,
    tokenizer: Any,
    examples: Sequence[QAExample],
    *,
    top_k: int = 1,
    max_answer_length: int = 30,
    max_length: int | None = None,
    doc_stride: int | None = None,
    batch_size: int = 32,
) -> list[list[dict[str, Any]]]:
    """The ``top_k`` best answers of each example (see :func:`~mlmcourse.tasks.qa.decode_answers`)."""
    top_k = check_positive_int(top_k, "top_k")
    max_answer_length = check_positive_int(max_answer_length, "max_answer_length")
    check_vocab_fits(tokenizer, model.config.vocab_size, "predict_answers")
    max_length, doc_stride = _limits(model, max_length, doc_stride)
    features = prepare_validation_features(
        examples, tokenizer, max_length=max_length, doc_stride=doc_stride
    )
    logits = window_logits(model, features, tokenizer.pad_token_id, batch_size=batch_size)
    windows: list[list[int]] = [[] for _ in examples]
    for i, feature in enumerate(features):
        windows[feature.example_index].append(i)
    return [
        decode_answers(
            example.context,
            [features[i] for i in rows],
            [logits[i][0] for i in rows],
            [logits[i][1] for i in rows],
            top_k=top_k,
            max_answer_length=max_answer_length,
        )
        for example, rows in zip(examples, windows, strict=True)
    ]


def answer(
    model: nn.Module,
    tokenizer: Any,
    question: str | Sequence[str],
    context: str | Sequence[str],
    *,
    top_k: int = 1,
    max_answer_length: int = 30,
    doc_stride: int | None = None,
    max_length: int | None = None,
) -> dict[str, Any] | list:
    """Answer ``question`` from ``context`` as the ``transformers`` pipeline does.

    Returns ``{"score", "start", "end", "answer"}``: the probability, the characters of the
    answer in the context, and its text. With ``top_k > 1`` a list of the best (fewer if the
    context has fewer spans); with several questions (a list, with one context for all or one
    each) a list with one result per question. ``max_length`` (default: 384, or less if the
    model reads less) and ``doc_stride`` (default: half of it, at most 128) cut a long context
    into overlapping windows.
    """
    questions, contexts = as_text_list(question, "question"), as_text_list(context, "context")
    if isinstance(context, str):
        contexts = contexts * len(questions)
    elif len(contexts) != len(questions):
        raise ValueError(
            f"got {len(questions)} questions and {len(contexts)} contexts: give one context "
            f"for all of them, or one per question"
        )
    examples = [
        QAExample(f"question[{i}]", "", c, q)
        for i, (q, c) in enumerate(zip(questions, contexts, strict=True))
    ]
    results = predict_answers(
        model,
        tokenizer,
        examples,
        top_k=top_k,
        max_answer_length=max_answer_length,
        max_length=max_length,
        doc_stride=doc_stride,
    )
    keys = ("score", "start", "end", "answer")
    shaped = [[{k: a[k] for k in keys} for a in ranked] for ranked in results]
    if top_k == 1:
        shaped = [ranked[0] for ranked in shaped]
    return shaped[0] if isinstance(question, str) else shaped


def evaluate_qa(
    model: nn.Module,
    tokenizer: Any,
    examples: Sequence[QAExample],
    *,
    max_answer_length: int = 30,
    max_length: int | None = None,
    doc_stride: int | None = None,
    batch_size: int = 32,
) -> dict[str, float]:
    """SQuAD's ``{"exact_match", "f1"}`` (percent) of the model's best answer to each example."""
    if not examples:
        raise ValueError("evaluate_qa needs at least one example")
    unanswerable = [e.id for e in examples if not e.answers]
    if unanswerable:
        raise ValueError(f"example {unanswerable[0]!r} has no gold answer to score against")
    if len({e.id for e in examples}) != len(examples):
        raise ValueError("the examples' ids must be unique: predictions are matched by id")
    best = predict_answers(
        model,
        tokenizer,
        examples,
        max_answer_length=max_answer_length,
        max_length=max_length,
        doc_stride=doc_stride,
        batch_size=batch_size,
    )
    predictions = {e.id: ranked[0]["answer"] for e, ranked in zip(examples, best, strict=True)}
    return score_predictions({e.id: e.answers for e in examples}, predictions)
