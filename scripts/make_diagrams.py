"""Draw the course's diagrams as SVG files, ``book/figures/<name>.svg`` (the single source).

Each diagram is a small function of boxes, arrows and labels, so a change is a code change a
reviewer can read, and every file carries a ``<title>`` and a ``<desc>`` for screen readers.
The layout measures its labels in DejaVu Sans (and DejaVu Sans Mono), the widest of the fonts a
reader's ``system-ui`` falls back to (Linux's; Liberation, Helvetica, Segoe UI and San Francisco
are narrower), with matplotlib's copy of the font, so the measure is the same on every machine:
a label that leaves the canvas, overlaps another or is set under 10 units is an error, not a
figure.
The chapters show them with MyST's ``figure`` directive (with ``:alt:``); the Colab notebooks and
the classroom editions embed them (``scripts/myst_markdown.py``), since a learner has no
repository.

    python scripts/make_diagrams.py            # write book/figures/*.svg
    python scripts/make_diagrams.py --check    # fail if a file is stale or missing
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path

FIGURES = Path(__file__).resolve().parent.parent / "book" / "figures"
FIGURE = re.compile(r"^```\{figure\} (?P<src>\S+)\n:alt: (?P<alt>[^\n]+)$", re.M)
FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
MONO = "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace"
# (fill, stroke) pairs, the same meaning in every diagram.
BLUE = ("#dbeafe", "#1d4ed8")  # the encoder and what it computes
ORANGE = ("#ffedd5", "#c2410c")  # masking, targets, the loss
GREEN = ("#dcfce7", "#15803d")  # heads and tasks
GRAY = ("#f3f4f6", "#6b7280")  # padding, ignored positions, plumbing
PURPLE = ("#ede9fe", "#6d28d9")  # positions and segments
INK = "#111827"
MIN_TEXT = 10  # the smallest font size, in the figure's units


def text_width(s: str, size: float, *, mono: bool = False, bold: bool = False) -> float:
    """The width of ``s`` set in DejaVu Sans (Mono) at ``size``, in the figure's units."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    family = "DejaVu Sans Mono" if mono else "DejaVu Sans"
    prop = FontProperties(family=family, weight="bold" if bold else "normal", size=size)
    width, _, _ = TextToPath().get_text_width_height_descent(s, prop, ismath=False)
    return width


def overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The area two boxes ``(x0, y0, x1, y1)`` share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


class Svg:
    """An SVG canvas with the few shapes the diagrams need."""

    def __init__(self, width: int, height: int, title: str, desc: str) -> None:
        self.width, self.height = width, height
        self.title, self.desc = title, desc
        self.parts: list[str] = []
        self.labels: list[tuple[str, tuple[float, float, float, float], float]] = []

    def box(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        label: str = "",
        colors: tuple[str, str] = BLUE,
        *,
        size: int = 14,
        mono: bool = False,
        bold: bool = False,
        dashed: bool = False,
    ) -> None:
        fill, stroke = colors
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        self.parts.append(
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.5"{dash}/>'
        )
        if label:
            lines = label.split("\n")
            top = y + h / 2 - (len(lines) - 1) * size * 0.6
            for i, line in enumerate(lines):
                self.text(x + w / 2, top + i * size * 1.2, line, size=size, mono=mono, bold=bold)

    def text(
        self,
        x: float,
        y: float,
        s: str,
        *,
        size: int = 14,
        anchor: str = "middle",
        mono: bool = False,
        bold: bool = False,
        color: str = INK,
        italic: bool = False,
    ) -> None:
        family = MONO if mono else FONT
        width = text_width(s, size, mono=mono, bold=bold)
        left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
        self.labels.append((s, (left, y - 0.6 * size, left + width, y + 0.6 * size), size))
        weight = ' font-weight="bold"' if bold else ""
        style = ' font-style="italic"' if italic else ""
        self.parts.append(
            f'<text x="{x}" y="{y}" font-family="{family}" font-size="{size}" fill="{color}" '
            f'text-anchor="{anchor}" dominant-baseline="central"{weight}{style}>'
            f"{escape(s)}</text>"
        )

    def arrow(
        self, x1: float, y1: float, x2: float, y2: float, *, color: str = INK, dashed: bool = False
    ) -> None:
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        self.parts.append(
            f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{color}" stroke-width="1.5"'
            f'{dash} marker-end="url(#arrow)"/>'
        )

    def line(self, points: Sequence[tuple[float, float]], *, color: str = INK, arrow=False) -> None:
        path = " ".join(f"{x},{y}" for x, y in points)
        end = ' marker-end="url(#arrow)"' if arrow else ""
        self.parts.append(
            f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"{end}/>'
        )

    def layout_problems(self) -> list[str]:
        """Labels outside the canvas, overlapping another, or under :data:`MIN_TEXT`."""
        found = []
        for i, (s, box, size) in enumerate(self.labels):
            if box[0] < 0 or box[1] < 0 or box[2] > self.width or box[3] > self.height:
                found.append(f"{s!r} leaves the {self.width} x {self.height} canvas: "
                             f"{[round(v) for v in box]}")  # fmt: skip
            if size < MIN_TEXT:
                found.append(f"{s!r} is set at {size}, under {MIN_TEXT}")
            for other, other_box, _ in self.labels[i + 1 :]:
                if overlap(box, other_box) > 1.0:
                    found.append(f"{s!r} overlaps {other!r}")
        return found

    def render(self) -> str:
        problems = self.layout_problems()
        if problems:
            raise ValueError(f"{self.title}: " + "; ".join(problems))
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" role="img" '
            f'aria-labelledby="title desc">\n'
            f'<title id="title">{escape(self.title)}</title>\n'
            f'<desc id="desc">{escape(self.desc)}</desc>\n'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            f'fill="{INK}"/></marker></defs>\n'
            f'<rect width="{self.width}" height="{self.height}" fill="white"/>\n'
        )
        return head + "\n".join(self.parts) + "\n</svg>\n"


def tokens_row(
    svg: Svg,
    tokens: Sequence[str],
    x: float,
    y: float,
    *,
    w: float = 78,
    gap: float = 8,
    colors: Callable[[int, str], tuple[str, str]] | None = None,
) -> list[float]:
    """A row of token boxes; returns each box's centre x."""
    centres = []
    for i, token in enumerate(tokens):
        left = x + i * (w + gap)
        svg.box(left, y, w, 30, token, colors(i, token) if colors else GRAY, size=13, mono=True)
        centres.append(left + w / 2)
    return centres


# ---------------------------------------------------------------------------------- diagrams


def pretrain_finetune() -> Svg:
    svg = Svg(
        760,
        300,
        "Pretrain, then fine-tune",
        "Left: an encoder is pretrained with masked language modeling on a large amount of "
        "unlabelled text. Right: its weights are copied under a small new head, and both are "
        "fine-tuned (the encoder's weights change too) on a little labelled data for one task; "
        "the head gives the task's output, such as named entities, sentence labels or "
        "question answers.",
    )
    svg.text(190, 22, "1. Pretraining (once, expensive)", size=15, bold=True)
    svg.text(570, 22, "2. Fine-tuning (per task, cheap)", size=15, bold=True)
    svg.box(40, 50, 300, 44, "lots of raw text, no labels", GRAY)
    svg.arrow(190, 94, 190, 116)
    svg.box(
        40, 118, 300, 44, "mask 15% of the tokens;\npredict them from both sides", ORANGE, size=13
    )
    svg.arrow(190, 162, 190, 184)
    svg.box(40, 186, 300, 44, "pretrained encoder (BERT)", BLUE, bold=True)
    svg.arrow(340, 200, 420, 146)
    svg.text(396, 188, "copy", size=12, italic=True)
    svg.box(420, 50, 300, 44, "a little labelled data for one task", GRAY)
    svg.arrow(570, 94, 570, 116)
    svg.box(420, 118, 300, 44, "the copied encoder\n(fine-tuning updates it too)", BLUE, size=13)
    svg.arrow(570, 162, 570, 184)
    svg.box(420, 186, 300, 44, "a small new head (a few layers)", GREEN)
    for i, task in enumerate(("entities (NER)", "sentence labels", "answers (QA)")):
        svg.box(420 + i * 102, 250, 96, 36, task, GREEN, size=12)
        svg.arrow(570, 230, 468 + i * 102, 250)
    return svg


def input_embeddings() -> Svg:
    tokens = ["[CLS]", "Marie", "sings", "[SEP]", "she", "won", "[SEP]"]
    segment = ["A", "A", "A", "A", "B", "B", "B"]
    svg = Svg(
        760,
        330,
        "BERT's input embeddings",
        "Each token of a sentence pair gets three vectors of the hidden size H: its token "
        "embedding (a row of the vocabulary table), a position embedding (a row per position 0, "
        "1, 2 and so on) and a segment embedding (A for the first sentence, its [CLS] and its "
        "[SEP]; B for the second). The three are added, then normalised with LayerNorm, giving "
        "one vector per token: the (B, T, H) input of the first layer.",
    )
    xs = tokens_row(svg, tokens, 110, 20, w=84, gap=8)
    rows = [("token", BLUE, lambda i, t: f"E[{t.strip('[]')}]"), ("position", PURPLE, lambda i, t: f"P[{i}]"),
            ("segment", PURPLE, lambda i, t: f"S[{segment[i]}]")]  # fmt: skip
    for r, (name, colors, label) in enumerate(rows):
        y = 80 + r * 52
        svg.text(100, y + 17, name, size=12, anchor="end")
        for i, x in enumerate(xs):
            svg.box(x - 40, y, 80, 34, label(i, tokens[i]), colors, size=12, mono=True)
            if r:
                svg.text(x, y - 9, "+", size=16, bold=True)
    for x in xs:
        svg.arrow(x, 50, x, 78)
        svg.arrow(x, 218, x, 246)
    svg.box(110, 248, 636, 30, "sum  →  LayerNorm  →  dropout", GRAY, size=13)
    for x in xs:
        svg.arrow(x, 278, x, 296)
    svg.text(
        428, 312, "one H-dimensional vector per token: the (B, T, H) input of layer 0", size=13
    )
    return svg


def bert_layer() -> Svg:
    svg = Svg(
        560,
        420,
        "One BERT layer",
        "A layer takes one vector per token, shape (B, T, H). Multi-head self-attention mixes "
        "information between positions; its output, after dropout, is added to the input (a "
        "residual connection) and normalised with LayerNorm. A feed-forward block, applied to "
        "each position on its own (H to 4H with GELU, then back to H), follows, again with "
        "dropout, a residual connection and LayerNorm. The output has the input's shape, so "
        "layers stack: the dashed frame is repeated N times (BERT-base has 12).",
    )
    svg.box(50, 52, 490, 308, "", ("none", PURPLE[1]), dashed=True)
    svg.box(460, 62, 70, 28, "× N", PURPLE, bold=True)
    svg.box(160, 370, 240, 36, "input: (B, T, H)", GRAY)
    svg.arrow(280, 370, 280, 334)
    svg.box(160, 296, 240, 38, "multi-head self-attention", BLUE, bold=True)
    svg.arrow(280, 296, 280, 262)
    svg.box(160, 224, 240, 38, "dropout, add & LayerNorm", GRAY)
    svg.line([(280, 352), (440, 352), (440, 243), (400, 243)], arrow=True)
    svg.text(450, 300, "residual", size=12, anchor="start", italic=True)
    svg.arrow(280, 224, 280, 190)
    svg.box(160, 134, 240, 56, "feed-forward, per position:\nH → 4H, GELU, 4H → H", BLUE, size=13)
    svg.arrow(280, 134, 280, 100)
    svg.box(160, 62, 240, 38, "dropout, add & LayerNorm", GRAY)
    svg.line([(280, 208), (120, 208), (120, 81), (160, 81)], arrow=True)
    svg.text(110, 150, "residual", size=12, anchor="end", italic=True)
    svg.arrow(280, 62, 280, 30)
    svg.text(280, 18, "output: (B, T, H), the next layer's input", size=13)
    return svg


def attention_masks() -> Svg:
    tokens = ["[CLS]", "the", "cat", "[SEP]", "[PAD]", "[PAD]"]
    real = 4
    svg = Svg(
        800,
        345,
        "Attention masks: bidirectional, padding, causal with padding",
        "Three 6 by 6 grids; rows are queries, columns are keys, a filled cell means the query "
        "may attend to that key. Bidirectional, with no mask given: every query sees every key, "
        "the [PAD] ones too. "
        "Padding: the same, with the two [PAD] columns hidden from every query. Causal with "
        "padding (a GPT-style model, chapter 9): query t sees the real keys up to t only, a "
        "lower triangle; each padded row keeps its own diagonal cell, so no row is empty.",
    )
    grids = [
        ("bidirectional (no mask)", lambda q, k: True),
        ("padding", lambda q, k: k < real),
        ("causal + padding", lambda q, k: (k <= q and k < real) or k == q),
    ]
    cell = 34  # wide enough for a [PAD] at 10 units
    for g, (name, allowed) in enumerate(grids):
        left, top = 80 + g * 255, 70
        svg.text(left + 3 * cell, 24, name, size=14, bold=True)
        for k, token in enumerate(tokens):
            svg.text(left + k * cell + cell / 2, top - 12, token, size=10, mono=True)
        for q, token in enumerate(tokens):
            if g == 0:
                svg.text(
                    left - 6, top + q * cell + cell / 2, token, size=10, mono=True, anchor="end"
                )
            for k in range(len(tokens)):
                colors = BLUE if allowed(q, k) else ("#ffffff", "#d1d5db")
                svg.box(left + k * cell, top + q * cell, cell - 2, cell - 2, "", colors)
        svg.text(left + 3 * cell, top + 6 * cell + 16, "keys →", size=11, italic=True)
    svg.text(14, 50, "queries ↓", size=11, italic=True, anchor="start")
    svg.text(
        400,
        322,
        "blocked cells get a large negative score before the softmax, so their weight is 0",
        size=13,
    )
    return svg


def masking_801010() -> Svg:
    svg = Svg(
        760,
        300,
        "BERT's masking: 15%, then 80/10/10",
        "Of the tokens of a sequence, about 15% are chosen as targets; special tokens never are. "
        "Of the chosen ones, 80% are replaced by [MASK], 10% by a random token and 10% are left "
        "as they are. The labels hold the original token at the chosen positions and -100, "
        "ignored by the loss, everywhere else.",
    )
    original = ["[CLS]", "Marie", "lives", "in", "Tival", "near", "Ostra", "[SEP]"]
    chosen = {2: "[MASK]", 4: "[MASK]", 5: "sat", 6: "Ostra"}
    kinds = {2: "80%: [MASK]", 4: "80%: [MASK]", 5: "10%: random", 6: "10%: kept"}
    svg.text(20, 40, "input", size=13, anchor="start", bold=True)
    xs = tokens_row(svg, original, 110, 25, w=74)
    svg.text(20, 130, "model sees", size=13, anchor="start", bold=True)
    tokens_row(
        svg,
        [chosen.get(i, t) for i, t in enumerate(original)],
        110,
        115,
        w=74,
        colors=lambda i, t: ORANGE if i in chosen else GRAY,
    )
    svg.text(20, 220, "labels", size=13, anchor="start", bold=True)
    tokens_row(
        svg,
        [original[i] if i in chosen else "-100" for i in range(len(original))],
        110,
        205,
        w=74,
        colors=lambda i, t: ORANGE if i in chosen else ("#ffffff", "#d1d5db"),
    )
    for i, x in enumerate(xs):
        svg.arrow(x, 55, x, 113, color="#c2410c" if i in chosen else "#9ca3af")
        if i in kinds:
            svg.text(x, 162, kinds[i], size=10, color="#c2410c")
    svg.text(
        380, 262, "about 15% of the tokens are chosen (more here, to show every case;", size=12
    )
    svg.text(380, 280, "never [CLS], [SEP] or padding); the loss is computed only at them", size=12)
    return svg


def mlm_step() -> Svg:
    svg = Svg(
        760,
        420,
        "One masked-language-modeling step",
        "A masked sentence goes through the encoder, which returns one vector per token. Only "
        "at the labelled positions (the targets: most shown to the model as [MASK], some as a "
        "random word or as themselves, like Paris here), the MLM head (dense, GELU, LayerNorm, "
        "then a decoder whose weight is the token-embedding matrix) turns the vector into a "
        "score for every word of the vocabulary. The loss is the cross-entropy between those "
        "scores and the original tokens, averaged over the labelled positions; the other "
        "positions get no score and no loss.",
    )
    tokens = ["[CLS]", "Marie", "[MASK]", "in", "Paris", "[SEP]"]
    targets = {2: "lives", 4: "Paris (kept)"}
    xs = tokens_row(
        svg, tokens, 110, 340, w=86, colors=lambda i, t: ORANGE if i in targets else GRAY
    )
    for i, target in targets.items():
        svg.text(xs[i], 388, f"target: {target}", size=11, italic=True)
    for x in xs:
        svg.arrow(x, 340, x, 300)
    svg.box(110, 250, 556, 50, "encoder: embeddings + N layers", BLUE, bold=True)
    for x in xs:
        svg.arrow(x, 250, x, 218)
        svg.box(x - 30, 194, 60, 24, "h", BLUE, size=12, mono=True)
    for i in targets:
        svg.arrow(xs[i], 194, xs[i], 160)
        svg.box(xs[i] - 70, 112, 140, 48, "MLM head\n(tied to embeddings)", GREEN, size=12)
        svg.arrow(xs[i], 112, xs[i], 84)
        svg.text(xs[i], 68, "softmax over V words", size=12)
    svg.box(230, 14, 340, 34, "loss = mean of −log p(original word)", ORANGE, size=13)
    svg.arrow(xs[2], 56, 330, 48)
    svg.arrow(xs[4], 56, 470, 48)
    svg.text(20, 355, "input", size=13, anchor="start", bold=True)
    svg.text(620, 128, "unlabelled positions:", size=11, anchor="start", italic=True)
    svg.text(620, 144, "no score, no loss", size=11, anchor="start", italic=True)
    return svg


def multi_head_attention() -> Svg:
    svg = Svg(
        780,
        380,
        "Multi-head attention, with shapes",
        "The input (B, T, H) is projected three times into queries, keys and values, each "
        "(B, T, H). Each is split into h heads of d = H / h numbers and the heads are moved "
        "next to the batch: (B, h, T, d). Every head scores its queries against its keys, "
        "(B, h, T, T), takes a softmax over the keys and averages its values, (B, h, T, d). "
        "The heads are put side by side again, (B, T, H), and one output projection mixes them.",
    )
    svg.box(290, 14, 200, 34, "x  (B, T, H)", GRAY, mono=True, size=13)
    for i, name in enumerate(("Q", "K", "V")):
        x = 120 + i * 200
        svg.arrow(390, 48, x + 70, 74)
        svg.box(x, 76, 140, 34, f"{name} = x W{name.lower()}  (B, T, H)", BLUE, mono=True, size=11)
        svg.arrow(x + 70, 110, x + 70, 132)
        for head in range(3):
            svg.box(x + 4 + head * 46, 134, 42, 30, f"h{head + 1}", PURPLE, size=11, mono=True)
        svg.text(x + 70, 178, "(B, h, T, d), d = H / h", size=11, mono=True)
    svg.arrow(190, 186, 330, 214)
    svg.arrow(390, 186, 390, 212)
    svg.box(250, 214, 280, 34, "scores = Q Kᵀ / √d   (B, h, T, T)", ORANGE, mono=True, size=12)
    svg.arrow(390, 248, 390, 268)
    svg.box(250, 270, 280, 30, "softmax over keys, then × V  (B, h, T, d)", ORANGE, size=12)
    svg.arrow(590, 186, 530, 284)
    svg.arrow(390, 300, 390, 320)
    svg.box(200, 322, 380, 34, "heads side by side (B, T, H), then × Wo", GREEN, size=13)
    svg.text(660, 230, "each head:", size=11, anchor="start", italic=True)
    svg.text(660, 246, "its own T × T", size=11, anchor="start", italic=True)
    svg.text(660, 262, "attention pattern", size=11, anchor="start", italic=True)
    return svg


def wordpiece_greedy() -> Svg:
    svg = Svg(
        760,
        300,
        "WordPiece's greedy longest match",
        "WordPiece splits a word from the left: it takes the longest prefix that is in the "
        "vocabulary, then the longest piece of the rest, marked as a continuation, and so on. "
        "For 'unhappily' with a vocabulary holding un and the continuations happ and ily, but "
        "not unh or unhappily, it tries unhappily, unhappil and shorter prefixes until un "
        "matches, then the continuations happily down to happ, then ily: un, happ, ily. If "
        "some rest matches nothing, the whole word becomes [UNK].",
    )
    svg.text(380, 22, "unhappily  →  un  ##happ  ##ily", size=15, bold=True, mono=True)
    steps = [
        ("unhappily", ["unhappily ✗", "unhappil ✗", "…", "unh ✗", "un ✓"]),
        ("##happily", ["##happily ✗", "##happil ✗", "…", "##happ ✓"]),
        ("##ily", ["##ily ✓"]),
    ]
    for r, (rest, tries) in enumerate(steps):
        y = 56 + r * 74
        svg.box(30, y, 130, 34, rest, GRAY, mono=True, size=13)
        svg.arrow(160, y + 17, 190, y + 17)
        for i, attempt in enumerate(tries):
            good = attempt.endswith("✓")
            svg.box(192 + i * 112, y, 104, 34, attempt, GREEN if good else ("#ffffff", "#d1d5db"),
                    mono=True, size=12)  # fmt: skip
        last = r == len(steps) - 1
        note = (
            "nothing is left: done"
            if last
            else "the longest piece in the vocabulary wins; the rest goes on"
        )
        svg.text(192, y + 50, note, size=11, anchor="start", italic=True)
    svg.text(380, 284, "no piece fits some rest  →  the whole word is [UNK]", size=13)
    return svg


def masking_strategies() -> Svg:
    tokens = ["P", "##ak", "##ron", "##s", "##ok", "lost", "their", "trum", "##pet"]
    svg = Svg(
        780,
        260,
        "Token, whole-word and span masking",
        "The same sentence masked three ways. Token masking chooses pieces on their own, so it "
        "may hide part of a word (the piece ron of Pakronsok). Whole-word masking chooses words "
        "and hides all of a chosen word's pieces (trum and pet). Span masking hides a run of whole "
        "words (Pakronsok lost).",
    )
    rows = [
        ("token", {2, 7}),
        ("whole word", {7, 8}),
        ("span", {0, 1, 2, 3, 4, 5}),
    ]
    for r, (name, hidden) in enumerate(rows):
        y = 30 + r * 74
        svg.text(118, y + 15, name, size=13, anchor="end", bold=True)
        tokens_row(
            svg, ["[MASK]" if i in hidden else t for i, t in enumerate(tokens)], 130, y, w=62,
            gap=6, colors=lambda i, t, hidden=hidden: ORANGE if i in hidden else GRAY,
        )  # fmt: skip
    svg.text(420, 244, "orange: targets, drawn as [MASK]; one 80/10/10 draw per piece, word or span",
             size=12)  # fmt: skip
    return svg


def weight_tying() -> Svg:
    svg = Svg(
        760,
        250,
        "Weight tying",
        "The token-embedding matrix (V by H) turns a token id into its vector at the input. "
        "The MLM head's decoder uses the same matrix, transposed, to turn a vector back into "
        "one score per vocabulary entry. One matrix, two uses: its V times H numbers are "
        "stored and trained once.",
    )
    svg.box(30, 100, 140, 40, "token id", GRAY, mono=True, size=13)
    svg.arrow(170, 120, 220, 120)
    svg.box(222, 70, 170, 100, "E\n(V × H)\nembeddings", BLUE, bold=True, size=13)
    svg.arrow(392, 120, 430, 120)
    svg.box(432, 96, 100, 48, "encoder\n+ transform", GRAY, size=12)
    svg.arrow(532, 120, 568, 120)
    svg.box(570, 96, 160, 48, "h · Eᵀ + b\n(V scores)", GREEN, size=12, mono=True)
    svg.line([(307, 70), (307, 40), (650, 40), (650, 94)], arrow=True, color="#1d4ed8")
    svg.text(478, 28, "the decoder's weight IS E (the same tensor)", size=12, italic=True)
    svg.text(380, 214, "input: row of E for a token; output: dot product with every row of E",
             size=12)  # fmt: skip
    return svg


def pipeline_map() -> Svg:
    svg = Svg(
        780,
        200,
        "From text to loss: chapters 1 to 4",
        "Chapter 1, the tokenizer, turns text into input_ids (B, T) and an attention_mask. "
        "Chapter 2, the masking collator, picks targets: masked input_ids and labels (B, T), "
        "-100 where there is no target. Chapter 3, the encoder, turns the ids into hidden "
        "states (B, T, H). Chapter 4, the MLM head, scores the labelled positions over the "
        "vocabulary, (N, V), and the cross-entropy with the labels is the loss.",
    )
    stages = [
        ("1 tokenizer", "text → input_ids (B, T)\n+ attention_mask"),
        ("2 masking", "→ masked input_ids,\nlabels (B, T), -100"),
        ("3 encoder", "→ hidden states\n(B, T, H)"),
        ("4 MLM head + loss", "→ logits (N, V) at\nlabels; cross-entropy"),
    ]
    for i, (name, what) in enumerate(stages):
        x = 20 + i * 190
        svg.text(x + 85, 40, name, size=14, bold=True)
        svg.box(x, 60, 170, 70, what, (BLUE, GREEN, PURPLE, ORANGE)[i], size=11, mono=True)
        if i < 3:
            svg.arrow(x + 170, 95, x + 188, 95)
    svg.text(390, 168, "N = number of labelled positions (15% of the tokens in BERT)", size=12,
             italic=True)  # fmt: skip
    return svg


def clm_vs_mlm_targets() -> Svg:
    svg = Svg(
        780,
        300,
        "Targets of masked and causal language modeling",
        "The same sentence trained two ways. Masked LM: some tokens are replaced by [MASK] and "
        "only those positions have a target, the original token, predicted from both sides. "
        "Causal LM: every position is a target, the next token, predicted from the left only; "
        "the first token is never a target and the last token's target is none.",
    )
    sentence = ["[CLS]", "Marie", "lives", "in", "Tival", "[SEP]"]
    svg.text(20, 30, "masked LM (BERT): predict the hidden tokens, seeing both sides", size=14,
             anchor="start", bold=True)  # fmt: skip
    masked = ["[CLS]", "Marie", "[MASK]", "in", "[MASK]", "[SEP]"]
    xs = tokens_row(svg, masked, 110, 50, w=86,
                    colors=lambda i, t: ORANGE if t == "[MASK]" else GRAY)  # fmt: skip
    targets = ["·", "·", "lives", "·", "Tival", "·"]
    tokens_row(svg, targets, 110, 100, w=86,
               colors=lambda i, t: ORANGE if t != "·" else ("#ffffff", "#d1d5db"))  # fmt: skip
    svg.text(20, 65, "input", size=12, anchor="start")
    svg.text(20, 115, "target", size=12, anchor="start")
    for i in (2, 4):
        svg.arrow(xs[i], 80, xs[i], 100)
    svg.text(20, 170, "causal LM (GPT): predict the next token, seeing only the left", size=14,
             anchor="start", bold=True)  # fmt: skip
    xs = tokens_row(svg, sentence, 110, 190, w=86)
    nxt = [*sentence[1:], "·"]
    tokens_row(svg, nxt, 110, 246, w=86,
               colors=lambda i, t: BLUE if t != "·" else ("#ffffff", "#d1d5db"))  # fmt: skip
    svg.text(20, 205, "input", size=12, anchor="start")
    svg.text(20, 261, "target", size=12, anchor="start")
    for i in range(len(sentence) - 1):
        svg.arrow(xs[i + 1] - 10, 220, xs[i] + 10, 246, color="#1d4ed8")
    return svg


def bio_alignment() -> Svg:
    svg = Svg(
        780,
        290,
        "BIO tags on words, labels on pieces",
        "NER data gives one BIO tag per word: B- begins an entity, I- continues it, O is "
        "outside. The tokenizer splits words into pieces. Each word's tag goes to its first "
        "piece; its later pieces, [CLS], [SEP] and padding get -100, which the loss ignores. "
        "At prediction time the first piece's label is read back as the word's tag.",
    )
    words = [("Marie", "B-PER"), ("Curie", "I-PER"), ("visited", "O"), ("Tivalmund", "B-LOC")]
    pieces = ["[CLS]", "marie", "curie", "visited", "tiv", "##al", "##mund", "[SEP]"]
    owner = [None, 0, 1, 2, 3, 3, 3, None]
    word_x = {}
    left = 150
    for i, (word, tag) in enumerate(words):
        svg.box(left + i * 150, 20, 120, 30, word, GRAY, size=13, mono=True)
        svg.box(left + i * 150, 56, 120, 26, tag, ORANGE if tag != "O" else GRAY, size=12,
                mono=True)  # fmt: skip
        word_x[i] = left + i * 150 + 60
    svg.text(20, 35, "words", size=12, anchor="start")
    svg.text(20, 69, "tags", size=12, anchor="start")
    xs = tokens_row(svg, pieces, 100, 160, w=74)
    svg.text(20, 175, "pieces", size=12, anchor="start")
    labels = []
    for p, o in enumerate(owner):
        first = o is not None and owner.index(o) == p
        labels.append(words[o][1] if first else "-100")
        if o is not None:
            svg.arrow(
                word_x[o], 82, xs[p], 160, color=INK if first else "#9ca3af", dashed=not first
            )
    tokens_row(svg, labels, 100, 220, w=74,
               colors=lambda i, t: ORANGE if t not in ("-100", "O") else
               (GRAY if t == "O" else ("#ffffff", "#d1d5db")))  # fmt: skip
    svg.text(20, 235, "labels", size=12, anchor="start")
    svg.text(420, 275, "the first piece carries the word's tag; -100 is ignored by the loss",
             size=12)  # fmt: skip
    return svg


def qa_windows() -> Svg:
    svg = Svg(
        780,
        330,
        "Question answering windows",
        "A context longer than the model reads is cut into overlapping windows. Each window is "
        "one input, [CLS] question [SEP] part of the context [SEP]; consecutive windows overlap "
        "(Hugging Face's doc_stride), so an answer near a cut is whole in at least one window. "
        "A window that holds the answer is trained to point at its first and last token; a "
        "window that misses it points at [CLS].",
    )
    svg.text(20, 22, "a context too long for one input, cut into windows that overlap", size=14,
             anchor="start", bold=True)  # fmt: skip
    svg.box(20, 40, 740, 30, "", GRAY)
    svg.box(560, 44, 80, 22, "answer", ORANGE, size=12, bold=True)
    windows = [(20, 320), (240, 540), (440, 760)]
    for w, (start, end) in enumerate(windows):
        y = 92 + w * 34
        has = start <= 560 and end >= 640
        color = "#c2410c" if has else "#1d4ed8"
        svg.line([(start, y - 6), (start, y), (end, y), (end, y - 6)], color=color)
        svg.text((start + end) / 2, y + 11, f"window {w + 1}", size=11, color=color)
    for start, end in ((240, 320), (440, 540)):
        svg.box(start, 40, end - start, 30, "", ("#e0e7ff", "#6366f1"), dashed=True)
    svg.text(280, 82, "overlap", size=10, italic=True, color="#4338ca")
    svg.text(490, 82, "overlap", size=10, italic=True, color="#4338ca")
    svg.text(20, 212, "each window is one input:", size=13, anchor="start", bold=True)
    svg.box(20, 226, 70, 34, "[CLS]", GREEN, size=12, mono=True)
    svg.box(96, 226, 110, 34, "question", PURPLE, size=12)
    svg.box(212, 226, 56, 34, "[SEP]", GRAY, size=12, mono=True)
    svg.box(274, 226, 300, 34, "its slice of the context", BLUE, size=12)
    svg.box(580, 226, 56, 34, "[SEP]", GRAY, size=12, mono=True)
    svg.text(20, 292, "windows 1 and 2 miss the answer: their start and end point at [CLS]",
             size=12, anchor="start", color="#15803d")  # fmt: skip
    svg.text(20, 312, "window 3 holds it: start and end are its first and last token",
             size=12, anchor="start", color="#c2410c")  # fmt: skip
    return svg


def packing_unpadding() -> Svg:
    svg = Svg(
        780,
        330,
        "Padding, packing and unpadding",
        "The same five texts (5, 3, 4, 2 and 2 tokens) three ways. Left: a padded batch, each "
        "row filled with [PAD] to the longest row (9 of 25 positions), which costs compute for "
        "nothing. Middle: packing puts them in two rows of 8; position ids restart at 0 with "
        "each text and attention stays inside each text (a block-diagonal mask). Right: "
        "unpadding drops the padding and computes on the 16 real tokens only, one long (N, H) "
        "sequence, padding back to rows only around attention.",
    )
    lengths = [5, 3, 4, 2, 2]
    palette = [BLUE, GREEN, ORANGE, PURPLE, ("#fce7f3", "#be185d")]
    cell = 18
    svg.text(90, 24, "padded batch", size=14, bold=True)
    for r, n in enumerate(lengths):
        for t in range(max(lengths)):
            svg.box(40 + t * cell, 44 + r * 26, cell - 2, 22, "", palette[r] if t < n else GRAY)
    svg.text(90, 190, "padding (gray) is computed", size=12, italic=True)
    svg.text(90, 208, "and thrown away", size=12, italic=True)
    svg.text(390, 24, "packed rows", size=14, bold=True)
    rows = [[0, 1], [2, 3, 4]]  # which texts each row holds
    for r, row in enumerate(rows):
        t = 0
        for d in row:
            for i in range(lengths[d]):
                svg.box(318 + t * cell, 44 + r * 44, cell - 2, 22, "", palette[d])
                svg.text(
                    318 + t * cell + cell / 2 - 1, 44 + r * 44 + 32, str(i), size=10, mono=True
                )
                t += 1
    svg.text(390, 144, "position ids restart at 0;", size=12, italic=True)
    svg.text(390, 162, "each text attends to itself", size=12, italic=True)
    # the block-diagonal mask of row 2: texts of 4, 2 and 2 tokens
    for q in range(8):
        for k in range(8):
            same = (q < 4 and k < 4) or (4 <= q < 6 and 4 <= k < 6) or (q >= 6 and k >= 6)
            svg.box(
                342 + k * 12, 184 + q * 12, 11, 11, "", BLUE if same else ("#ffffff", "#d1d5db")
            )
    svg.text(390, 294, "row 2's mask: block-diagonal", size=11, italic=True)
    svg.text(650, 24, "unpadded", size=14, bold=True)
    t = 0
    for d, n in enumerate(lengths):
        for _ in range(n):
            svg.box(556 + t * 13, 44, 11, 22, "", palette[d])  # one (N, H) sequence: one row
            t += 1
    svg.text(650, 114, "only the 16 real tokens: (N, H)", size=12, italic=True)
    svg.text(650, 132, "back to rows around attention", size=12, italic=True)
    return svg


def data_parallel() -> Svg:
    svg = Svg(
        760,
        356,
        "Data parallelism",
        "The global batch is split into shards, one per process. Each process holds a full copy "
        "of the model, runs forward and backward on its shard, and the gradients are averaged "
        "across processes with an all-reduce, bucket by bucket while backward is still running. "
        "Every process then takes the same optimiser step, "
        "so the copies stay identical: the result is that of one process on the whole batch.",
    )
    svg.box(180, 14, 400, 34, "global batch: rows 0 1 2 3 4 5 6 7", GRAY, size=13, mono=True)
    for p in range(2):
        left = 60 + p * 360
        shard = "rows 0 2 4 6" if p == 0 else "rows 1 3 5 7"
        svg.arrow(380, 48, left + 140, 80)
        svg.box(left, 80, 280, 30, f"process {p}: {shard}", GRAY, size=13, mono=True)
        svg.arrow(left + 140, 110, left + 140, 130)
        svg.box(left, 130, 280, 40, "model copy: forward, backward", BLUE, size=13)
        svg.arrow(left + 140, 170, left + 140, 196)
        svg.box(left, 196, 280, 30, "its gradients, bucket by bucket", ORANGE, size=13)
        svg.arrow(left + 140, 226, left + 140, 252)
        svg.box(left, 306, 280, 36, "the same optimiser step", BLUE, size=13)
    svg.box(60, 252, 640, 30, "all-reduce, while backward goes on: average each bucket over processes", ORANGE, size=13,
            bold=True)  # fmt: skip
    svg.arrow(200, 282, 200, 306)
    svg.arrow(560, 282, 560, 306)
    return svg


def rotary_rotation() -> Svg:
    svg = Svg(
        760,
        300,
        "Rotary positions: a rotation by position",
        "One pair of a head's query numbers drawn as an arrow, and one pair of a key's. At "
        "position m the query is turned by the angle m times theta, at position n the key by n "
        "times theta (theta is the pair's speed; each pair has its own). Their dot product "
        "depends on the angle between them, (m - n) times theta, so on how far apart the two "
        "tokens are, not on where they are: the same query and key three positions apart score "
        "the same at positions 2 and 5 as at 10 and 13.",
    )

    def panel(cx: float, title: str, m: int, n: int) -> None:
        cy, r, theta = 150, 80, 0.35
        svg.text(cx, 30, title, size=13, bold=True)
        svg.line([(cx - r - 10, cy), (cx + r + 10, cy)], color="#9ca3af")
        svg.line([(cx, cy - r - 10), (cx, cy + r + 10)], color="#9ca3af")
        for pos, name, color in ((m, "q", "#1d4ed8"), (n, "k", "#c2410c")):
            angle = pos * theta
            x, y = cx + r * math.cos(angle), cy - r * math.sin(angle)
            svg.arrow(cx, cy, round(x, 1), round(y, 1), color=color)
            svg.text(
                round(x + 16 * math.cos(angle), 1),
                round(y - 16 * math.sin(angle), 1),
                f"{name} at {pos}",
                size=12,
                color=color,
            )
        svg.text(cx, 262, f"angle between them: ({m} − {n}) θ", size=12)

    svg.text(380, 288, "the score depends on the distance, m − n, not on the positions", size=13)
    for cx, (m, n) in ((200, (5, 2)), (560, (13, 10))):
        panel(cx, f"query at {m}, key at {n}", m, n)
    return svg


def pre_post_ln() -> Svg:
    svg = Svg(
        760,
        330,
        "Post-LN and pre-LN",
        "Two layouts of one block. Post-LN, BERT's: the block reads x, its output is added to x, "
        "and the sum is normalised, so every layer's output passes through a LayerNorm. Pre-LN, "
        "ModernBERT's: the block reads a normalised copy of x, and its output is added to x "
        "itself, so the residual stream from the first layer to the last is never normalised "
        "(one final norm after the last layer).",
    )
    for cx, title, pre in ((200, "post-LN (BERT)", False), (560, "pre-LN (ModernBERT)", True)):
        svg.text(cx, 24, title, size=14, bold=True)
        svg.text(cx, 300, "x", size=14, mono=True)
        if pre:
            svg.arrow(cx, 290, cx, 60)
            svg.line([(cx, 260), (cx + 90, 260), (cx + 90, 232)], arrow=True)
            svg.box(cx + 40, 200, 100, 32, "norm", PURPLE, size=13)
            svg.arrow(cx + 90, 200, cx + 90, 170)
            svg.box(cx + 30, 134, 120, 36, "attention", BLUE, size=13)
            svg.line([(cx + 90, 134), (cx + 90, 100), (cx + 12, 100)], arrow=True)
            svg.box(cx - 12, 88, 24, 24, "+", GRAY, size=14)
            svg.text(cx - 20, 190, "the stream:", size=11, anchor="end", italic=True)
            svg.text(cx - 20, 206, "never normalised", size=11, anchor="end", italic=True)
        else:
            svg.arrow(cx, 290, cx, 250)
            svg.box(cx - 60, 214, 120, 36, "attention", BLUE, size=13)
            svg.line([(cx, 270), (cx + 90, 270), (cx + 90, 150), (cx + 14, 150)], arrow=True)
            svg.arrow(cx, 214, cx, 162)
            svg.box(cx - 12, 138, 24, 24, "+", GRAY, size=14)
            svg.arrow(cx, 138, cx, 112)
            svg.box(cx - 50, 80, 100, 32, "LayerNorm", PURPLE, size=13)
            svg.arrow(cx, 80, cx, 50)
            svg.text(cx - 70, 96, "every output", size=11, anchor="end", italic=True)
            svg.text(cx - 70, 112, "normalised", size=11, anchor="end", italic=True)
    return svg


def geglu_mlp() -> Svg:
    svg = Svg(
        760,
        400,
        "BERT's feed-forward block and a gated one (GeGLU)",
        "Two feed-forward blocks side by side, read from the bottom. BERT's: x is projected from "
        "H to 4H numbers by W1, passed through GELU and projected back to H by W2. GeGLU: x is "
        "projected twice, by Wa and by Wb, to F numbers each; GELU of the first gates the second, "
        "multiplied number by number, and W2 projects the product back to H. With F two thirds "
        "of 4H, the three matrices hold as many parameters as BERT's two.",
    )
    for cx, title in ((190, "BERT: GELU(x W1) W2"), (560, "GeGLU: (GELU(x Wa) × x Wb) W2")):
        svg.text(cx, 16, title, size=14, bold=True)
        svg.text(cx, 40, "output: (B, T, H)", size=13)
        svg.text(cx, 350, "x: (B, T, H)", size=13)
    cx = 190
    svg.arrow(cx, 340, cx, 268)
    svg.box(cx - 80, 232, 160, 36, "W1: H → 4H", BLUE, size=13)
    svg.arrow(cx, 232, cx, 206)
    svg.box(cx - 50, 170, 100, 36, "GELU", GRAY, size=13)
    svg.arrow(cx, 170, cx, 98)
    svg.box(cx - 80, 62, 160, 36, "W2: 4H → H", BLUE, size=13)
    svg.arrow(cx, 62, cx, 50)
    cx = 560
    svg.line([(cx, 340), (cx, 296)])
    svg.line([(cx, 296), (cx - 75, 296), (cx - 75, 270)], arrow=True)
    svg.line([(cx, 296), (cx + 75, 296), (cx + 75, 270)], arrow=True)
    svg.box(cx - 140, 232, 130, 36, "Wa: H → F", BLUE, size=13)
    svg.box(cx + 10, 232, 130, 36, "Wb: H → F", BLUE, size=13)
    svg.arrow(cx - 75, 232, cx - 75, 206)
    svg.box(cx - 125, 170, 100, 36, "GELU", GRAY, size=13)
    svg.line([(cx - 75, 170), (cx - 75, 134), (cx - 16, 134)], arrow=True)
    svg.text(cx - 84, 150, "the gate", size=12, anchor="end", italic=True)
    svg.line([(cx + 75, 232), (cx + 75, 134), (cx + 16, 134)], arrow=True)
    svg.box(cx - 14, 120, 28, 28, "×", ORANGE, size=14)
    svg.text(cx + 24, 108, "number by number", size=12, anchor="start", italic=True)
    svg.arrow(cx, 120, cx, 98)
    svg.box(cx - 80, 62, 160, 36, "W2: F → H", BLUE, size=13)
    svg.arrow(cx, 62, cx, 50)
    svg.text(380, 386, "a third matrix: with F = 2/3 of 4H the block keeps BERT's parameter count",
             size=12)  # fmt: skip
    return svg


def local_global_layers() -> Svg:
    svg = Svg(
        760,
        330,
        "Local and global layers",
        "Six layers, drawn from layer 0 at the bottom to layer 5 at the top, and twelve tokens in "
        "each. The squares a layer fills are the tokens that token 6 attends to. Layers 0 and 3 "
        "are global: token 6 sees all twelve. The others are local: it sees only the tokens "
        "within two positions of itself (a toy window; ModernBERT's reaches 64 on each side). "
        "Every third layer is global, starting with the first, so information still crosses the "
        "whole text in a few layers.",
    )
    svg.text(380, 16, "the tokens that token 6 attends to, layer by layer", size=14, bold=True)
    query, reach, size, gap = 6, 2, 24, 6
    for layer in range(6):
        y = 270 - layer * 44
        is_global = layer % 3 == 0
        svg.text(20, y + size / 2, f"layer {layer}", size=13, anchor="start")
        for t in range(12):
            seen = is_global or abs(t - query) <= reach
            colors = ORANGE if t == query else BLUE if seen else ("white", GRAY[1])
            svg.box(110 + t * (size + gap), y, size, size, "", colors)
        kind = "global: all 12 tokens" if is_global else f"local: {reach} on each side"
        svg.text(480, y + size / 2, kind, size=13, anchor="start", bold=is_global)
    svg.text(380, 314, "every third layer is global, starting with the first (layers 0 and 3)",
             size=12)  # fmt: skip
    return svg


def qkv_projections() -> Svg:
    svg = Svg(
        760,
        270,
        "Query, key and value: three projections of one token's vector",
        "Token i's vector x_i, a row of H numbers, is multiplied by three learned matrices, W_Q, "
        "W_K and W_V, the same for every token. The results are three shorter vectors of d "
        "numbers for one head: the query q_i, what token i looks for; the key k_i, what it "
        "offers, compared with every query; and the value v_i, what it hands over to the tokens "
        "that attend to it.",
    )
    svg.text(90, 74, "x_i: token i", size=13, mono=True)
    svg.text(90, 92, "(H numbers)", size=12)
    for c in range(6):
        svg.box(18 + c * 24, 110, 24, 30, "", BLUE)
    rows = (
        ("W_Q", "q_i", "query: what token i looks for"),
        ("W_K", "k_i", "key: what it offers to queries"),
        ("W_V", "v_i", "value: what it hands over"),
    )
    for r, (matrix, name, role) in enumerate(rows):
        y = 40 + r * 70
        svg.line([(170, 125), (200, 125), (200, y + 18), (232, y + 18)], arrow=True)
        svg.box(234, y, 110, 36, f"× {matrix}", PURPLE, size=13, mono=True)
        svg.arrow(344, y + 18, 376, y + 18)
        for c in range(3):
            svg.box(
                380 + c * 24, y + 3, 24, 30, "", ORANGE if r == 0 else GREEN if r == 2 else BLUE
            )
        svg.text(462, y + 18, name, size=13, mono=True, anchor="start")
        svg.text(500, y + 18, role, size=13, anchor="start")
    svg.text(380, 252, "one head: d = H / h numbers each; the same three matrices for every token",
             size=12)  # fmt: skip
    return svg


def wordpiece_training() -> Svg:
    svg = Svg(
        760,
        260,
        "WordPiece training on three words",
        "A table of the merges on hug (10 times), pug (5) and hugs (5). Step 0: the words "
        "spelled in characters, each after the first marked as continuing its word; the most "
        "frequent pair is u then g, 20 times, merged into the continuing piece ug. Step 1: h then "
        "ug, 15 times, becomes hug. Step 2: p then ug and hug then s tie at 5; p is the older "
        "piece, so pug comes first. Step 3: hug then s, 5 times, becomes hugs. Step 4: every word "
        "is one piece, and no pair is left.",
    )
    columns = ((20, "step"), (70, "the words, as pieces (× how often)"), (450, "most frequent pair"),
               (640, "new piece"))  # fmt: skip
    for x, head in columns:
        svg.text(x, 20, head, size=13, bold=True, anchor="start")
    steps = (
        ("h ##u ##g ×10  p ##u ##g ×5  h ##u ##g ##s ×5", "##u ##g: 20", "##ug"),
        ("h ##ug ×10  p ##ug ×5  h ##ug ##s ×5", "h ##ug: 15", "hug"),
        ("hug ×10  p ##ug ×5  hug ##s ×5", "p ##ug = hug ##s: 5", "pug (tie)"),
        ("hug ×10  pug ×5  hug ##s ×5", "hug ##s: 5", "hugs"),
        ("hug ×10  pug ×5  hugs ×5", "no pair left", "(done)"),
    )
    for k, (words, pair, piece) in enumerate(steps):
        y = 54 + k * 40
        svg.box(12, y - 16, 736, 32, "", GRAY if k % 2 else ("white", GRAY[1]))
        svg.text(30, y, str(k), size=13, anchor="start")
        svg.text(70, y, words, size=12, mono=True, anchor="start")
        svg.text(450, y, pair, size=12, mono=True, anchor="start")
        svg.text(640, y, piece, size=12, mono=True, anchor="start", bold=k < 4)
    svg.text(380, 250, "each merge adds one piece; a tie goes to the pair of older pieces", size=12)
    return svg


def task_heads() -> Svg:
    svg = Svg(
        760,
        380,
        "Three task heads on one encoder",
        "One encoder reads a text and gives a vector per token, h0 for [CLS] to h5 for [SEP]. "
        "Three heads read those vectors differently. Sentence classification: BERT's pooler, "
        "tanh of a dense layer on the [CLS] vector only, then dropout and a linear layer: one "
        "label per text. Token classification (NER): dropout and a linear layer on every "
        "position, one tag per token. Question answering: a linear layer giving two numbers per "
        "position, a start score and an end score; the best start and end give the answer span.",
    )
    tokens = ["[CLS]", "the", "film", "was", "great", "[SEP]"]
    centres = tokens_row(svg, tokens, 122, 334, w=78, gap=8)
    svg.box(122, 270, 508, 40, "the encoder", BLUE, bold=True)
    for c in centres:
        svg.arrow(c, 334, c, 310)
        svg.arrow(c, 270, c, 250)
        svg.box(c - 22, 224, 44, 26, f"h{centres.index(c)}", BLUE, size=12, mono=True)
    svg.line([(centres[0] - 22, 237), (60, 237), (60, 160)], arrow=True)
    svg.text(68, 190, "reads [CLS] only", size=12, anchor="start", italic=True)
    for c in centres:
        svg.line([(c, 224), (c, 204)])
    svg.line([(centres[0], 204), (630, 204)])
    svg.text(505, 190, "read every position", size=12, italic=True)
    heads = (
        (130, "sentence classification", "pooler: tanh(Dense)\ndropout, linear",
         "a label per text"),
        (380, "token classification", "dropout, linear", "a tag per token"),
        (630, "question answering", "linear: 2 numbers\nper position", "start and end scores"),
    )  # fmt: skip
    for cx, title, layers, output in heads:
        svg.text(cx, 20, title, size=14, bold=True)
        svg.text(cx, 46, output, size=13, italic=True)
        svg.arrow(cx, 106, cx, 60)
        svg.box(cx - 105, 106, 210, 52, layers, GREEN, size=13)
        if cx > 130:
            svg.arrow(cx, 204, cx, 160)
    return svg


def accumulation_step() -> Svg:
    svg = Svg(
        760,
        400,
        "One optimiser step with gradient accumulation",
        "A batch of 256 sequences is split into four micro-batches of 64. Each runs forward and "
        "backward on its own, its loss weighted by its share of the batch's masked tokens (n_k "
        "of N), and the gradients add up in the parameters' .grad: their sum is the gradient of "
        "the whole batch. Then one step: clip the gradient norm, let the optimiser step, move "
        "the schedule to the next learning rate, and clear the gradients.",
    )
    svg.text(120, 18, "a batch of 256, in four", size=13, bold=True)
    for k in range(4):
        y = 40 + k * 60
        svg.box(20, y, 200, 40, f"micro-batch {k + 1}: 64 rows", GRAY, size=13)
        svg.arrow(220, y + 20, 250, y + 20)
        svg.box(252, y, 210, 40, f"forward, backward:\nloss × n{k + 1} / N", ORANGE, size=12)
        svg.line([(462, y + 20), (490, y + 20), (490, 140), (516, 140)], arrow=True)
    svg.box(518, 110, 222, 60, ".grad: the sum, which is\nthe batch's gradient", BLUE, size=13)
    steps = ("clip the norm (1.0)", "optimiser step", "next learning rate", "clear the .grad")
    svg.line([(629, 170), (629, 290), (110, 290), (110, 304)], arrow=True)
    for k, label in enumerate(steps):
        x = 20 + k * 185
        svg.box(x, 306, 165, 40, label, GREEN if k == 1 else GRAY, size=13)
        if k:
            svg.arrow(x - 20, 326, x - 2, 326)
    svg.text(380, 378, "n_k: the masked tokens of micro-batch k; N: those of the whole batch",
             size=12)  # fmt: skip
    return svg


def dataloader_workers() -> Svg:
    svg = Svg(
        760,
        330,
        "The DataLoader worker trap",
        "With num_workers > 0, every epoch each worker starts from a copy of the collator as it "
        "was in the main process. Left: a collator whose copies keep the parent's random state "
        "draws the same masks in every epoch (masks A and B in epoch 1, A and B again in epoch "
        "2): static masking by accident. Right: MLMCollator reseeds inside each worker from its "
        "seed and the worker's seed, which PyTorch draws anew every epoch, so epoch 2 gets new "
        "masks (C and D), and the same run repeats from the same seed.",
    )
    svg.box(230, 10, 300, 40, "the collator in the main process", GRAY, size=13)
    panels = ((190, "a copy keeps the parent's state", ("A", "B", "A", "B"), ORANGE),
              (570, "MLMCollator: reseeds per worker", ("A", "B", "C", "D"), GREEN))  # fmt: skip
    for cx, title, masks, colors in panels:
        svg.line([(380, 50), (380, 66), (cx, 66), (cx, 82)], arrow=True)
        svg.text(cx, 98, title, size=13, bold=True)
        for e in range(2):
            y = 120 + e * 70
            svg.text(cx - 170, y + 20, f"epoch {e + 1}", size=13, anchor="start")
            for w in range(2):
                mask = masks[2 * e + w]
                svg.box(cx - 110 + w * 150, y, 140, 40, f"worker {w}: masks {mask}", colors,
                        size=12)  # fmt: skip
    svg.text(190, 276, "epoch 2 repeats epoch 1:", size=12, italic=True)
    svg.text(190, 294, "static masking by accident", size=12, italic=True)
    svg.text(570, 276, "new masks every epoch,", size=12, italic=True)
    svg.text(570, 294, "the same run again from the same seed", size=12, italic=True)
    return svg


def continued_forgetting() -> Svg:
    import json

    results = FIGURES.parent.parent / "mlmcourse" / "course" / "results"
    found = json.loads((results / "continued_pretraining.json").read_text(encoding="utf-8"))
    summary, runs = found["summary"], found["runs"]
    svg = Svg(
        760,
        330,
        "What continued pretraining learns and forgets",
        "A chart from continued_pretraining.json. The shipped world model is trained 300 more "
        "steps on the world with every city renamed. Its top-1 accuracy on the fact probes: "
        f"old facts {summary['old_facts_before']['mean']:.0%} before and "
        f"{summary['old_facts_after']['mean']:.0%} after (mean of three seeds); new facts "
        f"{summary['new_facts_before']['mean']:.0%} before and "
        f"{summary['new_facts_after']['mean']:.0%} after. The axis starts at zero; each seed's "
        "result after 300 steps is drawn as a dot.",
    )
    left, right, top, bottom = 300, 600, 40, 280

    def y_of(v: float) -> float:
        return round(bottom - v * (bottom - top), 1)

    svg.line([(left - 130, top), (left - 130, bottom), (right + 20, bottom)], color=GRAY[1])
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        svg.text(left - 138, y_of(v), f"{v:.0%}", size=12, anchor="end")
    svg.text(left, bottom + 18, "before", size=13)
    svg.text(right, bottom + 18, "after 300 steps", size=13)
    svg.text(380, 16, f"top-1 accuracy on {found['probes']} fact probes, {len(runs)} seeds", size=14,
             bold=True)  # fmt: skip
    svg.text(380, 320, "lines: the mean of the seeds; dots: each seed after 300 steps", size=12)
    for key, name, (fill, stroke) in (("old", "old facts", ORANGE), ("new", "new facts", BLUE)):
        before, after = (
            summary[f"{key}_facts_before"]["mean"],
            summary[f"{key}_facts_after"]["mean"],
        )
        svg.line([(left, y_of(before)), (right, y_of(after))], color=stroke)
        for run in runs:
            svg.parts.append(
                f'<circle cx="{right}" cy="{y_of(run[f"{key}_facts_after"])}" r="4" '
                f'fill="{fill}" stroke="{stroke}"/>'
            )
        svg.parts.append(f'<circle cx="{left}" cy="{y_of(before)}" r="4" fill="{stroke}"/>')
        svg.text(left - 10, y_of(before), f"{name} {before:.0%}", size=13, color=stroke,
                 anchor="end", bold=True)  # fmt: skip
        svg.text(right + 14, y_of(after), f"{after:.0%}", size=13, color=stroke, anchor="start",
                 bold=True)  # fmt: skip
    return svg


DIAGRAMS: dict[str, Callable[[], Svg]] = {
    "rotary_rotation": rotary_rotation,
    "pre_post_ln": pre_post_ln,
    "geglu_mlp": geglu_mlp,
    "local_global_layers": local_global_layers,
    "qkv_projections": qkv_projections,
    "wordpiece_training": wordpiece_training,
    "task_heads": task_heads,
    "accumulation_step": accumulation_step,
    "dataloader_workers": dataloader_workers,
    "continued_forgetting": continued_forgetting,
    "pretrain_finetune": pretrain_finetune,
    "masking_801010": masking_801010,
    "input_embeddings": input_embeddings,
    "bert_layer": bert_layer,
    "attention_masks": attention_masks,
    "mlm_step": mlm_step,
    "bio_alignment": bio_alignment,
    "qa_windows": qa_windows,
    "clm_vs_mlm_targets": clm_vs_mlm_targets,
    "packing_unpadding": packing_unpadding,
    "data_parallel": data_parallel,
    "multi_head_attention": multi_head_attention,
    "wordpiece_greedy": wordpiece_greedy,
    "masking_strategies": masking_strategies,
    "weight_tying": weight_tying,
    "pipeline_map": pipeline_map,
}


def chapter_figures(chapter: Path) -> list[tuple[str, str]]:
    """``(src, alt)`` of each figure a chapter shows, in order (``:alt:`` must come first)."""
    return [(m["src"], m["alt"]) for m in FIGURE.finditer(chapter.read_text(encoding="utf-8"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is stale")
    args = parser.parse_args(argv)
    stale = []
    for name, draw in DIAGRAMS.items():
        path = FIGURES / f"{name}.svg"
        text = draw().render()
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            FIGURES.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"stale diagrams: {', '.join(stale)}; run `python scripts/make_diagrams.py`")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
