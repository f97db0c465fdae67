"""Tests for the tokenizer explorer's pure render functions (no browser needed)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest

from mlmcourse.tokenization import Encoding, WordLevelTokenizer, WordPieceTokenizer
from mlmcourse.viz.html import Chip
from mlmcourse.viz.tokenizers import (
    SPECIAL_COLOR,
    UNK_COLOR,
    compare_tokenizers_html,
    comparison_figure,
    encoding_chips,
    tokenizer_explorer,
    words_html,
)

CORPUS = ["the cat sat on the mat .", "a dog sat in Paris .", "the catalog of cats"] * 3


@pytest.fixture(scope="module")
def tokenizers():
    return {
        "word-level": WordLevelTokenizer.train(CORPUS),
        "WordPiece": WordPieceTokenizer.train(CORPUS, vocab_size=60, min_frequency=1),
    }


def test_chips_group_the_pieces_of_a_word():
    enc = Encoding(
        ids=[2, 10, 11, 12, 1, 3],
        tokens=["[CLS]", "cat", "##al", "##og", "[UNK]", "[SEP]"],
        type_ids=[0] * 6,
        special_tokens_mask=[1, 0, 0, 0, 0, 1],
        word_ids=[None, 0, 0, 0, 1, None],
        offsets=[(0, 0), (0, 3), (3, 5), (5, 7), (8, 12), (0, 0)],
    )
    chips = encoding_chips(enc)
    assert [c.text for c in chips] == enc.tokens
    assert [c.below for c in chips] == ["2", "10", "11", "12", "1", "3"]
    assert [c.group_start for c in chips] == [True, True, False, False, True, True]
    assert chips[1].color == chips[2].color == chips[3].color  # one word, one colour
    assert chips[0].color == chips[5].color == SPECIAL_COLOR
    assert chips[4].color == UNK_COLOR and "not in the vocabulary" in chips[4].title
    assert "characters 3:5" in chips[2].title


def test_neighbouring_words_get_different_colours(tokenizers):
    chips = encoding_chips(tokenizers["word-level"].encode("the cat sat"))
    assert chips[1].color != chips[2].color != chips[3].color
    pair = encoding_chips(tokenizers["word-level"].encode("the", "cat"))
    # word 0 of the second text is a new word, not a continuation of word 0 of the first
    assert all(c.group_start for c in pair)


def test_words_html_keeps_pieces_of_a_word_in_one_box():
    chips = [
        Chip("cat"),
        Chip("##al", group_start=False),
        Chip("##og", group_start=False),
        Chip("sat"),
    ]
    page = words_html(chips)
    assert page.count("white-space:nowrap;vertical-align:top") == 2  # two words, two boxes
    first_box, second_box = page.split("white-space:nowrap;vertical-align:top")[1:]
    assert "##al" in first_box and "##og" in first_box and "sat" in second_box


def test_encoding_chips_rejects_other_objects():
    with pytest.raises(TypeError, match="expected an Encoding"):
        encoding_chips(["the", "cat"])


def test_compare_html_shows_every_tokenizer(tokenizers):
    page = compare_tokenizers_html("the catalogs of a zebra", tokenizers)
    assert "word-level (vocabulary" in page and "WordPiece (vocabulary" in page
    assert "##" in page  # WordPiece pieces
    assert UNK_COLOR in page  # "zebra" is unknown to both
    assert "[CLS]" in page and "pieces of a word touch" in page
    named = compare_tokenizers_html("the cat", {"<b>mine</b>": tokenizers["word-level"]})
    assert "&lt;b&gt;mine" in named and "<b>mine" not in named  # names are escaped


def test_compare_html_reports_bad_text_instead_of_raising(tokenizers):
    page = compare_tokenizers_html("   ", tokenizers)
    assert page.count("empty or whitespace-only") == 2
    with pytest.raises(ValueError, match="at least one tokenizer"):
        compare_tokenizers_html("the cat", {})


def test_explorer_initial_state_is_drawn(tokenizers):
    widget = tokenizer_explorer(tokenizers, "the cat sat", examples=["a dog"])
    box, out = widget.children
    assert "word-level" in out.value and "sat" in out.value
    assert widget.static.states() == [out.value, compare_tokenizers_html("a dog", tokenizers)]
    box.value = "a dog"
    assert "dog" in out.value and "sat" not in out.value


def test_comparison_figure():
    rows = [
        {
            "corpus": "world",
            "tokenizer": "word",
            "oov_rate": 0.1,
            "tokens_per_word": 1.0,
            "vocab_size": 900,
        },
        {
            "corpus": "world",
            "tokenizer": "wp",
            "oov_rate": 0.0,
            "tokens_per_word": 1.3,
            "vocab_size": 2000,
        },
        {
            "corpus": "wiki",
            "tokenizer": "wp",
            "oov_rate": 0.01,
            "tokens_per_word": 1.6,
            "vocab_size": 2000,
        },
    ]
    fig = comparison_figure(rows)
    axes = fig.axes
    assert len(axes) == 3
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["world", "wiki"]
    assert len(axes[2].patches) == 3  # one bar per row
    assert axes[2].get_yscale() == "log"  # 800 and 30,000 entries on one axis
    assert "0.0%" in [t.get_text() for t in axes[0].texts]  # bars are labelled
    with pytest.raises(ValueError, match="lacks"):
        comparison_figure([{"corpus": "world"}])
    with pytest.raises(ValueError, match="at least one row"):
        comparison_figure([])
