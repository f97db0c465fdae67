"""The MLM explainer: one training step of a masked language model on one sentence, in stages.

:func:`trace_mlm_step` does the step and records every number a reader needs: the tokens,
each token's fate under 80/10/10 masking, the model's top predictions at each target with
their probabilities, the loss on the targets only, and the loss after one gradient step on
this sentence. :func:`explainer_html` draws a trace up to a chosen stage (pure: a trace in,
HTML out). :func:`mlm_explainer` puts both behind controls (sentence, checkpoint, a new mask,
the stage) as a :class:`~mlmcourse.viz.static.View`: live in a notebook, precomputed in the book.
"""

from __future__ import annotations

import copy
import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlmcourse.utils.checks import (
    check_number,
    check_positive_int,
    check_seed,
)
from mlmcourse.viz.fill_mask import candidate_bars_html
from mlmcourse.viz.html import Chip, chips_html
from mlmcourse.viz.masking import classify_outcomes, render_masking

__all__ = ["STAGES", "StepTrace", "explainer_html", "mlm_explainer", "trace_mlm_step"]

STAGES = (
    "1. tokens",
    "2. choose the targets (80/10/10)",
    "3. predict at the targets",
    "4. the loss",
    "5. one gradient step",
)


@dataclass(frozen=True)
class StepTrace:
    """Everything one MLM training step did to one sentence (one entry per position, or per
    target where named so)."""

    tokens: list[str]
    ids: list[int]
    shown: list[str]  # what the model reads: [MASK], a random token or the token itself
    outcomes: list[str]  # classify_outcomes' names: mask, random, kept, unselected, special
    targets: list[int]  # positions with a label
    top: list[list[tuple[str, float]]]  # per target: the top-k tokens and probabilities
    target_probability: list[float]  # per target: p(the original token)
    loss: float  # the model's loss: mean -log p over the targets
    target_probability_after: list[float]  # after one gradient step on this sentence
    loss_after: float
    learning_rate: float


def trace_mlm_step(
    model: Any,
    tokenizer: Any,
    text: str,
    *,
    mlm_probability: float = 0.15,
    seed: int = 0,
    top_k: int = 3,
    learning_rate: float = 0.01,
) -> StepTrace:
    """Mask ``text`` once (seeded, at least one target), score it with ``model`` and take one
    plain gradient step (SGD at ``learning_rate``) on a copy; the caller's model is untouched.

    The copy runs in eval mode, so dropout does not blur the numbers; the loss is the model's
    own (its forward with ``labels``), and the per-target numbers are checked against it.
    """
    import torch

    from mlmcourse.masking import IGNORE_INDEX, mask_tokens

    seed, top_k, learning_rate = _check_trace(text, seed, top_k, learning_rate)
    encoded = tokenizer([text])
    ids = encoded["input_ids"]  # (1, T)
    masked, labels = mask_tokens(
        ids,
        mask_token_id=tokenizer.mask_token_id,
        special_ids=tokenizer.all_special_ids,
        vocab_size=tokenizer.vocab_size,
        special_tokens_mask=encoded["special_tokens_mask"],
        mlm_probability=mlm_probability,
        min_masked=1,
        generator=torch.Generator().manual_seed(seed),
    )
    work = copy.deepcopy(model).cpu().eval()
    before = _score(work, masked, labels)
    optimizer = torch.optim.SGD(work.parameters(), lr=learning_rate)
    work(masked, labels=labels).loss.backward()
    optimizer.step()
    after = _score(work, masked, labels)
    probs = before["probs"]
    top = probs.topk(min(top_k, probs.shape[-1]), dim=-1)
    row = labels[0]
    return StepTrace(
        tokens=encoded.tokens(0),
        ids=ids[0].tolist(),
        shown=tokenizer.convert_ids_to_tokens(masked[0].tolist()),
        outcomes=classify_outcomes(
            ids[0],
            masked[0],
            row,
            special_ids=tokenizer.all_special_ids,
            mask_token_id=tokenizer.mask_token_id,
        ),
        targets=(row != IGNORE_INDEX).nonzero().flatten().tolist(),
        top=[
            list(zip(tokenizer.convert_ids_to_tokens(i.tolist()), p.tolist(), strict=True))
            for i, p in zip(top.indices, top.values, strict=True)
        ],
        target_probability=before["target"].tolist(),
        loss=before["loss"],
        target_probability_after=after["target"].tolist(),
        loss_after=after["loss"],
        learning_rate=learning_rate,
    )


def _check_trace(text: Any, seed: Any, top_k: Any, learning_rate: Any) -> tuple[int, int, float]:
    """:func:`trace_mlm_step`'s inputs: a sentence, and its numbers as Python numbers (its
    ``mlm_probability`` is checked by the masking)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("trace_mlm_step needs a non-empty sentence")
    return (
        check_seed(seed),
        check_positive_int(top_k, "top_k"),
        check_number(learning_rate, "learning_rate", low=0.0),  # 0: a step that changes nothing
    )


def _score(model: Any, masked: Any, labels: Any) -> dict[str, Any]:
    """The model's loss and, per target, the softmax and p(original token)."""
    import torch

    with torch.no_grad():
        out = model(masked, labels=labels, logits_at_labels=True)
    probs = out.logits.float().softmax(-1)  # (N, V): one row per target
    targets = labels[labels != -100]
    target = probs[torch.arange(len(targets)), targets]
    loss = float(out.loss)
    mean = float(-target.log().mean())
    if not math.isclose(loss, mean, rel_tol=1e-4, abs_tol=1e-5):
        raise RuntimeError(f"the model's loss {loss} is not the mean -log p {mean} of its targets")
    return {"probs": probs, "target": target, "loss": loss}


def explainer_html(trace: StepTrace, stage: int) -> str:
    """The trace drawn up to ``stage`` (1-5, see :data:`STAGES`), earlier stages kept above."""
    if not 1 <= stage <= len(STAGES):
        raise ValueError(f"stage must be in [1, {len(STAGES)}], got {stage}")
    panels = [_tokens_panel, _masking_panel, _predictions_panel, _loss_panel, _update_panel]
    parts = [
        f'<div style="margin:4px 0 10px 0"><div style="font-size:13px;margin-bottom:3px">'
        f"<b>{html.escape(STAGES[k])}</b></div>{panels[k](trace)}</div>"
        for k in range(stage)
    ]
    return f"<div>{''.join(parts)}</div>"


def _note(text: str) -> str:
    return f'<div style="font-size:12px;color:#444;margin-top:3px">{html.escape(text)}</div>'


def _tokens_panel(trace: StepTrace) -> str:
    chips = [Chip(t, below=str(i)) for t, i in zip(trace.tokens, trace.ids, strict=True)]
    return chips_html(chips) + _note(
        f"{len(trace.tokens)} tokens with their ids; [CLS] and [SEP] are never masked."
    )


def _masking_panel(trace: StepTrace) -> str:
    return render_masking(trace.tokens, trace.shown, trace.outcomes) + _note(
        "Each ordinary token is a target with probability mlm_probability; a target is then "
        "shown as [MASK] (80%), a random token (10%) or itself (10%)."
    )


def _predictions_panel(trace: StepTrace) -> str:
    charts = []
    for n, position in enumerate(trace.targets):
        candidates = [{"token_str": t, "score": p} for t, p in trace.top[n]]
        title = (
            f"position {position}: reads {trace.shown[position]!r}, target "
            f"{trace.tokens[position]!r} (p = {trace.target_probability[n]:.1%})"
        )
        charts.append(candidate_bars_html(candidates, title))
    return "".join(charts) + _note(
        "The model's top guesses at each target, with their probabilities. It predicts at "
        "kept and random targets too: it cannot tell which of the tokens it reads are real."
    )


def _loss_panel(trace: StepTrace) -> str:
    rows = "".join(
        f"<tr><td>{position}</td><td style='font-family:monospace'>"
        f"{html.escape(trace.tokens[position])}</td><td>{p:.4f}</td><td>{-math.log(p):.3f}</td></tr>"
        for position, p in zip(trace.targets, trace.target_probability, strict=True)
    )
    ignored = len(trace.tokens) - len(trace.targets)
    table = (
        "<table style='font-size:12px;border-collapse:collapse' cellpadding='3'>"
        "<tr><th>position</th><th>target</th><th>p(target)</th><th>-log p</th></tr>"
        f"{rows}</table>"
    )
    return table + _note(
        f"loss = mean of -log p over the {len(trace.targets)} targets = {trace.loss:.3f}. "
        f"The other {ignored} positions have label -100 and add nothing to the loss."
    )


def _update_panel(trace: StepTrace) -> str:
    rows = "".join(
        f"<tr><td style='font-family:monospace'>{html.escape(trace.tokens[position])}</td>"
        f"<td>{before:.4f}</td><td>{after:.4f}</td></tr>"
        for position, before, after in zip(
            trace.targets, trace.target_probability, trace.target_probability_after, strict=True
        )
    )
    table = (
        "<table style='font-size:12px;border-collapse:collapse' cellpadding='3'>"
        f"<tr><th>target</th><th>p before</th><th>p after</th></tr>{rows}</table>"
    )
    return table + _note(
        f"One SGD step (learning rate {trace.learning_rate:g}) on this sentence's loss: "
        f"{trace.loss:.3f} -> {trace.loss_after:.3f}. Training repeats this over millions of "
        "sentences, each with a new mask."
    )


def mlm_explainer(
    checkpoints: Mapping[str, Any],
    tokenizer: Any,
    sentences: Sequence[str],
    *,
    mlm_probability: float = 0.15,
    draws: int = 3,
    top_k: int = 3,
    learning_rate: float = 0.01,
    seed: int = 0,
) -> Any:
    """The explainer's :class:`~mlmcourse.viz.static.View`: a sentence menu, a checkpoint
    slider (``checkpoints`` maps a label such as ``"step 600"`` to a model), a "new mask"
    button stepping through ``draws`` seeded masks and a stage slider. Displaying it gives
    ipywidgets in a notebook and the precomputed page in the book, from the same functions."""
    from mlmcourse.viz.static import Control, View

    if not checkpoints or not sentences:
        raise ValueError("mlm_explainer needs at least one checkpoint and one sentence")
    if draws < 1:
        raise ValueError(f"draws must be at least 1, got {draws}")
    traces: dict[tuple[str, str, int], StepTrace] = {}

    def render(sentence: str, checkpoint: str, draw: int, stage: int) -> str:
        key = (sentence, checkpoint, draw)
        if key not in traces:
            traces[key] = trace_mlm_step(
                checkpoints[checkpoint],
                tokenizer,
                sentence,
                mlm_probability=mlm_probability,
                seed=seed + draw,
                top_k=top_k,
                learning_rate=learning_rate,
            )
        return explainer_html(traces[key], stage)

    names = list(checkpoints)
    controls = [
        Control.of("sentence", "sentence", list(sentences)),
        Control("checkpoint", "checkpoint", [(n, n) for n in names], "slider"),
        Control(
            "draw", "new mask", [(f"mask {d + 1} of {draws}", d) for d in range(draws)], "cycle"
        ),
        Control("stage", "stage", [(s, k + 1) for k, s in enumerate(STAGES)], "slider"),
    ]
    return View(render, controls, title="One MLM training step, explained")
