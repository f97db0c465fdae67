"""Corpus pictures: tagged-sentence chips and the statistics figure."""

import matplotlib

matplotlib.use("Agg")

from mlmcourse.data import Sentence  # noqa: E402
from mlmcourse.viz.data import (  # noqa: E402
    WORLD_COLORS,
    corpus_figure,
    entity_type_counts,
    tagged_sentence_html,
)

S1 = Sentence(
    ("Tarvo", "Meskin", "lives", "in", "Orlen", "."), ("B-PER", "I-PER", "O", "O", "B-LOC", "O")
)
S2 = Sentence(("Kelso", "Bank", "<", "Zibra"), ("B-ORG", "I-ORG", "O", "B-product"))


def test_tagged_sentence_html_colours_by_type_and_escapes():
    out = tagged_sentence_html([S1, S2])
    assert out.count(WORLD_COLORS["PER"]) >= 3  # two chips and the legend swatch
    assert ">&lt;</div>" in out  # the token "<" is escaped, not markup
    assert ">B-LOC<" in out and ">I-ORG<" in out
    assert "product" in out  # a type outside the world's labels still gets a colour and legend
    assert tagged_sentence_html(S1, legend=False).count("Meskin") == 1


def test_entity_type_counts_counts_mentions_not_tokens():
    assert entity_type_counts([S1, S2]) == {"PER": 1, "LOC": 1, "ORG": 1, "product": 1}


def test_corpus_figure_has_two_panels():
    fig = corpus_figure({"a": [S1] * 3, "b": [S1, S2]})
    left, right = fig.axes
    assert [t.get_text() for t in left.get_xticklabels()] == ["LOC", "ORG", "PER", "product"]
    assert len(left.patches) == 2 * 4
    assert right.get_xlabel() == "tokens per sentence"
    matplotlib.pyplot.close(fig)
