"""Sentiment explorer: a classifier's label probabilities for a text the reader writes.

:func:`sentiment_html` draws what :func:`mlmcourse.tasks.classification.classify` returns (the
predicted label and a bar per label), so it is tested without a model or a browser;
:func:`sentiment_state` runs the classifier on a text, and :func:`sentiment_explorer` only
wires a text box (and a menu, when there are several classifiers to compare) to it.

The explorers of several models (this one, the QA explorer) take ``models`` as one
``(model, tokenizer)`` pair or a mapping ``{name: (model, tokenizer)}``:
:func:`~mlmcourse.viz.static.named_models` reads either, and
:func:`~mlmcourse.viz.static.model_controls` is the book's menu of names.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from mlmcourse.tokenization.stats import unknown_words
from mlmcourse.viz.fill_mask import candidate_bars_html
from mlmcourse.viz.html import message_html, unknown_words_html
from mlmcourse.viz.static import model_controls, named_models

__all__ = [
    "sentiment_explorer",
    "sentiment_html",
    "sentiment_state",
    "sentiment_view",
]

EMPTY = "Type a text (a movie review, say) to see how the classifier labels it."


def sentiment_html(scores: Sequence[Mapping[str, Any]]) -> str:
    """The predicted label (the most probable) and one bar per ``{label, score}``, in the order
    given: the labels' own order keeps each bar in its place while the reader types."""
    if not scores:
        raise ValueError("scores is empty: give at least one label's score")
    best = max(scores, key=lambda r: float(r["score"]))
    head = (
        f'<div style="font-size:15px;margin-bottom:4px">predicted: '
        f"<b>{html.escape(str(best['label']))}</b> ({float(best['score']):.1%})</div>"
    )
    bars = [{"token_str": r["label"], "score": r["score"]} for r in scores]
    return f"<div>{head}{candidate_bars_html(bars, 'probability of each label')}</div>"


def _in_label_order(model: Any, ranked: list[dict[str, Any]], labels: Sequence[str] | None) -> list:
    """``classify``'s ranked labels in label-id order, named by ``labels`` when given (instead
    of the model's own names)."""
    ids = {name: i for i, name in model.id2label.items()}
    ordered = sorted(ranked, key=lambda r: ids[r["label"]])
    if labels is None:
        return ordered
    return [{**r, "label": labels[ids[r["label"]]]} for r in ordered]


def sentiment_state(
    model: Any, tokenizer: Any, text: str, *, labels: Sequence[str] | None = None
) -> str:
    """What the explorer shows for ``text``: the unknown words, :func:`sentiment_html`, or why
    it cannot (an empty text, one longer than the model reads)."""
    from mlmcourse.tasks.classification import classify

    if not text.strip():
        return message_html(EMPTY)
    try:
        ranked = classify(model, tokenizer, text, top_k=None)
    except ValueError as exc:  # e.g. too long for the model: say so
        return message_html(str(exc))
    note = unknown_words_html(unknown_words(tokenizer, text), unk_token=tokenizer.unk_token)
    return note + sentiment_html(_in_label_order(model, ranked, labels))


def _checked(models: Any, labels: Sequence[str] | None, owner: str) -> dict[str, tuple]:
    """The named classifiers, each scoring labels (not a regression), as many as ``labels``."""
    named = named_models(models, owner)
    for name, (model, _) in named.items():
        if model.num_labels < 2:
            raise ValueError(f"{owner} draws label probabilities; {name!r} is a regression model")
        if labels is not None and len(labels) != model.num_labels:
            raise ValueError(
                f"{owner}: labels names {len(labels)} labels, but {name!r} has {model.num_labels}"
            )
    return named


def sentiment_view(
    models: Any, texts: Sequence[str], *, labels: Sequence[str] | None = None
) -> Any:
    """The explorer for a page without a kernel: a menu of texts (and of models, if several)."""
    from mlmcourse.viz.static import Control, View

    named = _checked(models, labels, "sentiment_view")
    if not texts:
        raise ValueError("sentiment_view needs at least one text")

    def render(text: str, model: str = next(iter(named))) -> str:
        return sentiment_state(*named[model], text, labels=labels)

    controls = [Control.of("text", "text", list(texts)), *model_controls(named)]
    return View(render, controls, title="The sentiment explorer")


def sentiment_explorer(
    models: Any,
    text: str = "a gripping , beautifully acted film",
    *,
    examples: Sequence[str] = (),
    labels: Sequence[str] | None = None,
):
    """A text box (and a model menu, for several ``models``), redrawing the label probabilities.

    ``models``: one ``(model, tokenizer)`` pair or ``{name: (model, tokenizer)}`` of sequence
    classifiers. ``labels`` names the label ids for all of them (a checkpoint from the Hub may
    call them ``LABEL_0``, ``LABEL_1``). Displayed in the book, it is :func:`sentiment_view` of
    ``text`` and ``examples`` instead.
    """
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    named = _checked(models, labels, "sentiment_explorer")
    box = widgets.Text(
        value=text,
        description="text",
        placeholder="type a review, then press Enter",
        continuous_update=False,
        layout=widgets.Layout(width="640px"),
    )
    menu = widgets.Dropdown(options=list(named), description="model")
    out = widgets.HTML()

    def redraw(*_: Any) -> None:
        out.value = sentiment_state(*named[menu.value], box.value, labels=labels)

    box.observe(redraw, names="value")
    menu.observe(redraw, names="value")
    redraw()
    live = [box, menu, out] if len(named) > 1 else [box, out]
    return Explorer(live, sentiment_view(named, [text, *examples], labels=labels))
