"""NER explorer: the pure renderer (escaping, colours, legend, scores, bad spans) and its wiring."""

from __future__ import annotations

import math

import pytest
import torch

from mlmcourse.viz.html import PALETTE
from mlmcourse.viz.ner import entities_html, entity_colors, ner_explorer
from tests.tiny import tiny_encoder_config

TEXT = "Barack Obama visited New York"
ENTITIES = [
    {"entity_group": "PER", "word": "Barack Obama", "start": 0, "end": 12, "score": 0.9731},
    {"entity_group": "LOC", "word": "New York", "start": 21, "end": 29, "score": 0.5},
]


def test_spans_are_highlighted_in_their_type_colour_with_scores_and_a_legend():
    out = entities_html(TEXT, ENTITIES, types=["PER", "ORG", "LOC"])
    assert out.count("<mark") == 2
    assert f"background:{PALETTE[0]}" in out and f"background:{PALETTE[2]}" in out  # PER, LOC
    assert "Barack Obama<span" in out and "PER 0.97" in out and "LOC 0.50" in out
    assert 'title="PER, score 0.97"' in out
    assert " visited " in out  # the text between entities is kept as is
    assert "ORG" in out  # every known type is in the legend
    assert "2 entities" in out


def test_colours_follow_the_given_type_order_not_the_text():
    assert entity_colors(["LOC", "PER", "LOC"]) == {"LOC": PALETTE[0], "PER": PALETTE[1]}
    a = entities_html(TEXT, ENTITIES[1:], types=["PER", "LOC"])
    assert f"background:{PALETTE[1]}" in a  # LOC keeps its colour when PER is absent


def test_text_and_types_are_escaped():
    text = "<script>alert(1)</script> & Tom"
    ents = [{"entity_group": "P<ER>", "start": 28, "end": 31, "score": 0.8}]
    out = entities_html(text, ents)
    assert "<script>" not in out and "&lt;script&gt;" in out and "&amp;" in out
    assert "P&lt;ER&gt;" in out


def test_scores_can_be_hidden_and_nan_scores_are_blank():
    assert "0.97" not in entities_html(TEXT, ENTITIES, show_scores=False)
    for nan in (math.nan, torch.tensor(math.nan), None):
        out = entities_html(TEXT, [dict(ENTITIES[0], score=nan)])
        assert "nan" not in out and 'title="PER"' in out
    assert "PER 0.25" in entities_html(TEXT, [dict(ENTITIES[0], score=torch.tensor(0.25))])


def test_no_entity_is_said_plainly():
    out = entities_html("nothing here", [], caption="demo")
    assert "no entity found" in out and "<mark" not in out and "demo" in out


def test_unordered_entities_are_drawn_in_text_order():
    out = entities_html(TEXT, ENTITIES[::-1])
    assert out.index("Barack") < out.index("New York")


@pytest.mark.parametrize(
    ("entities", "match"),
    [
        ([{"entity_group": "PER", "start": 0, "end": 99}], "outside the text"),
        ([{"entity_group": "PER", "start": 5, "end": 5}], "outside the text"),
        (
            [
                {"entity_group": "PER", "start": 0, "end": 10},
                {"entity_group": "LOC", "start": 5, "end": 12},
            ],
            "overlap",
        ),
        ([{"entity_group": "PER", "start": 0}], "lacks"),
    ],
)
def test_bad_spans_are_clear_errors(entities, match):
    with pytest.raises(ValueError, match=match):
        entities_html(TEXT, entities)


def test_text_must_be_a_string():
    with pytest.raises(TypeError, match="str"):
        entities_html(None, [])


def test_explorer_renders_its_initial_text_and_redraws_on_change(minilm_tokenizer):
    pytest.importorskip("ipywidgets")
    from mlmcourse.heads import BertForTokenClassification

    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=minilm_tokenizer.vocab_size)  # 32 positions at most
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    model = BertForTokenClassification(config, len(labels), id2label=labels)
    with torch.no_grad():  # every word scores I-LOC 9, B-PER 8: decoding decides the output
        model.classifier.bias.copy_(torch.tensor([0.0, 8.0, 0.0, 0.0, 9.0]))
    widget = ner_explorer(model, minilm_tokenizer, "Ann met Bob", examples=["Zoe"])
    box, switch, out = widget.children
    # constrained: I-LOC cannot open a sentence or follow B-PER, so B-PER B-PER B-PER wins
    assert out.value.count("<mark") == 3 and "PER" in out.value and "Ann met Bob" not in out.value
    assert widget.static.state([0, 1]) == out.value  # the book's view: the same drawing
    switch.value = False  # argmax: I-LOC I-LOC I-LOC, which conlleval reads as one LOC
    assert out.value.count("<mark") == 1 and "Ann met Bob<span" in out.value
    assert widget.static.state([0, 0]) == out.value
    assert "Zoe<span" in widget.static.state([1, 0])
    box.value = "Zoe"
    assert "Zoe<span" in out.value and "LOC" in out.value
    box.value = "word " * 40  # longer than the model takes: said in the output, no exception
    assert "at most 32" in out.value


def test_confusion_matrix_counts_gold_rows_against_predicted_columns():
    from mlmcourse.viz.ner import confusion_matrix

    labels = ["O", "B-PER", "I-PER"]
    gold = [["B-PER", "I-PER", "O"], ["O"]]
    pred = [["B-PER", "O", "O"], ["B-PER"]]
    assert confusion_matrix(gold, pred, labels) == [[1, 1, 0], [0, 1, 0], [1, 0, 0]]


def test_confusion_matrix_rejects_unknown_labels_and_length_mismatches():
    from mlmcourse.viz.ner import confusion_matrix

    with pytest.raises(ValueError, match="B-LOC"):
        confusion_matrix([["B-LOC"]], [["O"]], ["O"])
    with pytest.raises(ValueError, match="sentence 0"):
        confusion_matrix([["O", "O"]], [["O"]], ["O"])
    with pytest.raises(ValueError, match="sentences"):
        confusion_matrix([["O"]], [], ["O"])


def test_plots_draw_counts_and_one_line_per_curve():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mlmcourse.viz.ner import plot_confusion_matrix, plot_learning_curve

    ax = plot_confusion_matrix([[5, 1], [0, 2]], ["O", "B-PER"], title="t")
    assert [t.get_text() for t in ax.texts] == ["5", "1", "0", "2"]
    assert ax.get_title() == "t"
    with pytest.raises(ValueError, match="2 x 2"):
        plot_confusion_matrix([[1]], ["O", "B-PER"])
    ax = plot_learning_curve(
        {"pretrained": {50: 0.5, 200: 0.8}, "scratch": {50: 0.1, 200: 0.6}}, baseline=0.2
    )
    assert [line.get_label() for line in ax.get_lines()] == ["pretrained", "scratch", "baseline"]
    assert list(ax.get_lines()[0].get_xdata()) == [50, 200]
    assert ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="at least one"):
        plot_learning_curve({"x": {}})
    curves = {"pretrained": {50: 0.5, 200: 0.8}}
    ax = plot_learning_curve(curves, errors={"pretrained": {50: 0.1, 200: 0.05}})
    (bars,) = ax.containers  # the mean of the seeds, with their spread as error bars
    low, high = bars.lines[1]  # the caps below and above each point
    assert list(low.get_ydata()) == pytest.approx([0.4, 0.75])
    assert list(high.get_ydata()) == pytest.approx([0.6, 0.85])
    with pytest.raises(ValueError, match="every name and size"):
        plot_learning_curve(curves, errors={"pretrained": {50: 0.1}})
    plt.close("all")


def test_ner_state_says_which_names_are_new_to_the_model(world_tokenizer):
    from mlmcourse.heads import BertForTokenClassification
    from mlmcourse.viz.ner import NEW_NAMES, ner_state

    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=world_tokenizer.vocab_size)
    model = BertForTokenClassification(config, 3, id2label=["O", "B-PER", "I-PER"])
    page = ner_state(model, world_tokenizer, "Zorbel Quintax lives in Guiun .", True)
    assert "it reads [UNK] there): Zorbel, Quintax. " + NEW_NAMES in page
    assert page.index("Zorbel, Quintax") < page.index("white-space:pre-wrap")  # above the text
    assert "vocabulary" not in ner_state(model, world_tokenizer, "He lives in Guiun .", True)
    assert "no entity found" in ner_state(model, world_tokenizer, "", True)  # nothing typed yet
