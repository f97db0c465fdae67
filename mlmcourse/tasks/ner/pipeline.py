"""A fine-tuned tagger at work: entities in raw text, tags for sentences, and their scores.

Each function runs the model in eval mode (dropout off) on encoded words and hands the
probabilities to :mod:`mlmcourse.tasks.ner.decoding`: :func:`predict_entities` for raw text (spans
with character offsets, like the ``transformers`` ``"ner"`` pipeline), :func:`predict_tags`
for pre-split sentences (one tag per word) and :func:`evaluate_ner` for entity P/R/F1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import torch
from torch import nn

from mlmcourse.checkpoint.weights import check_vocab_fits
from mlmcourse.heads import BertForTokenClassification
from mlmcourse.model.speed import has_speed_path, speed_path
from mlmcourse.tasks.ner import metrics
from mlmcourse.tasks.ner.alignment import EncodedWords, encode_words, words_and_tags
from mlmcourse.tasks.ner.batches import pad_encoded
from mlmcourse.tasks.ner.decoding import decode_pieces, entities_from_probabilities, word_tags
from mlmcourse.utils.runtime import evaluating

__all__ = ["evaluate_ner", "predict_entities", "predict_tags"]


def _model_labels(model: nn.Module) -> dict[int, str]:
    id2label = getattr(model, "id2label", None)
    if not id2label:
        raise ValueError(
            "the model has no label names; build it with id2label=label_vocab so that its "
            "predictions can be read as BIO tags"
        )
    return id2label


def _probabilities(model: nn.Module, batch: Sequence[EncodedWords]) -> torch.Tensor:
    """Softmax over labels for a padded batch, in eval mode (dropout off), (B, T, L).

    With BERT's encoder, computed on the real tokens only (its speed path, ``unpad=True``, for
    this call only): sentences come in the caller's order, so a batch is often half padding;
    the real tokens' probabilities are the same."""
    device = next(model.parameters()).device
    inputs = {k: v.to(device) for k, v in pad_encoded(batch, model.config.pad_token_id).items()}
    options = {"unpad": True} if has_speed_path(model) else {}
    with speed_path(model) if options else nullcontext(), evaluating(model):
        with torch.inference_mode():
            logits = model(**inputs, **options).logits
    return logits.float().softmax(-1).cpu()


def _check_length(model: nn.Module, enc: EncodedWords, what: str) -> None:
    limit = model.config.max_position_embeddings
    if len(enc.input_ids) > limit:
        raise ValueError(
            f"{what} is {len(enc.input_ids)} pieces long but the model takes at most {limit}; "
            "split it into shorter pieces of text"
        )


def predict_entities(
    model: BertForTokenClassification,
    tokenizer: Any,
    text: str,
    *,
    constrained: bool = True,
    label_all_pieces: bool = False,
) -> list[dict[str, Any]]:
    """Find the entities in raw ``text``: ``[{entity_group, word, start, end, score}, ...]``.

    Words are the whitespace-separated chunks of ``text``, exactly as in the training data
    (which came split into words), and are aligned to pieces by character offsets.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    labels = _model_labels(model)
    matches = list(re.finditer(r"\S+", text))
    if not matches:
        return []
    enc = encode_words(
        tokenizer, [m.group() for m in matches], word_spans=[m.span() for m in matches], text=text
    )
    _check_length(model, enc, "the text")
    probs = _probabilities(model, [enc])[0, : len(enc.input_ids)]  # (T, L)
    return entities_from_probabilities(
        text,
        enc.offsets,
        probs,
        enc.word_ids,
        labels,
        constrained=constrained,
        label_all_pieces=label_all_pieces,
    )


def predict_tags(
    model: BertForTokenClassification,
    tokenizer: Any,
    sentences: Sequence[Any],
    *,
    constrained: bool = True,
    label_all_pieces: bool = False,
    batch_size: int = 32,
    max_length: int | None = None,
) -> list[list[str]]:
    """One predicted tag per *word* for each sentence, ready for :mod:`mlmcourse.tasks.ner.metrics`.

    ``sentences`` are ``Sentence`` objects, ``(tokens, tags)`` pairs or lists of words. A word
    is tagged by its first piece; a word with no piece (cut off by ``max_length``) gets ``O``.
    """
    labels = _model_labels(model)
    check_vocab_fits(tokenizer, model.config.vocab_size, "predict_tags")
    max_length = max_length or model.config.max_position_embeddings
    predictions: list[list[str]] = []
    for begin in range(0, len(sentences), batch_size):
        chunk = [
            words_and_tags(s, begin + i)[0]
            for i, s in enumerate(sentences[begin : begin + batch_size])
        ]
        encoded = [encode_words(tokenizer, words, max_length=max_length) for words in chunk]
        for enc, probs in zip(encoded, _probabilities(model, encoded), strict=True):
            tags, _ = decode_pieces(
                probs[: len(enc.input_ids)],
                enc.word_ids,
                labels,
                constrained=constrained,
                label_all_pieces=label_all_pieces,
            )
            predictions.append(word_tags(tags, enc.word_ids, enc.num_words))
    return predictions


def evaluate_ner(
    model: BertForTokenClassification,
    tokenizer: Any,
    sentences: Sequence[Any],
    *,
    constrained: bool = True,
    label_all_pieces: bool = False,
    batch_size: int = 32,
) -> dict[str, Any]:
    """Entity precision, recall and F1 (micro), token accuracy, the per-type report and the tags.

    Scored on words against the sentences' gold tags, as conlleval does; undefined ratios
    count as 0 (``zero_division=0``) so an evaluation never stops on a warning.
    """
    gold = []
    for i, sentence in enumerate(sentences):
        tags = words_and_tags(sentence, i)[1]
        if tags is None:
            raise ValueError(f"sentence {i} has no gold tags; evaluate_ner needs (tokens, tags)")
        gold.append(list(tags))
    predicted = predict_tags(
        model,
        tokenizer,
        sentences,
        constrained=constrained,
        label_all_pieces=label_all_pieces,
        batch_size=batch_size,
    )
    micro = metrics.precision_recall_fscore_support(
        gold, predicted, average="micro", zero_division=0
    )
    return {
        "precision": micro.precision,
        "recall": micro.recall,
        "f1": micro.f1,
        "token_accuracy": metrics.token_accuracy(gold, predicted),
        "report": metrics.classification_report(gold, predicted, output_dict=True, zero_division=0),
        "predictions": predicted,
    }
