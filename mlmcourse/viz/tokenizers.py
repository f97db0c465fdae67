"""Tokenizer explorer: several tokenizers' tokens side by side, and the comparison plot.

:func:`encoding_chips` turns one :class:`~mlmcourse.tokenization.Encoding` into chips (one
colour per word, the pieces of a word drawn touching, the id beneath, ``[UNK]`` in red);
:func:`compare_tokenizers_html` lays out one row per tokenizer. Both are pure functions, tested
without a browser; :func:`tokenizer_explorer` only wires a text box to them.
:func:`comparison_figure` draws the chapter's bar charts from plain numbers.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from mlmcourse.viz.html import PALETTE, Chip, chips_html, legend_html

__all__ = [
    "SPECIAL_COLOR",
    "UNK_COLOR",
    "comparison_figure",
    "compare_tokenizers_html",
    "encoding_chips",
    "tokenizer_explorer",
    "tokenizer_view",
    "words_html",
]

SPECIAL_COLOR = "#d9d9d9"  # [CLS], [SEP], [PAD]: grey, they carry no word
UNK_COLOR = "#f4a3a3"  # [UNK]: red, a word the model cannot see
_WORD_COLORS = [c for c in PALETTE if c != SPECIAL_COLOR]


def encoding_chips(encoding: Any, *, unk_token: str = "[UNK]") -> list[Chip]:
    """One chip per token: colour by word, pieces of one word joined, the id beneath.

    ``encoding`` needs ``tokens``, ``ids``, ``word_ids`` and ``special_tokens_mask`` (an
    :class:`~mlmcourse.tokenization.Encoding`). A new word starts whenever the word id or the
    text of a pair changes, so the colours alternate word by word.
    """
    fields = ("tokens", "ids", "word_ids", "special_tokens_mask")
    missing = [f for f in fields if not hasattr(encoding, f)]
    if missing:
        raise TypeError(f"expected an Encoding with {list(fields)}, got one without {missing}")
    chips, word_number, previous = [], -1, None
    offsets = getattr(encoding, "offsets", None) or [None] * len(encoding.tokens)
    sequence_ids = getattr(encoding, "sequence_ids", None) or [0] * len(encoding.tokens)
    for token, token_id, word, special, span, seq in zip(
        encoding.tokens,
        encoding.ids,
        encoding.word_ids,
        encoding.special_tokens_mask,
        offsets,
        sequence_ids,
        strict=True,
    ):
        key = None if word is None else (seq, word)
        continues = key is not None and key == previous
        if key is not None and not continues:
            word_number += 1
        previous = key
        if special or word is None:
            color, title = SPECIAL_COLOR, "special token"
        elif token == unk_token:
            color, title = UNK_COLOR, f"word {word}: not in the vocabulary"
        else:
            color = _WORD_COLORS[word_number % len(_WORD_COLORS)]
            title = f"word {word}"
        if span is not None and not special and word is not None:
            title += f", characters {span[0]}:{span[1]}"
        chips.append(
            Chip(token, color=color, below=str(token_id), title=title, group_start=not continues)
        )
    return chips


def words_html(chips: Sequence[Chip]) -> str:
    """Draw chips with :func:`chips_html`, one unbreakable box per word.

    A line break may fall between words but never inside one, so a word's pieces stay together.
    """
    groups: list[list[Chip]] = []
    for chip in chips:
        if chip.group_start or not groups:
            groups.append([])
        groups[-1].append(chip)
    return "".join(
        f'<div style="display:inline-block;white-space:nowrap;vertical-align:top">'
        f"{chips_html(group)}</div>"
        for group in groups
    )


def compare_tokenizers_html(text: str, tokenizers: Mapping[str, Any]) -> str:
    """One row of chips per tokenizer for ``text``, each captioned with its counts.

    A bad text (empty, say) is shown as the tokenizer's own error message, not raised, since
    this backs a text box a reader types into.
    """
    if not tokenizers:
        raise ValueError("compare_tokenizers_html needs at least one tokenizer")
    rows = []
    for name, tokenizer in tokenizers.items():
        try:
            enc = tokenizer.encode(text)
        except (TypeError, ValueError) as exc:
            rows.append(
                f'<div style="color:#a00;margin:4px 0">{html.escape(name)}: '
                f"{html.escape(str(exc))}</div>"
            )
            continue
        words = len({w for w in enc.word_ids if w is not None})
        pieces = sum(1 - s for s in enc.special_tokens_mask)
        unknown = sum(t == tokenizer.unk_token for t in enc.tokens)
        caption = (
            f"{name} (vocabulary {tokenizer.vocab_size:,}): {pieces} tokens for {words} words, "
            f"{unknown} [UNK]"
        )
        head = f'<div style="font-size:12px;margin-bottom:4px"><b>{html.escape(caption)}</b></div>'
        rows.append(f'<div style="margin:6px 0">{head}{words_html(encoding_chips(enc))}</div>')
    legend = legend_html(
        [("one colour per word; pieces of a word touch", _WORD_COLORS[0]), ("[UNK]", UNK_COLOR)]
        + [("[CLS] / [SEP]", SPECIAL_COLOR)]
    )
    return f"<div>{''.join(rows)}{legend}</div>"


def tokenizer_view(tokenizers: Mapping[str, Any], texts: Sequence[str]) -> Any:
    """The explorer for a page without a kernel: a menu of texts, each drawn by
    :func:`compare_tokenizers_html`."""
    from mlmcourse.viz.static import Control, View

    if not texts:
        raise ValueError("tokenizer_view needs at least one text")
    return View(
        lambda text: compare_tokenizers_html(text, tokenizers),
        [Control.of("text", "text", list(texts))],
        title="The tokenizer explorer",
    )


def tokenizer_explorer(
    tokenizers: Mapping[str, Any],
    initial_text: str = "Marie Skłodowska-Curie discovered polonium in Paris.",
    *,
    examples: Sequence[str] = (),
):
    """A text box; every edit redraws each tokenizer's tokens side by side.

    The first drawing happens before the widget is returned. Displayed in the book, it is
    :func:`tokenizer_view` of ``initial_text`` and ``examples`` instead.
    """
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    box = widgets.Text(
        value=initial_text,
        description="text",
        continuous_update=False,
        layout=widgets.Layout(width="640px"),
    )
    out = widgets.HTML()

    def redraw(*_: Any) -> None:
        out.value = compare_tokenizers_html(box.value, tokenizers)

    box.observe(redraw, names="value")
    redraw()
    return Explorer([box, out], tokenizer_view(tokenizers, [initial_text, *examples]))


def _percent(value: float) -> str:
    return f"{value:.1%}" if value == 0 or value >= 0.01 else f"{value:.2%}"


def comparison_figure(rows: Sequence[Mapping[str, Any]]):
    """Bar charts of OOV rate, tokens per word and vocabulary size, grouped by corpus.

    Each row is ``{"corpus", "tokenizer", "oov_rate", "tokens_per_word", "vocab_size"}``.
    """
    import matplotlib.pyplot as plt

    needed = {"corpus", "tokenizer", "oov_rate", "tokens_per_word", "vocab_size"}
    for row in rows:
        if needed - set(row):
            raise ValueError(f"row {dict(row)} lacks {sorted(needed - set(row))}")
    if not rows:
        raise ValueError("comparison_figure needs at least one row")
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    names = list(dict.fromkeys(r["tokenizer"] for r in rows))
    panels = [  # (key, title, label format, log scale)
        ("oov_rate", "words that became [UNK] (OOV rate)", _percent, False),
        ("tokens_per_word", "tokens per word", lambda v: f"{v:.2f}", False),
        ("vocab_size", "vocabulary size (log scale)", lambda v: f"{v:,.0f}", True),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout="constrained")
    width = 0.8 / len(names)
    for ax, (key, title, fmt, log) in zip(axes, panels, strict=True):
        for j, name in enumerate(names):
            xs, values = [], []
            for i, corpus in enumerate(corpora):
                match = [r for r in rows if r["corpus"] == corpus and r["tokenizer"] == name]
                if match:
                    xs.append(i + (j - (len(names) - 1) / 2) * width)
                    values.append(float(match[0][key]))
            bars = ax.bar(
                xs,
                values,
                width,
                label=name,
                color=_WORD_COLORS[j % len(_WORD_COLORS)],
                edgecolor="#555",
            )
            ax.bar_label(bars, labels=[fmt(v) for v in values], fontsize=7, padding=1)
        if log:
            ax.set_yscale("log")
        elif key == "oov_rate":
            ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
        ax.set_xticks(range(len(corpora)), corpora)
        ax.set_title(title, fontsize=10)
        ax.margins(y=0.15)
    axes[0].legend(fontsize=8)
    return fig
