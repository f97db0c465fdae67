"""Pictures for the masking chapter: the masking explorer and the static-vs-dynamic plot.

:func:`render_masking` turns plain lists (tokens, what the model sees, labels, outcomes) into
HTML chips; :func:`classify_outcomes` names each position's fate from the tensors
:func:`~mlmcourse.masking.mask_tokens` returns; :func:`masking_html` does both for a sentence.
All three are pure and tested without a browser; :func:`masking_explorer` only wires a text box,
sliders, a whole-word toggle and a resample button to :func:`masking_html`.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from typing import Any

from mlmcourse.utils.labels import IGNORE_INDEX
from mlmcourse.viz.html import Chip, chips_html, legend_html

__all__ = [
    "OUTCOMES",
    "classify_outcomes",
    "masking_explorer",
    "masking_html",
    "masking_view",
    "plot_distinct_masks",
    "render_masking",
]

# outcome -> (legend text, chip colour); Okabe-Ito hues lightened, as in viz.html.PALETTE.
OUTCOMES: dict[str, tuple[str, str]] = {
    "mask": ("replaced by [MASK]", "#f9c98b"),
    "random": ("replaced by a random token", "#f4a3c4"),
    "kept": ("kept, but predicted", "#a9dcf5"),
    "unselected": ("not selected", "#f2f2f2"),
    "special": ("special (never selected)", "#d0d0d0"),
}


def classify_outcomes(
    input_ids: Sequence[int],
    masked_ids: Sequence[int],
    labels: Sequence[int],
    *,
    special_ids: Sequence[int] = (),
    mask_token_id: int,
) -> list[str]:
    """Name the fate of each position: ``mask``, ``random``, ``kept``, ``unselected``, ``special``.

    A target (``label != -100``) shown as ``[MASK]`` is ``mask``; shown as another id it is
    ``random``; shown as itself it is ``kept`` (a random draw that happens to hit the original
    id also looks kept, which is what the model sees). Takes lists or 1-D tensors of one row.
    """
    rows = [_as_list(x) for x in (input_ids, masked_ids, labels)]
    if len({len(row) for row in rows}) != 1:
        raise ValueError(
            "input_ids, masked_ids and labels must have one entry per position, got lengths "
            f"{[len(row) for row in rows]}"
        )
    specials = set(_as_list(special_ids))
    outcomes = []
    for original, shown, label in zip(*rows, strict=True):
        if label == IGNORE_INDEX:
            outcomes.append("special" if original in specials else "unselected")
        elif shown == mask_token_id:
            outcomes.append("mask")
        elif shown != original:
            outcomes.append("random")
        else:
            outcomes.append("kept")
    return outcomes


def _as_list(values: Any) -> list:
    if hasattr(values, "tolist"):
        values = values.tolist()
    return list(values)


def render_masking(
    tokens: Sequence[str],
    shown: Sequence[str],
    outcomes: Sequence[str],
    *,
    word_starts: Sequence[bool] | None = None,
    caption: str = "",
) -> str:
    """HTML: one chip per position, showing what the model sees, coloured by outcome.

    Beneath each chip is its label: the original token the loss asks for at a target, and
    ``·`` where nothing is predicted (label ``-100``). ``word_starts`` joins the pieces of a
    word (``False`` continues the previous word). A legend and a count line follow.
    """
    if not len(tokens) == len(shown) == len(outcomes):
        raise ValueError(
            "tokens, shown and outcomes must have the same length, got "
            f"{len(tokens)}, {len(shown)} and {len(outcomes)}"
        )
    unknown = sorted(set(outcomes) - set(OUTCOMES))
    if unknown:
        raise ValueError(f"unknown outcomes {unknown}; expected some of {list(OUTCOMES)}")
    starts = [True] * len(tokens) if word_starts is None else list(word_starts)
    if len(starts) != len(tokens):
        raise ValueError(f"word_starts has {len(starts)} entries for {len(tokens)} tokens")
    chips = []
    for token, seen, outcome, start in zip(tokens, shown, outcomes, starts, strict=True):
        target = outcome in ("mask", "random", "kept")
        chips.append(
            Chip(
                text=seen,
                color=OUTCOMES[outcome][1],
                below=token if target else "·",
                title=f"original: {token} | {OUTCOMES[outcome][0]}"
                + (f" | label: {token}" if target else " | label: -100"),
                group_start=start,
            )
        )
    counts = Counter(outcomes)
    targets = counts["mask"] + counts["random"] + counts["kept"]
    ordinary = targets + counts["unselected"]
    summary = (
        f"{targets} of {ordinary} ordinary tokens are targets: {counts['mask']} [MASK], "
        f"{counts['random']} random, {counts['kept']} kept. Labels beneath (· = -100)."
    )
    legend = legend_html([(label, color) for label, color in OUTCOMES.values()])
    return (
        f"<div>{chips_html(chips, caption=caption)}{legend}"
        f'<div style="font-size:12px;color:#444;margin-top:4px">{html.escape(summary)}</div></div>'
    )


def masking_html(
    tokenizer: Any,
    text: str,
    *,
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    whole_word: bool = False,
    min_masked: int = 1,
    seed: int = 0,
) -> str:
    """Tokenize ``text``, mask it once with ``seed`` and render the result (see
    :func:`render_masking`). Bad settings give an HTML message, not an exception, so a widget
    whose sliders add up to more than 1 says why instead of going blank."""
    import torch

    from mlmcourse.masking import mask_tokens, mask_whole_words

    if not isinstance(text, str) or not text.strip():
        return "<div><i>Type a sentence to mask.</i></div>"
    encoded = tokenizer([text])
    word_ids = [-1 if w is None else w for w in encoded.word_ids(0)]
    settings = dict(
        mask_token_id=tokenizer.mask_token_id,
        special_ids=tokenizer.all_special_ids,
        vocab_size=tokenizer.vocab_size,
        special_tokens_mask=encoded["special_tokens_mask"],
        mlm_probability=mlm_probability,
        mask_replace_prob=mask_replace_prob,
        random_replace_prob=random_replace_prob,
        min_masked=min_masked,
        generator=torch.Generator().manual_seed(seed),
    )
    ids = encoded["input_ids"]
    try:
        if whole_word:
            masked, labels = mask_whole_words(ids, torch.tensor([word_ids]), **settings)
        else:
            masked, labels = mask_tokens(ids, **settings)
    except ValueError as error:
        return f'<div style="color:#a00">{html.escape(str(error))}</div>'
    outcomes = classify_outcomes(
        ids[0],
        masked[0],
        labels[0],
        special_ids=tokenizer.all_special_ids,
        mask_token_id=tokenizer.mask_token_id,
    )
    previous = [None, *word_ids[:-1]]
    starts = [w < 0 or w != p for w, p in zip(word_ids, previous, strict=True)]
    strategy = "whole-word" if whole_word else "token"
    return render_masking(
        encoded.tokens(0),
        tokenizer.convert_ids_to_tokens(masked[0].tolist()),
        outcomes,
        word_starts=starts,
        caption=f"{strategy} masking, mlm_probability={mlm_probability:g}, seed {seed}",
    )


# The static book's masking view: every rate, both strategies, three replacement splits and
# four draws per sentence (288 states of one sentence, a few tens of kB).
STATIC_RATES = [round(0.05 * k, 2) for k in range(1, 13)]
STATIC_SPLITS = {
    "80% [MASK], 10% random, 10% kept (BERT)": (0.8, 0.1),
    "100% [MASK]": (1.0, 0.0),
    "50% [MASK], 50% random": (0.5, 0.5),
}
STATIC_DRAWS = 4


def masking_view(
    tokenizer: Any,
    sentences: Sequence[str],
    *,
    mlm_probability: float = 0.3,
    whole_word: bool = False,
    seed: int = 0,
) -> Any:
    """The masking explorer for a page without a kernel: a :class:`~mlmcourse.viz.static.View`
    over :func:`masking_html` with a sentence menu, a rate slider, the whole-word switch, the
    replacement split and a "resample" button stepping through a few draws."""
    from mlmcourse.viz.static import Control, View

    if not sentences:
        raise ValueError("masking_view needs at least one sentence")
    rates = sorted({*STATIC_RATES, round(float(mlm_probability), 2)})

    def render(sentence: str, rate: float, whole: bool, split: tuple, draw: int) -> str:
        return masking_html(
            tokenizer,
            sentence,
            mlm_probability=rate,
            mask_replace_prob=split[0],
            random_replace_prob=split[1],
            whole_word=whole,
            seed=seed + draw,
        )

    controls = [
        Control.of("sentence", "sentence", list(sentences)),
        Control.of(
            "rate", "mlm_probability", rates, kind="slider", initial=round(mlm_probability, 2)
        ),
        Control(
            "whole", "whole-word masking", [("off", False), ("on", True)], "toggle", int(whole_word)
        ),
        Control("split", "replacement", list(STATIC_SPLITS.items())),
        Control(
            "draw",
            "resample",
            [(f"draw {d + 1} of {STATIC_DRAWS}", d) for d in range(STATIC_DRAWS)],
            "cycle",
        ),
    ]
    return View(render, controls, title="The masking explorer")


def masking_explorer(
    tokenizer: Any,
    text: str,
    *,
    mlm_probability: float = 0.3,
    whole_word: bool = False,
    seed: int = 0,
    examples: Sequence[str] = (),
):
    """A text box, rate sliders, a whole-word toggle and a resample button over
    :func:`masking_html`. Each press of "resample" draws a new mask, as a new epoch would.

    Displayed in the book, it is :func:`masking_view` of ``text`` and ``examples`` instead."""
    import ipywidgets as widgets

    from mlmcourse.viz.static import Explorer

    box = widgets.Text(value=text, description="sentence", layout=widgets.Layout(width="640px"))
    style = {"description_width": "150px"}
    rate = widgets.FloatSlider(
        value=mlm_probability,
        min=0.0,
        max=1.0,
        step=0.05,
        description="mlm_probability",
        style=style,
    )
    as_mask = widgets.FloatSlider(
        value=0.8, min=0.0, max=1.0, step=0.05, description="mask_replace_prob", style=style
    )
    as_random = widgets.FloatSlider(
        value=0.1, min=0.0, max=1.0, step=0.05, description="random_replace_prob", style=style
    )
    words = widgets.Checkbox(value=whole_word, description="whole-word masking")
    resample = widgets.Button(description="resample", icon="refresh")
    out = widgets.HTML()
    state = {"seed": seed}

    def redraw(*_: Any) -> None:
        out.value = masking_html(
            tokenizer,
            box.value,
            mlm_probability=rate.value,
            mask_replace_prob=as_mask.value,
            random_replace_prob=as_random.value,
            whole_word=words.value,
            seed=state["seed"],
        )

    def new_draw(_: Any) -> None:
        state["seed"] += 1
        redraw()

    for control in (box, rate, as_mask, as_random, words):
        control.observe(redraw, names="value")
    resample.on_click(new_draw)
    redraw()
    static = masking_view(
        tokenizer,
        [text, *examples],
        mlm_probability=mlm_probability,
        whole_word=whole_word,
        seed=seed,
    )
    return Explorer(
        [box, widgets.HBox([rate, words]), widgets.HBox([as_mask, as_random]), resample, out],
        static,
    )


def plot_distinct_masks(
    epochs: Sequence[int], curves: dict[str, Sequence[float]], *, title: str = ""
) -> Any:
    """Distinct masks seen by one sentence after each epoch, one line per way of masking.

    ``curves`` maps a name (``"dynamic"``, ``"static"``) to one count per entry of ``epochs``.
    Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    if not curves:
        raise ValueError("plot_distinct_masks needs at least one curve")
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    for name, counts in curves.items():
        if len(counts) != len(epochs):
            raise ValueError(f"curve {name!r} has {len(counts)} points for {len(epochs)} epochs")
        ax.plot(list(epochs), list(counts), marker="o", markersize=3, label=name)
    ax.set_xlabel("epochs")
    ax.set_ylabel("distinct masks of the sentence")
    ax.grid(alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
