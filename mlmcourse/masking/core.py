"""What every masking strategy shares, and BERT's token masking built on it.

A strategy only *chooses*: given which tokens may be targets (a :class:`Draw`), it returns the
targets and one uniform number per token that decides the target's fate. :func:`mask_batch` does the rest, the
same for every strategy: it protects special tokens and padding, applies the 80/10/10
replacement (:class:`Replacement`) and writes the ``labels``. :func:`mask_with` is its entry
point for a user's values, which it checks first; a collator checks its settings once, when it
is built, and calls :func:`mask_batch` for every batch.

:func:`choose_each` is BERT's rule (each unit a target on its own); :func:`mask_tokens` is that
rule over tokens. Whole-word masking is the same rule over words (``strategies.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch

from mlmcourse.utils.checks import (
    ConfigError,
    WrongTypeError,
    check_int,
    check_positive_int,
    check_probability,
)
from mlmcourse.utils.labels import IGNORE_INDEX

__all__ = [
    "IGNORE_INDEX",
    "Choose",
    "Draw",
    "MaskingSettings",
    "Replacement",
    "check_count",
    "check_ratios",
    "check_same_shape",
    "check_setting",
    "choose_each",
    "choose_tokens",
    "ensure_min_selected",
    "mask_batch",
    "mask_tokens",
    "mask_with",
]


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def check_setting(check: Callable[[Any, str], Any], value: Any, name: str, expected: str) -> Any:
    """``check(value, name)``, whose failure says what masking expected: "must be ...".

    Every bad masking setting is a ``ValueError`` (:class:`WrongTypeError` or
    :class:`ConfigError`) saying what was expected (the masking widget shows that message
    instead of a blank output when its sliders add up to more than 1).
    """
    try:
        return check(value, name)
    except (WrongTypeError, ConfigError) as exc:
        raise type(exc)(f"{name} must be {expected}, got {value!r:.80}") from None


def check_ratios(
    mlm_probability: Any, mask_replace_prob: Any, random_replace_prob: Any
) -> tuple[float, float, float]:
    """The three rates as floats: each a probability, and the two replacements at most 1.

    The one place that says so: the collators, :class:`MaskingSettings` and the pretraining config
    (whose keys have these names) all check here."""
    rates = [
        check_setting(check_probability, value, name, "a probability in [0, 1]")
        for value, name in (
            (mlm_probability, "mlm_probability"),
            (mask_replace_prob, "mask_replace_prob"),
            (random_replace_prob, "random_replace_prob"),
        )
    ]
    if rates[1] + rates[2] > 1.0 + 1e-9:
        raise ConfigError(
            "mask_replace_prob + random_replace_prob must be at most 1 (the rest of the selected "
            f"tokens are kept unchanged), got {rates[1]} + {rates[2]} = "
            f"{rates[1] + rates[2]:g}: lower one of them"
        )
    return rates[0], rates[1], rates[2]


def check_count(value: Any, name: str) -> int:
    """``value`` as an int >= 0 (``min_masked``, a seed)."""
    at_least_zero = functools.partial(check_int, minimum=0)
    return check_setting(at_least_zero, value, name, "a non-negative int")


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


def check_same_shape(tensor: Any, like: torch.Tensor, name: str) -> torch.Tensor:
    """``tensor`` shaped like the ``(B, T)`` batch ``like``, on its device."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.shape[-1] != like.shape[-1] or tensor.numel() != like.numel():
        raise ValueError(
            f"{name} must have the shape of input_ids {tuple(like.shape)}, "
            f"got {tuple(tensor.shape)}"
        )
    return tensor.reshape(like.shape).to(like.device)


def _check_generator(generator: Any, ids: torch.Tensor) -> None:
    if generator is None:
        return
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    if generator.device.type != ids.device.type:
        raise ValueError(
            f"generator is on {generator.device} but input_ids on {ids.device}; make it "
            "with torch.Generator(device=input_ids.device)"
        )


def _id_tuple(special_ids: Any) -> tuple[int, ...]:
    if isinstance(special_ids, torch.Tensor):
        special_ids = special_ids.tolist()
    if isinstance(special_ids, str | bytes) or not isinstance(special_ids, Iterable):
        raise WrongTypeError(f"special_ids must be a collection of ids, got {special_ids!r:.80}")
    return tuple(check_int(i, "each of special_ids") for i in special_ids)


# --------------------------------------------------------------------------------------------
# The 80/10/10 replacement, the same for every strategy
# --------------------------------------------------------------------------------------------


class Replacement:
    """What the 80/10/10 step needs, validated once: ids, vocabulary and ratios."""

    def __init__(
        self,
        *,
        mask_token_id: Any,
        special_ids: Iterable[int],
        vocab_size: Any,
        mask_replace_prob: float,
        random_replace_prob: float,
    ):
        vocab_size = check_setting(check_positive_int, vocab_size, "vocab_size", "a positive int")
        mask_token_id = check_int(mask_token_id, "mask_token_id")
        if not 0 <= mask_token_id < vocab_size:
            raise ConfigError(
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
        selectable = self.ordinary.to(input_ids.device)[input_ids]  # (B, T)
        if special_tokens_mask is not None:
            selectable &= special_tokens_mask == 0
        return selectable

    def check_ids(self, input_ids: torch.Tensor) -> None:
        """Refuse ids outside the vocabulary (a user's tensor; a collator's are its tokenizer's)."""
        if input_ids.numel():
            low, high = (int(v) for v in torch.aminmax(input_ids))
            if low < 0 or high >= self.vocab_size:
                raise ValueError(
                    f"input_ids must be in [0, vocab_size={self.vocab_size}), "
                    f"got values from {low} to {high}"
                )

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


def _replacement(
    mask_token_id: Any,
    special_ids: tuple[int, ...],
    vocab_size: Any,
    mask_replace_prob: float,
    random_replace_prob: float,
) -> Replacement:
    """The :class:`Replacement` of these settings, the ids made Python ints first (a tensor,
    a list or a float must not reach the cache as a key)."""
    vocab_size = check_setting(check_positive_int, vocab_size, "vocab_size", "a positive int")
    mask_token_id = check_int(mask_token_id, "mask_token_id")
    return _cached_replacement(
        mask_token_id, special_ids, vocab_size, mask_replace_prob, random_replace_prob
    )


@functools.lru_cache(maxsize=32)
def _cached_replacement(
    mask_token_id: int,
    special_ids: tuple[int, ...],
    vocab_size: int,
    mask_replace_prob: float,
    random_replace_prob: float,
) -> Replacement:
    """Built once per setting: a training loop masks every step with the same tokenizer."""
    return Replacement(
        mask_token_id=mask_token_id,
        special_ids=special_ids,
        vocab_size=vocab_size,
        mask_replace_prob=mask_replace_prob,
        random_replace_prob=random_replace_prob,
    )


# --------------------------------------------------------------------------------------------
# One pipeline for every strategy
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Draw:
    """What a strategy's rule chooses from: the tokens that may be targets, and how many."""

    selectable: torch.Tensor  # (B, T) bool: not special, not padding
    mlm_probability: float
    min_masked: int
    generator: torch.Generator | None

    def uniform(self, shape: tuple[int, ...]) -> torch.Tensor:
        """Uniform numbers in [0, 1) of ``shape``, from the generator, on the batch's device."""
        return torch.rand(shape, generator=self.generator, device=self.selectable.device)


# A strategy's rule: Draw -> (selected, outcome), both (B, T); ``outcome`` is a uniform draw
# per position that decides a target's 80/10/10 fate.
Choose = Callable[[Draw], tuple[torch.Tensor, torch.Tensor]]


@dataclass(frozen=True, kw_only=True)
class MaskingSettings:
    """A tokenizer's ids and the masking rates, checked once, when the settings are made.

    ``special_ids`` (the tokenizer's ``all_special_ids``, which include ``[PAD]``) are never
    targets. A target becomes ``[MASK]`` with probability ``mask_replace_prob``, a random
    non-special id with probability ``random_replace_prob``, and stays unchanged otherwise;
    each row gets at least ``min_masked`` targets (fewer if it has fewer ordinary tokens).
    """

    mask_token_id: int
    special_ids: tuple[int, ...]
    vocab_size: int
    mlm_probability: float = 0.15
    mask_replace_prob: float = 0.8
    random_replace_prob: float = 0.1
    min_masked: int = 0

    def __post_init__(self) -> None:
        rates = check_ratios(self.mlm_probability, self.mask_replace_prob, self.random_replace_prob)
        checked = {
            "mlm_probability": rates[0],
            "mask_replace_prob": rates[1],
            "random_replace_prob": rates[2],
            "special_ids": _id_tuple(self.special_ids),
            "vocab_size": check_setting(
                check_positive_int, self.vocab_size, "vocab_size", "a positive int"
            ),
            "mask_token_id": check_int(self.mask_token_id, "mask_token_id"),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        self.replacement()  # mask_token_id within the vocabulary, ids left to draw from
        object.__setattr__(self, "min_masked", check_count(self.min_masked, "min_masked"))

    def replacement(self) -> Replacement:
        """The 80/10/10 step of these settings (built once per setting: a loop masks every
        step with the same tokenizer)."""
        return _cached_replacement(
            self.mask_token_id,
            self.special_ids,
            self.vocab_size,
            self.mask_replace_prob,
            self.random_replace_prob,
        )


def mask_with(
    input_ids: torch.Tensor,
    choose: Choose,
    settings: MaskingSettings,
    *,
    special_tokens_mask: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mask ``input_ids`` (``(T,)`` or ``(B, T)``) at the targets that ``choose`` picks.

    The entry point for a user's values: it checks them, then runs :func:`mask_batch` with the
    ``settings`` (:class:`MaskingSettings`, checked when they were made). The tokens
    ``special_tokens_mask`` marks are never selectable either. Returns new ``(inputs, labels)``
    shaped like ``input_ids``: ``labels`` is the original id at targets and ``-100`` elsewhere.
    ``generator`` (on ``input_ids``' device) makes the result repeatable.
    """
    if not isinstance(settings, MaskingSettings):
        raise TypeError(f"settings must be MaskingSettings, got {type(settings).__name__}")
    ids = _as_batch(input_ids)  # (B, T)
    _check_generator(generator, ids)
    replacement = settings.replacement()
    replacement.check_ids(ids)
    if special_tokens_mask is not None:
        special_tokens_mask = check_same_shape(special_tokens_mask, ids, "special_tokens_mask")
    inputs, labels = mask_batch(
        ids,
        choose,
        replacement,
        special_tokens_mask=special_tokens_mask,
        mlm_probability=settings.mlm_probability,
        min_masked=settings.min_masked,
        generator=generator,
    )
    return inputs.reshape(input_ids.shape), labels.reshape(input_ids.shape)


def mask_batch(
    input_ids: torch.Tensor,
    choose: Choose,
    replacement: Replacement,
    *,
    special_tokens_mask: torch.Tensor | None = None,
    mlm_probability: float = 0.15,
    min_masked: int = 0,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The pipeline every strategy shares, over a ``(B, T)`` batch of checked values.

    Special tokens and padding are never selectable; ``choose`` picks the targets and a uniform
    number per position that decides each one's fate; the replacement corrupts them and
    writes the labels.
    """
    selectable = replacement.selectable(input_ids, special_tokens_mask)  # (B, T)
    draw = Draw(selectable, mlm_probability, min_masked, generator)
    selected, outcome = choose(draw)  # (B, T) each
    return replacement.apply(input_ids, selected, outcome, generator)


def ensure_min_selected(
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


# --------------------------------------------------------------------------------------------
# BERT's rule, and token masking
# --------------------------------------------------------------------------------------------


def choose_each(available: torch.Tensor, draw: Draw) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's rule: each available unit ``(B, U)`` is a target on its own, with probability
    ``mlm_probability``; rows short of ``min_masked`` get the units with the smallest keys.
    Returns the chosen units and a uniform number per unit for its 80/10/10 fate."""
    key = draw.uniform(available.shape)  # (B, U): a target if key < p
    chosen = available & (key < draw.mlm_probability)
    if draw.min_masked:
        chosen = ensure_min_selected(chosen, available, key, draw.min_masked)
    return chosen, draw.uniform(available.shape)  # (B, U): each one's fate


def choose_tokens(draw: Draw) -> tuple[torch.Tensor, torch.Tensor]:
    """Token masking's rule: BERT's rule over the selectable tokens."""
    return choose_each(draw.selectable, draw)


def mask_tokens(
    input_ids: torch.Tensor,
    *,
    special_tokens_mask: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    **settings: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: each token is a target with probability ``mlm_probability``.

    ``settings`` are the fields of :class:`MaskingSettings`: ``mask_token_id``,
    ``special_ids`` and ``vocab_size`` (required), ``mlm_probability`` (0.15),
    ``mask_replace_prob`` (0.8), ``random_replace_prob`` (0.1) and ``min_masked`` (0).
    ``min_masked`` guarantees that many targets per row (fewer if the row has fewer ordinary
    tokens), so a short sentence still contributes to the loss. ``special_tokens_mask`` and
    ``generator`` are :func:`mask_with`'s.

    Returns ``(inputs, labels)`` shaped like ``input_ids``: ``labels`` is the original id at
    the targets and ``-100`` elsewhere.
    """
    return mask_with(
        input_ids,
        choose_tokens,
        MaskingSettings(**settings),
        special_tokens_mask=special_tokens_mask,
        generator=generator,
    )
