"""Pictures for the encoder chapter: attention heatmaps, masks as matrices, the attention explorer.

The render functions take plain arrays and token strings and return a matplotlib ``Figure``,
so they are tested without a browser. :func:`attention_explorer` only wires a sentence menu
and layer/head sliders to :func:`plot_attention_head`; it runs the model once per sentence.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "attention_explorer",
    "figure_html",
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
    if not 0 <= layer < len(attentions):
        raise ValueError(f"layer must be in [0, {len(attentions)}), got {layer}")
    probs = _as_array(attentions[layer])
    if probs.ndim == 4 and probs.shape[0] == 1:
        probs = probs[0]
    if probs.ndim != 3:
        raise ValueError(f"each layer's attentions must be (heads, T, T), got {probs.shape}")
    if not 0 <= head < probs.shape[0]:
        raise ValueError(f"head must be in [0, {probs.shape[0]}), got {head}")
    return plot_attention(
        probs[head], tokens, title=f"layer {layer}, head {head}", annotate=len(tokens) <= 8
    )


def figure_html(fig: Any, *, close: bool = True) -> str:
    """The figure as an inline PNG ``<img>``: survives in the static book's saved widget state."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    if close:
        plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="attention heatmap"/>'


def sentence_attentions(model: Any, tokenizer: Any, sentence: str) -> tuple[list[str], list[Any]]:
    """Run ``model`` on one sentence; return its tokens and one (heads, T, T) array per layer."""
    import torch

    encoding = tokenizer.encode(sentence)
    device = next(model.parameters()).device
    input_ids = torch.tensor([encoding.ids], device=device)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model(input_ids, output_attentions=True)
    model.train(was_training)
    return list(encoding.tokens), [a[0].cpu() for a in out.attentions]


def attention_explorer(
    model: Any, tokenizer: Any, sentences: Sequence[str], *, layer: int = 0, head: int = 0
):
    """Choose a sentence, a layer and a head; see that head's attention heatmap."""
    import ipywidgets as widgets

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
        fig = plot_attention_head(attentions, tokens, layer_slider.value, head_slider.value)
        out.value = figure_html(fig)

    for control in (sentence, layer_slider, head_slider):
        control.observe(redraw, names="value")
    redraw()
    return widgets.VBox([sentence, widgets.HBox([layer_slider, head_slider]), out])
