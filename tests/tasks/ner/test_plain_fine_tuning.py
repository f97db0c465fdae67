"""The NER chapter's plain fine-tuning loop trains the weights ``fine_tune_tagger`` trains."""

from __future__ import annotations

import pytest
import torch

from mlmcourse.data import WORLD_LABELS, load_world, world_texts
from mlmcourse.heads import BertForTokenClassification
from mlmcourse.tasks.ner import LabelVocab, fine_tune_tagger, tokenize_and_align_labels
from mlmcourse.tokenization import WordPieceTokenizer
from mlmcourse.training import build_optimizer, build_scheduler, fine_tuning_config
from mlmcourse.utils.runtime import set_seed
from tests.teaching import teaching_namespace
from tests.tiny import tiny_encoder_config


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_the_chapters_plain_loop_is_fine_tune_tagger(dropout):
    namespace = teaching_namespace("ner")  # the cell's names, given as the chapter imports them
    namespace.update(
        build_optimizer=build_optimizer, build_scheduler=build_scheduler,
        fine_tuning_config=fine_tuning_config, tokenize_and_align_labels=tokenize_and_align_labels,
    )  # fmt: skip
    plain = namespace["fine_tune_plainly"]
    tokenizer = WordPieceTokenizer.train(world_texts("train")[:2000], vocab_size=400)
    labels, sentences = LabelVocab(WORLD_LABELS), load_world("train")[:40]
    config = tiny_encoder_config(
        vocab_size=tokenizer.vocab_size, max_position_embeddings=64,
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
    )  # fmt: skip
    states = []
    for use_plain in (True, False):
        set_seed(0)
        model = BertForTokenClassification(config, len(labels), id2label=labels)
        initial = {k: v.clone() for k, v in model.state_dict().items()}
        if use_plain:
            plain(model, sentences, tokenizer, labels, steps=15, batch_size=6, lr=3e-3, seed=4)
        else:
            fine_tune_tagger(model, sentences, tokenizer, labels, steps=15, batch_size=6,
                             learning_rate=3e-3, seed=4, device="cpu")  # fmt: skip
        states.append(model.state_dict())
    for name, value in states[1].items():
        torch.testing.assert_close(states[0][name], value, atol=1e-6, rtol=1e-5, msg=name)
    assert all(not torch.equal(v, initial[k]) for k, v in states[0].items())  # every weight moved
