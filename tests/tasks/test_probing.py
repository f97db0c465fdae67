"""Linear probes on a frozen encoder: features, training only the classifier, entity metrics."""

from __future__ import annotations

import pytest
import torch

from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.model import BertModel
from mlmcourse.tasks.ner import LabelVocab, tokenize_and_align_labels
from mlmcourse.tasks.probing import linear_probe, token_features
from tests.tiny import tiny_encoder_config


@pytest.fixture(scope="module")
def setup(world_tokenizer):
    sentences = load_world("train")[:300]  # the sentences world_tokenizer is trained on
    torch.manual_seed(0)  # the random encoder the probe's F1 threshold below was measured on
    config = tiny_encoder_config(
        vocab_size=world_tokenizer.vocab_size,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=40,
    )
    return sentences, world_tokenizer, BertModel(config), LabelVocab(WORLD_LABELS)


def test_features_are_the_encoder_vectors_of_first_pieces(setup):
    sentences, tokenizer, encoder, vocab = setup
    features, labels = token_features(encoder, tokenizer, sentences[:5], vocab, batch_size=2)
    n_words = sum(len(s.tokens) for s in sentences[:5])
    assert features.shape == (n_words, 32) and labels.shape == (n_words,)
    batch = tokenize_and_align_labels(sentences[:1], tokenizer, vocab)
    target = batch.pop("labels")
    encoder.eval()
    with torch.no_grad():
        hidden = encoder(**batch).last_hidden_state[target != -100]
    n_first = len(sentences[0].tokens)
    assert torch.allclose(features[:n_first], hidden, atol=1e-5)
    assert labels[:n_first].tolist() == vocab.encode(sentences[0].tags)


@pytest.mark.slow
def test_probe_trains_only_the_linear_layer(setup):
    sentences, tokenizer, encoder, vocab = setup
    before = {k: v.clone() for k, v in encoder.state_dict().items()}
    result = linear_probe(
        encoder, tokenizer, sentences[:200], sentences[:200], label_vocab=vocab, epochs=30
    )
    after = encoder.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # the encoder is untouched
    assert not any(p.requires_grad for p in result.model.parameters())
    assert result.losses[-1] < 0.8 * result.losses[0]
    # a random encoder still keeps some word identity: far above the all-"O" probe (F1 0)
    assert result.metrics["f1"] > 0.15 and 0 <= result.metrics["token_accuracy"] <= 1
    again = linear_probe(
        encoder, tokenizer, sentences[:200], sentences[:200], label_vocab=vocab, epochs=30
    )
    assert again.losses == result.losses  # seeded


def test_bad_inputs_are_explained(setup):
    sentences, tokenizer, encoder, vocab = setup
    with pytest.raises(ValueError, match="empty list"):
        linear_probe(encoder, tokenizer, [], sentences)
    with pytest.raises(ValueError, match="epochs"):
        linear_probe(encoder, tokenizer, sentences, sentences, epochs=0)
    with pytest.raises(TypeError, match="BertModel"):
        linear_probe(torch.nn.Linear(2, 2), tokenizer, sentences, sentences)
