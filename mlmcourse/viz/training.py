"""Training curves: loss, masked-token accuracy and perplexity from :func:`mlmcourse.training.train`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["plot_history"]


def plot_history(
    history: Mapping[str, Sequence[Mapping[str, float]]],
    *,
    baseline: Mapping[str, float] | None = None,
    title: str = "",
):
    """Three panels: training and validation loss, validation accuracy, validation perplexity.

    ``history`` is ``TrainResult.history`` (``{"train": [...], "eval": [...]}``). ``baseline``
    (e.g. :func:`mlmcourse.tasks.fill_mask.unigram_baseline`'s result) draws dashed reference lines, so the
    reader sees how far above "predict the most frequent word" the model is. Returns the figure.
    """
    import matplotlib.pyplot as plt

    train = list(history.get("train", []))
    evals = list(history.get("eval", []))
    if not train and not evals:
        raise ValueError("plot_history needs a history with 'train' or 'eval' entries; got none")
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    loss_ax, acc_ax, ppl_ax = axes
    if train:
        loss_ax.plot([h["step"] for h in train], [h["loss"] for h in train], label="train")
    eval_steps = [h["step"] for h in evals]
    if evals:
        loss_ax.plot(eval_steps, [h["eval_loss"] for h in evals], "o-", label="validation")
        acc_ax.plot(eval_steps, [h["eval_accuracy"] for h in evals], "o-", label="model")
        ppl_ax.plot(eval_steps, [h["eval_perplexity"] for h in evals], "o-", label="model")
    if baseline is not None:
        _hline(loss_ax, baseline.get("loss"))
        _hline(acc_ax, baseline.get("accuracy"))
        _hline(ppl_ax, baseline.get("perplexity"))
    loss_ax.set(title="masked-token loss", xlabel="step", ylabel="cross-entropy (nats)")
    acc_ax.set(title="validation masked-token accuracy", xlabel="step", ylim=(0, 1))
    ppl_ax.set(title="validation perplexity", xlabel="step", yscale="log")
    for ax in axes:
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def _hline(ax: Any, value: float | None) -> None:
    if value is not None:
        ax.axhline(value, color="grey", linestyle="--", linewidth=1, label="unigram baseline")
