"""Extractive question answering: the answer is a span of the context, found by the encoder.

The modules, in the order a question meets them:

1. :mod:`~mlmcourse.tasks.qa.squad`: :class:`QAExample` (context, question, answers with their
   character starts), SQuAD v1.1's file format (:func:`parse_squad`, :func:`load_squad`) and
   its official metric, exact match and F1 (:func:`squad_evaluate`).
2. :mod:`~mlmcourse.tasks.qa.world`: questions about the course's small world whose passages name
   several people, so the model must read (:func:`world_questions`).
3. :mod:`~mlmcourse.tasks.qa.features`: question and context become overlapping windows
   ``[CLS] question [SEP] context [SEP]`` that keep each token's characters
   (:func:`question_windows`), with the answer's token positions for training
   (:func:`prepare_train_features`).
4. the model: :class:`~mlmcourse.heads.BertForQuestionAnswering`
   (:mod:`mlmcourse.heads.question_answering`), a start and an end logit per token, trained
   with the mean of two cross-entropies.
5. :mod:`~mlmcourse.tasks.qa.training`: :func:`fine_tune_qa`, the recipe of ``run_qa.py``.
6. :mod:`~mlmcourse.tasks.qa.decoding`: the best span, start <= end inside the context, by a double
   loop (:func:`best_spans_naive`) or all at once (:func:`best_spans`), and back to text
   (:func:`decode_answers`).
7. :mod:`~mlmcourse.tasks.qa.pipeline`: :func:`answer`, the interface of ``transformers`` 4's QA pipeline,
   and :func:`evaluate_qa`.
"""

from mlmcourse.tasks.qa.decoding import best_spans, best_spans_naive, decode_answers, span_mask
from mlmcourse.tasks.qa.features import (
    QAFeature,
    answer_positions,
    feature_batch,
    prepare_train_features,
    prepare_validation_features,
    question_windows,
    window_spans,
)
from mlmcourse.tasks.qa.pipeline import answer, evaluate_qa, predict_answers, window_logits
from mlmcourse.tasks.qa.squad import (
    QAExample,
    exact_match_score,
    f1_score,
    load_squad,
    metric_max_over_ground_truths,
    normalize_answer,
    parse_squad,
    score_predictions,
    squad_evaluate,
)
from mlmcourse.tasks.qa.training import WORLD_QA_RECIPE, fine_tune_qa
from mlmcourse.tasks.qa.world import QUESTIONS, WORLD_QA_SIZES, world_people, world_questions

__all__ = [
    "QUESTIONS",
    "WORLD_QA_RECIPE",
    "WORLD_QA_SIZES",
    "QAExample",
    "QAFeature",
    "answer",
    "answer_positions",
    "best_spans",
    "best_spans_naive",
    "decode_answers",
    "evaluate_qa",
    "exact_match_score",
    "f1_score",
    "feature_batch",
    "fine_tune_qa",
    "load_squad",
    "metric_max_over_ground_truths",
    "normalize_answer",
    "parse_squad",
    "predict_answers",
    "prepare_train_features",
    "prepare_validation_features",
    "question_windows",
    "score_predictions",
    "span_mask",
    "squad_evaluate",
    "window_logits",
    "window_spans",
    "world_people",
    "world_questions",
]
