"""Fill-mask explorer and predictions table: pure HTML renderers plus thin ipywidgets wiring.

:func:`fill_mask_html` draws the sentence as token chips (each mask labelled with its best
guess) and one bar chart of the top-k candidates per mask; :func:`predictions_table_html`
draws original / masked / predicted rows with right and wrong predictions coloured. Both take
plain Python values, so they are tested without a browser; :func:`fill_mask_explorer` only
wires a text box and a slider to them.

Every explorer that reads the reader's own text says which of its words the model cannot see
(:func:`~mlmcourse.tokenization.stats.unknown_words`, drawn by
:func:`~mlmcourse.viz.html.unknown_words_html`) and, in one line instead of a traceback, why a
text cannot be drawn (:func:`~mlmcourse.viz.html.message_html`).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from mlmcourse.tokenization.stats import unknown_words
from mlmcourse.viz.html import (
    PALETTE,
    Chip,
    chips_html,
    legend_html,
    message_html,
    unknown_words_html,
)

__all__ = [
    "candidate_bars_html",
    "fill_mask_html",
    "predictions_table_html",
    "fill_mask_explorer",
    "fill_mask_state",
    "fill_mask_view",
    "text_and_top_k",
]

MASK_COLOR = PALETTE[1]
RIGHT_COLOR = PALETTE[2]
WRONG_COLOR = PALETTE[3]


def _per_mask(predictions: Sequence[Any]) -> list[list[Mapping[str, Any]]]:
    """fill_mask returns a flat list for one mask and a list of lists for several."""
    if predictions and isinstance(predictions[0], Mapping):
        return [list(predictions)]
    return [list(p) for p in predictions]


def candidate_bars_html(candidates: Sequence[Mapping[str, Any]], title: str) -> str:
    """A titled bar chart of ``{token_str, score}`` candidates (fill-mask or next-word)."""
    rows = []
    for c in candidates:
        width = max(1.0, 100.0 * float(c["score"]))
        rows.append(
            '<div style="display:flex;align-items:center;margin:2px 0;font-size:12px">'
            f'<span style="width:110px;font-family:monospace;text-align:right;'
            f'padding-right:6px">{html.escape(str(c["token_str"]))}</span>'
            f'<span style="display:inline-block;height:12px;width:{width:.1f}%;max-width:220px;'
            f'background:#4c78a8"></span>'
            f'<span style="padding-left:6px">{float(c["score"]):.1%}</span></div>'
        )
    return (
        '<div style="display:inline-block;vertical-align:top;margin:6px 18px 6px 0;'
        f'min-width:260px"><div style="font-size:12px"><b>{html.escape(title)}</b></div>'
        f"{''.join(rows)}</div>"
    )


def fill_mask_html(
    tokens: Sequence[str], predictions: Sequence[Any], *, mask_token: str = "[MASK]"
) -> str:
    """The input tokens as chips (each mask shows its best guess) and a bar chart per mask.

    ``tokens``: the tokenised input (e.g. ``tokenizer.encode(text).tokens``); ``predictions``:
    :func:`mlmcourse.tasks.fill_mask.fill_mask`'s output for it.
    """
    per_mask = _per_mask(predictions)
    n_masks = sum(t == mask_token for t in tokens)
    if n_masks != len(per_mask):
        raise ValueError(
            f"the tokens hold {n_masks} {mask_token} but predictions are for {len(per_mask)} masks"
        )
    chips, k = [], 0
    for token in tokens:
        if token == mask_token:
            best = per_mask[k][0] if per_mask[k] else None
            below = f"#{k + 1}: {best['token_str']}" if best else f"#{k + 1}"
            chips.append(Chip(token, MASK_COLOR, below=below, title="predicted here"))
            k += 1
        else:
            chips.append(Chip(token))
    charts = "".join(
        candidate_bars_html(candidates, f"mask #{i + 1}: top {len(candidates)}")
        for i, candidates in enumerate(per_mask)
    )
    return f"<div>{chips_html(chips)}<div>{charts}</div></div>"


def _table_line(label: str, tokens: Sequence[str], colours: Sequence[str]) -> str:
    chips = [Chip(t, c) for t, c in zip(tokens, colours, strict=True)]
    return (
        '<div style="display:flex;align-items:flex-start"><span style="width:80px;'
        f'font-size:12px;padding-top:3px">{label}</span>{chips_html(chips)}</div>'
    )


def predictions_table_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """Original / masked / predicted tokens for each row of :func:`mlmcourse.tasks.fill_mask.predictions_table`.

    Scored positions are coloured: green where the prediction equals the original, red where
    it does not; the accuracy over the shown rows is in the caption.
    """
    parts, right, total = [], 0, 0
    for i, row in enumerate(rows):
        scored = set(row["scored"])
        ok = {j for j in scored if row["predicted"][j] == row["original"][j]}
        right, total = right + len(ok), total + len(scored)
        n = len(row["original"])
        selected = [MASK_COLOR if j in scored else "#eeeeee" for j in range(n)]
        verdict = [
            (RIGHT_COLOR if j in ok else WRONG_COLOR) if j in scored else "#eeeeee"
            for j in range(n)
        ]
        parts.append(
            f'<div style="margin-bottom:10px"><div style="font-size:12px"><b>sequence '
            f"{i + 1}</b></div>"
            + _table_line("original", row["original"], selected)
            + _table_line("masked", row["masked"], selected)
            + _table_line("predicted", row["predicted"], verdict)
            + "</div>"
        )
    caption = (
        f"{right} of {total} scored positions predicted correctly"
        if total
        else "no scored positions"
    )
    legend = legend_html(
        [("selected for prediction", MASK_COLOR), ("right", RIGHT_COLOR), ("wrong", WRONG_COLOR)]
    )
    return f'<div><div style="font-size:12px"><b>{caption}</b></div>{legend}{"".join(parts)}</div>'


def fill_mask_state(model: Any, tokenizer: Any, text: str, top_k: int) -> str:
    """What the explorer shows for ``text``: :func:`fill_mask_html`, or why it cannot."""
    from mlmcourse.tasks.fill_mask import fill_mask

    try:
        predictions = fill_mask(model, tokenizer, text, top_k=top_k)
        drawn = fill_mask_html(tokenizer.encode(text).tokens, predictions)
    except ValueError as exc:  # e.g. no [MASK] yet: say so instead of failing
        return message_html(str(exc))
    note = unknown_words_html(unknown_words(tokenizer, text), unk_token=tokenizer.unk_token)
    return note + drawn


def text_and_top_k(texts: Sequence[str], top_k: int, *, owner: str) -> list[Any]:
    """The controls of a view that predicts at a blank: a menu of texts, a top-k slider (1-10)."""
    from mlmcourse.viz.static import Control

    if not texts:
        raise ValueError(f"{owner} needs at least one text")
    return [
        Control.of("text", "text", list(texts)),
        Control.of("top_k", "top k", list(range(1, 11)), kind="slider", initial=top_k),
    ]


def fill_mask_view(model: Any, tokenizer: Any, texts: Sequence[str], *, top_k: int = 5) -> Any:
    """The explorer for a page without a kernel: a sentence menu and a top-k slider (1-10)."""
    from mlmcourse.viz.static import View

    return View(
        lambda text, top_k: fill_mask_state(model, tokenizer, text, top_k),
        text_and_top_k(texts, top_k, owner="fill_mask_view"),
        title="The fill-mask explorer",
    )


def fill_mask_explorer(
    model: Any,
    tokenizer: Any,
    text: str = "The capital of [MASK] is [MASK] .",
    top_k: int = 5,
    *,
    examples: Sequence[str] = (),
):
    """A text box (one or more ``[MASK]``) and a top-k slider, redrawing :func:`fill_mask_html`.

    Displayed in the book, it is :func:`fill_mask_view` of ``text`` and ``examples`` instead."""
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    box = widgets.Text(value=text, description="text", layout=widgets.Layout(width="640px"))
    k = widgets.IntSlider(value=top_k, min=1, max=10, description="top k")
    out = widgets.HTML()

    def redraw(*_: Any) -> None:
        out.value = fill_mask_state(model, tokenizer, box.value, k.value)

    box.observe(redraw, names="value")
    k.observe(redraw, names="value")
    redraw()
    return Explorer([box, k, out], fill_mask_view(model, tokenizer, [text, *examples], top_k=top_k))
