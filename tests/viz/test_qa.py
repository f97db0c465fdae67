"""The QA view: the answer span highlighted in its passage, and the explorer wiring."""

import pytest
import torch

from mlmcourse.heads import BertForQuestionAnswering
from mlmcourse.tasks.qa import QAExample, answer
from mlmcourse.viz.qa import answer_html, qa_explorer, qa_state
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


EXAMPLES = [
    QAExample("a", "", "Ann lives in Orlen .", "Where does Ann live ?", ("Orlen",), (13,)),
    QAExample("b", "", "Bob works in Kelso .", "Where does Bob work ?", ("Kelso",), (13,)),
]


def _reader(tokenizer, seed=0):
    torch.manual_seed(seed)
    return BertForQuestionAnswering(tiny_encoder_config(vocab_size=tokenizer.vocab_size))


def test_qa_state_answers_any_passage_and_names_unknown_words(world_tokenizer):
    model = _reader(world_tokenizer)
    passage = "Zorbel lives in Guiun ."
    best = answer(model, world_tokenizer, "Where does Zorbel live ?", passage)  # the package's
    page = qa_state(model, world_tokenizer, "Where does Zorbel live ?", passage, 1)
    assert f">{best['answer']}<span" in page and "reference answer" not in page
    assert page.index("it reads [UNK] there): Zorbel.") < page.index("<b>Q:</b>")  # once, first
    gold = qa_state(model, world_tokenizer, "Where does he live ?", passage, 1, gold=["Guiun"])
    assert "reference answer: Guiun" in gold
    assert "vocabulary" not in qa_state(model, world_tokenizer, "Where ?", "He lives in Guiun .", 1)
    for question, context in [("Where ?", "   "), ("  ", passage)]:  # said, not raised
        assert "color:#a00" in qa_state(model, world_tokenizer, question, context, 1)


def test_qa_explorer_takes_your_own_passage_and_question(world_tokenizer):
    pytest.importorskip("ipywidgets")
    widget = qa_explorer((_reader(world_tokenizer), world_tokenizer), EXAMPLES, top_k=2)
    menu, passage, box, out = widget.children  # one reader: no reader menu
    assert passage.value == EXAMPLES[0].context and box.value == EXAMPLES[0].question
    assert "Where does Ann live ?" in out.value and "reference answer: Orlen" in out.value
    assert widget.static.states()[0] == out.value  # the book's view: the same drawing
    menu.value = 1
    assert passage.value == EXAMPLES[1].context and box.value == "Where does Bob work ?"
    assert "reference answer: Kelso" in out.value and widget.static.states()[1] == out.value
    passage.value = "Bob works in Orlen and Ann in Kelso ."  # the reader's own passage
    assert "there): Bob, Orlen, Ann, Kelso." in out.value  # question's, then the passage's
    assert "reference answer" not in out.value  # not the example's passage any more
    box.value = "   "
    assert "color:#a00" in out.value  # an empty question is said, not raised
    passage.value = ""
    assert "color:#a00" in out.value  # so is an empty passage
    with pytest.raises(ValueError, match="at least one example"):
        qa_explorer((_reader(world_tokenizer), world_tokenizer), [])


def test_qa_explorer_offers_a_menu_of_readers_and_the_book_both(world_tokenizer):
    pytest.importorskip("ipywidgets")
    readers = {"seed 0": (_reader(world_tokenizer), world_tokenizer),
               "seed 1": (_reader(world_tokenizer, seed=1), world_tokenizer)}  # fmt: skip
    widget = qa_explorer(readers, EXAMPLES, top_k=1)
    menu, passage, box, reader, out = widget.children
    view = widget.static
    assert [(c.label, len(c.options)) for c in view.controls] == [("passage", 2), ("reader", 2)]
    assert view.state([0, 0]) == out.value
    reader.value = "seed 1"
    assert view.state([0, 1]) == out.value
    menu.value = 1
    assert view.state([1, 1]) == out.value
    assert "mlm-view" in view.to_html()
