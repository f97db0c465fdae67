"""The sentiment explorer: the pure renderer, the state (unknown words, bad texts) and the wiring."""

from __future__ import annotations

import pytest
import torch

from mlmcourse.heads import BertForSequenceClassification
from mlmcourse.tasks.classification import classify
from mlmcourse.viz.sentiment import (
    EMPTY,
    sentiment_explorer,
    sentiment_html,
    sentiment_state,
    sentiment_view,
)
from mlmcourse.viz.static import named_models
from tests.tiny import tiny_encoder_config, tokenizer_fixture

tokenizer = tokenizer_fixture(["a fine film", "dull and long", "a long dull film"])


def _classifier(tokenizer, bias=(0.0, 3.0), labels=("negative", "positive")):
    """A tiny classifier whose bias decides (its random weights are small): ``labels[1]``."""
    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size)  # 32 positions at most
    model = BertForSequenceClassification(config, len(labels), id2label=list(labels))
    with torch.no_grad():
        model.classifier.bias.copy_(torch.tensor(bias))
    return model


def test_sentiment_html_names_the_best_label_and_draws_a_bar_per_label_in_order():
    page = sentiment_html([{"label": "<neg>", "score": 0.1}, {"label": "positive", "score": 0.9}])
    assert "predicted: <b>positive</b> (90.0%)" in page
    assert "width:90.0%" in page and "width:10.0%" in page  # bar length is the probability
    assert page.index("width:10.0%") < page.index("width:90.0%")  # bars in the order given
    assert "&lt;neg&gt;" in page and "<neg>" not in page  # label names are escaped
    with pytest.raises(ValueError, match="scores is empty"):
        sentiment_html([])


def test_sentiment_state_draws_classify_and_names_unknown_words(tokenizer):
    model = _classifier(tokenizer)
    (best,) = classify(model, tokenizer, "a fine Zorbel film")  # the package's own inference
    page = sentiment_state(model, tokenizer, "a fine Zorbel film")
    assert best["label"] == "positive"  # the bias decides
    assert f"predicted: <b>positive</b> ({best['score']:.1%})" in page
    assert page.index("it reads [UNK] there): Zorbel.") < page.index("predicted")
    assert "vocabulary" not in sentiment_state(model, tokenizer, "a fine film")
    assert page.index(">negative</span>") < page.index(">positive</span>")  # label-id order
    renamed = sentiment_state(model, tokenizer, "a fine film", labels=["bad", "good"])
    assert "predicted: <b>good</b>" in renamed and ">bad</span>" in renamed


def test_empty_and_too_long_texts_are_said_in_one_line(tokenizer):
    model = _classifier(tokenizer)
    assert sentiment_state(model, tokenizer, "  ") == f'<div style="color:#a00">{EMPTY}</div>'
    long_page = sentiment_state(model, tokenizer, "film " * 40)
    assert "color:#a00" in long_page and "at most 32" in long_page and "predicted" not in long_page


def test_the_explorer_offers_a_model_menu_and_the_book_the_same_drawings(tokenizer):
    pytest.importorskip("ipywidgets")
    models = {"likes": (_classifier(tokenizer), tokenizer),
              "dislikes": (_classifier(tokenizer, bias=(3.0, 0.0)), tokenizer)}  # fmt: skip
    widget = sentiment_explorer(models, "a fine film", examples=["dull and long"])
    box, menu, out = widget.children
    assert "predicted: <b>positive</b>" in out.value
    view = widget.static
    assert [len(c.options) for c in view.controls] == [2, 2]  # texts x models
    assert view.state([0, 0]) == out.value
    menu.value = "dislikes"
    assert "predicted: <b>negative</b>" in out.value and view.state([0, 1]) == out.value
    box.value = "dull and long"
    assert view.state([1, 1]) == out.value
    box.value = ""
    assert EMPTY in out.value  # said, not raised
    assert "mlm-view" in view.to_html()


def test_one_model_needs_no_menu(tokenizer):
    pytest.importorskip("ipywidgets")
    widget = sentiment_explorer((_classifier(tokenizer), tokenizer), "a fine film")
    box, out = widget.children
    assert [c.name for c in widget.static.controls] == ["text"]
    assert widget.static.state([0]) == out.value and "predicted" in out.value


def test_bad_models_and_labels_are_clear_errors(tokenizer):
    model = _classifier(tokenizer)
    with pytest.raises(ValueError, match="at least one"):
        named_models({}, "sentiment_view")
    with pytest.raises(TypeError, match="'x' is BertForSequenceClassification"):
        named_models({"x": model}, "sentiment_view")
    assert list(named_models((model, tokenizer), "sentiment_view")) == ["model"]
    with pytest.raises(ValueError, match="labels names 3 labels, but 'model' has 2"):
        sentiment_view((model, tokenizer), ["a fine film"], labels=["a", "b", "c"])
    regression = BertForSequenceClassification(tiny_encoder_config(), 1)
    with pytest.raises(ValueError, match="regression"):
        sentiment_view((regression, tokenizer), ["a fine film"])
    with pytest.raises(ValueError, match="at least one text"):
        sentiment_view((model, tokenizer), [])
