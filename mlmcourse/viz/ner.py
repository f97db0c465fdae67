"""NER explorer: text with its entities highlighted by type, and the thin ipywidgets wiring.

:func:`entities_html` takes the text and the spans :func:`mlmcourse.ner.predict_entities`
returns (plain dicts with character offsets), so it is tested without a model or a browser;
:func:`ner_explorer` only wires a text box and a "constrained decoding" switch to it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mlmcourse.viz.html import PALETTE, legend_html

__all__ = ["entities_html", "entity_colors", "ner_explorer"]


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


def ner_explorer(
    model: Any,
    tokenizer: Any,
    initial_text: str = "Barack Obama visited New York with the people of Google .",
    *,
    constrained: bool = True,
):
    """A text box and a decoding switch, redrawing the entities of the text as you edit it.

    The first rendering happens before the widget is returned, so the static book shows the
    entities of ``initial_text``.
    """
    import ipywidgets as widgets

    from mlmcourse.ner import predict_entities

    id2label = getattr(model, "id2label", None) or {}
    types = _types_of_labels(id2label[i] for i in sorted(id2label))  # colours fixed per type
    box = widgets.Textarea(
        value=initial_text,
        description="text",
        continuous_update=False,
        layout=widgets.Layout(width="640px", height="60px"),
    )
    switch = widgets.Checkbox(value=constrained, description="BIO-constrained decoding")
    out = widgets.HTML()

    def redraw(*_: Any) -> None:
        try:
            entities = predict_entities(model, tokenizer, box.value, constrained=switch.value)
            out.value = entities_html(box.value, entities, types=types)
        except ValueError as exc:  # e.g. a text longer than the model takes: say so
            out.value = f'<div style="color:#a00">{html.escape(str(exc))}</div>'

    box.observe(redraw, names="value")
    switch.observe(redraw, names="value")
    redraw()
    return widgets.VBox([box, switch, out])
