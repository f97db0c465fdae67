"""Pictures for the encoder chapter: attention heatmaps, masks as matrices, the attention explorer.

The render functions take plain arrays and token strings and return a matplotlib ``Figure``,
so they are tested without a browser. :func:`attention_explorer` only wires a sentence menu
and layer/head sliders to :func:`plot_attention_head`; it runs the model once per sentence.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlmcourse.utils.runtime import evaluating

__all__ = [
    "attention_explorer",
    "attention_html",
    "attention_view",
    "head_html",
    "plot_attention",
    "plot_attention_head",
    "plot_masks",
    "sentence_attentions",
]


def _as_array(values: Any) -> np.ndarray:
    if hasattr(values, "detach"):  # a torch tensor, on any device
        values = values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=float)


def _check_square(matrix: np.ndarray, tokens: Sequence[str], what: str) -> None:
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{what} must be a square (T, T) matrix, got shape {matrix.shape}")
    if len(tokens) != matrix.shape[0]:
        raise ValueError(
            f"{what} is {matrix.shape[0]}x{matrix.shape[1]} but {len(tokens)} tokens were given"
        )


def _draw(ax: Any, matrix: np.ndarray, tokens: Sequence[str], *, cmap: str, vmax: float) -> Any:
    """One heatmap: queries (the attending tokens) down the rows, keys along the columns."""
    image = ax.imshow(matrix, cmap=cmap, vmin=0.0, vmax=vmax)
    positions = range(len(tokens))
    ax.set_xticks(positions, labels=list(tokens), rotation=90, fontsize=8)
    ax.set_yticks(positions, labels=list(tokens), fontsize=8)
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    return image


def plot_attention(
    probs: Any,
    tokens: Sequence[str],
    *,
    title: str = "",
    annotate: bool | None = None,
    ax: Any = None,
) -> Any:
    """Heatmap of one (T, T) matrix of attention probabilities, tokens on both axes.

    Row ``i`` is how token ``i`` spreads its attention over the keys, so each row sums to 1.
    ``annotate`` writes the numbers in the cells (default: when there are at most 8 tokens).
    Returns the figure.
    """
    import matplotlib.pyplot as plt

    matrix = _as_array(probs)
    _check_square(matrix, tokens, "probs")
    if ax is None:
        size = min(2.0 + 0.35 * len(tokens), 9.0)
        fig, ax = plt.subplots(figsize=(size + 1.0, size))
    else:
        fig = ax.figure
    image = _draw(ax, matrix, tokens, cmap="Blues", vmax=max(float(matrix.max()), 1e-9))
    if annotate is None:
        annotate = len(tokens) <= 8
    if annotate:
        for (row, col), value in np.ndenumerate(matrix):
            color = "white" if value > 0.6 * matrix.max() else "black"
            ax.text(col, row, f"{value:.2f}", ha="center", va="center", fontsize=8, color=color)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot_masks(masks: Mapping[str, Any], tokens: Sequence[str]) -> Any:
    """Boolean (T, T) masks side by side: dark = may attend, white = hidden. Returns the figure."""
    import matplotlib.pyplot as plt

    if not masks:
        raise ValueError("plot_masks needs at least one mask")
    fig, axes = plt.subplots(
        1, len(masks), figsize=(3.4 * len(masks), 3.6), squeeze=False, sharey=True
    )
    for ax, (name, mask) in zip(axes[0], masks.items(), strict=True):
        matrix = _as_array(mask)
        _check_square(matrix, tokens, f"mask {name!r}")
        _draw(ax, matrix, tokens, cmap="Greys", vmax=1.4)  # allowed cells dark grey, not black
        ax.set_title(name, fontsize=10)
        ax.set_xticks(np.arange(len(tokens) + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(len(tokens) + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="#bbbbbb", linewidth=0.5)
        ax.tick_params(which="minor", length=0)
    fig.tight_layout()
    return fig


def plot_attention_head(
    attentions: Sequence[Any], tokens: Sequence[str], layer: int, head: int
) -> Any:
    """The heatmap of one head of one layer, from ``EncoderOutput.attentions`` of one sentence.

    ``attentions`` holds one (heads, T, T) array per layer (a batch of one may keep its
    leading 1).
    """
    probs = _layer_head(attentions, layer, head)
    return plot_attention(
        probs, tokens, title=f"layer {layer}, head {head}", annotate=len(tokens) <= 8
    )


def _layer_head(attentions: Sequence[Any], layer: int, head: int) -> np.ndarray:
    """The (T, T) probabilities of one head of one layer, with a clear error for a bad index."""
    if not 0 <= layer < len(attentions):
        raise ValueError(f"layer must be in [0, {len(attentions)}), got {layer}")
    probs = _as_array(attentions[layer])
    if probs.ndim == 4 and probs.shape[0] == 1:
        probs = probs[0]
    if probs.ndim != 3:
        raise ValueError(f"each layer's attentions must be (heads, T, T), got {probs.shape}")
    if not 0 <= head < probs.shape[0]:
        raise ValueError(f"head must be in [0, {probs.shape[0]}), got {head}")
    return probs[head]


def sentence_attentions(model: Any, tokenizer: Any, sentence: str) -> tuple[list[str], list[Any]]:
    """Run ``model`` on one sentence; return its tokens and one (heads, T, T) array per layer."""
    import torch

    encoding = tokenizer.encode(sentence)
    device = next(model.parameters()).device
    input_ids = torch.tensor([encoding.ids], device=device)
    with evaluating(model), torch.no_grad():
        out = model(input_ids, output_attentions=True)
    return list(encoding.tokens), [a[0].cpu() for a in out.attentions]


def _blue(level: float) -> str:
    """White at 0 to dark blue at 1 (matplotlib's "Blues" end points), as a hex colour."""
    low, high = (247, 251, 255), (8, 48, 107)
    return "#" + "".join(
        f"{round(a + (b - a) * level):02x}" for a, b in zip(low, high, strict=True)
    )


def attention_html(probs: Any, tokens: Sequence[str], *, title: str = "") -> str:
    """One (T, T) matrix of attention probabilities as an HTML heatmap, tokens on both axes.

    The same picture as :func:`plot_attention` (queries down the rows, keys along the
    columns, colour scaled to the largest value), but as a few kilobytes of markup instead of
    an image, so that every layer and head of several sentences fits in a static page. Each
    cell's tooltip is its probability.
    """
    matrix = _as_array(probs)
    _check_square(matrix, tokens, "probs")
    top = max(float(matrix.max()), 1e-9)
    esc = [html.escape(t) for t in tokens]
    head = "".join(
        f'<th style="writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;'
        f'padding:2px 0">{t}</th>'
        for t in esc
    )
    rows = []
    for token, row in zip(esc, matrix, strict=True):
        cells = "".join(
            f'<td style="background:{_blue(round(v / top, 2))}" title="{v:.2f}"></td>' for v in row
        )
        rows.append(
            f'<tr><th style="text-align:right;font-weight:normal;padding-right:4px">{token}</th>{cells}</tr>'
        )
    caption = (
        f"<caption style='caption-side:top;font-size:12px'><b>{html.escape(title)}</b></caption>"
        if title
        else ""
    )
    return (
        '<table style="border-collapse:collapse;font-family:monospace;font-size:11px;'
        f'table-layout:fixed">{caption}<tr><td></td>{head}</tr>{"".join(rows)}</table>'
        '<div style="font-size:11px;color:#444">rows: the query (attending token); columns: the '
        f"key (attended to); darkest = {top:.2f}. Hover a cell for its probability.</div>"
    )


def head_html(attentions: Sequence[Any], tokens: Sequence[str], layer: int, head: int) -> str:
    """:func:`attention_html` of one head of one layer (``EncoderOutput.attentions`` of one
    sentence: one (heads, T, T) array per layer, a batch of one may keep its leading 1)."""
    probs = _layer_head(attentions, layer, head)
    return attention_html(probs, tokens, title=f"layer {layer}, head {head}")


def attention_view(
    model: Any, tokenizer: Any, sentences: Sequence[str], *, layer: int = 0, head: int = 0
) -> Any:
    """The explorer for a page without a kernel: every layer and head of every sentence."""
    from mlmcourse.viz.static import Control, View

    if not sentences:
        raise ValueError("attention_view needs at least one sentence")
    config = model.config
    runs = {s: sentence_attentions(model, tokenizer, s) for s in sentences}
    controls = [
        Control.of("sentence", "sentence", list(sentences)),
        Control.of(
            "layer", "layer", list(range(config.num_hidden_layers)), kind="slider", initial=layer
        ),
        Control.of(
            "head", "head", list(range(config.num_attention_heads)), kind="slider", initial=head
        ),
    ]
    return View(
        lambda sentence, layer, head: head_html(runs[sentence][1], runs[sentence][0], layer, head),
        controls,
        title="The attention explorer",
    )


def attention_explorer(
    model: Any, tokenizer: Any, sentences: Sequence[str], *, layer: int = 0, head: int = 0
):
    """Choose a sentence, a layer and a head; see that head's attention heatmap.

    Displayed in the book, it is :func:`attention_view` of the same sentences instead."""
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    if not sentences:
        raise ValueError("attention_explorer needs at least one sentence")
    config = model.config
    sentence = widgets.Dropdown(
        options=list(sentences), value=sentences[0], layout=widgets.Layout(width="520px")
    )
    layer_slider = widgets.IntSlider(
        value=layer, min=0, max=config.num_hidden_layers - 1, description="layer"
    )
    head_slider = widgets.IntSlider(
        value=head, min=0, max=config.num_attention_heads - 1, description="head"
    )
    out = widgets.HTML()
    cache: dict[str, tuple[list[str], list[Any]]] = {}

    def redraw(*_: Any) -> None:
        if sentence.value not in cache:
            cache[sentence.value] = sentence_attentions(model, tokenizer, sentence.value)
        tokens, attentions = cache[sentence.value]
        out.value = head_html(attentions, tokens, layer_slider.value, head_slider.value)

    for control in (sentence, layer_slider, head_slider):
        control.observe(redraw, names="value")
    redraw()
    static = attention_view(model, tokenizer, sentences, layer=layer, head=head)
    return Explorer([sentence, widgets.HBox([layer_slider, head_slider]), out], static)
