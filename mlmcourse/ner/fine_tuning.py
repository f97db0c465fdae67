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

from mlmcourse.ner.batches import tokenize_and_align_labels, word_dropout
from mlmcourse.ner.labels import LabelVocab
from mlmcourse.ner.model import BertForTokenClassification
from mlmcourse.runtime import set_seed
from mlmcourse.training import TrainingConfig, train

__all__ = ["fine_tune", "new_tagger"]


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
    steps: int,
    batch_size: int = 16,
    learning_rate: float = 2e-3,
    unk_rate: float = 0.0,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> float:
    """Train ``model`` on ``sentences`` for ``steps`` steps; return the last logged training loss.

    Batch ``i`` draws ``batch_size`` sentences with replacement from a generator seeded by
    ``(seed, i)``, so a run is reproducible and does not depend on how many batches were drawn
    before; ``unk_rate`` hides that share of the labelled words (:func:`word_dropout`).
    """
    if not sentences:
        raise ValueError("fine_tune needs at least one training sentence")

    def get_batch(i: int) -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(seed * 1_000_003 + i)
        rows = torch.randint(len(sentences), (batch_size,), generator=g).tolist()
        batch = tokenize_and_align_labels(
            [sentences[r] for r in rows],
            tokenizer,
            labels,
            max_length=model.config.max_position_embeddings,
        )
        return word_dropout(
            batch, unk_token_id=tokenizer.unk_token_id, probability=unk_rate, generator=g
        )

    config = TrainingConfig(
        max_steps=steps,
        learning_rate=learning_rate,
        warmup_steps=max(1, steps // 10),
        logging_steps=max(1, steps // 10),
        seed=seed,
    )
    result = train(model, get_batch, config, device=device, progress=False, log=None)
    return result.history["train"][-1]["loss"]
