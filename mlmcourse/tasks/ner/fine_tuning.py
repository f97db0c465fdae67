"""Fine-tuning a tagger: a fresh classifier on the pretrained encoder, or the same from scratch.

The NER chapter and ``experiments/ner_curve.py`` compare the two under one recipe (same
architecture, steps, batches and seed), so the recipe lives here once: :data:`TAGGER_RECIPE`,
and :data:`REAL_TEXT_RECIPE` for a real encoder on real text.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import partial
from typing import Any

import torch
from torch import nn

from mlmcourse.heads import BertForTokenClassification
from mlmcourse.tasks.ner.alignment import encode_words, words_and_tags
from mlmcourse.tasks.ner.batches import tokenize_and_align_labels, word_dropout
from mlmcourse.tasks.ner.labels import LabelVocab
from mlmcourse.training import FineTuneRecipe, TrainResult, check_recipe, fine_tune
from mlmcourse.utils.runtime import set_seed

__all__ = ["REAL_TEXT_RECIPE", "TAGGER_RECIPE", "fine_tune_tagger", "new_tagger", "tagger_batch"]

TAGGER_RECIPE = FineTuneRecipe(batch_size=16, learning_rate=2e-3, lr_scheduler_type="cosine")
""":func:`fine_tune_tagger`'s default: the world chapters' settings. It gives no length: a run
says its own, ``replace(TAGGER_RECIPE, steps=300)`` (with ``unk_rate=0.3``, the world tagger's)."""

REAL_TEXT_RECIPE = FineTuneRecipe(
    epochs=2, batch_size=16, learning_rate=2e-4, lr_scheduler_type="linear"
)
"""Fine-tuning a real pretrained encoder (MiniLM) on real text: the settings chosen on WNUT-17's
dev split by ``experiments/wnut17_minilm.py`` (see ``results/wnut17_minilm.json``)."""


def new_tagger(
    encoder: nn.Module,
    labels: LabelVocab,
    *,
    pretrained: bool,
    seed: int,
    classifier_dropout: float = 0.1,
) -> BertForTokenClassification:
    """A tagger with ``encoder``'s weights and a fresh classifier, or its architecture at random.

    ``encoder`` is a :class:`~mlmcourse.model.BertModel` or a model holding one as ``.bert``
    (an MLM). The seed is set first, so the classifier (and, from scratch, every weight) is
    the same for the same seed.
    """
    set_seed(seed)
    if pretrained:
        return BertForTokenClassification.from_encoder(
            encoder, len(labels), id2label=labels, classifier_dropout=classifier_dropout
        )
    config = copy.deepcopy(getattr(encoder, "bert", encoder).config)
    return BertForTokenClassification(
        config, len(labels), id2label=labels, classifier_dropout=classifier_dropout
    )


def fine_tune_tagger(
    model: BertForTokenClassification,
    sentences: Sequence[Any],
    tokenizer: Any,
    labels: LabelVocab,
    *,
    recipe: FineTuneRecipe = TAGGER_RECIPE,
    seed: int = 0,
    device: torch.device | str | None = None,
    progress: bool = False,
) -> TrainResult:
    """Train ``model`` on ``sentences`` with :func:`mlmcourse.training.fine_tune`; return the run.

    The ``recipe`` gives ``steps`` or ``epochs``. With ``steps``, batch ``i`` draws
    ``batch_size`` sentences with replacement (the world chapters' recipe). With ``epochs``,
    each epoch visits every sentence once in batches of similar length, which on real text such
    as tweets halves the padding. ``unk_rate`` hides that share of the labelled words
    (:func:`word_dropout`). ``unpad`` computes on the real tokens only (the speed path,
    :mod:`mlmcourse.model.speed`): the same losses, faster when batches hold much padding.
    """
    if not sentences:
        raise ValueError("fine_tune_tagger needs at least one training sentence")
    recipe = check_recipe(recipe, "fine_tune_tagger")
    max_length = recipe.max_length_for(model)
    by_length = recipe.epochs is not None  # epochs batch sentences of similar length
    lengths = _piece_lengths(sentences, tokenizer, max_length) if by_length else None
    make_batch = partial(
        tagger_batch,
        tokenizer=tokenizer,
        labels=labels,
        max_length=max_length,
        unk_rate=recipe.unk_rate,
    )
    return fine_tune(
        model, sentences, make_batch, lengths=lengths, recipe=recipe, seed=seed, device=device,
        progress=progress,
    )  # fmt: skip


def tagger_batch(
    rows: list[Any],
    generator: torch.Generator,
    *,
    tokenizer: Any,
    labels: LabelVocab,
    max_length: int,
    unk_rate: float,
) -> dict[str, torch.Tensor]:
    """One training batch of tagged sentences: their pieces, each word's tag on its first
    piece (-100 on the rest and on padding), and ``unk_rate`` of the labelled words hidden
    behind ``[UNK]``, drawn from ``generator``."""
    batch = tokenize_and_align_labels(rows, tokenizer, labels, max_length=max_length)
    return word_dropout(
        batch, unk_token_id=tokenizer.unk_token_id, probability=unk_rate, generator=generator
    )


def _piece_lengths(sentences: Sequence[Any], tokenizer: Any, max_length: int) -> list[int]:
    """How many pieces each sentence is, for batches of similar length."""
    return [
        len(encode_words(tokenizer, words_and_tags(s, i)[0], max_length=max_length).input_ids)
        for i, s in enumerate(sentences)
    ]
