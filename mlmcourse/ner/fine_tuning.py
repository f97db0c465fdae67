"""Fine-tuning a tagger: a fresh classifier on the pretrained encoder, or the same from scratch.

The NER chapter and ``experiments/ner_curve.py`` compare the two under one recipe (same
architecture, steps, batches and seed), so the recipe lives here once.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from mlmcourse.checks import check_positive_int
from mlmcourse.ner.alignment import encode_words, words_and_tags
from mlmcourse.ner.batches import tokenize_and_align_labels, word_dropout
from mlmcourse.ner.labels import LabelVocab
from mlmcourse.ner.model import BertForTokenClassification
from mlmcourse.runtime import set_seed
from mlmcourse.training import EpochPlan, fine_tuning_config, train

__all__ = ["REAL_TEXT_RECIPE", "fine_tune", "new_tagger"]

REAL_TEXT_RECIPE = {
    "epochs": 2,
    "batch_size": 16,
    "learning_rate": 2e-4,
    "lr_scheduler_type": "linear",
}
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


def fine_tune(
    model: BertForTokenClassification,
    sentences: Sequence[Any],
    tokenizer: Any,
    labels: LabelVocab,
    *,
    steps: int | None = None,
    epochs: int | None = None,
    batch_size: int = 16,
    learning_rate: float = 2e-3,
    lr_scheduler_type: str = "cosine",
    unk_rate: float = 0.0,
    seed: int = 0,
    device: torch.device | str | None = None,
    progress: bool = False,
    unpad: bool = False,
) -> float:
    """Train ``model`` on ``sentences``; return the last logged training loss.

    Give ``steps`` or ``epochs``. With ``steps``, batch ``i`` draws ``batch_size`` sentences with
    replacement from a generator seeded by ``(seed, i)`` (the world chapters' recipe). With
    ``epochs``, each epoch visits every sentence once in batches of similar length
    (:func:`~mlmcourse.training.length_grouped_batches`), which on real text such as tweets
    halves the padding. Either way a run is reproducible and batch ``i`` does not depend on how
    many batches were drawn before. ``unk_rate`` hides that share of the labelled words
    (:func:`word_dropout`). ``unpad=True`` computes on the real tokens only
    (:mod:`mlmcourse.unpadding`): the same losses, faster when batches hold much padding.
    """
    if not sentences:
        raise ValueError("fine_tune needs at least one training sentence")
    if (steps is None) == (epochs is None):
        raise ValueError("fine_tune needs steps= or epochs= (one of them, not both)")
    max_length = model.config.max_position_embeddings
    if epochs is not None:
        check_positive_int(epochs, "epochs")
        plan = _epoch_plan(sentences, tokenizer, batch_size, seed, max_length)
        steps = epochs * plan.per_epoch
    check_positive_int(steps, "steps")

    def get_batch(i: int) -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(seed * 1_000_003 + i)
        if epochs is None:
            rows = torch.randint(len(sentences), (batch_size,), generator=g).tolist()
        else:
            rows = plan.rows(i)
        batch = tokenize_and_align_labels(
            [sentences[r] for r in rows], tokenizer, labels, max_length=max_length
        )
        return word_dropout(
            batch, unk_token_id=tokenizer.unk_token_id, probability=unk_rate, generator=g
        )

    config = fine_tuning_config(
        steps, learning_rate=learning_rate, lr_scheduler_type=lr_scheduler_type, seed=seed,
        unpad=unpad,
    )  # fmt: skip
    result = train(model, get_batch, config, device=device, progress=progress, log=None)
    return result.history["train"][-1]["loss"]


def _epoch_plan(
    sentences: Sequence[Any], tokenizer: Any, batch_size: int, seed: int, max_length: int
) -> EpochPlan:
    lengths = [
        len(encode_words(tokenizer, words_and_tags(s, i)[0], max_length=max_length).input_ids)
        for i, s in enumerate(sentences)
    ]
    return EpochPlan(lengths, batch_size, seed)
