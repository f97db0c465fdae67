"""The causal LM: shifted labels, the causal head, the collator, generation and mask-predict."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from mlmcourse.data import Probe
from mlmcourse.heads import BertForCausalLM, BertForMaskedLM
from mlmcourse.heads.causal_lm import shift_labels
from mlmcourse.masking.causal import CLMCollator
from mlmcourse.model import EncoderConfig
from mlmcourse.model.inputs import check_model_inputs
from mlmcourse.tasks.generation import (
    generate,
    left_context,
    mask_predict,
    next_word,
    next_word_accuracy,
)
from mlmcourse.training import TrainingConfig, evaluate, train
from tests.tiny import tiny_encoder_config, tokenizer_fixture

TEXTS = [
    "Tival is the capital of Peifi .",
    "Guiun is the capital of Mitheind .",
    "Kepaix Pouend works as a pilot .",
    "an engineer lives in Tival .",
]


tokenizer = tokenizer_fixture(TEXTS)


def causal_config(tokenizer, **overrides) -> EncoderConfig:
    values = dict(
        vocab_size=tokenizer.vocab_size,
        max_position_embeddings=24,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        is_causal=True,
    )
    return tiny_encoder_config(**{**values, **overrides})


def test_shift_labels_moves_targets_left_and_ignores_the_last():
    labels = torch.tensor([[2, 7, 8, 3, -100], [2, 9, 3, -100, -100]])
    assert shift_labels(labels).tolist() == [[7, 8, 3, -100, -100], [9, 3, -100, -100, -100]]


def test_loss_equals_the_hugging_face_shifted_cross_entropy(tokenizer):
    torch.manual_seed(0)
    model = BertForCausalLM(causal_config(tokenizer)).eval()
    batch = CLMCollator(tokenizer)(TEXTS)
    out = model(**batch)
    full = model(batch["input_ids"], batch["attention_mask"]).logits  # (B, T, V)
    # transformers' loss: logits[:, :-1] against labels[:, 1:], ignore_index=-100
    reference = F.cross_entropy(
        full[:, :-1].reshape(-1, full.shape[-1]), batch["labels"][:, 1:].reshape(-1)
    )
    assert torch.allclose(out.loss, reference, atol=1e-5)
    assert out.logits.shape == (*batch["input_ids"].shape, tokenizer.vocab_size)  # (B, T, V)
    n_targets = int((batch["attention_mask"].sum(1) - 1).sum())  # every token but the first
    at_labels = model(**batch, logits_at_labels=True).logits
    assert at_labels.shape == (n_targets, tokenizer.vocab_size)


def test_causal_means_the_future_does_not_change_the_past(tokenizer):
    torch.manual_seed(0)
    model = BertForCausalLM(causal_config(tokenizer)).eval()
    a = torch.tensor([tokenizer.encode("Tival is the capital of Peifi .").ids])
    b = a.clone()
    b[0, 4:] = tokenizer.convert_tokens_to_ids(["Guiun"])[0]  # change every later token
    with torch.no_grad():
        la, lb = model(a).logits, model(b).logits
    assert torch.allclose(la[0, :4], lb[0, :4], atol=1e-5)
    assert not torch.allclose(la[0, 4:], lb[0, 4:], atol=1e-3)


def test_head_is_tied_and_bidirectional_config_is_refused(tokenizer):
    model = BertForCausalLM(causal_config(tokenizer))
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    with pytest.raises(ValueError, match="is_causal=True"):
        BertForCausalLM(causal_config(tokenizer, is_causal=False))
    with pytest.raises(TypeError, match="EncoderConfig"):
        BertForCausalLM({"hidden_size": 32})


def test_labels_are_checked_where_a_batch_comes_in(tokenizer):
    model = BertForCausalLM(causal_config(tokenizer))
    ids = torch.tensor([tokenizer.encode(TEXTS[0]).ids])
    with pytest.raises(ValueError, match="shape of input_ids"):
        check_model_inputs(model.config, {"input_ids": ids, "labels": ids[:, 1:]})
    with pytest.raises(ValueError, match="integer ids"):
        check_model_inputs(model.config, {"input_ids": ids, "labels": ids.float()})
    with pytest.raises(ValueError, match="found 10"):  # train's and evaluate's first batch
        check_model_inputs(model.config, {"input_ids": ids, "labels": ids + 10_000},
                           label_classes=model.label_classes)  # fmt: skip


def test_a_one_token_row_gives_zero_loss_not_nan(tokenizer):
    model = BertForCausalLM(causal_config(tokenizer))
    ids = torch.tensor([[tokenizer.cls_token_id]])
    assert model(ids, labels=ids).loss.item() == 0.0


def test_collator_pads_and_labels_every_real_token(tokenizer):
    collator = CLMCollator(tokenizer, max_length=6)
    batch = collator(TEXTS[:2], generator=torch.Generator().manual_seed(0))
    assert set(batch) == {"input_ids", "attention_mask", "token_type_ids", "labels"}
    real = batch["attention_mask"] == 1
    assert torch.equal(batch["labels"][real], batch["input_ids"][real])
    assert (batch["labels"][~real] == -100).all()
    assert batch["input_ids"].shape[1] <= 6  # truncated like the MLM collator
    assert (batch["input_ids"] != tokenizer.mask_token_id).all()  # nothing masked
    assert "max_length=6" in repr(collator)
    with pytest.raises(TypeError, match="list of examples"):
        collator("one string")


def overfit(tokenizer, causal: bool, steps: int = 150):
    torch.manual_seed(0)
    config = causal_config(tokenizer, is_causal=causal)
    model = BertForCausalLM(config) if causal else BertForMaskedLM(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ids = [tokenizer.encode(t).ids for t in TEXTS]
    for _ in range(steps):
        if causal:
            batch = CLMCollator(tokenizer)(TEXTS)
        else:  # mask each position of each sentence once, a full "denoising" epoch
            rows, labels = [], []
            for row in ids:
                for i in range(1, len(row) - 1):
                    masked = list(row)
                    masked[i] = tokenizer.mask_token_id
                    rows.append(masked)
                    labels.append([-100] * i + [row[i]] + [-100] * (len(row) - i - 1))
            batch = CLMCollator(tokenizer)([{"input_ids": r} for r in rows])
            width = batch["input_ids"].shape[1]
            batch["labels"] = torch.tensor([lab + [-100] * (width - len(lab)) for lab in labels])
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return model.eval()


@pytest.fixture(scope="module")
def trained_clm(tokenizer):
    return overfit(tokenizer, causal=True)


def test_greedy_generation_continues_a_memorised_sentence(tokenizer, trained_clm):
    assert generate(trained_clm, tokenizer, "Tival is the") == "Tival is the capital of Peifi ."
    assert generate(trained_clm, tokenizer, "Kepaix") == "Kepaix Pouend works as a pilot ."


def test_sampling_is_repeatable_with_a_generator_and_respects_top_k(tokenizer, trained_clm):
    def sample(seed, **kw):
        g = torch.Generator().manual_seed(seed)
        return generate(trained_clm, tokenizer, "", do_sample=True, generator=g, **kw)

    assert sample(1, temperature=2.0) == sample(1, temperature=2.0)
    # top_k=1 is greedy whatever the temperature
    assert sample(3, top_k=1, temperature=5.0) == generate(trained_clm, tokenizer, "")
    hot = {sample(s, temperature=50.0, max_new_tokens=3) for s in range(8)}
    assert len(hot) > 1  # a high temperature flattens the distribution
    for bad, message in [
        ({"temperature": 0}, "temperature"),
        ({"top_k": 0}, "top_k"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
    ]:
        with pytest.raises(ValueError, match=message):
            generate(trained_clm, tokenizer, "x", **bad)


def test_generation_stops_at_the_position_limit(tokenizer):
    model = BertForCausalLM(causal_config(tokenizer, max_position_embeddings=5))
    out = generate(model, tokenizer, "", max_new_tokens=50)
    assert len(out.split()) <= 4  # [CLS] + at most 4 tokens


def test_generate_and_next_word_refuse_a_masked_lm(tokenizer):
    mlm = BertForMaskedLM(causal_config(tokenizer, is_causal=False))
    with pytest.raises(ValueError, match="causal LM"):
        generate(mlm, tokenizer, "Tival")
    with pytest.raises(ValueError, match="causal LM"):
        next_word(mlm, tokenizer, "Tival is")


def test_next_word_reads_only_the_left_context(tokenizer, trained_clm):
    best = next_word(trained_clm, tokenizer, "Tival is the capital of [MASK] .", top_k=3)
    assert [c["token_str"] for c in best][0] == "Peifi"
    assert best[0]["sequence"] == "Tival is the capital of Peifi"
    assert 0 < best[0]["score"] <= 1 and best[0]["score"] >= best[1]["score"]
    same = next_word(trained_clm, tokenizer, "Tival is the capital of [MASK] anything else")
    assert [c["token"] for c in same] == [
        c["token"] for c in next_word(trained_clm, tokenizer, "Tival is the capital of")
    ]
    assert left_context("a b [MASK] c") == "a b"
    with pytest.raises(ValueError, match="MASK"):
        left_context("no blank here")


def test_next_word_accuracy_rows(tokenizer, trained_clm):
    probes = [
        Probe("Tival is the capital of [MASK] .", "Peifi", "memorised", "capital_of"),
        Probe("[MASK] is the capital of Peifi .", "Tival", "right context", "capital"),
    ]
    accuracy, rows = next_word_accuracy(trained_clm, tokenizer, probes)
    assert rows[0]["correct"] and rows[0]["prediction"] == "Peifi"
    assert accuracy == sum(r["correct"] for r in rows) / 2
    with pytest.raises(ValueError, match="at least one probe"):
        next_word_accuracy(trained_clm, tokenizer, [])


def test_mask_predict_fills_a_memorised_sentence_and_keeps_the_length(tokenizer):
    mlm = overfit(tokenizer, causal=False, steps=120)
    out = mask_predict(mlm, tokenizer, "Tival is the", num_tokens=4)
    assert out.split()[:3] == ["Tival", "is", "the"] and len(out.split()) == 7
    assert out.split()[3] == "capital" and out.endswith(".")
    assert mask_predict(mlm, tokenizer, "Tival is the", num_tokens=4) == out  # deterministic
    assert mlm.training is False
    assert mask_predict(mlm, tokenizer, "Tival", num_tokens=2, iterations=1).startswith("Tival")
    with pytest.raises(ValueError, match="masked LM"):
        mask_predict(BertForCausalLM(causal_config(tokenizer)), tokenizer, "x")
    with pytest.raises(ValueError, match="max_position_embeddings"):
        mask_predict(mlm, tokenizer, "Tival", num_tokens=40)
    with pytest.raises(ValueError, match="num_tokens"):
        mask_predict(mlm, tokenizer, "Tival", num_tokens=0)


def test_training_loop_scores_next_tokens(tokenizer):
    """train() and evaluate() count a causal LM's targets after the shift."""
    torch.manual_seed(0)
    model = BertForCausalLM(causal_config(tokenizer))
    collator = CLMCollator(tokenizer)
    batches = [collator(TEXTS)]
    before = evaluate(model, batches)
    expected_tokens = int((batches[0]["attention_mask"].sum(1) - 1).sum())
    assert before["tokens"] == expected_tokens
    config = TrainingConfig(max_steps=60, learning_rate=3e-3, warmup_steps=5, logging_steps=10)
    result = train(
        model, lambda i: batches[0], config, eval_batches=batches, progress=False, log=None
    )
    assert result.final_eval["loss"] < before["loss"] / 2
    assert result.final_eval["accuracy"] > 0.8
    assert dataclasses.is_dataclass(model.config) and model.config.is_causal


def test_inference_inputs_are_checked(tokenizer, trained_clm):
    with pytest.raises(ValueError, match="top_k"):
        next_word(trained_clm, tokenizer, "Tival is", top_k=0)
    with pytest.raises(TypeError, match="prompt must be a str"):
        generate(trained_clm, tokenizer, 42)
    trained_clm.train()
    generate(trained_clm, tokenizer, "Tival")
    assert trained_clm.training  # the caller's mode is restored
    trained_clm.eval()


def test_causal_checkpoint_round_trips_through_load_checkpoint(tokenizer, tmp_path):
    from mlmcourse.checkpoint import load_encoder, save_checkpoint
    from mlmcourse.heads import load_checkpoint

    model = BertForCausalLM(causal_config(tokenizer)).eval()
    save_checkpoint(tmp_path / "clm", model, tokenizer=tokenizer)
    loaded = load_checkpoint(tmp_path / "clm")
    assert isinstance(loaded.model, BertForCausalLM)
    ids = torch.tensor([tokenizer.encode(TEXTS[0]).ids])
    assert torch.equal(model(ids).logits, loaded.model(ids).logits)
    assert load_encoder(tmp_path / "clm").config.is_causal
