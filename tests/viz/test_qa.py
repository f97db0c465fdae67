"""The QA view: the answer span highlighted in its passage, and the explorer wiring."""

import pytest
import torch

from mlmcourse.heads import BertForQuestionAnswering
from mlmcourse.tasks.qa import QAExample
from mlmcourse.viz.qa import answer_html, qa_explorer
from tests.tiny import tiny_encoder_config

CONTEXT = "Ann lives in Orlen. Bob <works> in Kelso."


def test_answer_html_highlights_the_best_span_and_lists_the_others():
    answers = [
        {"score": 0.7, "start": 13, "end": 18, "answer": "Orlen"},
        {"score": 0.2, "start": 35, "end": 40, "answer": "Kelso"},
    ]
    page = answer_html("Where does <Ann> live?", CONTEXT, answers, gold=["Orlen"])
    assert "<mark" in page and page.count("<mark") == 1
    assert ">Orlen<span" in page  # the best span is the highlighted one
    assert "&lt;Ann&gt;" in page and "&lt;works&gt;" in page  # the user's text is escaped
    assert "also considered" in page and "Kelso" in page and "(0.20)" in page
    assert "reference answer: Orlen" in page
    single = answer_html("Where?", CONTEXT, answers[0])
    assert "also considered" not in single and "reference" not in single


def test_answer_html_refuses_bad_input():
    with pytest.raises(ValueError, match="answers is empty"):
        answer_html("Where?", CONTEXT, [])
    with pytest.raises(TypeError, match="question must be a str"):
        answer_html(None, CONTEXT, {"score": 1.0, "start": 0, "end": 3, "answer": "Ann"})


def test_qa_explorer_draws_at_once_and_redraws_on_a_new_passage(world_tokenizer):
    pytest.importorskip("ipywidgets")
    torch.manual_seed(0)
    model = BertForQuestionAnswering(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size))
    examples = [
        QAExample("a", "", "Ann lives in Orlen .", "Where does Ann live ?", ("Orlen",), (13,)),
        QAExample("b", "", "Bob works in Kelso .", "Where does Bob work ?", ("Kelso",), (13,)),
    ]
    widget = qa_explorer(model, world_tokenizer, examples, top_k=2)
    menu, box, out = widget.children
    assert "Where does Ann live ?" in out.value and "reference answer: Orlen" in out.value
    assert widget.static.states()[0] == out.value  # the book's view: the same drawing
    menu.value = 1
    assert box.value == "Where does Bob work ?" and "reference answer: Kelso" in out.value
    assert widget.static.states()[1] == out.value
    box.value = "   "
    assert "color:#a00" in out.value  # an empty question is said, not raised
    with pytest.raises(ValueError, match="at least one example"):
        qa_explorer(model, world_tokenizer, [])
