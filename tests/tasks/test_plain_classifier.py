"""The using chapter's plain classifier loop trains the weights ``fine_tune_classifier`` trains."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.data import world_texts
from mlmcourse.heads import BertForSequenceClassification, load_checkpoint
from mlmcourse.tasks.classification import CLASSIFIER_RECIPE, fine_tune_classifier
from mlmcourse.training import EpochPlan, TrainingConfig, build_optimizer, build_scheduler
from tests.teaching import assert_same_training, teaching_namespace
from tests.tiny import tiny_encoder_config


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_the_chapters_plain_loop_is_fine_tune_classifier(dropout):
    namespace = teaching_namespace("using")  # the cell's names, given as the chapter imports them
    namespace.update(
        EpochPlan=EpochPlan, build_optimizer=build_optimizer, build_scheduler=build_scheduler,
        TrainingConfig=TrainingConfig,
    )  # fmt: skip
    plain = namespace["fine_tune_classifier_plainly"]
    texts = world_texts("train")[:30]
    tokenizer = load_checkpoint(shipped_checkpoint("world")).tokenizer  # chapter 4's words
    examples = [(text, i % 3) for i, text in enumerate(texts)]
    config = tiny_encoder_config(
        vocab_size=tokenizer.vocab_size, max_position_embeddings=64,
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
    )  # fmt: skip
    recipe = replace(CLASSIFIER_RECIPE, epochs=2, batch_size=4, learning_rate=3e-3)
    assert_same_training(
        lambda: BertForSequenceClassification(config, 3),
        lambda model: plain(model, examples, tokenizer, epochs=2, batch_size=4, lr=3e-3, seed=5),
        lambda model: fine_tune_classifier(model, examples, tokenizer, recipe=recipe, seed=5,
                                           device="cpu"),
    )  # fmt: skip
