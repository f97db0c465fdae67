"""Sentence classification: parity with transformers, the loss, training, the pipeline."""

from dataclasses import replace

import pytest
import torch

from mlmcourse.heads import BertForSequenceClassification
from mlmcourse.model import BertModel
from mlmcourse.model.inputs import check_model_inputs
from mlmcourse.tasks.classification import (
    CLASSIFIER_RECIPE,
    classify,
    evaluate_classifier,
    fine_tune_classifier,
    predict_logits,
)
from tests.tiny import tiny_encoder_config, tokenizer_fixture

TEXTS = ["a fine film", "dull and long", "fine", "long dull dull film and a fine end"]
LABELS = [1, 0, 1, 0]


tokenizer = tokenizer_fixture(TEXTS * 3)


def _batch(tokenizer, labels=None):
    enc = tokenizer(TEXTS)
    batch = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    if labels is not None:
        batch["labels"] = torch.tensor(labels)
    return batch


@pytest.mark.parametrize(
    ("num_labels", "labels"), [(2, LABELS), (3, [2, 0, 1, 1]), (1, [0.5, -1.0, 2.0, 0.0])]
)
def test_matches_transformers_bert_for_sequence_classification(tokenizer, num_labels, labels):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = tiny_encoder_config()
    ours = BertForSequenceClassification(config, num_labels).eval()
    hf_config = transformers.BertConfig(num_labels=num_labels, **config.to_dict())
    theirs = transformers.BertForSequenceClassification(hf_config).eval()
    missing, unexpected = theirs.load_state_dict(ours.state_dict(), strict=False)
    assert not unexpected and all("position_ids" in k for k in missing)
    batch = _batch(tokenizer, labels)
    assert batch["attention_mask"].min() == 0  # padding is part of the comparison
    a, b = ours(**batch), theirs(**batch)
    assert torch.allclose(a.logits, b.logits, atol=1e-5)
    assert torch.allclose(a.loss, b.loss, atol=1e-6)


def test_from_encoder_keeps_a_pretrained_pooler_and_adds_one_when_missing():
    torch.manual_seed(0)
    with_pooler = BertModel(tiny_encoder_config(), add_pooling_layer=True)
    model = BertForSequenceClassification.from_encoder(with_pooler, 2)
    for name, value in with_pooler.state_dict().items():
        assert torch.equal(model.bert.state_dict()[name], value)
    mlm_encoder = BertModel(tiny_encoder_config())  # pretrained with MLM alone: no pooler
    model = BertForSequenceClassification.from_encoder(mlm_encoder, 2)
    assert model.bert.pooler is not None
    emb = "embeddings.word_embeddings.weight"
    assert torch.equal(model.bert.state_dict()[emb], mlm_encoder.state_dict()[emb])


def test_bad_labels_and_arguments_are_clear_errors(tokenizer):
    model = BertForSequenceClassification(tiny_encoder_config(), 2)
    with pytest.raises(ValueError, match=r"labels must be in \[0, 2\), found 5 \(example 2\)"):
        fine_tune_classifier(model, [("a", 0), ("b", 1), ("c", 5)], tokenizer)
    with pytest.raises(
        ValueError, match=r"labels must be in \[0, 2\) or -100 \(not scored\), found 5"
    ):
        check_model_inputs(model.config, _batch(tokenizer, [0, 1, 5, 0]), label_classes=2)
    with pytest.raises(ValueError, match="one per sequence"):
        model(**_batch(tokenizer), labels=torch.zeros(4, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="integer class ids"):
        model(**_batch(tokenizer, [0.0, 1.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match="id2label must name labels 0..1"):
        BertForSequenceClassification(tiny_encoder_config(), 2, id2label=["a", "b", "c"])
    with pytest.raises(ValueError, match="at least one"):
        fine_tune_classifier(model, [], tokenizer)
    with pytest.raises(ValueError, match="unk_rate=0.3 is a setting of fine_tune_tagger"):
        fine_tune_classifier(
            model, [("a", 0)], tokenizer, recipe=replace(CLASSIFIER_RECIPE, unk_rate=0.3)
        )


def test_fine_tuning_learns_a_toy_task(tokenizer):
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_encoder_config(), 2, id2label=["neg", "pos"])
    examples = list(zip(TEXTS, LABELS, strict=True)) * 8
    before = evaluate_classifier(model, tokenizer, examples[:4])["accuracy"]
    recipe = replace(CLASSIFIER_RECIPE, epochs=6, batch_size=4, learning_rate=3e-3)
    fine_tune_classifier(model, examples, tokenizer, recipe=recipe)
    assert evaluate_classifier(model, tokenizer, examples[:4]) == {"accuracy": 1.0, "n": 4}
    assert before < 1.0


def test_the_recipes_unpad_reaches_the_classifier_with_the_same_losses(tokenizer):
    examples = list(zip(TEXTS, LABELS, strict=True)) * 3  # four lengths: padding to skip
    losses = []
    for unpad in (False, True):
        torch.manual_seed(0)
        config = tiny_encoder_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        model = BertForSequenceClassification(config, 2)
        recipe = replace(CLASSIFIER_RECIPE, epochs=2, batch_size=4, unpad=unpad)
        run = fine_tune_classifier(model, examples, tokenizer, recipe=recipe)
        losses.append([row["loss"] for row in run.history["train"]])
    assert losses[1] == pytest.approx(losses[0], abs=1e-5)


def test_frozen_word_embeddings_stay_as_they_were(tokenizer):
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_encoder_config(), 2)
    words = model.bert.embeddings.word_embeddings.weight.detach().clone()
    layer = model.bert.encoder.layer[0].attention.self.query.weight.detach().clone()
    examples = list(zip(TEXTS, LABELS, strict=True))
    recipe = replace(CLASSIFIER_RECIPE, batch_size=2)
    frozen = replace(recipe, freeze_word_embeddings=True)
    fine_tune_classifier(model, examples, tokenizer, recipe=frozen)
    assert torch.equal(model.bert.embeddings.word_embeddings.weight, words)
    assert not torch.equal(model.bert.encoder.layer[0].attention.self.query.weight, layer)
    fine_tune_classifier(model, examples, tokenizer, recipe=recipe)  # unfrozen again
    assert not torch.equal(model.bert.embeddings.word_embeddings.weight, words)


def test_predict_logits_keeps_the_input_order(tokenizer):
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_encoder_config(), 3).eval()
    together = predict_logits(model, tokenizer, TEXTS, batch_size=3)  # sorted by length inside
    alone = torch.cat([model(**_one(tokenizer, t)).logits for t in TEXTS])
    assert torch.allclose(together, alone, atol=1e-5)


def _one(tokenizer, text):
    enc = tokenizer([text])
    return {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids")}


def test_classify_follows_the_transformers_pipeline_format(tokenizer):
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_encoder_config(), 3, id2label=["a", "b", "c"])
    one = classify(model, tokenizer, "a fine film")
    assert len(one) == 1 and set(one[0]) == {"label", "score"}
    many = classify(model, tokenizer, TEXTS)
    assert len(many) == 4 and all(isinstance(d, dict) for d in many)
    ranked = classify(model, tokenizer, "a fine film", top_k=None)
    assert [d["label"] for d in ranked] != [] and len(ranked) == 3
    assert sum(d["score"] for d in ranked) == pytest.approx(1.0)
    assert ranked[0]["score"] >= ranked[1]["score"] >= ranked[2]["score"]
    assert ranked[0] == one[0]
    assert [len(r) for r in classify(model, tokenizer, TEXTS[:2], top_k=2)] == [2, 2]


def test_classify_refuses_empty_and_overlong_texts(tokenizer):
    model = BertForSequenceClassification(tiny_encoder_config(), 2)
    with pytest.raises(ValueError, match=r"texts\[1\] is empty"):
        classify(model, tokenizer, ["fine", "  "])
    long = " ".join(["fine"] * 40)  # the tiny model reads 32 positions
    with pytest.raises(
        ValueError, match=r"texts\[0\] is 42 tokens long, but the model reads at most 32"
    ):
        classify(model, tokenizer, long)
    assert len(classify(model, tokenizer, long, truncation=True)) == 1
    with pytest.raises(TypeError, match="texts must be a string or a list"):
        classify(model, tokenizer, 3)
