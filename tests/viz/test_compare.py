"""The CLM-vs-MLM explorer's pure renderer (and its wiring on tiny models)."""

from __future__ import annotations

import pytest
import torch

from mlmcourse.heads import BertForCausalLM, BertForMaskedLM
from mlmcourse.tokenization import WordLevelTokenizer
from mlmcourse.viz.compare import compare_explorer, compare_html, compare_predictions
from tests.tiny import tiny_encoder_config

TOKENS = ["[MASK]", "is", "the", "capital", "of", "Peifi", "."]
MLM = [{"token_str": "Tival", "score": 0.81}, {"token_str": "Guiun", "score": 0.05}]
CLM = [{"token_str": "The", "score": 0.20}, {"token_str": "Guiun", "score": 0.03}]


def test_both_columns_show_candidates_and_the_clm_hides_the_right_context():
    page = compare_html(TOKENS, MLM, CLM, answer="Tival")
    mlm_part, clm_part = page.split("Causal LM")
    assert "Masked LM: reads all 6 other tokens" in mlm_part
    assert "reads the 0 tokens to the left" in clm_part
    assert "unseen" not in mlm_part and clm_part.count(">unseen<") == 6
    assert "81.0%" in mlm_part and "20.0%" in clm_part
    assert "right" in page and "wrong" in page  # legend with an answer


def test_left_context_count_and_escaping():
    tokens = ["a", "<b>", "[MASK]", "c"]
    page = compare_html(tokens, MLM, CLM)
    assert "reads the 2 tokens to the left" in page and "&lt;b&gt;" in page
    assert "<b>" not in page.replace("<b>Masked", "").replace("<b>Causal", "").replace("<b>top", "")
    assert page.split("Causal LM")[1].count(">unseen<") == 1


@pytest.mark.parametrize(
    ("tokens", "mlm", "message"),
    [
        (["a", "b"], MLM, "exactly one"),
        (["[MASK]", "[MASK]"], MLM, "exactly one"),
        (TOKENS, {"token_str": "x", "score": 1.0}, "list of dicts"),
        (TOKENS, [{"token": 3}], "list of dicts"),
    ],
)
def test_bad_inputs_are_explained(tokens, mlm, message):
    with pytest.raises(ValueError, match=message):
        compare_html(tokens, mlm, CLM)


def test_predictions_and_widget_run_on_tiny_models_and_say_what_is_wrong():
    texts = ["Tival is the capital of Peifi .", "Guiun is the capital of Mitheind ."]
    tokenizer = WordLevelTokenizer.train(texts)
    torch.manual_seed(0)
    mlm = BertForMaskedLM(tiny_encoder_config(vocab_size=tokenizer.vocab_size))
    clm = BertForCausalLM(tiny_encoder_config(vocab_size=tokenizer.vocab_size, is_causal=True))
    tokens, m, c = compare_predictions(mlm, clm, tokenizer, "[MASK] is the capital of Peifi .", 3)
    assert tokens == TOKENS and len(m) == 3 and len(c) == 3
    widget = compare_explorer(mlm, clm, tokenizer, examples=["no blank here"])
    assert "Causal LM" in widget.children[2].value
    assert widget.static.state([0, 4]) == widget.children[2].value  # top 5: the 5th option
    assert "color:#a00" in widget.static.state([1, 0])
    widget.children[0].value = "no blank here"
    assert "[MASK]" in widget.children[2].value and "color:#a00" in widget.children[2].value
    widget.children[0].value = "[MASK] is the [MASK] of Peifi ."
    assert "one [MASK] at a time" in widget.children[2].value
