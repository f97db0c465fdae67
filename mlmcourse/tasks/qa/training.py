"""Fine-tuning a reader: windows with answer positions, batched by length, through ``train``.

The recipe is ``transformers``' ``run_qa.py``'s: every window of every training question is one
row (a window that misses the answer learns to point at ``[CLS]``), AdamW with a linear decay
after a short warmup, and the loss of :class:`~mlmcourse.heads.BertForQuestionAnswering`. Each
epoch visits every window once, in batches of similar length
(:class:`~mlmcourse.training.EpochPlan`); batch ``i`` depends only on ``(seed, i)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from mlmcourse.heads import BertForQuestionAnswering
from mlmcourse.tasks.qa.features import QAFeature, feature_batch, prepare_train_features
from mlmcourse.tasks.qa.squad import QAExample
from mlmcourse.training import FineTuneRecipe, TrainResult, check_recipe, fine_tune

__all__ = ["WORLD_QA_RECIPE", "fine_tune_qa"]

WORLD_QA_RECIPE = FineTuneRecipe(
    epochs=2, batch_size=16, learning_rate=3e-4, max_length=384, doc_stride=128
)
""":func:`fine_tune_qa`'s default, ``run_qa.py``'s windows (384 tokens, stride 128): fine-tuning
MiniLM on the 2,000 world training questions, chosen on validation by
``experiments/world_qa_minilm.py`` (see ``results/world_qa_minilm.json``): two epochs (250
steps) at 3e-4 (the file records each run's minutes on the machine that ran it). With one
epoch, whether a run learns to match the question's name with the passage's, rather than
answer with an entity of the right kind from anyone, depends on the seed (the file keeps that
run too)."""


def fine_tune_qa(
    model: BertForQuestionAnswering,
    examples: Sequence[QAExample],
    tokenizer: Any,
    *,
    recipe: FineTuneRecipe = WORLD_QA_RECIPE,
    seed: int = 0,
    device: torch.device | str | None = None,
    progress: bool = False,
) -> TrainResult:
    """Train ``model`` on ``examples`` (each with an answer); return the run's history.

    Each question becomes windows of the ``recipe``'s ``max_length`` (cut to what the model
    reads), ``doc_stride`` tokens of passage shared by neighbours. Warmup is 10% of the steps,
    and the loss is logged ten times a run (``result.history["train"]``). A larger model or
    data set (BERT-base on SQuAD) wants a smaller learning rate than :data:`WORLD_QA_RECIPE`'s,
    such as ``run_qa.py``'s 3e-5, and two epochs.
    """
    if not examples:
        raise ValueError("fine_tune_qa needs at least one training example")
    recipe = check_recipe(recipe, "fine_tune_qa")
    features = prepare_train_features(
        examples, tokenizer, max_length=recipe.max_length_for(model), doc_stride=recipe.doc_stride
    )

    def make_batch(rows: list[QAFeature], generator: torch.Generator) -> dict[str, torch.Tensor]:
        return feature_batch(rows, tokenizer.pad_token_id)

    return fine_tune(
        model, features, make_batch, lengths=[len(f) for f in features], recipe=recipe,
        seed=seed, device=device, progress=progress,
    )  # fmt: skip
