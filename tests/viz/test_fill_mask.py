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
