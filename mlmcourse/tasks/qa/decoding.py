"""From start and end logits to answers: the best span of context tokens, then its text.

A span ``(s, e)`` of a window scores ``start_logits[s] + end_logits[e]``: the log of
``p_start(s) * p_end(e)`` up to a constant, so the best span is the pair with the highest sum,
among those that make an answer: both ends in the context (not the question, not a special
token), ``s <= e``, and at most ``max_answer_length`` tokens long.

:func:`best_spans_naive` is that search written as a double loop over every pair, for
teaching; :func:`best_spans` does it at once on the ``(T, T)`` matrix of all sums (as the
``transformers`` pipeline does) and gives the same spans in the same order. It is exact:
``run_qa.py``'s shortcut, pairing only the ``n_best`` highest starts with the ``n_best``
highest ends, can miss the best *valid* span when the top starts all lie after the top ends.

:func:`decode_answers` runs the search in every window of an example, maps the spans back to
characters with the windows' offsets and keeps the best over all windows. Spans are ranked by
the logit sum (``run_qa.py``'s choice); each also gets a ``score`` like the pipeline's, the
probability ``p_start(s) * p_end(e)`` with the softmax taken over its window's context tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from mlmcourse.tasks.qa.features import QAFeature
from mlmcourse.utils.checks import check_positive_int

__all__ = ["Span", "best_spans", "best_spans_naive", "decode_answers", "span_mask"]

Span = tuple[float, int, int]  # (start logit + end logit, start position, end position)


def _check(start_logits: torch.Tensor, end_logits: torch.Tensor, context: Sequence[bool]) -> None:
    if start_logits.dim() != 1 or start_logits.shape != end_logits.shape:
        raise ValueError(
            f"start_logits and end_logits must be two (T,) tensors of one window, got "
            f"{tuple(start_logits.shape)} and {tuple(end_logits.shape)}"
        )
    if len(context) != start_logits.shape[0]:
        raise ValueError(
            f"context must say for each of the {start_logits.shape[0]} positions whether it is "
            f"context, got {len(context)} values"
        )


def best_spans_naive(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    context: Sequence[bool],
    *,
    top_k: int = 1,
    max_answer_length: int = 30,
) -> list[Span]:
    """The ``top_k`` best spans ``(score, start, end)``, by trying every pair of positions.

    ``context[i]`` says whether position ``i`` is a context token. Ties go to the earlier start,
    then the earlier end.
    """
    _check(start_logits, end_logits, context)
    starts, ends = start_logits.double().tolist(), end_logits.double().tolist()
    spans = []
    for s in range(len(starts)):
        for e in range(s, min(s + max_answer_length, len(ends))):
            if context[s] and context[e]:
                spans.append((starts[s] + ends[e], s, e))
    spans.sort(key=lambda span: -span[0])  # stable: equal scores stay in (start, end) order
    return spans[:top_k]


def span_mask(context: torch.Tensor, max_answer_length: int) -> torch.Tensor:
    """Which ``(start, end)`` pairs make an answer, (T,) -> (T, T): both in the context, start
    <= end, and at most ``max_answer_length`` tokens."""
    seq_len = context.shape[0]
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool, device=context.device)
    band = ones.triu() & ~ones.triu(max_answer_length)  # 0 <= end - start < max_answer_length
    return band & context[:, None] & context[None, :]


def best_spans(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    context: Sequence[bool] | torch.Tensor,
    *,
    top_k: int = 1,
    max_answer_length: int = 30,
) -> list[Span]:
    """The same spans as :func:`best_spans_naive`, from the matrix of every pair's score."""
    _check(start_logits, end_logits, context)
    check_positive_int(top_k, "top_k")
    check_positive_int(max_answer_length, "max_answer_length")
    context = torch.as_tensor(context, dtype=torch.bool, device=start_logits.device)
    scores = start_logits.double()[:, None] + end_logits.double()[None, :]  # (T, T)
    valid = span_mask(context, max_answer_length).flatten().nonzero().squeeze(1)  # row-major
    order = scores.flatten()[valid].sort(descending=True, stable=True).indices[:top_k]
    seq_len = scores.shape[1]
    return [(float(scores.flatten()[i]), i // seq_len, i % seq_len) for i in valid[order].tolist()]


def _context_softmax(logits: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
    """Probabilities over the context positions only, (T,) -> (T,); 0 elsewhere."""
    return logits.double().masked_fill(~context, float("-inf")).softmax(-1)


def decode_answers(
    context_text: str,
    features: Sequence[QAFeature],
    start_logits: Sequence[torch.Tensor],
    end_logits: Sequence[torch.Tensor],
    *,
    top_k: int = 1,
    max_answer_length: int = 30,
    search: Callable[..., list[Span]] = best_spans,
) -> list[dict[str, Any]]:
    """The ``top_k`` best answers to one example over all its windows, best first.

    ``features`` are the example's windows and ``start_logits[i]``/``end_logits[i]`` the (T_i,)
    logits of window ``i``, without padding. Each answer is ``{"answer", "start", "end",
    "score", "logit_score"}``: its text (``context_text[start:end]``), its characters, its
    probability in its window and the logit sum it is ranked by. A span found in two
    overlapping windows is kept once, with its better score. ``search`` is
    :func:`best_spans` or :func:`best_spans_naive`.
    """
    if not features:
        raise ValueError("decode_answers needs the example's windows, got none")
    best: dict[tuple[int, int], dict[str, Any]] = {}
    for feature, starts, ends in zip(features, start_logits, end_logits, strict=True):
        context = torch.tensor([o is not None for o in feature.offsets])
        if starts.shape[0] != len(feature):
            raise ValueError(
                f"a window of {len(feature)} tokens got {starts.shape[0]} logits; cut the "
                f"padding off each row before decoding"
            )
        p_start = _context_softmax(starts.cpu(), context)
        p_end = _context_softmax(ends.cpu(), context)
        spans = search(
            starts.cpu(), ends.cpu(), context, top_k=top_k, max_answer_length=max_answer_length
        )
        for score, s, e in spans:
            char_start, char_end = feature.offsets[s][0], feature.offsets[e][1]
            answer = {
                "answer": context_text[char_start:char_end],
                "start": char_start,
                "end": char_end,
                "score": float(p_start[s] * p_end[e]),
                "logit_score": score,
            }
            kept = best.get((char_start, char_end))
            if kept is None or kept["logit_score"] < score:
                best[(char_start, char_end)] = answer
    ranked = sorted(best.values(), key=lambda a: (-a["logit_score"], a["start"], a["end"]))
    return ranked[:top_k]
