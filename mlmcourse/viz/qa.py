"""Question answering, drawn: the passage with the model's answer span highlighted.

:func:`answer_html` is pure (question, passage, the pipeline's answers -> HTML), so the static
book shows it and a test checks it without a browser; :func:`qa_explorer` only wires a menu
of passages and a question box to it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from mlmcourse.viz.ner import entities_html

__all__ = ["answer_html", "qa_explorer", "qa_state", "qa_view"]


def answer_html(
    question: str,
    context: str,
    answers: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    *,
    gold: Sequence[str] = (),
) -> str:
    """The passage with the best answer highlighted, the runners-up listed under it.

    ``answers`` is what :func:`mlmcourse.tasks.qa.answer` returns: one ``{"score", "start", "end",
    "answer"}`` dict or a ranked list of them. ``gold`` (the reference answers, when known) is
    shown under the passage, so a wrong span is visible as wrong.
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a str, got {type(question).__name__}")
    ranked = [answers] if isinstance(answers, Mapping) else list(answers)
    if not ranked:
        raise ValueError("answers is empty: give at least the best answer")
    best = ranked[0]
    span = [{"entity_group": "answer", "start": best["start"], "end": best["end"],
             "score": best["score"]}]  # fmt: skip
    body = entities_html(context, span, caption="passage")
    rest = "".join(
        f"<li>{html.escape(a['answer'])} <span style='color:#666'>({a['score']:.2f})</span></li>"
        for a in ranked[1:]
    )
    others = f"<div style='font-size:12px'>also considered:<ol start='2'>{rest}</ol></div>"
    reference = ", ".join(html.escape(g) for g in gold)
    return (
        f"<div><div style='font-size:15px;margin-bottom:4px'><b>Q:</b> {html.escape(question)}"
        "</div>" + body + (others if rest else "")
        + (f"<div style='font-size:12px'>reference answer: {reference}</div>" if gold else "")
        + "</div>"
    )  # fmt: skip


def qa_state(model: Any, tokenizer: Any, example: Any, question: str, top_k: int) -> str:
    """What the QA explorer shows: the answer to ``question`` in ``example``'s passage, drawn by
    :func:`answer_html` (with the reference answers when the question is the example's own)."""
    from mlmcourse.tasks.qa import answer

    try:
        found = answer(model, tokenizer, question, example.context, top_k=top_k)
        gold = example.answers if question == example.question else ()
        return answer_html(question, example.context, found, gold=gold)
    except ValueError as exc:  # an empty question, one too long for the model: say so
        return f'<div style="color:#a00">{html.escape(str(exc))}</div>'


def qa_view(model: Any, tokenizer: Any, examples: Sequence[Any], *, top_k: int = 3) -> Any:
    """The QA explorer for a page without a kernel: a menu of the examples' own questions."""
    from mlmcourse.viz.static import Control, View

    if not examples:
        raise ValueError("qa_view needs at least one example")
    menu = Control(
        "example", "passage", [(f"{i}: {e.question}", e) for i, e in enumerate(examples)]
    )
    return View(
        lambda example: qa_state(model, tokenizer, example, example.question, top_k),
        [menu],
        title="The question-answering explorer",
    )


def qa_explorer(model: Any, tokenizer: Any, examples: Sequence[Any], *, top_k: int = 3):
    """A menu of passages (``QAExample`` objects) and an editable question, redrawing the answer.

    The first rendering happens before the widget is returned. Displayed in the book, it is
    :func:`qa_view` of the same examples instead.
    """
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    if not examples:
        raise ValueError("qa_explorer needs at least one example")
    menu = widgets.Dropdown(
        options=[(f"{i}: {e.question}", i) for i, e in enumerate(examples)],
        description="passage",
        layout=widgets.Layout(width="640px"),
    )
    box = widgets.Text(
        value=examples[0].question,
        description="question",
        continuous_update=False,
        layout=widgets.Layout(width="640px"),
    )
    out = widgets.HTML()

    def redraw(*_: Any) -> None:
        out.value = qa_state(model, tokenizer, examples[menu.value], box.value, top_k)

    def pick(*_: Any) -> None:
        if box.value == examples[menu.value].question:
            redraw()
        else:
            box.value = examples[menu.value].question  # the box's observer redraws

    menu.observe(pick, names="value")
    box.observe(redraw, names="value")
    redraw()
    return Explorer([menu, box, out], qa_view(model, tokenizer, examples, top_k=top_k))
