"""Tiny models for tests: one definition of the small encoder most tests build.

``tiny_encoder_config(**overrides)`` is a 2-layer, 32-wide BERT that runs in milliseconds on a
CPU; the fixtures in ``conftest.py`` (``tiny_config``, ``tiny_mlm``) hand out the same.
"""

from __future__ import annotations

from mlmcourse.model import EncoderConfig

TINY_ENCODER = dict(
    vocab_size=60,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=32,
)


def tiny_encoder_config(**overrides) -> EncoderConfig:
    """The tiny encoder's config, with ``overrides`` (any :class:`EncoderConfig` field)."""
    return EncoderConfig(**{**TINY_ENCODER, **overrides})
