"""Tests for the masking explorer's pure render functions (no browser needed)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from mlmcourse.viz.masking import (
    OUTCOMES,
    classify_outcomes,
    masking_explorer,
    masking_html,
    plot_distinct_masks,
    render_masking,
)
from tests.tiny import tokenizer_fixture

CORPUS = ["the chemist works at the museum .", "a chemist visited Ditriskun .", "museums"] * 3
SENTENCE = "the chemist works at Ditriskun museum ."


tokenizer = tokenizer_fixture(CORPUS, "wordpiece", vocab_size=60, min_frequency=1)


def chips(html: str) -> list[str]:
    """The text shown on each chip, in order."""
    return re.findall(r"white-space:pre\">([^<]*)</div>", html)


def test_outcomes_are_named_from_the_tensors():
    #            [CLS] a   b  c  d  [SEP]
    original = [2, 10, 11, 12, 13, 3]
    shown = [2, 4, 57, 12, 13, 3]
    labels = [-100, 10, 11, 12, -100, -100]
    assert classify_outcomes(
        torch.tensor(original), torch.tensor(shown), torch.tensor(labels), special_ids=[0, 2, 3, 4], mask_token_id=4
    ) == ["special", "mask", "random", "kept", "unselected", "special"]  # fmt: skip


def test_outcomes_need_one_entry_per_position():
    with pytest.raises(ValueError, match="one entry per position"):
        classify_outcomes([1, 2], [1], [1, 2], mask_token_id=4)


def test_render_colours_each_outcome_and_writes_labels_beneath():
    out = render_masking(
        ["[CLS]", "the", "chem", "##ist", "works", "[SEP]"],
        ["[CLS]", "the", "[MASK]", "##zz", "works", "[SEP]"],
        ["special", "unselected", "mask", "random", "kept", "special"],
        word_starts=[True, True, True, False, True, True],
    )
    assert chips(out) == ["[CLS]", "the", "[MASK]", "##zz", "works", "[SEP]"]
    for label, color in OUTCOMES.values():
        assert color in out and label in out  # every outcome is in the legend
    assert out.count(OUTCOMES["mask"][1]) == 2  # one chip + the legend swatch
    # The label row: the original token at targets, "·" (label -100) elsewhere.
    below = re.findall(r'margin-top:2px">([^<]*)</div>', out)
    assert below == ["·", "·", "chem", "##ist", "works", "·"]
    assert "3 of 4 ordinary tokens are targets: 1 [MASK], 1 random, 1 kept" in out
    assert out.count("margin:0 0 6px 0;") == 1  # "##ist" is drawn joined to "chem"


def test_render_escapes_html_in_tokens():
    out = render_masking(["<b>"], ["<b>"], ["unselected"])
    assert chips(out) == ["&lt;b&gt;"] and "<b>" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((["a"], ["a", "b"], ["kept"]), "same length"),
        ((["a"], ["a"], ["masked"]), "unknown outcomes"),
    ],
)
def test_render_refuses_inconsistent_input(args, message):
    with pytest.raises(ValueError, match=message):
        render_masking(*args)


def test_masking_html_with_a_real_tokenizer(tokenizer):
    out = masking_html(tokenizer, SENTENCE, mlm_probability=0.5, seed=3)
    tokens = tokenizer([SENTENCE]).tokens(0)
    assert len(chips(out)) == len(tokens)
    assert chips(out)[0] == "[CLS]" and chips(out)[-1] == "[SEP]"  # specials never change
    assert "token masking, mlm_probability=0.5, seed 3" in out
    assert out == masking_html(tokenizer, SENTENCE, mlm_probability=0.5, seed=3)  # repeatable
    assert out != masking_html(tokenizer, SENTENCE, mlm_probability=0.5, seed=4)  # resampled


def test_whole_word_toggle_masks_all_pieces_of_a_word(tokenizer):
    encoded = tokenizer([SENTENCE])
    words = encoded.word_ids(0)
    split = [w for w in set(words) - {None} if words.count(w) > 1]
    assert split, "the test needs a word split into pieces"
    for seed in range(20):
        out = masking_html(tokenizer, SENTENCE, mlm_probability=0.5, whole_word=True, seed=seed)
        below = re.findall(r'margin-top:2px">([^<]*)</div>', out)
        for w in split:
            picked = {below[i] != "·" for i, x in enumerate(words) if x == w}
            assert len(picked) == 1


def test_bad_settings_and_empty_text_give_a_message_not_an_error(tokenizer):
    out = masking_html(tokenizer, SENTENCE, mask_replace_prob=0.9, random_replace_prob=0.3)
    assert "must be at most 1" in out
    assert "Type a sentence" in masking_html(tokenizer, "   ")


def test_the_explorer_shows_a_masked_sentence_from_the_start(tokenizer):
    widget = masking_explorer(tokenizer, SENTENCE, examples=["the cat"])
    html_out = widget.children[-1]
    assert "ordinary tokens are targets" in html_out.value
    before = html_out.value
    # the book's view draws its first state with the same function, so both agree
    view = widget.static
    assert view.state([c.initial for c in view.controls]) == before
    assert [c.name for c in view.controls] == ["sentence", "rate", "whole", "split", "draw"]
    widget.children[3].click()  # resample
    assert html_out.value != before
    second_draw = [c.initial for c in view.controls][:-1] + [1]
    assert view.state(second_draw) == html_out.value  # the book's "resample" too
    assert len(view.states()) == 2 * 12 * 2 * 3 * 4


def test_plot_distinct_masks_draws_one_line_per_curve():
    fig = plot_distinct_masks([1, 2, 3], {"dynamic": [1, 2, 3], "static": [1, 1, 1]})
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["dynamic", "static"]
    with pytest.raises(ValueError, match="3 epochs"):
        plot_distinct_masks([1, 2, 3], {"dynamic": [1, 2]})
