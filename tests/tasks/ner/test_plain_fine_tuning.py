"""The NER chapter's plain fine-tuning loop trains the weights ``fine_tune_tagger`` trains."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.heads import BertForTokenClassification, load_checkpoint
from mlmcourse.tasks.ner import (
    TAGGER_RECIPE,
    LabelVocab,
    fine_tune_tagger,
    tokenize_and_align_labels,
)
from mlmcourse.training import TrainingConfig, build_optimizer, build_scheduler
from tests.teaching import assert_same_training, teaching_namespace
from tests.tiny import tiny_encoder_config


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_the_chapters_plain_loop_is_fine_tune_tagger(dropout):
    namespace = teaching_namespace(
        "ner_world"
    )  # the cell's names, given as the chapter imports them
    namespace.update(
        build_optimizer=build_optimizer, build_scheduler=build_scheduler,
        TrainingConfig=TrainingConfig, tokenize_and_align_labels=tokenize_and_align_labels,
    )  # fmt: skip
    plain = namespace["fine_tune_plainly"]
    tokenizer = load_checkpoint(shipped_checkpoint("world")).tokenizer  # chapter 4's words
    labels, sentences = LabelVocab(WORLD_LABELS), load_world("train")[:40]
    config = tiny_encoder_config(
        vocab_size=tokenizer.vocab_size, max_position_embeddings=64,
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
    )  # fmt: skip
    recipe = replace(TAGGER_RECIPE, steps=15, batch_size=6, learning_rate=3e-3)
    assert_same_training(
        lambda: BertForTokenClassification(config, len(labels), id2label=labels),
        lambda model: plain(model, sentences, tokenizer, labels, steps=15, batch_size=6, lr=3e-3,
                            seed=4),
        lambda model: fine_tune_tagger(model, sentences, tokenizer, labels, recipe=recipe, seed=4,
                                       device="cpu"),
    )  # fmt: skip
