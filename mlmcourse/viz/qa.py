"""Question answering, drawn: the passage with the model's answer span highlighted.

:func:`answer_html` is pure (question, passage, the pipeline's answers -> HTML), so the static
book shows it and a test checks it without a browser; :func:`qa_state` runs a reader on a
question and a passage; :func:`qa_explorer` only wires a passage box, a question box and menus
(prepared examples, and readers when there are several) to it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from mlmcourse.tokenization.stats import unknown_words
from mlmcourse.viz.html import message_html, unknown_words_html
from mlmcourse.viz.ner import entities_html
from mlmcourse.viz.static import model_controls, named_models

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


def qa_state(
    model: Any,
    tokenizer: Any,
    question: str,
    context: str,
    top_k: int,
    *,
    gold: Sequence[str] = (),
) -> str:
    """What the QA explorer shows: the unknown words and the answer to ``question`` in
    ``context``, drawn by :func:`answer_html` (``gold``: the reference answers, when known)."""
    from mlmcourse.tasks.qa import answer

    try:
        found = answer(model, tokenizer, question, context, top_k=top_k)
        drawn = answer_html(question, context, found, gold=gold)
    except ValueError as exc:  # an empty question or passage, a question too long: say so
        return message_html(str(exc))
    unknown = unknown_words(tokenizer, question) + unknown_words(tokenizer, context)
    note = unknown_words_html(list(dict.fromkeys(unknown)), unk_token=tokenizer.unk_token)
    return note + drawn


def _example_menu(examples: Sequence[Any], owner: str) -> list[tuple[str, int]]:
    if not examples:
        raise ValueError(f"{owner} needs at least one example")
    return [(f"{i}: {e.question}", i) for i, e in enumerate(examples)]


def qa_view(models: Any, examples: Sequence[Any], *, top_k: int = 3) -> Any:
    """The QA explorer for a page without a kernel: a menu of the examples (``QAExample``s),
    each asked its own question, and a menu of the readers when there are several."""
    from mlmcourse.viz.static import Control, View

    named = named_models(models, "qa_view")
    menu = [(text, examples[i]) for text, i in _example_menu(examples, "qa_view")]

    def render(example: Any, model: str = next(iter(named))) -> str:
        return qa_state(
            *named[model], example.question, example.context, top_k, gold=example.answers
        )

    controls = [Control("example", "passage", menu), *model_controls(named, label="reader")]
    return View(render, controls, title="The question-answering explorer")


def qa_explorer(models: Any, examples: Sequence[Any], *, top_k: int = 3):
    """A passage box and a question box (filled from a menu of ``QAExample``s), redrawing the answer.

    ``models``: one ``(model, tokenizer)`` reader or ``{name: (model, tokenizer)}`` (then a menu
    picks one). Write your own passage and question, or pick an example: its reference answers
    show while its passage and question are unchanged. The first rendering happens before the
    widget is returned. Displayed in the book, it is :func:`qa_view` of the same examples.
    """
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    named = named_models(models, "qa_explorer")
    menu = widgets.Dropdown(
        options=_example_menu(examples, "qa_explorer"),
        description="example",
        layout=widgets.Layout(width="640px"),
    )
    passage = widgets.Textarea(
        value=examples[0].context,
        description="passage",
        continuous_update=False,
        layout=widgets.Layout(width="640px", height="90px"),
    )
    box = widgets.Text(
        value=examples[0].question,
        description="question",
        continuous_update=False,
        layout=widgets.Layout(width="640px"),
    )
    reader = widgets.Dropdown(options=list(named), description="reader")
    out = widgets.HTML()
    gold = {(e.question, e.context): e.answers for e in examples}
    filling = [False]  # while a picked example fills both boxes, draw once, after

    def redraw(*_: Any) -> None:
        if not filling[0]:
            answers = gold.get((box.value, passage.value), ())
            out.value = qa_state(
                *named[reader.value], box.value, passage.value, top_k, gold=answers
            )

    def pick(*_: Any) -> None:
        filling[0] = True
        try:
            passage.value, box.value = examples[menu.value].context, examples[menu.value].question
        finally:
            filling[0] = False
        redraw()

    menu.observe(pick, names="value")
    for control in (passage, box, reader):
        control.observe(redraw, names="value")
    redraw()
    live = [menu, passage, box, *([reader] if len(named) > 1 else []), out]
    return Explorer(live, qa_view(named, examples, top_k=top_k))
