"""fill_mask (pipeline format, no re-masking, eval mode), fill_mask_accuracy, predictions_table."""

from __future__ import annotations

import pytest
import torch

from mlmcourse.data import Probe
from mlmcourse.heads import BertForMaskedLM
from mlmcourse.masking import MLMCollator
from mlmcourse.tasks.fill_mask import fill_mask, fill_mask_accuracy, predictions_table
from tests.tiny import tiny_encoder_config, tokenizer_fixture

TEXTS = [
    "Tival is the capital of Peifi .",
    "Guiun is the capital of Mitheind .",
    "Nese lies in Peifi .",
    "Drorlir Bank is based in Tival .",
]


tokenizer = tokenizer_fixture(TEXTS)


@pytest.fixture()
def model(tokenizer):
    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size, hidden_dropout_prob=0.3)
    return BertForMaskedLM(config).train()  # dropout on: fill_mask must turn it off


def test_one_mask_gives_the_pipeline_format(model, tokenizer):
    out = fill_mask(model, tokenizer, "Tival is the capital of [MASK] .", top_k=3)
    assert len(out) == 3 and all(set(c) == {"score", "token", "token_str", "sequence"} for c in out)
    scores = [c["score"] for c in out]
    assert scores == sorted(scores, reverse=True) and 0 < sum(scores) <= 1
    for c in out:
        assert c["token_str"] == tokenizer.convert_ids_to_tokens([c["token"]])[0]
        assert c["sequence"] == f"Tival is the capital of {c['token_str']} ."
        assert c["token"] not in (tokenizer.mask_token_id, tokenizer.pad_token_id)


def test_rows_past_the_tokenizers_vocabulary_are_never_proposed(tokenizer):
    # ModernBERT-base pads its embedding matrix past its tokenizer's ids: such a row has no
    # token to show, so it is never a candidate (its probability still counts in the softmax)
    torch.manual_seed(0)
    rows = tokenizer.vocab_size + 6
    model = BertForMaskedLM(tiny_encoder_config(vocab_size=rows)).eval()
    with torch.no_grad():
        model.cls.predictions.bias[tokenizer.vocab_size :] = 50.0  # the likeliest rows
    out = fill_mask(model, tokenizer, "Tival is the capital of [MASK] .", top_k=rows)
    assert len(out) == tokenizer.vocab_size - 4  # every token but [PAD], [CLS], [SEP], [MASK]
    assert max(c["token"] for c in out) < tokenizer.vocab_size
    assert sum(c["score"] for c in out) < 1e-6  # the padded rows took the probability


def test_several_masks_give_one_list_each_and_keep_the_other_mask(model, tokenizer):
    out = fill_mask(model, tokenizer, "[MASK] is the capital of [MASK] .", top_k=2)
    assert len(out) == 2 and all(len(candidates) == 2 for candidates in out)
    first = out[0][0]
    assert first["sequence"] == f"{first['token_str']} is the capital of [MASK] ."


def test_the_input_is_never_masked_again_and_dropout_is_off(model, tokenizer):
    seen = []
    original_forward = model.forward

    def spy(input_ids, *args, **kwargs):
        seen.append((input_ids.clone(), model.training))
        return original_forward(input_ids, *args, **kwargs)

    model.forward = spy
    text = "Drorlir Bank is based in [MASK] ."
    a = fill_mask(model, tokenizer, text, top_k=5)
    b = fill_mask(model, tokenizer, text, top_k=5)
    assert a == b  # deterministic although the model was in training mode
    (ids, training), _ = seen
    assert ids[0].tolist() == tokenizer.encode(text).ids  # exactly the text, one [MASK]
    assert training is False
    assert model.training  # the caller's mode is restored


def test_text_without_a_mask_is_refused(model, tokenizer):
    with pytest.raises(ValueError, match=r"at least one \[MASK\]"):
        fill_mask(model, tokenizer, "Tival is the capital of Peifi .")
    with pytest.raises(ValueError, match="top_k"):
        fill_mask(model, tokenizer, "[MASK] .", top_k=0)
    with pytest.raises(TypeError, match="needs a str"):
        fill_mask(model, tokenizer, ["[MASK] ."])


def test_fill_mask_accuracy_scores_top1_against_the_answer(model, tokenizer):
    probes = [Probe("Nese lies in [MASK] .", "Peifi", "train")]
    best = fill_mask(model, tokenizer, probes[0].text, top_k=1)[0]["token_str"]
    accuracy, rows = fill_mask_accuracy(model, tokenizer, probes)
    assert rows[0]["prediction"] == best
    assert accuracy == float(best == "Peifi") and rows[0]["correct"] == (best == "Peifi")


def test_predictions_table_lines_up_original_masked_and_predicted(model, tokenizer):
    collator = MLMCollator(tokenizer, mlm_probability=0.5, seed=0)
    batch = collator(TEXTS)
    rows = predictions_table(model, tokenizer, batch, max_rows=3)
    assert len(rows) == 3 and model.training
    for row, text in zip(rows, TEXTS, strict=False):
        assert row["original"] == text.split()
        assert len(row["masked"]) == len(row["predicted"]) == len(row["original"])
        assert row["scored"]
        for j in range(len(row["original"])):
            if j not in row["scored"]:
                assert row["masked"][j] == row["predicted"][j] == row["original"][j]
