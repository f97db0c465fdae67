"""NER explorer: text with its entities highlighted by type, and the thin ipywidgets wiring.

:func:`entities_html` takes the text and the spans :func:`mlmcourse.tasks.ner.predict_entities`
returns (plain dicts with character offsets), so it is tested without a model or a browser;
:func:`ner_explorer` only wires a text box and a "constrained decoding" switch to it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mlmcourse.tokenization.stats import unknown_words
from mlmcourse.viz.html import PALETTE, legend_html, message_html, unknown_words_html

__all__ = [
    "confusion_matrix",
    "entities_html",
    "entity_colors",
    "ner_explorer",
    "ner_state",
    "ner_view",
    "plot_confusion_matrix",
    "plot_learning_curve",
]


def entity_colors(types: Iterable[str]) -> dict[str, str]:
    """A fixed colour per entity type, in the order given (so PER keeps its colour as you type)."""
    ordered = list(dict.fromkeys(types))
    return {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(ordered)}


def _types_of_labels(labels: Iterable[str]) -> list[str]:
    """``["O", "B-PER", "I-PER", "B-LOC", ...] -> ["PER", "LOC"]``, first-seen order."""
    return list(dict.fromkeys(label[2:] for label in labels if label != "O"))


def _check_spans(text: str, entities: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    for e in entities:
        missing = {"entity_group", "start", "end"} - set(e)
        if missing:
            raise ValueError(f"entity {dict(e)} lacks {sorted(missing)}")
    spans = sorted(entities, key=lambda e: (e["start"], e["end"]))
    previous_end = 0
    for e in spans:
        start, end = e["start"], e["end"]
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
            raise ValueError(
                f"entity {e['entity_group']!r} has offsets {start}:{end}, outside the text "
                f"of {len(text)} characters (or empty)"
            )
        if start < previous_end:
            raise ValueError(f"entities overlap at characters {start}:{previous_end}")
        previous_end = end
    return spans


def _score_text(score: Any) -> str:
    if score is None or math.isnan(float(score)):  # float(): NumPy and torch scalars too
        return ""
    return f"{float(score):.2f}"


def entities_html(
    text: str,
    entities: Sequence[Mapping[str, Any]],
    *,
    types: Iterable[str] | None = None,
    show_scores: bool = True,
    caption: str = "",
) -> str:
    """Render ``text`` with each entity span highlighted in its type's colour, plus a legend.

    ``entities`` are ``{entity_group, start, end, score}`` dicts (``word`` is not needed: the
    text between the offsets is shown). ``types`` fixes the colour order (pass the model's
    labels' types so colours stay put); otherwise types are coloured in order of appearance.
    Everything is HTML-escaped: the text is the user's.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    spans = _check_spans(text, entities)
    known = list(types) if types is not None else []
    colors = entity_colors(known + [e["entity_group"] for e in spans])
    parts, cursor = [], 0
    for e in spans:
        parts.append(html.escape(text[cursor : e["start"]]))
        kind = str(e["entity_group"])
        score = _score_text(e.get("score")) if show_scores else ""
        tag = html.escape(kind + (f" {score}" if score else ""))
        title = html.escape(f"{kind}, score {score}" if score else kind, quote=True)
        parts.append(
            f'<mark title="{title}" style="background:{colors[kind]};border:1px solid #999;'
            f'border-radius:4px;padding:1px 3px;margin:0 1px">'
            f"{html.escape(text[e['start'] : e['end']])}"
            f'<span style="font-size:10px;font-weight:bold;color:#333;margin-left:4px;'
            f'font-family:monospace">{tag}</span></mark>'
        )
        cursor = e["end"]
    parts.append(html.escape(text[cursor:]))
    body = (
        '<div style="line-height:2.1;font-size:15px;white-space:pre-wrap">'
        + "".join(parts)
        + "</div>"
    )
    found = f"{len(spans)} entit{'y' if len(spans) == 1 else 'ies'}" if spans else "no entity found"
    head = f"<b>{html.escape(caption)}</b> " if caption else ""
    summary = f'<div style="font-size:12px;color:#444;margin-bottom:4px">{head}{found}</div>'
    legend = legend_html([(t, c) for t, c in colors.items()]) if colors else ""
    return f"<div>{summary}{body}{legend}</div>"


# An invented name is no word of the vocabulary: that is the point, so the note says so.
NEW_NAMES = "A new name is meant to be unknown: the model judges it from its context."


def ner_state(model: Any, tokenizer: Any, text: str, constrained: bool) -> str:
    """What the NER explorer shows for ``text``: :func:`entities_html`, or why it cannot."""
    from mlmcourse.tasks.ner import predict_entities

    id2label = getattr(model, "id2label", None) or {}
    types = _types_of_labels(id2label[i] for i in sorted(id2label))  # colours fixed per type
    try:
        entities = predict_entities(model, tokenizer, text, constrained=constrained)
        drawn = entities_html(text, entities, types=types)
    except ValueError as exc:  # e.g. a text longer than the model takes: say so
        return message_html(str(exc))
    unknown = unknown_words(tokenizer, text)
    return unknown_words_html(unknown, unk_token=tokenizer.unk_token, why=NEW_NAMES) + drawn


def ner_view(model: Any, tokenizer: Any, texts: Sequence[str], *, constrained: bool = True) -> Any:
    """The NER explorer for a page without a kernel: a sentence menu and the decoding switch."""
    from mlmcourse.viz.static import Control, View

    if not texts:
        raise ValueError("ner_view needs at least one text")
    controls = [
        Control.of("text", "text", list(texts)),
        Control(
            "constrained",
            "BIO-constrained decoding",
            [("off", False), ("on", True)],
            "toggle",
            int(constrained),
        ),
    ]
    return View(
        lambda text, constrained: ner_state(model, tokenizer, text, constrained),
        controls,
        title="The NER explorer",
    )


def ner_explorer(
    model: Any,
    tokenizer: Any,
    initial_text: str = "Barack Obama visited New York with the people of Google .",
    *,
    constrained: bool = True,
    examples: Sequence[str] = (),
):
    """A text box and a decoding switch, redrawing the entities of the text as you edit it.

    The first rendering happens before the widget is returned. Displayed in the book, it is
    :func:`ner_view` of ``initial_text`` and ``examples`` instead.
    """
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    box = widgets.Textarea(
        value=initial_text,
        description="text",
        continuous_update=False,
        layout=widgets.Layout(width="640px", height="60px"),
    )
    switch = widgets.Checkbox(value=constrained, description="BIO-constrained decoding")
    out = widgets.HTML()

    def redraw(*_: Any) -> None:
        out.value = ner_state(model, tokenizer, box.value, switch.value)

    box.observe(redraw, names="value")
    switch.observe(redraw, names="value")
    redraw()
    static = ner_view(model, tokenizer, [initial_text, *examples], constrained=constrained)
    return Explorer([box, switch, out], static)


def confusion_matrix(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    labels: Sequence[str],
) -> list[list[int]]:
    """Word-level counts ``matrix[gold][predicted]`` over ``labels`` (rows: gold, columns: predicted).

    Entity F1 says *how often* the model is wrong; this says *how*: which types are mixed up,
    and whether errors are missed entities (a gold entity row, ``O`` column) or inventions. A
    label outside ``labels`` or sentences of unequal lengths are errors, not silently dropped.
    """
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} sentences but y_pred has {len(y_pred)}")
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for k, (gold, pred) in enumerate(zip(y_true, y_pred, strict=True)):
        if len(gold) != len(pred):
            raise ValueError(f"sentence {k}: {len(gold)} gold tags but {len(pred)} predicted")
        for g, p in zip(gold, pred, strict=True):
            for tag in (g, p):
                if tag not in index:
                    raise ValueError(f"sentence {k}: label {tag!r} is not in {list(labels)}")
            matrix[index[g]][index[p]] += 1
    return matrix


def plot_confusion_matrix(
    matrix: Sequence[Sequence[int]], labels: Sequence[str], *, ax: Any = None, title: str = ""
) -> Any:
    """Draw :func:`confusion_matrix`'s counts, row-normalised colours and the raw counts written in.

    Rows are normalised for the colour (so the rare entity rows are as readable as ``O``'s);
    the numbers are the counts. Returns the matplotlib ``Axes``.
    """
    import matplotlib.pyplot as plt

    if len(matrix) != len(labels) or any(len(row) != len(labels) for row in matrix):
        raise ValueError(f"matrix must be {len(labels)} x {len(labels)} (one row/column per label)")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.7 * len(labels), 0.8 + 0.6 * len(labels)))
    rates = [[c / max(1, sum(row)) for c in row] for row in matrix]
    ax.imshow(rates, cmap="Blues", vmin=0.0, vmax=1.0)
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            color = "white" if rates[i][j] > 0.6 else "black"
            ax.text(j, i, str(count), ha="center", va="center", fontsize=8, color=color)
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    if title:
        ax.set_title(title)
    return ax


def plot_learning_curve(
    curves: Mapping[str, Mapping[int, float]],
    *,
    ax: Any = None,
    ylabel: str = "entity F1",
    baseline: float | None = None,
    baseline_label: str = "baseline",
    errors: Mapping[str, Mapping[int, float]] | None = None,
) -> Any:
    """Score against training-set size (log x axis), one line per run name, e.g. pretrained/scratch.

    ``curves`` maps a name to ``{num_sentences: score}``; ``errors``, if given, the same names
    and sizes to a spread (a standard deviation over seeds), drawn as error bars around a mean
    curve. ``baseline`` draws a dashed line. Returns the matplotlib ``Axes``.
    """
    import matplotlib.pyplot as plt

    if not curves or any(not points for points in curves.values()):
        raise ValueError("curves must map each name to at least one (size, score) point")
    if errors is not None and any(set(errors.get(n, {})) != set(p) for n, p in curves.items()):
        raise ValueError("errors must give a spread for every name and size of curves")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    for name, points in curves.items():
        sizes = sorted(points)
        scores = [points[n] for n in sizes]
        if errors is None:
            ax.plot(sizes, scores, marker="o", label=name)
        else:
            ax.errorbar(sizes, scores, yerr=[errors[name][n] for n in sizes], marker="o",
                        capsize=3, label=name)  # fmt: skip
        for n in sizes:
            ax.annotate(
                f"{points[n]:.2f}",
                (n, points[n]),
                textcoords="offset points",
                xytext=(0, 6),
                ha="center",
                fontsize=8,
            )
    if baseline is not None:
        ax.axhline(baseline, color="grey", linestyle="--", label=baseline_label)
    ax.set_xscale("log")
    ax.set_xlabel("training sentences (log scale)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax
