"""The encoder chapter's pictures: heatmaps with tokens on the axes, masks, the explorer."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from mlmcourse.model import BertModel
from mlmcourse.model.bert import attention_allowed  # noqa: E402
from mlmcourse.viz.attention import (  # noqa: E402
    attention_explorer,
    attention_html,
    attention_view,
    head_html,
    plot_attention,
    plot_attention_head,
    plot_masks,
    sentence_attentions,
)
from tests.tiny import tiny_encoder_config  # noqa: E402

TOKENS = ["[CLS]", "the", "cat", "[SEP]"]


def tick_labels(ax, axis: str) -> list[str]:
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in ticks]


def test_plot_attention_puts_tokens_on_both_axes_and_the_values_in_the_cells():
    probs = torch.softmax(torch.randn(4, 4, generator=torch.Generator().manual_seed(0)), -1)
    fig = plot_attention(probs, TOKENS, title="one head")
    ax = fig.axes[0]
    assert tick_labels(ax, "x") == TOKENS and tick_labels(ax, "y") == TOKENS
    assert ax.get_title() == "one head"
    np.testing.assert_allclose(ax.images[0].get_array(), probs.numpy(), rtol=1e-6)
    cell_texts = [t.get_text() for t in ax.texts]
    assert len(cell_texts) == 16 and f"{probs[0, 0].item():.2f}" in cell_texts
    big = plot_attention(np.eye(12), [str(i) for i in range(12)])
    assert len(big.axes[0].texts) == 0  # too many cells to annotate


@pytest.mark.parametrize(
    ("probs", "tokens", "message"),
    [
        (np.ones((3, 4)), ["a", "b", "c"], "square"),
        (np.ones((3, 3)), ["a", "b"], "3x3 but 2 tokens"),
    ],
)
def test_plot_attention_rejects_mismatched_inputs(probs, tokens, message):
    with pytest.raises(ValueError, match=message):
        plot_attention(probs, tokens)


def test_plot_masks_draws_each_mask_with_its_title():
    mask = torch.tensor([[1, 1, 1, 0]])
    masks = {
        "padding": attention_allowed(mask, is_causal=False)[0, 0].expand(4, 4),
        "causal": attention_allowed(mask, is_causal=True)[0, 0],
    }
    fig = plot_masks(masks, TOKENS)
    assert [ax.get_title() for ax in fig.axes] == ["padding", "causal"]
    np.testing.assert_array_equal(fig.axes[1].images[0].get_array(), masks["causal"].float())
    with pytest.raises(ValueError, match="at least one"):
        plot_masks({}, TOKENS)


def test_plot_attention_head_picks_the_layer_and_head():
    attentions = [torch.rand(1, 2, 4, 4), torch.rand(1, 2, 4, 4)]
    fig = plot_attention_head(attentions, TOKENS, layer=1, head=1)
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), attentions[1][0, 1], rtol=1e-6)
    assert fig.axes[0].get_title() == "layer 1, head 1"
    with pytest.raises(ValueError, match=r"layer must be in \[0, 2\), got 2"):
        plot_attention_head(attentions, TOKENS, layer=2, head=0)
    with pytest.raises(ValueError, match=r"head must be in \[0, 2\), got -1"):
        plot_attention_head(attentions, TOKENS, layer=0, head=-1)


def test_attention_html_is_the_heatmap_as_a_table():
    probs = np.array([[1.0, 0.0], [0.25, 0.75]])
    html = attention_html(probs, ["<a>", "b"], title="layer 0, head 1")
    assert html.count("<tr>") == 3 and html.count("<td ") == 4  # a header row, one per query
    assert "&lt;a&gt;" in html and "<a>" not in html  # tokens are escaped
    assert 'title="0.25"' in html and "layer 0, head 1" in html
    assert "background:#08306b" in html  # the largest value is the darkest blue
    assert "background:#f7fbff" in html  # zero is white
    with pytest.raises(ValueError, match="3 tokens"):
        attention_html(probs, ["a", "b", "c"])


def test_head_html_picks_one_head_with_clear_errors():
    layers = [np.stack([np.eye(3), np.full((3, 3), 1 / 3)])]
    assert 'title="0.33"' in head_html(layers, ["a", "b", "c"], 0, 1)
    assert 'title="0.33"' not in head_html(layers, ["a", "b", "c"], 0, 0)
    with pytest.raises(ValueError, match="head must be in"):
        head_html(layers, ["a", "b", "c"], 0, 2)


class _Encoding:
    def __init__(self, tokens):
        self.tokens = tokens
        self.ids = [TOKENS.index(t) for t in tokens]


class _Tokenizer:
    """Just enough of the tokenizer interface: encode() -> ids and tokens."""

    def encode(self, text):
        return _Encoding(["[CLS]", *text.split(), "[SEP]"])


def test_explorer_runs_the_model_and_redraws_on_every_control():
    torch.manual_seed(0)
    model = BertModel(tiny_encoder_config(vocab_size=len(TOKENS), num_attention_heads=2)).train()
    tokens, attentions = sentence_attentions(model, _Tokenizer(), "the cat")
    assert tokens == TOKENS and len(attentions) == 2 and attentions[0].shape == (2, 4, 4)
    assert model.training  # left as it was found
    widget = attention_explorer(model, _Tokenizer(), ["the cat", "cat"], layer=1, head=1)
    sentence, sliders, out = widget.children
    first = out.value
    assert first.startswith("<table") and "layer 1, head 1" in first
    sliders.children[1].value = 0
    assert out.value != first and "layer 1, head 0" in out.value
    sentence.value = "cat"
    assert out.value.count("<tr>") == 4  # [CLS] cat [SEP] and the header
    # the book's view: every sentence, layer and head, drawn by the same function
    view = attention_view(model, _Tokenizer(), ["the cat", "cat"], layer=1, head=1)
    states = view.states()
    assert len(states) == 2 * 2 * 2 and states[0b011] == first  # sentence 0, layer 1, head 1
    assert widget.static.state([0, 1, 1]) == first
    with pytest.raises(ValueError, match="at least one sentence"):
        attention_explorer(model, _Tokenizer(), [])
