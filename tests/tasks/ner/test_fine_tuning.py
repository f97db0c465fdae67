"""One fine-tuning recipe for the NER comparisons: pretrained or from scratch, reproducible."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.heads import BertForMaskedLM
from mlmcourse.tasks.ner import (
    REAL_TEXT_RECIPE,
    TAGGER_RECIPE,
    LabelVocab,
    fine_tune_tagger,
    new_tagger,
)
from mlmcourse.training import EpochPlan, FineTuneRecipe
from tests.tiny import tiny_encoder_config


@pytest.fixture
def encoder(world_tokenizer):
    torch.manual_seed(0)
    return BertForMaskedLM(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size))


def test_a_pretrained_tagger_copies_the_encoder_and_a_scratch_one_does_not(encoder):
    labels = LabelVocab(WORLD_LABELS)
    pretrained = new_tagger(encoder, labels, pretrained=True, seed=1)
    scratch = new_tagger(encoder, labels, pretrained=False, seed=1)
    for name, weight in encoder.bert.state_dict().items():
        assert torch.equal(pretrained.bert.state_dict()[name], weight), name
    word_embeddings = "embeddings.word_embeddings.weight"
    assert not torch.equal(
        scratch.bert.state_dict()[word_embeddings], encoder.bert.state_dict()[word_embeddings]
    )
    assert (
        scratch.bert.config == encoder.bert.config
        and scratch.bert.config is not encoder.bert.config
    )
    again = new_tagger(encoder, labels, pretrained=True, seed=1)
    assert torch.equal(again.classifier.weight, pretrained.classifier.weight)  # the seed decides
    assert list(pretrained.id2label.values()) == WORLD_LABELS


def test_fine_tuning_is_reproducible_and_learns(encoder, world_tokenizer):
    labels = LabelVocab(WORLD_LABELS)
    sentences = load_world("train")[:40]
    losses = []
    for _ in range(2):
        model = new_tagger(encoder, labels, pretrained=True, seed=0)
        losses.append(
            fine_tune_tagger(
                model,
                sentences,
                world_tokenizer,
                labels,
                recipe=replace(TAGGER_RECIPE, steps=30, batch_size=8, unk_rate=0.3),
            ).final_loss  # fmt: skip
        )
    assert losses[0] == losses[1]
    assert losses[0] < 0.9 * torch.log(torch.tensor(len(labels))).item()  # below a uniform guess


def test_fine_tuning_nothing_is_a_clear_error(encoder, world_tokenizer):
    labels = LabelVocab(WORLD_LABELS)
    model = new_tagger(encoder, labels, pretrained=True, seed=0)
    with pytest.raises(ValueError, match="at least one training sentence"):
        fine_tune_tagger(model, [], world_tokenizer, labels, recipe=replace(TAGGER_RECIPE, steps=3))


def test_epochs_visit_every_sentence_once_in_length_grouped_batches(encoder, world_tokenizer):
    from mlmcourse.tasks.ner import fine_tuning

    labels = LabelVocab(WORLD_LABELS)
    sentences = load_world("train")[:37]
    plan = EpochPlan(fine_tuning._piece_lengths(sentences, world_tokenizer, 64), 8, 0)
    assert plan.per_epoch == 5  # ceil(37 / 8)
    for epoch in range(2):
        rows = [r for i in range(plan.per_epoch) for r in plan.rows(epoch * plan.per_epoch + i)]
        assert sorted(rows) == list(range(37))
    recipe = replace(TAGGER_RECIPE, epochs=2, batch_size=8)
    model = new_tagger(encoder, labels, pretrained=True, seed=0)
    run = fine_tune_tagger(model, sentences, world_tokenizer, labels, recipe=recipe)
    again = new_tagger(encoder, labels, pretrained=True, seed=0)
    again_run = fine_tune_tagger(again, sentences, world_tokenizer, labels, recipe=recipe)
    assert run.step == 2 * plan.per_epoch and again_run.final_loss == run.final_loss
    capped = new_tagger(encoder, labels, pretrained=True, seed=0)  # steps: a budget on epochs
    budget = fine_tune_tagger(
        capped, sentences, world_tokenizer, labels, recipe=replace(recipe, steps=3)
    )
    assert (
        budget.step == 3 and budget.history["train"][0]["loss"] == run.history["train"][0]["loss"]
    )


def test_fine_tune_needs_steps_or_epochs(encoder, world_tokenizer):
    labels = LabelVocab(WORLD_LABELS)
    model = new_tagger(encoder, labels, pretrained=True, seed=0)
    with pytest.raises(ValueError, match=r"neither steps nor epochs.*replace\(recipe, steps=300\)"):
        fine_tune_tagger(model, load_world("train")[:4], world_tokenizer, labels)
    with pytest.raises(ValueError, match="epochs must be an int >= 1, got 0"):
        replace(TAGGER_RECIPE, epochs=0)


def test_a_recipe_is_checked_when_made_and_names_what_is_wrong(encoder, world_tokenizer):
    with pytest.raises(TypeError, match="learning_rate"):
        FineTuneRecipe(steps=3)  # no default rate: each task names its own
    with pytest.raises(ValueError, match="lr_scheduler_type must be one of"):
        replace(TAGGER_RECIPE, lr_scheduler_type="step")
    with pytest.raises(ValueError, match="unk_rate must be in"):
        replace(TAGGER_RECIPE, unk_rate=1.5)
    with pytest.raises(AttributeError):
        TAGGER_RECIPE.steps = 3  # frozen: a named recipe cannot drift
    labels = LabelVocab(WORLD_LABELS)
    model = new_tagger(encoder, labels, pretrained=True, seed=0)
    sentences = load_world("train")[:4]
    with pytest.raises(TypeError, match=r"recipe must be a FineTuneRecipe, got dict; change a"):
        fine_tune_tagger(model, sentences, world_tokenizer, labels, recipe={"steps": 3})
    with pytest.raises(ValueError, match="doc_stride=64 is a setting of fine_tune_qa"):
        fine_tune_tagger(
            model,
            sentences,
            world_tokenizer,
            labels,
            recipe=replace(REAL_TEXT_RECIPE, doc_stride=64),
        )
