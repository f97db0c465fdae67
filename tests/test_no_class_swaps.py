"""No function of the package changes the class of a module it was given: the speed path is a
``with speed_path(model):`` block (mlmcourse.model.speed) that gives every module its class back,
so training, pretraining, fine-tuning and every pipeline leave a model as it came."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch

from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.heads import (
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from mlmcourse.model.speed import SpeedBertModel
from mlmcourse.tasks.classification import classify
from mlmcourse.tasks.fill_mask import fill_mask
from mlmcourse.tasks.ner import (
    TAGGER_RECIPE,
    LabelVocab,
    fine_tune_tagger,
    predict_entities,
    predict_tags,
)
from mlmcourse.tasks.qa import answer
from mlmcourse.training import TrainingConfig, train
from tests.tiny import tiny_encoder_config

ROOT = Path(__file__).resolve().parents[1]


def classes(model: torch.nn.Module) -> list[type]:
    return [type(m) for m in model.modules()]


def tiny(head, tokenizer, *args, **kwargs):
    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size, max_position_embeddings=64)
    return head(config, *args, **kwargs)


def encoder_classes_seen(model: torch.nn.Module) -> list[type]:
    """The encoder's class at each of its forward calls, from now on."""
    seen: list[type] = []
    model.bert.register_forward_pre_hook(lambda module, _: seen.append(type(module)))
    return seen


def test_train_with_unpad_runs_on_the_speed_path_and_gives_the_model_back(world_tokenizer):
    model = tiny(BertForTokenClassification, world_tokenizer, num_labels=3)
    before, seen = classes(model), encoder_classes_seen(model)
    ids = torch.tensor([[2, 5, 6, 7, 3], [2, 8, 3, 0, 0]])
    batch = {"input_ids": ids, "attention_mask": (ids != 0).long(), "labels": ids.clamp(max=2)}
    config = TrainingConfig(max_steps=2, unpad=True, logging_steps=1, final_evaluation=False)
    train(model, lambda step: batch, config, eval_batches=[batch], progress=False, log=None)
    assert set(seen) == {SpeedBertModel}  # the run and its evaluation, unpadded
    assert classes(model) == before


def test_pretrain_with_packing_trains_on_the_speed_path_and_returns_a_plain_model(monkeypatch):
    from mlmcourse.pretraining import recipe

    seen = []

    def spy(model, *args, **kwargs):
        seen.append(type(model.bert))
        return real_train(model, *args, **kwargs)

    real_train = recipe.train
    monkeypatch.setattr(recipe, "train", spy)
    run = recipe.pretrain(
        {"max_steps": 2, "batch_size": 4, "hidden_size": 16, "num_attention_heads": 2,
         "intermediate_size": 32, "eval_steps": 0, "final_evaluation": False, "packing": True},
        progress=False, log=None,
    )  # fmt: skip
    assert seen == [SpeedBertModel]  # packed rows need it
    assert classes(run.model) == classes(BertForMaskedLM(run.model.config))


def test_the_tagger_fine_tuned_unpadded_and_predicting_keeps_its_classes(world_tokenizer):
    labels = LabelVocab(WORLD_LABELS)
    model = tiny(BertForTokenClassification, world_tokenizer, len(labels), id2label=labels)
    before, seen = classes(model), encoder_classes_seen(model)
    sentences = load_world("train")[:8]
    recipe = replace(TAGGER_RECIPE, steps=2, batch_size=4, unpad=True)
    fine_tune_tagger(model, sentences, world_tokenizer, labels, recipe=recipe)
    assert set(seen) == {SpeedBertModel} and classes(model) == before
    seen.clear()
    predict_entities(model, world_tokenizer, "Ana Ro lives in Vesh .")
    predict_tags(model, world_tokenizer, [s.tokens for s in sentences[:3]])
    assert set(seen) == {SpeedBertModel}  # predicted unpadded
    assert classes(model) == before


def test_the_pipelines_keep_the_models_classes(world_tokenizer):
    mlm = tiny(BertForMaskedLM, world_tokenizer)
    reader = tiny(BertForQuestionAnswering, world_tokenizer)
    classifier = tiny(BertForSequenceClassification, world_tokenizer, 2, id2label=["a", "b"])
    before = [classes(m) for m in (mlm, reader, classifier)]
    fill_mask(mlm, world_tokenizer, "Ana Ro lives in [MASK] .")
    context = "Vesh is a city in Tarn . Ana Ro lives in Vesh ."
    answer(reader, world_tokenizer, "Where does Ana Ro live ?", context)
    classify(classifier, world_tokenizer, ["Ana Ro lives in Vesh .", "Vesh is a city ."])
    assert [classes(m) for m in (mlm, reader, classifier)] == before


def test_only_the_speed_path_assigns_a_class():
    package = ROOT / "mlmcourse"
    assigning = [path.relative_to(package).as_posix() for path in sorted(package.rglob("*.py"))
                 if "__class__ =" in path.read_text(encoding="utf-8")]  # fmt: skip
    assert assigning == ["model/speed.py"]
