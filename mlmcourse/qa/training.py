"""Fine-tuning a reader: windows with answer positions, batched by length, through ``train``.

The recipe is ``transformers``' ``run_qa.py``'s: every window of every training question is one
row (a window that misses the answer learns to point at ``[CLS]``), AdamW with a linear decay
after a short warmup, and the loss of :class:`~mlmcourse.qa.BertForQuestionAnswering`. Each
epoch visits every window once, in batches of similar length
(:class:`~mlmcourse.training.EpochPlan`); batch ``i`` depends only on ``(seed, i)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from mlmcourse.checks import check_positive_int
from mlmcourse.qa.features import feature_batch, prepare_train_features
from mlmcourse.qa.model import BertForQuestionAnswering
from mlmcourse.qa.squad import QAExample
from mlmcourse.training import EpochPlan, TrainResult, fine_tuning_config, train

__all__ = ["WORLD_QA_RECIPE", "fine_tune_qa"]

WORLD_QA_RECIPE = {"epochs": 2, "batch_size": 16, "learning_rate": 3e-4}
"""Fine-tuning MiniLM on the 2,000 world training questions, chosen on validation by
``experiments/world_qa_minilm.py`` (see ``results/world_qa_minilm.json``): two epochs (250
steps) at 3e-4, about 6.5 minutes on one CPU thread. With one epoch, whether a run learns to
match the question's name with the passage's, rather than answer with an entity of the right
kind from anyone, depends on the seed (the file keeps that run too)."""


def fine_tune_qa(
    model: BertForQuestionAnswering,
    examples: Sequence[QAExample],
    tokenizer: Any,
    *,
    epochs: int = 2,
    batch_size: int = 16,
    learning_rate: float = 3e-4,
    seed: int = 0,
    max_length: int = 384,
    doc_stride: int = 128,
    lr_scheduler_type: str = "linear",
    device: torch.device | str | None = None,
    progress: bool = False,
) -> TrainResult:
    """Train ``model`` on ``examples`` (each with an answer); return the run's history.

    ``max_length`` is cut to what the model reads. Warmup is 10% of the steps, and the loss
    is logged ten times a run (``result.history["train"]``). The defaults are
    :data:`WORLD_QA_RECIPE`; a larger model or data set (BERT-base on SQuAD) wants a smaller
    learning rate, such as ``run_qa.py``'s 3e-5, and two epochs.
    """
    if not examples:
        raise ValueError("fine_tune_qa needs at least one training example")
    check_positive_int(epochs, "epochs")
    max_length = min(max_length, model.config.max_position_embeddings)
    features = prepare_train_features(
        examples, tokenizer, max_length=max_length, doc_stride=doc_stride
    )
    plan = EpochPlan([len(f) for f in features], batch_size, seed)
    steps = epochs * plan.per_epoch

    def get_batch(i: int) -> dict[str, torch.Tensor]:
        return feature_batch([features[r] for r in plan.rows(i)], tokenizer.pad_token_id)

    config = fine_tuning_config(
        steps, learning_rate=learning_rate, lr_scheduler_type=lr_scheduler_type, seed=seed
    )
    return train(model, get_batch, config, device=device, progress=progress, log=None)
