"""One fine-tuning recipe for the NER comparisons: pretrained or from scratch, reproducible."""

from __future__ import annotations

import pytest
import torch

from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.heads import BertForMaskedLM
from mlmcourse.tasks.ner import LabelVocab, fine_tune_tagger, new_tagger
from mlmcourse.training import EpochPlan
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
                model, sentences, world_tokenizer, labels, steps=30, batch_size=8, unk_rate=0.3
            ).final_loss
        )
    assert losses[0] == losses[1]
    assert losses[0] < 0.9 * torch.log(torch.tensor(len(labels))).item()  # below a uniform guess


def test_fine_tuning_nothing_is_a_clear_error(encoder, world_tokenizer):
    labels = LabelVocab(WORLD_LABELS)
    model = new_tagger(encoder, labels, pretrained=True, seed=0)
    with pytest.raises(ValueError, match="at least one training sentence"):
        fine_tune_tagger(model, [], world_tokenizer, labels, steps=3)


def test_epochs_visit_every_sentence_once_in_length_grouped_batches(encoder, world_tokenizer):
    from mlmcourse.tasks.ner import fine_tuning

    labels = LabelVocab(WORLD_LABELS)
    sentences = load_world("train")[:37]
    plan = EpochPlan(fine_tuning._piece_lengths(sentences, world_tokenizer, 64), 8, 0)
    assert plan.per_epoch == 5  # ceil(37 / 8)
    for epoch in range(2):
        rows = [r for i in range(plan.per_epoch) for r in plan.rows(epoch * plan.per_epoch + i)]
        assert sorted(rows) == list(range(37))
    model = new_tagger(encoder, labels, pretrained=True, seed=0)
    loss = fine_tune_tagger(
        model, sentences, world_tokenizer, labels, epochs=2, batch_size=8
    ).final_loss
    again = new_tagger(encoder, labels, pretrained=True, seed=0)
    again_loss = fine_tune_tagger(again, sentences, world_tokenizer, labels, epochs=2, batch_size=8)
    assert again_loss.final_loss == loss


@pytest.mark.parametrize(
    "kwargs, message",
    [({}, "steps= or epochs="), ({"steps": 3, "epochs": 1}, "not both"), ({"epochs": 0}, "epochs")],
)
def test_fine_tune_needs_steps_or_epochs(encoder, world_tokenizer, kwargs, message):
    labels = LabelVocab(WORLD_LABELS)
    model = new_tagger(encoder, labels, pretrained=True, seed=0)
    with pytest.raises(ValueError, match=message):
        fine_tune_tagger(model, load_world("train")[:4], world_tokenizer, labels, **kwargs)
