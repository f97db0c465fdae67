"""Whole-word and span masking: rules that choose *groups* of tokens together.

Both strategies choose units (words, or single ordinary tokens) and give every token of a unit
the unit's choice and its 80/10/10 fate, through :class:`Units`. Whole-word masking is BERT's
rule (:func:`~mlmcourse.masking.core.choose_each`) over words; span masking (SpanBERT) lays
contiguous spans of units along the row, each span with one fate. Everything else (validation,
special tokens, the replacement and the labels) is :func:`~mlmcourse.masking.core.mask_with`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import torch

from mlmcourse.masking.core import (
    Draw,
    MaskingSettings,
    check_same_shape,
    check_setting,
    choose_each,
    ensure_min_selected,
    mask_with,
)
from mlmcourse.utils.checks import check_number, check_positive_int

__all__ = [
    "Units",
    "check_span_settings",
    "choose_spans",
    "choose_words",
    "expected_span_length",
    "mask_spans",
    "mask_whole_words",
    "span_length_probs",
]


@dataclass(frozen=True)
class Units:
    """Tokens grouped into the units a strategy chooses: words, or single ordinary tokens.

    ``index`` ``(B, T)`` is each token's unit, numbered 0, 1, 2, ... along its row, and ``-1``
    on tokens that may not be targets; ``present`` ``(B, U)`` says which numbers a row uses.
    """

    index: torch.Tensor  # (B, T) long
    present: torch.Tensor  # (B, U) bool

    @classmethod
    def numbered(cls, index: torch.Tensor) -> Units:
        """Units from each token's unit number; ``U`` is the widest row (at least 1, so that
        an empty batch still gathers)."""
        per_row = index.max(dim=1).values + 1 if index.shape[1] else index.new_zeros(len(index))
        width = max(int(per_row.max()) if per_row.numel() else 0, 1)
        return cls(index, torch.arange(width, device=index.device) < per_row[:, None])

    @classmethod
    def tokens(cls, selectable: torch.Tensor) -> Units:
        """Each selectable token is a unit of its own."""
        return cls.numbered((selectable.cumsum(1) - 1).masked_fill(~selectable, -1))

    @classmethod
    def words(cls, word_ids: torch.Tensor, selectable: torch.Tensor) -> Units:
        """Each word is a unit: a run of equal ``word_ids`` over selectable tokens, so the second
        text of a pair (whose word ids restart at 0 after ``[SEP]``) gets words of its own."""
        words = word_ids.long().masked_fill(~selectable | (word_ids < 0), -1)  # (B, T)
        previous = torch.nn.functional.pad(words[:, :-1], (1, 0), value=-1)
        starts = (words >= 0) & (words != previous)
        return cls.numbered((starts.cumsum(1) - 1).masked_fill(words < 0, -1))

    def to_tokens(
        self, chosen: torch.Tensor, outcome: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Each unit's choice and fate ``(B, U)``, read at its tokens: ``(B, T)`` each."""
        at = self.index.clamp(min=0)
        return chosen.gather(1, at) & (self.index >= 0), outcome.gather(1, at)


# --------------------------------------------------------------------------------------------
# Whole words
# --------------------------------------------------------------------------------------------


def choose_words(word_ids: Any, draw: Draw) -> tuple[torch.Tensor, torch.Tensor]:
    """Whole-word masking's rule: BERT's rule over words; a word's pieces share its fate."""
    selectable = draw.selectable
    words = Units.words(check_same_shape(word_ids, selectable, "word_ids"), selectable)
    return words.to_tokens(*choose_each(words.present, draw))


def mask_whole_words(
    input_ids: torch.Tensor,
    word_ids: torch.Tensor,
    *,
    special_tokens_mask: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    **settings: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Whole-word masking: each *word* is a target with probability ``mlm_probability``.

    All pieces of a selected word are targets, and they share one 80/10/10 outcome, so the
    model never sees ``play ##ing`` as ``play [MASK]`` and guesses ``##ing`` from ``play``
    alone. The rate is counted in words; long words have more pieces, so slightly more than
    ``mlm_probability`` of the *tokens* are targets.

    ``word_ids`` ``(B, T)`` is the tokenizer's ``word_ids`` with ``None`` written as ``-1``;
    a word is a run of equal ids. ``min_masked`` counts words. The ``settings`` and the return
    value are those of :func:`~mlmcourse.masking.mask_tokens`.
    """
    rule = functools.partial(choose_words, word_ids)
    return mask_with(
        input_ids,
        rule,
        MaskingSettings(**settings),
        special_tokens_mask=special_tokens_mask,
        generator=generator,
    )


# --------------------------------------------------------------------------------------------
# Spans (SpanBERT)
# --------------------------------------------------------------------------------------------


def span_length_probs(geometric_p: float = 0.2, max_span_length: int = 10) -> torch.Tensor:
    """SpanBERT's span-length distribution: ``P(l) ∝ p (1-p)^(l-1)`` for ``l = 1..max``.

    The geometric distribution is cut at ``max_span_length`` and renormalised (SpanBERT's
    "clipping"); with ``p=0.2`` and ``max=10`` the mean is 3.8. Entry ``l - 1`` is ``P(l)``.
    """
    geometric_p, max_span_length = check_span_settings(geometric_p, max_span_length)
    lengths = torch.arange(1, max_span_length + 1, dtype=torch.float64)
    probs = geometric_p * (1.0 - geometric_p) ** (lengths - 1)
    return probs / probs.sum()


def check_span_settings(geometric_p: Any, max_span_length: Any) -> tuple[float, int]:
    """SpanBERT's two settings as a float in (0, 1] and an int >= 1."""
    geometric_p = check_setting(_in_zero_one, geometric_p, "geometric_p", "in (0, 1]")
    max_span_length = check_setting(
        check_positive_int, max_span_length, "max_span_length", "a positive int"
    )
    return geometric_p, max_span_length


def _in_zero_one(value: Any, name: str) -> float:
    return check_number(value, name, low=0.0, high=1.0, low_open=True)


def expected_span_length(geometric_p: float = 0.2, max_span_length: int = 10) -> float:
    """The mean of :func:`span_length_probs` (3.8 for SpanBERT's settings)."""
    probs = span_length_probs(geometric_p, max_span_length)
    return float((probs * torch.arange(1, len(probs) + 1, dtype=torch.float64)).sum())


def _draw(cdf: torch.Tensor, shape: tuple[int, ...], generator, device) -> torch.Tensor:
    """Draw values ``1..len(cdf)`` from a discrete distribution given by its CDF."""
    u = torch.rand(shape, generator=generator, device=device).double()
    return torch.searchsorted(cdf, u, right=True).clamp(max=len(cdf) - 1) + 1


_LONGEST_GAP = float(2**40)


def _draw_gaps(mean_gap: float, shape: tuple[int, ...], generator, device) -> torch.Tensor:
    """Gaps between spans: geometric on 1, 2, ... with mean ``mean_gap`` (0 or 1 below 1)."""
    u = torch.rand(shape, generator=generator, device=device).double()
    if mean_gap <= 1.0:  # very high rates: spans may touch
        return (u < mean_gap).long()
    q = 1.0 / mean_gap  # success probability of a geometric on {1, 2, ...}
    gaps = torch.floor(torch.log1p(-u) / math.log1p(-q))
    # A tiny mlm_probability makes gaps astronomically long (or inf): any gap past 2**40 is
    # past every row's end, and int64 must not overflow into a negative position.
    return (
        1
        + torch.nan_to_num(gaps, nan=_LONGEST_GAP, posinf=_LONGEST_GAP)
        .clamp(0, _LONGEST_GAP)
        .long()
    )


def _sample_spans(
    rows: int,
    width: int,
    *,
    mlm_probability: float,
    length_probs: torch.Tensor,
    generator: torch.Generator | None,
    device: torch.device,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Lay spans and gaps alternately along ``width`` positions; return (covered, span_id).

    The layout is a stationary alternating renewal process: spans have lengths from
    ``length_probs`` (mean m), gaps are geometric with mean ``m (1 - p) / p``, so a position is
    covered with probability ``p`` wherever it is, the ends of a sequence included. The first
    position starts inside a span with probability ``m / (m + gap)``, and that span's remaining
    length has the residual-life law ``P(L >= r) / m``. Spans never overlap or touch (except
    when ``p`` is so high that the mean gap is below 1).
    """
    nothing = torch.zeros(rows, width, dtype=torch.long, device=device)
    if mlm_probability == 0.0 or rows == 0:
        return nothing.bool(), nothing
    if mlm_probability == 1.0:
        return ~nothing.bool(), nothing
    probs = length_probs.to(device)
    lengths = torch.arange(1, len(probs) + 1, dtype=torch.float64, device=device)
    mean = float((probs * lengths).sum())
    mean_gap = mean * (1.0 - mlm_probability) / mlm_probability
    first = _first_span_ends(probs, mean, mean_gap, rows, generator, device)  # (B,)
    starts, ends = [torch.zeros_like(first)], [first]
    position = first
    chunk = max(8, int(width / (mean + mean_gap) * 1.5) + 2)
    while bool((position < width).any()):  # usually once
        gaps = _draw_gaps(mean_gap, (rows, chunk), generator, device)
        spans = _draw(probs.cumsum(0), (rows, chunk), generator, device)
        ends_k = position[:, None] + (gaps + spans).cumsum(1)  # (B, chunk)
        starts.append(ends_k - spans)
        ends.append(ends_k)
        position = ends_k[:, -1]
    start = torch.cat([s.reshape(rows, -1) for s in starts], 1).clamp(max=width)  # (B, K)
    end = torch.cat([e.reshape(rows, -1) for e in ends], 1).clamp(max=width)
    return _cover(start, end, width)


def _first_span_ends(
    probs: torch.Tensor, mean: float, mean_gap: float, rows: int, generator, device
) -> torch.Tensor:
    """Where the span a row starts in ends ``(B,)``; 0 for rows that start in a gap."""
    survival = probs.flip(0).cumsum(0).flip(0)  # P(L >= r), r = 1..max
    residual_cdf = (survival / mean).cumsum(0)
    in_span = torch.rand((rows,), generator=generator, device=device) < mean / (mean + mean_gap)
    return torch.where(in_span, _draw(residual_cdf, (rows,), generator, device), 0)


def _cover(start: torch.Tensor, end: torch.Tensor, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Spans ``[start, end)`` ``(B, K)`` as ``(covered, span_id)``, both ``(B, width)``."""
    rows, ones = len(start), torch.ones_like(start)
    depth = torch.zeros(rows, width + 1, dtype=torch.long, device=start.device)
    depth.scatter_add_(1, start, ones).scatter_add_(1, end, -ones)
    covered = depth.cumsum(1)[:, :width] > 0
    opened = torch.zeros(rows, width + 1, dtype=torch.long, device=start.device)
    span_id = opened.scatter_add_(1, start, ones).cumsum(1)[:, :width]  # spans begun so far
    return covered, span_id


def choose_spans(
    word_ids: Any, geometric_p: float, max_span_length: int, draw: Draw
) -> tuple[torch.Tensor, torch.Tensor]:
    """SpanBERT's rule: spans of units laid along the row, each span with one fate."""
    length_probs = span_length_probs(geometric_p, max_span_length)
    selectable = draw.selectable
    if word_ids is None:
        units = Units.tokens(selectable)
    else:
        units = Units.words(check_same_shape(word_ids, selectable, "word_ids"), selectable)
    rows, width = units.present.shape
    covered, span_id = _sample_spans(
        rows,
        width,
        mlm_probability=draw.mlm_probability,
        length_probs=length_probs,
        generator=draw.generator,
        device=selectable.device,
    )
    chosen = covered & units.present
    spans = int(span_id.max()) + 1 if span_id.numel() else 1
    fate = draw.uniform((rows, spans))
    outcome = fate.gather(1, span_id)  # (B, U): one 80/10/10 outcome per span
    if draw.min_masked:  # top up short rows with single units, each with a fate of its own
        key = draw.uniform(chosen.shape)
        extra = ensure_min_selected(chosen, units.present, key, draw.min_masked) & ~chosen
        outcome = torch.where(extra, draw.uniform(chosen.shape), outcome)
        chosen |= extra
    return units.to_tokens(chosen, outcome)


def mask_spans(
    input_ids: torch.Tensor,
    word_ids: torch.Tensor | None = None,
    *,
    geometric_p: float = 0.2,
    max_span_length: int = 10,
    special_tokens_mask: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    **settings: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """SpanBERT-style masking: contiguous spans of whole words become targets.

    Span lengths (in words, or in tokens when ``word_ids`` is None) follow
    :func:`span_length_probs` (mean 3.8 by default); spans and gaps alternate along the
    sequence so that on average ``mlm_probability`` of the words are covered. Each span gets
    one 80/10/10 outcome: all ``[MASK]``, all random or all kept, as in SpanBERT. Predicting a
    whole span is harder than a single token, because its neighbours are hidden too.

    Special tokens and padding are skipped (a span never covers them and lengths count only
    ordinary units). ``min_masked`` adds single random words to rows with fewer targets. The
    ``settings`` and the return value are those of :func:`~mlmcourse.masking.mask_tokens`.
    """
    rule = functools.partial(choose_spans, word_ids, geometric_p, max_span_length)
    return mask_with(
        input_ids,
        rule,
        MaskingSettings(**settings),
        special_tokens_mask=special_tokens_mask,
        generator=generator,
    )
