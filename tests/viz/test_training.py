"""plot_history draws the three curves and the baseline."""

from __future__ import annotations

import matplotlib
import pytest

from mlmcourse.viz.training import plot_history

matplotlib.use("Agg")

HISTORY = {
    "train": [{"step": s, "loss": 5.0 / s, "lr": 1e-3, "grad_norm": 1.0} for s in (1, 2, 3, 4)],
    "eval": [
        {"step": 2, "eval_loss": 3.0, "eval_accuracy": 0.2, "eval_perplexity": 20.1},
        {"step": 4, "eval_loss": 2.0, "eval_accuracy": 0.4, "eval_perplexity": 7.4},
    ],
}


def test_plot_history_draws_loss_accuracy_perplexity_and_baseline():
    fig = plot_history(HISTORY, baseline={"loss": 6.0, "accuracy": 0.05, "perplexity": 400.0})
    loss_ax, acc_ax, ppl_ax = fig.axes
    assert len(loss_ax.lines) == 3  # train, validation, baseline
    assert list(acc_ax.lines[0].get_ydata()) == [0.2, 0.4]
    assert acc_ax.lines[1].get_ydata()[0] == 0.05
    assert ppl_ax.get_yscale() == "log"


def test_plot_history_refuses_an_empty_history():
    with pytest.raises(ValueError, match="needs a history"):
        plot_history({"train": [], "eval": []})
