"""The CLM-vs-MLM explorer: one blank, two models, what each one is allowed to read.

:func:`compare_html` draws the sentence twice as token chips: for the masked LM every word
around the ``[MASK]`` is visible; for the causal LM the words after it are greyed out, because
a left-to-right model never reads them. Under each, the top-k candidates with their
probabilities. It takes plain values and is tested without a browser;
:func:`compare_explorer` only wires a text box and a slider to it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from mlmcourse.viz.fill_mask import (
    MASK_COLOR,
    RIGHT_COLOR,
    WRONG_COLOR,
    candidate_bars_html,
    text_and_top_k,
)
from mlmcourse.viz.html import Chip, chips_html, legend_html

__all__ = [
    "compare_explorer",
    "compare_html",
    "compare_predictions",
    "compare_state",
    "compare_view",
]

VISIBLE_COLOR = "#eeeeee"
HIDDEN_COLOR = "#ffffff"


def _column(
    title: str,
    tokens: Sequence[str],
    mask_at: int,
    candidates: Sequence[Mapping[str, Any]],
    *,
    sees_right: bool,
    answer: str | None,
) -> str:
    chips = []
    best = str(candidates[0]["token_str"]) if candidates else ""
    for i, token in enumerate(tokens):
        if i == mask_at:
            color = MASK_COLOR
            if answer is not None and candidates:
                color = RIGHT_COLOR if best.lower() == answer.lower() else WRONG_COLOR
            chips.append(Chip(token, color, below=best, title="the blank to predict"))
        elif i > mask_at and not sees_right:
            chips.append(Chip(token, HIDDEN_COLOR, below="unseen", title="not read by this model"))
        else:
            chips.append(Chip(token, VISIBLE_COLOR, title="read by this model"))
    return (
        '<div style="display:inline-block;vertical-align:top;margin:0 24px 12px 0;'
        f'max-width:560px"><div style="font-size:13px;margin-bottom:4px"><b>{html.escape(title)}'
        f"</b></div>{chips_html(chips)}{candidate_bars_html(candidates, f'top {len(candidates)}')}</div>"
    )


def compare_html(
    tokens: Sequence[str],
    mlm_predictions: Sequence[Mapping[str, Any]],
    clm_predictions: Sequence[Mapping[str, Any]],
    *,
    answer: str | None = None,
    mask_token: str = "[MASK]",
) -> str:
    """Both models' guesses for the one ``mask_token`` in ``tokens``, side by side.

    ``tokens``: the sentence's tokens with exactly one mask (special tokens left out);
    ``mlm_predictions`` / ``clm_predictions``: candidate lists in ``fill_mask``'s format
    (``token_str``, ``score``), e.g. from :func:`mlmcourse.tasks.fill_mask.fill_mask` and
    :func:`mlmcourse.tasks.generation.next_word`. With ``answer``, each model's best guess is coloured
    right or wrong.
    """
    positions = [i for i, t in enumerate(tokens) if t == mask_token]
    if len(positions) != 1:
        raise ValueError(
            f"compare_html needs exactly one {mask_token} in tokens, got {len(positions)}"
        )
    for name, candidates in (
        ("mlm_predictions", mlm_predictions),
        ("clm_predictions", clm_predictions),
    ):
        if isinstance(candidates, Mapping) or any(
            not isinstance(c, Mapping) or "token_str" not in c or "score" not in c
            for c in candidates
        ):
            raise ValueError(
                f"{name} must be a list of dicts with 'token_str' and 'score' (fill_mask's "
                f"format for one mask)"
            )
    mask_at = positions[0]
    left = mask_at
    legend = [("read", VISIBLE_COLOR), ("not read", HIDDEN_COLOR), ("blank", MASK_COLOR)]
    if answer is not None:
        legend += [("right", RIGHT_COLOR), ("wrong", WRONG_COLOR)]
    mlm = _column(
        f"Masked LM: reads all {len(tokens) - 1} other tokens",
        tokens,
        mask_at,
        mlm_predictions,
        sees_right=True,
        answer=answer,
    )
    clm = _column(
        f"Causal LM: reads the {left} token{'s' if left != 1 else ''} to the left",
        tokens,
        mask_at,
        clm_predictions,
        sees_right=False,
        answer=answer,
    )
    return f"<div>{legend_html(legend)}<div>{mlm}{clm}</div></div>"


def compare_predictions(
    mlm: Any, clm: Any, tokenizer: Any, text: str, top_k: int = 5
) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """Run both models on ``text`` (one ``[MASK]``): display tokens and the two candidate lists."""
    from mlmcourse.tasks.fill_mask import fill_mask
    from mlmcourse.tasks.generation import next_word

    mlm_predictions = fill_mask(mlm, tokenizer, text, top_k=top_k)
    if mlm_predictions and not isinstance(mlm_predictions[0], Mapping):
        raise ValueError(f"the explorer compares one [MASK] at a time, got text {text!r}")
    clm_predictions = next_word(clm, tokenizer, text, top_k=top_k)
    hidden = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
    encoding = tokenizer.encode(text)
    tokens = [t for t, i in zip(encoding.tokens, encoding.ids, strict=True) if i not in hidden]
    return tokens, list(mlm_predictions), clm_predictions


def compare_state(mlm: Any, clm: Any, tokenizer: Any, text: str, top_k: int) -> str:
    """What the explorer shows for ``text``: :func:`compare_html`, or why it cannot."""
    try:
        return compare_html(*compare_predictions(mlm, clm, tokenizer, text, top_k))
    except ValueError as exc:  # no [MASK] yet, or two: say so instead of failing
        return f'<div style="color:#a00">{html.escape(str(exc))}</div>'


def compare_view(
    mlm: Any, clm: Any, tokenizer: Any, texts: Sequence[str], *, top_k: int = 5
) -> Any:
    """The explorer for a page without a kernel: a sentence menu and a top-k slider (1-10)."""
    from mlmcourse.viz.static import View

    return View(
        lambda text, top_k: compare_state(mlm, clm, tokenizer, text, top_k),
        text_and_top_k(texts, top_k, owner="compare_view"),
        title="MLM and CLM, side by side",
    )


def compare_explorer(
    mlm: Any,
    clm: Any,
    tokenizer: Any,
    text: str = "[MASK] is the capital of Peifi .",
    top_k: int = 5,
    *,
    examples: Sequence[str] = (),
):
    """Type a sentence with one ``[MASK]``; see the MLM's and the CLM's guesses side by side.

    Displayed in the book, it is :func:`compare_view` of ``text`` and ``examples`` instead."""
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    box = widgets.Text(value=text, description="text", layout=widgets.Layout(width="640px"))
    k = widgets.IntSlider(value=top_k, min=1, max=10, description="top k")
    out = widgets.HTML()

    def redraw(*_: Any) -> None:
        out.value = compare_state(mlm, clm, tokenizer, box.value, k.value)

    box.observe(redraw, names="value")
    k.observe(redraw, names="value")
    redraw()
    static = compare_view(mlm, clm, tokenizer, [text, *examples], top_k=top_k)
    return Explorer([box, k, out], static)
