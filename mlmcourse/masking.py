"""Masking for masked language modeling: choose the positions to predict and corrupt the input.

BERT picks 15% of the tokens of every sequence as prediction targets. Of those, 80% are
replaced by ``[MASK]``, 10% by a random token and 10% are left as they are; the loss is computed
on all of them. The model therefore cannot tell which visible tokens are targets, so it learns a
representation of *every* token, not only of ``[MASK]``, which never occurs when the model is
used later.

Three strategies choose the targets, all vectorized over the batch in torch:

- :func:`mask_tokens`: each token independently (BERT);
- :func:`mask_whole_words`: each *word* independently, with all its WordPiece pieces together
  (BERT's later "whole word masking"), so a word is never half visible;
- :func:`mask_spans`: contiguous spans of words (or tokens) with geometric lengths (SpanBERT).

:class:`MLMCollator` tokenizes and pads a list of examples and masks them afresh on every call,
which is *dynamic masking* (RoBERTa): every epoch shows a sentence with new masks.

Conventions (as in Hugging Face ``transformers``): ``labels`` holds the original id at the
target positions and ``-100`` (the ignore index of ``torch.nn.functional.cross_entropy``)
everywhere else. Special tokens and padding are never targets. Nothing is modified in place.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from mlmcourse.checks import check_integer_values

__all__ = [
    "IGNORE_INDEX",
    "MLMCollator",
    "STRATEGIES",
    "expected_span_length",
    "mask_spans",
    "mask_tokens",
    "mask_whole_words",
    "span_length_probs",
]

IGNORE_INDEX = -100
STRATEGIES = ("token", "whole_word", "span")


# --------------------------------------------------------------------------------------------
# Validation and the pieces every strategy shares
# --------------------------------------------------------------------------------------------


def _check_probability(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _check_ratios(
    mlm_probability: float, mask_replace_prob: float, random_replace_prob: float
) -> None:
    _check_probability(mlm_probability, "mlm_probability")
    _check_probability(mask_replace_prob, "mask_replace_prob")
    _check_probability(random_replace_prob, "random_replace_prob")
    if mask_replace_prob + random_replace_prob > 1.0 + 1e-9:
        raise ValueError(
            "mask_replace_prob + random_replace_prob must be at most 1 (the rest of the selected "
            f"tokens are kept unchanged), got {mask_replace_prob} + {random_replace_prob} = "
            f"{mask_replace_prob + random_replace_prob:g}"
        )


def _check_count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return value


def _as_batch(input_ids: Any) -> torch.Tensor:
    """Validate ``input_ids`` and return it as ``(B, T)`` (a 1-D sequence becomes one row)."""
    if not isinstance(input_ids, torch.Tensor):
        raise TypeError(
            f"input_ids must be a torch.Tensor of token ids, got {type(input_ids).__name__}"
        )
    if input_ids.dtype.is_floating_point or input_ids.dtype in (torch.bool, torch.complex64):
        raise TypeError(f"input_ids must hold integer ids, got dtype {input_ids.dtype}")
    if input_ids.dim() not in (1, 2):
        raise ValueError(
            f"input_ids must be 1-D (T,) or 2-D (B, T), got shape {tuple(input_ids.shape)}"
        )
    return input_ids.long().unsqueeze(0) if input_ids.dim() == 1 else input_ids.long()


def _check_same_shape(tensor: Any, input_ids: torch.Tensor, name: str) -> torch.Tensor:
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.shape[-1] != input_ids.shape[-1] or tensor.numel() != input_ids.numel():
        raise ValueError(
            f"{name} must have the shape of input_ids {tuple(input_ids.shape)}, "
            f"got {tuple(tensor.shape)}"
        )
    return tensor.reshape(input_ids.shape).to(input_ids.device)


class _Replacement:
    """What the 80/10/10 step needs, validated once: ids, vocabulary and ratios."""

    def __init__(
        self,
        *,
        mask_token_id: Any,
        special_ids: Any,
        vocab_size: Any,
        mask_replace_prob: float,
        random_replace_prob: float,
    ):
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
            raise ValueError(f"vocab_size must be a positive int, got {vocab_size!r}")
        if isinstance(mask_token_id, bool) or not isinstance(mask_token_id, int):
            raise TypeError(f"mask_token_id must be an int, got {mask_token_id!r}")
        if not 0 <= mask_token_id < vocab_size:
            raise ValueError(
                f"mask_token_id must be a valid id in [0, vocab_size={vocab_size}), "
                f"got {mask_token_id}"
            )
        specials = {int(i) for i in special_ids} | {mask_token_id}
        self.mask_token_id = mask_token_id
        self.vocab_size = vocab_size
        self.mask_replace_prob = mask_replace_prob
        self.random_replace_prob = random_replace_prob
        # A lookup table (V,) is faster than torch.isin for a handful of specials.
        self.ordinary = torch.ones(vocab_size, dtype=torch.bool)
        self.ordinary[[i for i in specials if 0 <= i < vocab_size]] = False
        self.pool = self.ordinary.nonzero().squeeze(1)  # what a random replacement may use
        if random_replace_prob > 0 and self.pool.numel() == 0:
            raise ValueError(
                f"random_replace_prob={random_replace_prob} needs at least one non-special id, "
                f"but all {vocab_size} ids are special"
            )

    def selectable(
        self, input_ids: torch.Tensor, special_tokens_mask: torch.Tensor | None
    ) -> torch.Tensor:
        """``(B, T)`` True where a token may become a target: not special, not padding."""
        if input_ids.numel():
            low, high = (int(v) for v in torch.aminmax(input_ids))
            if low < 0 or high >= self.vocab_size:
                raise ValueError(
                    f"input_ids must be in [0, vocab_size={self.vocab_size}), "
                    f"got values from {low} to {high}"
                )
        selectable = self.ordinary.to(input_ids.device)[input_ids]  # (B, T)
        if special_tokens_mask is not None:
            special = _check_same_shape(special_tokens_mask, input_ids, "special_tokens_mask")
            selectable &= special == 0
        return selectable

    def apply(
        self,
        input_ids: torch.Tensor,
        selected: torch.Tensor,
        outcome: torch.Tensor,
        generator: torch.Generator | None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Corrupt the selected positions; ``outcome`` is a uniform draw per position.

        ``outcome < mask_replace_prob`` gives ``[MASK]``, the next ``random_replace_prob`` a
        random non-special id, the rest keeps the token. Pieces of one word or span share
        their ``outcome``, so they share their fate.
        """
        unselected = ~selected
        labels = input_ids.masked_fill(unselected, IGNORE_INDEX)  # a new tensor
        # fate 0: [MASK] (outcome < mask_replace_prob); 1: random id (the next
        # random_replace_prob); 2: kept, or not a target at all (outcome set past 1).
        high = self.mask_replace_prob + self.random_replace_prob
        boundaries = torch.tensor([self.mask_replace_prob, high], device=outcome.device)
        fate = torch.bucketize(outcome.masked_fill(unselected, 2.0), boundaries, right=True)
        inputs = input_ids.masked_fill(fate == 0, self.mask_token_id)
        if self.random_replace_prob > 0:
            pool = self.pool.to(input_ids.device)
            picks = torch.randint(
                pool.numel(), input_ids.shape, generator=generator, device=input_ids.device
            )
            inputs = torch.where(fate == 1, pool[picks], inputs)
        return inputs, labels


def _setup(
    input_ids: Any,
    special_tokens_mask: Any,
    mask_token_id: Any,
    special_ids: Any,
    vocab_size: Any,
    mlm_probability: Any,
    mask_replace_prob: Any,
    random_replace_prob: Any,
    min_masked: Any,
    generator: Any,
) -> tuple[torch.Tensor, torch.Tensor, _Replacement]:
    """Validate what every strategy takes; return ``ids`` (B, T), ``selectable`` and the rule."""
    ids = _as_batch(input_ids)  # (B, T)
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
        if generator.device.type != ids.device.type:
            raise ValueError(
                f"generator is on {generator.device} but input_ids on {ids.device}; make it "
                "with torch.Generator(device=input_ids.device)"
            )
    _check_ratios(mlm_probability, mask_replace_prob, random_replace_prob)
    _check_count(min_masked, "min_masked")
    if isinstance(special_ids, torch.Tensor):
        special_ids = special_ids.tolist()
    if isinstance(special_ids, str | bytes) or not isinstance(special_ids, Iterable):
        raise TypeError(f"special_ids must be a collection of ids, got {special_ids!r}")
    replacement = _replacement(
        mask_token_id, tuple(special_ids), vocab_size, mask_replace_prob, random_replace_prob
    )
    return ids, replacement.selectable(ids, special_tokens_mask), replacement


@functools.lru_cache(maxsize=32)
def _replacement(
    mask_token_id: Any,
    special_ids: tuple[int, ...],
    vocab_size: Any,
    mask_replace_prob: float,
    random_replace_prob: float,
) -> _Replacement:
    """Built once per setting: a training loop masks every step with the same tokenizer."""
    return _Replacement(
        mask_token_id=mask_token_id,
        special_ids=special_ids,
        vocab_size=vocab_size,
        mask_replace_prob=mask_replace_prob,
        random_replace_prob=random_replace_prob,
    )


def _ensure_min_selected(
    selected: torch.Tensor,  # (B, U) bool
    available: torch.Tensor,  # (B, U) bool
    key: torch.Tensor,  # (B, U) float in [0, 1)
    min_masked: int,
) -> torch.Tensor:
    """Add the available units with the smallest ``key`` until each row has ``min_masked``.

    Selected units rank first, so a row that already has enough is unchanged; a row with fewer
    available units than ``min_masked`` gets all of them. Never selects an unavailable unit.
    """
    k = min(min_masked, selected.shape[1])
    if k == 0:
        return selected
    rank = key.masked_fill(selected, -1.0).masked_fill(~available, 2.0)
    lowest = rank.topk(k, dim=1, largest=False).indices  # (B, k)
    forced = torch.zeros_like(selected).scatter_(1, lowest, True)
    return selected | (forced & available)


def _word_units(word_ids: torch.Tensor, selectable: torch.Tensor) -> torch.Tensor:
    """Number the words of each row 0, 1, 2, ...; ``-1`` on tokens that are not selectable.

    A word is a run of equal ``word_ids``, so the second text of a pair (whose word ids restart
    at 0 after ``[SEP]``) gets words of its own.
    """
    words = word_ids.long().masked_fill(~selectable | (word_ids < 0), -1)  # (B, T)
    previous = torch.nn.functional.pad(words[:, :-1], (1, 0), value=-1)
    starts = (words >= 0) & (words != previous)
    return (starts.cumsum(1) - 1).masked_fill(words < 0, -1)


def _units_to_tokens(per_unit: torch.Tensor, units: torch.Tensor) -> torch.Tensor:
    """Read a ``(B, U)`` per-unit value at every token: ``(B, T)``."""
    return per_unit.gather(1, units.clamp(min=0))


def _unit_count(units: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Units per row ``(B,)`` and the widest row (at least 1, so empty batches still gather)."""
    per_row = units.max(dim=1).values + 1 if units.shape[1] else units.new_zeros(len(units))
    return per_row, max(int(per_row.max()) if per_row.numel() else 0, 1)


def _rand(shape: tuple[int, ...], generator: torch.Generator | None, device) -> torch.Tensor:
    return torch.rand(shape, generator=generator, device=device)


def _finish(
    ids: torch.Tensor,
    original_shape: torch.Size,
    selected: torch.Tensor,
    outcome: torch.Tensor,
    replacement: _Replacement,
    generator: torch.Generator | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    inputs, labels = replacement.apply(ids, selected, outcome, generator)
    return inputs.reshape(original_shape), labels.reshape(original_shape)


# --------------------------------------------------------------------------------------------
# Token, whole-word and span masking
# --------------------------------------------------------------------------------------------


def mask_tokens(
    input_ids: torch.Tensor,
    *,
    mask_token_id: int,
    special_ids: Iterable[int],
    vocab_size: int,
    special_tokens_mask: torch.Tensor | None = None,
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    min_masked: int = 0,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: each token is a target with probability ``mlm_probability``.

    Targets become ``[MASK]`` with probability ``mask_replace_prob``, a random non-special id
    with probability ``random_replace_prob``, and stay unchanged otherwise. Tokens whose id is
    in ``special_ids`` (pass the tokenizer's ``all_special_ids``, which include ``[PAD]``) or
    that ``special_tokens_mask`` marks are never targets. ``min_masked`` guarantees that many
    targets per row (fewer if the row has fewer ordinary tokens), so a short sentence still
    contributes to the loss.

    Returns ``(inputs, labels)`` shaped like ``input_ids`` (``(T,)`` or ``(B, T)``), both new
    tensors: ``labels`` is the original id at targets and ``-100`` elsewhere. ``generator``
    (on ``input_ids``' device) makes the result repeatable.
    """
    ids, selectable, replacement = _setup(
        input_ids,
        special_tokens_mask,
        mask_token_id,
        special_ids,
        vocab_size,
        mlm_probability,
        mask_replace_prob,
        random_replace_prob,
        min_masked,
        generator,
    )
    key = _rand(ids.shape, generator, ids.device)  # (B, T): a target if key < p
    selected = selectable & (key < mlm_probability)
    if min_masked:
        selected = _ensure_min_selected(selected, selectable, key, min_masked)
    outcome = _rand(ids.shape, generator, ids.device)  # (B, T): its 80/10/10 fate
    return _finish(ids, input_ids.shape, selected, outcome, replacement, generator)


def mask_whole_words(
    input_ids: torch.Tensor,
    word_ids: torch.Tensor,
    *,
    mask_token_id: int,
    special_ids: Iterable[int],
    vocab_size: int,
    special_tokens_mask: torch.Tensor | None = None,
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    min_masked: int = 0,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Whole-word masking: each *word* is a target with probability ``mlm_probability``.

    All pieces of a selected word are targets, and they share one 80/10/10 outcome, so the
    model never sees ``play ##ing`` as ``play [MASK]`` and guesses ``##ing`` from ``play``
    alone. The rate is counted in words; long words have more pieces, so slightly more than
    ``mlm_probability`` of the *tokens* are targets.

    ``word_ids`` ``(B, T)`` is the tokenizer's ``word_ids`` with ``None`` written as ``-1``;
    a word is a run of equal ids. ``min_masked`` counts words. Other arguments and the return
    value are those of :func:`mask_tokens`.
    """
    ids, selectable, replacement = _setup(
        input_ids,
        special_tokens_mask,
        mask_token_id,
        special_ids,
        vocab_size,
        mlm_probability,
        mask_replace_prob,
        random_replace_prob,
        min_masked,
        generator,
    )
    units = _word_units(_check_same_shape(word_ids, ids, "word_ids"), selectable)  # (B, T)
    per_row, width = _unit_count(units)
    present = torch.arange(width, device=ids.device) < per_row[:, None]  # (B, W)
    key = _rand((len(ids), width), generator, ids.device)
    chosen = present & (key < mlm_probability)  # (B, W) words
    if min_masked:
        chosen = _ensure_min_selected(chosen, present, key, min_masked)
    outcome = _rand((len(ids), width), generator, ids.device)  # one fate per word
    selected = _units_to_tokens(chosen, units) & (units >= 0)
    return _finish(
        ids, input_ids.shape, selected, _units_to_tokens(outcome, units), replacement, generator
    )


def span_length_probs(geometric_p: float = 0.2, max_span_length: int = 10) -> torch.Tensor:
    """SpanBERT's span-length distribution: ``P(l) ∝ p (1-p)^(l-1)`` for ``l = 1..max``.

    The geometric distribution is cut at ``max_span_length`` and renormalised (SpanBERT's
    "clipping"); with ``p=0.2`` and ``max=10`` the mean is 3.8. Entry ``l - 1`` is ``P(l)``.
    """
    if isinstance(geometric_p, bool) or not isinstance(geometric_p, int | float):
        raise ValueError(f"geometric_p must be a number in (0, 1], got {geometric_p!r}")
    if not 0.0 < geometric_p <= 1.0:
        raise ValueError(f"geometric_p must be in (0, 1], got {geometric_p!r}")
    if isinstance(max_span_length, bool) or not isinstance(max_span_length, int):
        raise ValueError(f"max_span_length must be a positive int, got {max_span_length!r}")
    if max_span_length < 1:
        raise ValueError(f"max_span_length must be a positive int, got {max_span_length!r}")
    lengths = torch.arange(1, max_span_length + 1, dtype=torch.float64)
    probs = geometric_p * (1.0 - geometric_p) ** (lengths - 1)
    return probs / probs.sum()


def expected_span_length(geometric_p: float = 0.2, max_span_length: int = 10) -> float:
    """The mean of :func:`span_length_probs` (3.8 for SpanBERT's settings)."""
    probs = span_length_probs(geometric_p, max_span_length)
    return float((probs * torch.arange(1, len(probs) + 1, dtype=torch.float64)).sum())


def _draw(cdf: torch.Tensor, shape: tuple[int, ...], generator, device) -> torch.Tensor:
    """Draw values ``1..len(cdf)`` from a discrete distribution given by its CDF."""
    u = _rand(shape, generator, device).double()
    return torch.searchsorted(cdf, u, right=True).clamp(max=len(cdf) - 1) + 1


_LONGEST_GAP = float(2**40)


def _draw_gaps(mean_gap: float, shape: tuple[int, ...], generator, device) -> torch.Tensor:
    """Gaps between spans: geometric on 1, 2, ... with mean ``mean_gap`` (0 or 1 below 1)."""
    u = _rand(shape, generator, device).double()
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
    covered = torch.zeros(rows, width, dtype=torch.bool, device=device)
    if mlm_probability == 0.0 or rows == 0:
        return covered, torch.zeros(rows, width, dtype=torch.long, device=device)
    if mlm_probability == 1.0:
        return ~covered, torch.zeros(rows, width, dtype=torch.long, device=device)
    probs = length_probs.to(device)
    lengths = torch.arange(1, len(probs) + 1, dtype=torch.float64, device=device)
    mean = float((probs * lengths).sum())
    mean_gap = mean * (1.0 - mlm_probability) / mlm_probability
    survival = probs.flip(0).cumsum(0).flip(0)  # P(L >= r), r = 1..max
    residual_cdf = (survival / mean).cumsum(0)
    in_span = _rand((rows,), generator, device) < mean / (mean + mean_gap)
    first = torch.where(in_span, _draw(residual_cdf, (rows,), generator, device), 0)  # (B,)

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
    ones = torch.ones_like(start)
    depth = torch.zeros(rows, width + 1, dtype=torch.long, device=device)
    depth.scatter_add_(1, start, ones).scatter_add_(1, end, -ones)
    covered = depth.cumsum(1)[:, :width] > 0
    opened = torch.zeros(rows, width + 1, dtype=torch.long, device=device)
    span_id = opened.scatter_add_(1, start, ones).cumsum(1)[:, :width]  # spans begun so far
    return covered, span_id


def mask_spans(
    input_ids: torch.Tensor,
    word_ids: torch.Tensor | None = None,
    *,
    mask_token_id: int,
    special_ids: Iterable[int],
    vocab_size: int,
    special_tokens_mask: torch.Tensor | None = None,
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    min_masked: int = 0,
    geometric_p: float = 0.2,
    max_span_length: int = 10,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """SpanBERT-style masking: contiguous spans of whole words become targets.

    Span lengths (in words, or in tokens when ``word_ids`` is None) follow
    :func:`span_length_probs` (mean 3.8 by default); spans and gaps alternate along the
    sequence so that on average ``mlm_probability`` of the words are covered. Each span gets
    one 80/10/10 outcome: all ``[MASK]``, all random or all kept, as in SpanBERT. Predicting a
    whole span is harder than a single token, because its neighbours are hidden too.

    Special tokens and padding are skipped (a span never covers them and lengths count only
    ordinary units). ``min_masked`` adds single random words to rows with fewer targets.
    Returns ``(inputs, labels)`` as :func:`mask_tokens` does.
    """
    ids, selectable, replacement = _setup(
        input_ids,
        special_tokens_mask,
        mask_token_id,
        special_ids,
        vocab_size,
        mlm_probability,
        mask_replace_prob,
        random_replace_prob,
        min_masked,
        generator,
    )
    length_probs = span_length_probs(geometric_p, max_span_length)
    if word_ids is None:  # units are the ordinary tokens, numbered along the row
        units = (selectable.cumsum(1) - 1).masked_fill(~selectable, -1)
    else:
        units = _word_units(_check_same_shape(word_ids, ids, "word_ids"), selectable)
    per_row, width = _unit_count(units)
    present = torch.arange(width, device=ids.device) < per_row[:, None]  # (B, U)
    covered, span_id = _sample_spans(
        len(ids),
        width,
        mlm_probability=mlm_probability,
        length_probs=length_probs,
        generator=generator,
        device=ids.device,
    )
    chosen = covered & present
    spans = int(span_id.max()) + 1 if span_id.numel() else 1
    fate = _rand((len(ids), spans), generator, ids.device)  # one 80/10/10 outcome per span
    outcome = fate.gather(1, span_id)  # (B, U)
    if min_masked:
        key = _rand((len(ids), width), generator, ids.device)
        extra = _ensure_min_selected(chosen, present, key, min_masked) & ~chosen
        fresh = _rand((len(ids), width), generator, ids.device)  # each added word: its own fate
        outcome = torch.where(extra, fresh, outcome)
        chosen |= extra
    selected = _units_to_tokens(chosen, units) & (units >= 0)
    return _finish(
        ids, input_ids.shape, selected, _units_to_tokens(outcome, units), replacement, generator
    )


# --------------------------------------------------------------------------------------------
# The collator: pad, then mask afresh at every call
# --------------------------------------------------------------------------------------------


def _pad_rows(rows: Sequence[Any], filled: np.ndarray, fill: int, name: str) -> torch.Tensor:
    """Write rows of ints (lists or tensors) where ``filled`` (B, T) is True; ``fill`` elsewhere.

    NumPy does the work: for a batch of short rows, each torch call costs more in overhead
    than the copying itself, and ``torch.from_numpy`` shares the result without a copy. The
    values are read with their own type and checked before the cast to int64, so a float id
    (``7.9``) is an error rather than silently truncated to another token (7).
    """
    out = np.full(filled.shape, fill, dtype=np.int64)
    if all(type(row) is list for row in rows):  # the common case; numpy reads ints fastest
        flat = np.array(list(itertools.chain.from_iterable(rows)))
    else:
        flat = torch.cat([torch.as_tensor(row).reshape(-1) for row in rows]).numpy()
    if flat.dtype.kind not in "iu" and flat.size:
        check_integer_values(flat, name)
    out[filled] = flat
    return torch.from_numpy(out)


class MLMCollator:
    """Turn a list of examples into a masked MLM batch, for ``torch.utils.data.DataLoader``.

    Examples are strings (tokenized here, truncated to ``max_length``), pairs of strings, or
    dicts with ``input_ids`` and optionally ``token_type_ids``, ``special_tokens_mask`` and
    ``word_ids`` (already tokenized, with their special tokens; ``None`` word ids may be
    ``None`` or ``-1``). The batch is padded to its longest row and masked with ``strategy``
    (``"token"``, ``"whole_word"`` or ``"span"``). It returns the dict a Hugging Face model
    takes: ``input_ids``, ``attention_mask``, ``token_type_ids``, ``labels``, all ``(B, T)``
    long tensors, with ``labels == -100`` on everything but the targets.

    **Dynamic masking and the seed stream.** The collator owns a ``torch.Generator`` seeded
    with ``seed``; every call draws new masks from it, so a sentence is masked differently in
    every epoch, and the sequence of batches is the same in every run with the same seed and
    the same order of calls. ``generator=`` on a call uses that generator instead (the training
    loop passes one per batch index, so a resumed run sees exactly the masks it would have).
    In a ``DataLoader`` with ``num_workers > 0`` each worker gets a *copy* of the collator; a
    copy that kept the parent's stream would give every worker (and, since workers restart
    every epoch, every epoch) the same masks. So inside a worker the stream is reseeded from
    ``seed`` and the worker's seed, which PyTorch draws anew for each epoch from the loader's
    ``generator`` (or the global seed): pass ``generator=torch.Generator().manual_seed(...)``
    to the ``DataLoader`` and the run is reproducible with workers too.
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        mlm_probability: float = 0.15,
        mask_replace_prob: float = 0.8,
        random_replace_prob: float = 0.1,
        strategy: str = "token",
        max_length: int = 128,
        min_masked: int = 1,
        seed: int = 0,
        geometric_p: float = 0.2,
        max_span_length: int = 10,
    ):
        missing = [
            name
            for name in ("mask_token_id", "pad_token_id", "all_special_ids", "vocab_size")
            if not hasattr(tokenizer, name)
        ]
        if missing or not callable(tokenizer):
            raise TypeError(
                "MLMCollator needs a tokenizer (callable, with mask_token_id, pad_token_id, "
                f"all_special_ids and vocab_size); {type(tokenizer).__name__} lacks "
                f"{', '.join(missing) or '__call__'}"
            )
        _check_ratios(mlm_probability, mask_replace_prob, random_replace_prob)
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
            raise ValueError(
                f"max_length must be an int >= 2 ([CLS] and [SEP]), got {max_length!r}"
            )
        _check_count(min_masked, "min_masked")
        _check_count(seed, "seed")
        span_length_probs(geometric_p, max_span_length)  # validates both
        self.tokenizer = tokenizer
        self.mlm_probability = mlm_probability
        self.mask_replace_prob = mask_replace_prob
        self.random_replace_prob = random_replace_prob
        self.strategy = strategy
        self.max_length = max_length
        self.min_masked = min_masked
        self.seed = seed
        self.geometric_p = geometric_p
        self.max_span_length = max_span_length
        self.generator = torch.Generator().manual_seed(seed)
        self._worker: tuple[int, int] | None = None  # (id, seed) of the worker we run in

    def __repr__(self) -> str:
        return (
            f"MLMCollator(strategy={self.strategy!r}, mlm_probability={self.mlm_probability}, "
            f"mask_replace_prob={self.mask_replace_prob}, "
            f"random_replace_prob={self.random_replace_prob}, max_length={self.max_length}, "
            f"min_masked={self.min_masked}, seed={self.seed})"
        )

    # A generator pickles as its state, so the collator can go to spawned DataLoader workers.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["generator"] = self.generator.get_state()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        generator = torch.Generator()
        generator.set_state(state.pop("generator"))
        self.__dict__.update(state, generator=generator)

    def _stream(self) -> torch.Generator:
        """This process's generator, reseeded once inside each DataLoader worker."""
        info = torch.utils.data.get_worker_info()
        if info is not None and self._worker != (info.id, info.seed):
            self._worker = (info.id, info.seed)
            self.generator = torch.Generator().manual_seed(
                (self.seed * 1_000_003 + info.seed) % 2**63
            )
        return self.generator

    def __call__(
        self, examples: Sequence[Any], generator: torch.Generator | None = None
    ) -> dict[str, torch.Tensor]:
        batch = self.pad(examples)
        inputs, labels = self.mask(batch, generator=generator)
        return {
            "input_ids": inputs,
            "attention_mask": batch["attention_mask"],
            "token_type_ids": batch["token_type_ids"],
            "labels": labels,
        }

    def pad(self, examples: Sequence[Any]) -> dict[str, torch.Tensor]:
        """Tokenize (if needed) and pad, without masking: ``input_ids``, ``attention_mask``,
        ``token_type_ids``, ``special_tokens_mask`` and ``word_ids`` (``-1`` for None)."""
        if isinstance(examples, str | bytes | Mapping) or not isinstance(examples, Sequence):
            raise TypeError(
                "MLMCollator takes a list of examples (strings, (text, pair) tuples or dicts "
                f"with input_ids), got {type(examples).__name__}"
            )
        if not examples:
            raise ValueError("MLMCollator needs at least one example, got an empty list")
        if all(type(example) is dict and "input_ids" in example for example in examples):
            return self._pad_dicts(examples)  # the DataLoader's usual case, checked cheaply
        kinds = {_example_kind(example) for example in examples}
        if len(kinds) != 1:
            raise TypeError(
                "examples must all be of one kind (strings, (text, pair) tuples or dicts with "
                f"input_ids), got a mix: {sorted(kinds)}"
            )
        kind = kinds.pop()
        if kind not in ("text", "pair", "dict"):
            raise TypeError(
                "each example must be a string, a (text, pair) tuple of strings or a dict with "
                f"input_ids, got {kind}"
            )
        if kind == "dict":
            return self._pad_dicts(examples)
        if kind == "text":
            encoded = self.tokenizer(list(examples), max_length=self.max_length)
        else:
            first, second = zip(*examples, strict=True)
            encoded = self.tokenizer(list(first), list(second), max_length=self.max_length)
        batch = {
            name: torch.as_tensor(encoded[name], dtype=torch.long)
            for name in ("input_ids", "attention_mask", "token_type_ids", "special_tokens_mask")
            if name in encoded
        }
        batch.setdefault("token_type_ids", torch.zeros_like(batch["input_ids"]))
        if self.strategy != "token":
            rows = [_no_none(encoded.word_ids(i)) for i in range(len(examples))]
            batch["word_ids"] = torch.tensor(rows, dtype=torch.long)  # already padded
        return batch

    def _pad_dicts(self, examples: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        ids = [example["input_ids"] for example in examples]
        lengths = [len(row) for row in ids]
        width = max(lengths)
        if width > self.max_length:
            longest = lengths.index(width)
            raise ValueError(
                f"example {longest} has {width} tokens, more than max_length={self.max_length}; "
                "tokenize with truncation (or raise max_length) rather than cut [SEP] off here"
            )
        filled = np.arange(width) < np.array(lengths)[:, None]  # (B, T)
        batch = {
            "input_ids": _pad_rows(ids, filled, self.tokenizer.pad_token_id, "input_ids"),
            "attention_mask": torch.from_numpy(filled.astype(np.int64)),
        }
        for name, fill in (("token_type_ids", 0), ("special_tokens_mask", 1), ("word_ids", -1)):
            present = [name in example for example in examples]
            if any(present) and not all(present):
                raise ValueError(f"{name} is in some examples but not all")
            if all(present):
                rows = [example[name] for example in examples]
                if name == "word_ids":
                    rows = [_no_none(row) for row in rows]
                _check_lengths(rows, lengths, name)
                batch[name] = _pad_rows(rows, filled, fill, name)
        batch.setdefault("token_type_ids", torch.zeros_like(batch["input_ids"]))
        if self.strategy == "whole_word" and "word_ids" not in batch:
            raise ValueError(
                "strategy='whole_word' needs word_ids in every example dict (or pass strings "
                "and let the collator tokenize them)"
            )
        return batch

    def mask(
        self, batch: Mapping[str, torch.Tensor], generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mask a padded batch (from :meth:`pad`) with this collator's strategy and settings."""
        common = dict(
            mask_token_id=self.tokenizer.mask_token_id,
            special_ids=self.tokenizer.all_special_ids,
            vocab_size=self.tokenizer.vocab_size,
            special_tokens_mask=batch.get("special_tokens_mask"),
            mlm_probability=self.mlm_probability,
            mask_replace_prob=self.mask_replace_prob,
            random_replace_prob=self.random_replace_prob,
            min_masked=self.min_masked,
            generator=generator if generator is not None else self._stream(),
        )
        ids = batch["input_ids"]
        if self.strategy == "token":
            return mask_tokens(ids, **common)
        if self.strategy == "whole_word":
            return mask_whole_words(ids, batch["word_ids"], **common)
        return mask_spans(
            ids,
            batch.get("word_ids"),
            geometric_p=self.geometric_p,
            max_span_length=self.max_span_length,
            **common,
        )


def _example_kind(example: Any) -> str:
    if type(example) is dict:  # the common case, checked first: this runs for every example
        return "dict" if "input_ids" in example else "dict without input_ids"
    if isinstance(example, str):
        return "text"
    if (
        isinstance(example, tuple)
        and len(example) == 2
        and all(isinstance(t, str) for t in example)
    ):
        return "pair"
    if isinstance(example, Mapping) and "input_ids" in example:
        return "dict"
    return type(example).__name__


def _no_none(row: Any) -> Any:
    """A word_ids row with ``None`` written as ``-1`` (tensors pass through)."""
    if isinstance(row, torch.Tensor):
        return row
    return [-1 if w is None else w for w in row]


def _check_lengths(rows: Sequence[Any], lengths: Sequence[int], name: str) -> None:
    if list(map(len, rows)) == list(lengths):  # one comparison in C for the usual case
        return
    for i, (row, n) in enumerate(zip(rows, lengths, strict=True)):
        if len(row) != n:
            raise ValueError(f"example {i}: {name} has {len(row)} entries but input_ids has {n}")
