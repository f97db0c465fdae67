"""Pictures of a tagged corpus: sentences as chips coloured by entity type, and its statistics.

The functions take plain :class:`~mlmcourse.data.Sentence` lists, so they work on the small
world and on WNUT-17 alike, and are tested without a browser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from mlmcourse.data import WORLD_LABELS, Sentence
from mlmcourse.viz.html import Chip, chips_html, legend_html
from mlmcourse.viz.ner import entity_colors

__all__ = ["corpus_figure", "entity_type_counts", "tagged_sentence_html"]

OUTSIDE_COLOR = "#f4f4f4"
WORLD_COLORS = entity_colors(label[2:] for label in WORLD_LABELS if label != "O")


def tagged_sentence_html(
    sentences: Sentence | Sequence[Sentence],
    *,
    colors: Mapping[str, str] | None = None,
    legend: bool = True,
) -> str:
    """Each token as a chip with its BIO tag beneath, coloured by entity type."""
    if isinstance(sentences, Sentence):
        sentences = [sentences]
    colors = dict(colors or WORLD_COLORS)
    for s in sentences:  # any type not given a colour (WNUT's "product"...) gets the next one
        for tag in s.tags:
            if tag != "O" and tag[2:] not in colors:
                colors = entity_colors([*colors, tag[2:]])
    rows = []
    for s in sentences:
        chips = [
            Chip(tok, OUTSIDE_COLOR if tag == "O" else colors[tag[2:]], below=tag, title=tag)
            for tok, tag in zip(s.tokens, s.tags, strict=True)
        ]
        rows.append(chips_html(chips))
    head = legend_html(sorted(colors.items())) if legend else ""
    return head + "".join(rows)


def entity_type_counts(sentences: Sequence[Sentence]) -> Counter[str]:
    """How many entity *mentions* of each type (one per ``B-`` tag)."""
    return Counter(tag[2:] for s in sentences for tag in s.tags if tag.startswith("B-"))


def corpus_figure(splits: Mapping[str, Sequence[Sentence]]):
    """Two panels: entity mentions per type for each split, and sentence lengths per split.

    Counts are shown per 1,000 sentences so splits of different sizes compare directly.
    Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(splits)
    types = sorted({t for sents in splits.values() for t in entity_type_counts(sents)})
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    width = 0.8 / max(1, len(names))
    x = np.arange(len(types))
    for i, name in enumerate(names):
        counts = entity_type_counts(splits[name])
        per_k = [1000 * counts[t] / max(1, len(splits[name])) for t in types]
        left.bar(x + i * width - 0.4 + width / 2, per_k, width, label=name)
    left.set_xticks(x, types)
    left.set_ylabel("mentions per 1,000 sentences")
    left.set_title("Entity mentions by type")
    left.legend(fontsize=8)
    lengths = {name: [len(s.tokens) for s in sents] for name, sents in splits.items()}
    top = max(max(v) for v in lengths.values() if v)
    bins = np.arange(0.5, top + 1.5)
    for name in names:
        right.hist(
            lengths[name], bins=bins, density=True, histtype="step", linewidth=1.5, label=name
        )
    right.set_xlabel("tokens per sentence")
    right.set_ylabel("share of sentences")
    right.set_title("Sentence lengths")
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig
