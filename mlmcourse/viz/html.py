"""Shared HTML building blocks: tokens drawn as coloured chips, with optional labels beneath.

Every widget that shows tokens (tokenizer, masking, fill-mask, NER) draws them with
:func:`chips_html`, so they look alike across the book and are escaped in one place.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Chip",
    "chips_html",
    "legend_html",
    "message_html",
    "show_table",
    "table_html",
    "unknown_words_html",
    "PALETTE",
]

# Colour-blind-friendly pastels (Okabe-Ito hues, lightened) for backgrounds behind dark text.
PALETTE = ["#cfe8f7", "#fde3b3", "#c8ecd9", "#f9d0e3", "#e2d9f3", "#f7f3b0", "#d9d9d9", "#fbd3c7"]


@dataclass(frozen=True)
class Chip:
    """One token to draw: its text, background colour, an optional line beneath and a tooltip."""

    text: str
    color: str = "#eeeeee"
    below: str = ""
    title: str = ""
    group_start: bool = True  # False draws it joined to the previous chip (a word's pieces)


def chips_html(chips: Sequence[Chip], *, caption: str = "") -> str:
    """Render chips in a wrapping row; pieces of one word (``group_start=False``) touch."""
    parts = []
    for chip in chips:
        margin = "0 0 6px 0" if not chip.group_start else "0 0 6px 8px"
        below = (
            f'<div style="font-size:11px;color:#444;margin-top:2px">{html.escape(chip.below)}</div>'
            if chip.below
            else ""
        )
        parts.append(
            f'<div style="display:inline-block;text-align:center;margin:{margin};'
            f'vertical-align:top" title="{html.escape(chip.title, quote=True)}">'
            f'<div style="background:{html.escape(chip.color, quote=True)};border:1px solid #999;'
            f"border-radius:4px;padding:2px 6px;font-family:monospace;font-size:13px;"
            f'white-space:pre">{html.escape(chip.text)}</div>{below}</div>'
        )
    head = f'<div style="font-size:12px;margin-bottom:4px"><b>{html.escape(caption)}</b></div>'
    return f"<div>{head if caption else ''}{''.join(parts)}</div>"


def legend_html(entries: Sequence[tuple[str, str]]) -> str:
    """A one-line legend of ``(label, colour)`` swatches."""
    items = "".join(
        f'<span style="display:inline-block;margin-right:12px;font-size:12px">'
        f'<span style="display:inline-block;width:12px;height:12px;background:{html.escape(c, quote=True)};'
        f'border:1px solid #999;vertical-align:middle;margin-right:4px"></span>{html.escape(label)}</span>'
        for label, c in entries
    )
    return f"<div>{items}</div>"


def unknown_words_html(words: Sequence[str], *, unk_token: str = "[UNK]", why: str = "") -> str:
    """One plain line naming the words read as ``unk_token`` (and ``why``, if given); none: ``""``."""
    if not words:
        return ""
    listed = ", ".join(words)
    reason = f" {why}" if why else ""
    return (
        '<div style="font-size:12px;color:#555;margin-bottom:4px">'
        f"Not in the model's vocabulary (it reads {html.escape(unk_token)} there): "
        f"{html.escape(listed)}.{html.escape(reason)}</div>"
    )


def message_html(message: str) -> str:
    """Why there is nothing to draw, in one line (an explorer shows it instead of raising)."""
    return f'<div style="color:#a00">{html.escape(message)}</div>'


def table_html(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain table: a header row of ``columns``, then ``rows``, every cell escaped (a chapter
    shows a results table with one call)."""
    if any(len(row) != len(columns) for row in rows):
        widths = sorted({len(row) for row in rows})
        raise ValueError(f"every row needs {len(columns)} cells (one per column), got {widths}")
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def show_table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Display :func:`table_html` in the notebook: a chapter's results table in one call, with
    no HTML or Markdown assembled in its cells."""
    from IPython.display import HTML, display

    display(HTML(table_html(columns, rows)))
