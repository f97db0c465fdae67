"""BertForMaskedLM: head structure, the logits' shape, labelled-only logits, loss, empty batches,
HF parity."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

from mlmcourse.checkpoint import save_checkpoint
from mlmcourse.heads import BertForMaskedLM, load_checkpoint
from mlmcourse.heads.masked_lm import masked_lm_loss
from mlmcourse.interop.bert import export_hf
from mlmcourse.model.inputs import check_model_inputs
from mlmcourse.tasks.fill_mask import unigram_baseline
from mlmcourse.training import evaluate
from tests.tiny import tiny_encoder_config

VOCAB_SIZE = 50  # the error messages below name it


def _model(**kw) -> BertForMaskedLM:
    torch.manual_seed(0)
    return BertForMaskedLM(tiny_encoder_config(vocab_size=VOCAB_SIZE, **kw)).eval()


def _batch(seed: int = 0, b: int = 3, t: int = 10) -> dict:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, VOCAB_SIZE, (b, t), generator=g)
    masked = torch.rand(b, t, generator=g) < 0.3
    masked[0, 1] = True
    labels = torch.where(masked, ids, torch.full_like(ids, -100))
    inputs = torch.where(masked, torch.full_like(ids, 4), ids)
    attention_mask = torch.ones_like(ids)
    attention_mask[2, 7:] = 0
    labels[2, 7:] = -100
    return {"input_ids": inputs, "attention_mask": attention_mask, "labels": labels}


def test_decoder_is_tied_to_the_word_embeddings():
    model = _model()
    decoder = model.cls.predictions.decoder.weight
    assert decoder is model.bert.embeddings.word_embeddings.weight
    names = dict(model.named_parameters())
    assert "cls.predictions.decoder.weight" not in names  # counted (and decayed) once
    assert {"cls.predictions.bias", "cls.predictions.transform.dense.weight"} <= set(names)
    assert model.num_parameters() == sum(p.numel() for p in names.values())


def test_the_logits_are_b_t_v_by_default_with_or_without_labels():
    model = _model()
    batch = _batch()
    shape = (*batch["input_ids"].shape, VOCAB_SIZE)  # (B, T, V)
    without = model(batch["input_ids"], batch["attention_mask"])
    with_labels = model(**batch)
    assert without.loss is None and without.logits.shape == shape
    assert with_labels.logits.shape == shape
    torch.testing.assert_close(with_labels.logits, without.logits)
    # what a learner writes: a hit per labelled position, no shape error
    selected = batch["labels"] != -100
    hits = (with_labels.logits.argmax(-1) == batch["labels"])[selected]
    assert hits.shape == (int(selected.sum()),)


def test_logits_at_labels_are_the_full_logits_at_the_labelled_positions_same_loss():
    model = _model()
    batch = _batch()
    full = model(**batch)  # (B, T, V)
    at_labels = model(**batch, logits_at_labels=True)  # (N, V)
    selected = batch["labels"] != -100
    assert at_labels.logits.shape == (int(selected.sum()), VOCAB_SIZE)
    torch.testing.assert_close(at_labels.logits, full.logits[selected], atol=1e-5, rtol=1e-5)
    assert torch.equal(at_labels.loss, full.loss)  # the loss is computed one way: to the bit
    reference = F.cross_entropy(
        full.logits.view(-1, VOCAB_SIZE), batch["labels"].view(-1), ignore_index=-100
    )
    torch.testing.assert_close(full.loss, reference, atol=1e-5, rtol=1e-5)
    # the same gradients either way: the (B, T, V) read-out is not part of the loss
    grads = []
    for ask in (False, True):
        model.zero_grad()
        model(**batch, logits_at_labels=ask).loss.backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*grads, strict=True))
    # without labels there is nothing to select: every position is scored
    without = model(batch["input_ids"], logits_at_labels=True).logits
    assert without.shape == (*batch["input_ids"].shape, VOCAB_SIZE)


def test_a_causal_lm_follows_the_same_rule():
    from mlmcourse.heads import BertForCausalLM

    torch.manual_seed(0)
    model = BertForCausalLM(tiny_encoder_config(vocab_size=VOCAB_SIZE, is_causal=True)).eval()
    batch = _batch()
    full, at_labels = model(**batch), model(**batch, logits_at_labels=True)
    assert full.logits.shape == (*batch["input_ids"].shape, VOCAB_SIZE)
    selected = model.targets(batch["labels"]) != -100  # next-token targets
    torch.testing.assert_close(at_labels.logits, full.logits[selected], atol=1e-5, rtol=1e-5)
    assert torch.equal(at_labels.loss, full.loss)


def test_training_and_evaluation_read_out_the_labelled_positions_only():
    from mlmcourse.training import TrainingConfig, train

    model = _model()
    batch = _batch()
    read_out: list[tuple[int, ...]] = []  # the shape of every input of the head
    model.cls.register_forward_hook(lambda module, args, out: read_out.append(args[0].shape))
    config = TrainingConfig(
        max_steps=2, logging_steps=1, final_evaluation=False, torch_compile=False
    )
    train(model, lambda step: batch, config, progress=False, log=None)
    evaluate(model, [batch])
    n = int((batch["labels"] != -100).sum())
    assert read_out == [(n, model.config.hidden_size)] * 3  # N rows, not B x T


def test_evaluate_gives_the_same_numbers_for_either_shape():
    model = _model()
    batches = [_batch(seed) for seed in range(3)]

    class FullLogitsOnly(torch.nn.Module):  # a model that cannot score the labels alone
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask=None, labels=None):
            return self.inner(input_ids, attention_mask, labels=labels)

    scores = evaluate(model, batches)
    assert scores == evaluate(FullLogitsOnly(model), batches)
    selected = [b["labels"] != -100 for b in batches]
    hits = sum(
        int((model(**b).logits.argmax(-1)[s] == b["labels"][s]).sum())
        for b, s in zip(batches, selected, strict=True)
    )
    assert scores["accuracy"] == hits / sum(int(s.sum()) for s in selected)


def test_a_batch_with_nothing_masked_gives_zero_loss_not_nan():
    model = _model().train()
    batch = _batch()
    batch["labels"] = torch.full_like(batch["labels"], -100)
    out = model(**batch, logits_at_labels=True)
    assert out.loss.item() == 0.0 and out.logits.shape == (0, VOCAB_SIZE)
    assert model(**batch).loss.item() == 0.0
    out.loss.backward()  # still differentiable: a training step on it is a no-op, not a crash
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() and not g.any() for g in grads)
    assert masked_lm_loss(torch.zeros(0, 7), torch.zeros(0, dtype=torch.long)).item() == 0.0


def test_bad_labels_are_explained_where_a_batch_comes_in():
    model = _model()
    batch = _batch()
    with pytest.raises(ValueError, match="labels must have the shape of input_ids"):
        check_model_inputs(model.config, {**batch, "labels": batch["labels"][:, :5]})
    with pytest.raises(ValueError, match="integer ids"):
        check_model_inputs(model.config, {**batch, "labels": batch["labels"].float()})
    with pytest.raises(ValueError, match="labels must have the shape of input_ids"):
        evaluate(model, [{**batch, "labels": batch["labels"][:, :5]}])  # its first batch
    bad = batch["labels"].clone()
    bad[0, 1] = 50  # a value: checked where a batch comes in (train's first batch)
    with pytest.raises(ValueError, match=r"labels must be in \[0, 50\) or -100"):
        check_model_inputs(
            model.config, {**batch, "labels": bad}, label_classes=model.label_classes
        )


def test_checkpoint_rebuilds_the_same_model(tmp_path):
    model = _model()
    save_checkpoint(tmp_path / "m", model)
    loaded = load_checkpoint(tmp_path / "m").model
    assert isinstance(loaded, BertForMaskedLM) and not loaded.training
    batch = _batch(1)
    torch.testing.assert_close(loaded(**batch).logits, model(**batch).logits)
    assert loaded.cls.predictions.decoder.weight is loaded.bert.embeddings.word_embeddings.weight


def test_export_loads_in_transformers_with_the_same_logits(tmp_path, monkeypatch):
    transformers = pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = _model(hidden_dropout_prob=0.0)
    with torch.no_grad():  # a non-zero output bias, so the test would catch a missing one
        model.cls.predictions.bias.normal_()
    export_hf(model, tmp_path / "hf")
    theirs = transformers.BertForMaskedLM.from_pretrained(str(tmp_path / "hf")).eval()
    batch = _batch(2)
    with torch.no_grad():
        ours = model(batch["input_ids"], batch["attention_mask"]).logits
        ref = theirs(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        ref_loss = theirs(**batch).loss
    valid = batch["attention_mask"].bool()
    torch.testing.assert_close(ours[valid], ref.logits[valid], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(model(**batch).loss, ref_loss, atol=1e-5, rtol=1e-5)
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_export_refuses_variants_transformers_cannot_represent(tmp_path):
    with pytest.raises(ValueError, match="modern encoder's switches"):
        export_hf(_model(pre_layer_norm=True), tmp_path / "x")
    with pytest.raises(ValueError, match="is_causal=True"):
        export_hf(_model(is_causal=True), tmp_path / "x")


def test_unigram_baseline_predicts_the_most_frequent_token():
    train_ids = [torch.tensor([7, 7, 7, 8]), torch.tensor([7, 9])]
    evals = [{"labels": torch.tensor([[7, -100, 8, 9]])}]
    base = unigram_baseline(train_ids, evals, vocab_size=10)
    assert base["token"] == 7 and base["accuracy"] == pytest.approx(1 / 3)
    counts = torch.ones(10, dtype=torch.float64)
    counts[7] += 4
    counts[8] += 1
    counts[9] += 1
    p = counts / counts.sum()
    expected = -(p[7].log() + p[8].log() + p[9].log()) / 3
    assert base["loss"] == pytest.approx(float(expected))


def test_held_out_scores_put_the_model_beside_the_unigram_on_the_same_masks(
    shipped_world,
):
    from mlmcourse.data import world_texts
    from mlmcourse.masking import MLMCollator
    from mlmcourse.tasks.fill_mask import held_out_scores
    from mlmcourse.training import evaluate, fixed_eval_batches

    model, tokenizer = shipped_world.model, shipped_world.tokenizer
    texts, train = world_texts("validation")[:200], world_texts("train")[:2000]
    scores = held_out_scores(model, tokenizer, texts, train_texts=train, seed=7)
    collator = MLMCollator(tokenizer, max_length=model.config.max_position_embeddings)
    batches = fixed_eval_batches(texts, collator, seed=7)  # the same masks, made by hand
    assert scores["accuracy"] == evaluate(model, batches)["accuracy"]
    ids = [tokenizer.encode(t).ids for t in train]
    special = tokenizer.all_special_ids
    unigram = unigram_baseline(ids, batches, vocab_size=tokenizer.vocab_size, ignore_ids=special)
    assert scores["unigram_accuracy"] == unigram["accuracy"]
    assert scores["unigram_perplexity"] == unigram["perplexity"]
    assert scores["times_unigram"] == scores["accuracy"] / unigram["accuracy"] > 3  # it learnt
    assert held_out_scores(model, tokenizer, texts, train_texts=train, seed=8) != scores
    hidden = held_out_scores(
        model, tokenizer, texts, train_texts=train, seed=7, mask_replace_prob=1.0,
        random_replace_prob=0.0,
    )  # fmt: skip
    collator = MLMCollator(
        tokenizer, mask_replace_prob=1.0, random_replace_prob=0.0,
        max_length=model.config.max_position_embeddings,
    )  # fmt: skip
    every_target_hidden = fixed_eval_batches(texts, collator, seed=7)
    assert hidden["accuracy"] == evaluate(model, every_target_hidden)["accuracy"]
    assert hidden["unigram_accuracy"] > 0 and hidden != scores


def test_the_encoder_can_be_saved_and_loaded_alone(tmp_path):
    from mlmcourse.checkpoint import load_encoder, save_encoder
    from mlmcourse.model import BertModel

    model = _model()
    save_encoder(tmp_path / "enc", model)
    save_checkpoint(tmp_path / "mlm", model)
    batch = _batch(3)
    expected = model.bert(batch["input_ids"], batch["attention_mask"]).last_hidden_state
    for directory in ("enc", "mlm"):  # an encoder checkpoint, or the encoder of an MLM one
        encoder = load_encoder(tmp_path / directory)
        assert type(encoder) is BertModel
        got = encoder(batch["input_ids"], batch["attention_mask"]).last_hidden_state
        torch.testing.assert_close(got, expected)


def test_torch_compile_traces_the_forward_without_graph_breaks_from_checks():
    # The forward checks only shapes, lengths and dtypes (no value read back from the tensors),
    # so tracing it leaves only the gathers of the scored positions (their number depends on
    # the data), which save ~85% of the head. Training compiles it with logits_at_labels=True.
    model = _model()
    explanation = torch._dynamo.explain(model)(**_batch(), logits_at_labels=True)
    reasons = [str(b.reason) for b in explanation.break_reasons]
    assert len(reasons) <= 2 and all("nonzero" in r for r in reasons), reasons


@pytest.mark.parametrize("seed", range(3))
def test_the_chapters_plain_mlm_loss_is_the_models(seed):
    """book/pretraining.md's teaching cell, executed from the chapter, against the head."""
    from tests.teaching import teaching_namespace

    namespace = teaching_namespace("pretraining")
    torch.manual_seed(seed)
    model = BertForMaskedLM(tiny_encoder_config()).eval()
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, model.config.vocab_size, (3, 10), generator=g)
    labels = torch.where(torch.rand(3, 10, generator=g) < 0.3, ids, torch.full_like(ids, -100))
    head = model.cls.predictions
    with torch.no_grad():
        hidden = model.bert(ids).last_hidden_state
        plain = namespace["mlm_loss"](
            hidden,
            labels,
            head.transform.dense,
            head.transform.LayerNorm,
            model.bert.embeddings.word_embeddings.weight,
            head.bias,
        )
        expected = model(ids, labels=labels).loss
    torch.testing.assert_close(plain, expected, atol=1e-6, rtol=1e-6)
