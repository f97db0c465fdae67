"""The fill-mask explorer's and predictions table's pure renderers."""

from __future__ import annotations

import pytest

from mlmcourse.viz.fill_mask import fill_mask_html, fill_mask_view, predictions_table_html


def _cands(*pairs):
    return [
        {"score": s, "token": i, "token_str": t, "sequence": ""} for i, (t, s) in enumerate(pairs)
    ]


def test_one_mask_draws_its_best_guess_and_one_bar_chart():
    page = fill_mask_html(
        ["the", "capital", "is", "[MASK]", "."], _cands(("Tival", 0.62), ("Guiun", 0.2))
    )
    assert page.count("mask #1: top 2") == 1 and "mask #2" not in page
    assert "#1: Tival" in page  # the chip under [MASK] shows the best guess
    assert "62.0%" in page and "20.0%" in page
    assert "width:62.0%" in page  # bar length is the probability


def test_several_masks_get_one_chart_each_and_text_is_escaped():
    page = fill_mask_html(
        ["[MASK]", "<b>", "[MASK]"], [_cands(("a", 0.5)), _cands(("<script>", 0.4))]
    )
    assert "mask #1: top 1" in page and "mask #2: top 1" in page
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;" in page


def test_mismatched_masks_and_predictions_are_refused():
    with pytest.raises(ValueError, match="2 \\[MASK\\] but predictions are for 1"):
        fill_mask_html(["[MASK]", "[MASK]"], _cands(("a", 0.5)))


def test_predictions_table_colours_right_and_wrong_and_counts_them():
    rows = [
        {
            "original": ["Tival", "is", "big"],
            "masked": ["[MASK]", "is", "[MASK]"],
            "predicted": ["Tival", "is", "small"],
            "scored": [0, 2],
        }
    ]
    page = predictions_table_html(rows)
    assert "1 of 2 scored positions predicted correctly" in page
    assert page.count("sequence 1") == 1
    for word in ("original", "masked", "predicted", "small"):
        assert word in page
    assert "no scored positions" in predictions_table_html([])


def test_the_explorer_and_the_books_view_draw_the_same(world_tokenizer):
    import torch

    from mlmcourse.heads import BertForMaskedLM
    from mlmcourse.viz.fill_mask import fill_mask_explorer
    from tests.tiny import tiny_encoder_config

    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size)).eval()
    widget = fill_mask_explorer(model, world_tokenizer, "the [MASK] is", top_k=3, examples=["x"])
    box, k, out = widget.children
    assert "mask #1: top 3" in out.value
    view = widget.static
    assert [len(c.options) for c in view.controls] == [2, 10]
    assert view.state([0, 2]) == out.value  # top 3 is the slider's third option
    k.value = 1
    assert view.state([0, 0]) == out.value and "top 1" in out.value
    assert "color:#a00" in view.state([1, 0])  # no [MASK]: said, not raised
    with pytest.raises(ValueError, match="at least one text"):
        fill_mask_view(model, world_tokenizer, [])


# --- unknown words, said in one line (shared by the explorers) ------------------------------


def test_unknown_words_are_the_words_read_as_unk_once_each_in_order(world_tokenizer):
    from mlmcourse.tokenization.stats import unknown_words

    text = "Zorbel lives in Quintax and Zorbel works in [MASK] . [UNK]"
    assert unknown_words(world_tokenizer, text) == ["Zorbel", "Quintax"]  # a typed [UNK]: no word
    assert unknown_words(world_tokenizer, "The capital of [MASK] is Guiun .") == []
    assert unknown_words(world_tokenizer, "   ") == []  # nothing typed yet: nothing to say


def test_wordpiece_spells_new_words_in_pieces_and_only_lacks_characters(minilm_tokenizer):
    from mlmcourse.tokenization.stats import unknown_words

    assert minilm_tokenizer.tokenize("Zorbel")[0] != minilm_tokenizer.unk_token
    assert unknown_words(minilm_tokenizer, "Zorbel loves 🦜 and ☃ and 🦜") == ["🦜", "☃"]


def test_a_tokenizer_without_an_unknown_token_has_no_unknown_words():
    from types import SimpleNamespace

    from mlmcourse.tokenization.stats import unknown_words

    def encode(text):
        raise AssertionError("nothing to look up: a byte-level BPE spells every word")

    byte_level = SimpleNamespace(unk_token_id=None, unk_token=None, encode=encode)
    assert unknown_words(byte_level, "Zorbel 🦜") == []


def test_unknown_words_html_names_them_plainly_and_escapes_them():
    from mlmcourse.viz.html import message_html, unknown_words_html

    assert unknown_words_html([]) == ""
    line = unknown_words_html(["Zorbel", "<b>"], why="On purpose.")
    assert "Not in the model's vocabulary (it reads [UNK] there): Zorbel, &lt;b&gt;." in line
    assert line.endswith("On purpose.</div>") and "color:#a00" not in line  # a note, no error
    assert "<UNK>" not in unknown_words_html(["x"], unk_token="<UNK>")  # escaped too
    assert message_html("no <b>") == '<div style="color:#a00">no &lt;b&gt;</div>'


def test_fill_mask_state_names_unknown_words_above_the_candidates(world_tokenizer):
    import torch

    from mlmcourse.heads import BertForMaskedLM
    from mlmcourse.viz.fill_mask import fill_mask_state
    from tests.tiny import tiny_encoder_config

    torch.manual_seed(0)
    model = BertForMaskedLM(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size)).eval()
    page = fill_mask_state(model, world_tokenizer, "Zorbel lives in [MASK] .", 3)
    note = page.index("it reads [UNK] there): Zorbel.")
    assert note < page.index("mask #1: top 3")  # the note comes first, then the result
    assert "vocabulary" not in fill_mask_state(model, world_tokenizer, "Guiun is [MASK] .", 3)
    assert page.count("Zorbel") == 1 and ">[UNK]</div>" in page  # its chip shows what is read
