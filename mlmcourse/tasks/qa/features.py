"""From a question and its context to what the model reads: windows of ``[CLS] q [SEP] c [SEP]``.

A context is often longer than the model's input, so it is cut into *windows* that overlap,
each read with the whole question in front of it, the standard recipe of BERT on SQuAD:

- the question's tokens, then the context's, each tokenized once;
- each window holds as many context tokens as fit in ``max_length`` after the question and
  the three special tokens; the next window starts ``doc_stride`` tokens before the previous
  one ended, so an answer cut by one window's edge is whole in the next. This is the meaning
  ``transformers`` gives ``stride`` (``return_overflowing_tokens=True, stride=doc_stride,
  truncation="only_second"``): the *overlap*. (Google's original ``run_squad.py`` used
  ``doc_stride`` for the step between window starts instead.)
- token type 0 for ``[CLS] question [SEP]``, 1 for the context and its ``[SEP]``;
- each window keeps the character span of each of its context tokens (``None`` for the
  question and the special tokens), so a predicted span of tokens maps back to the text.

For training, the answer's character span becomes the positions of its first and last token
in each window, or ``(0, 0)`` (``[CLS]``: "not here") in a window that does not hold all of it,
as ``transformers``' ``run_qa.py`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from mlmcourse.tasks.ner.batches import pad_encoded
from mlmcourse.tasks.qa.squad import QAExample
from mlmcourse.tokenization.base import check_text
from mlmcourse.utils.checks import check_int, check_non_negative_int

__all__ = [
    "QAFeature",
    "answer_positions",
    "feature_batch",
    "prepare_train_features",
    "prepare_validation_features",
    "question_windows",
    "window_spans",
]

NUM_SPECIAL_TOKENS = 3  # [CLS] question [SEP] context [SEP]


@dataclass
class QAFeature:
    """One window the model reads, and how to map its tokens back to the context."""

    input_ids: list[int]
    token_type_ids: list[int]
    offsets: list[tuple[int, int] | None]  # characters of the context; None: question, specials
    example_index: int = 0  # which example (of the list given) the window came from
    start_position: int = 0  # the answer's first token; 0 ([CLS]) when not in this window
    end_position: int = 0  # its last token

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def context_positions(self) -> range:
        """The positions of the window's context tokens (they are contiguous)."""
        inside = [i for i, offset in enumerate(self.offsets) if offset is not None]
        return range(inside[0], inside[-1] + 1)


def window_spans(num_tokens: int, window: int, doc_stride: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each window over ``num_tokens`` context tokens, as 🤗 tokenizers cuts.

    Windows of ``window`` tokens whose starts are ``window - doc_stride`` apart, until one
    reaches the end; so consecutive windows share ``doc_stride`` tokens.
    """
    if doc_stride >= window:
        raise ValueError(
            f"doc_stride={doc_stride} must be smaller than the {window} context tokens of a "
            f"window, or the windows would never move on; lower doc_stride or raise max_length"
        )
    spans = []
    for start in range(0, max(num_tokens, 1), window - doc_stride):
        stop = min(start + window, num_tokens)
        spans.append((start, stop))
        if stop == num_tokens:
            break
    return spans


def _content(encoding: Any) -> tuple[list[int], list[tuple[int, int]]]:
    """The ids and character offsets of an encoding's tokens, its special tokens left out."""
    kept = [i for i, special in enumerate(encoding.special_tokens_mask) if not special]
    return [encoding.ids[i] for i in kept], [tuple(encoding.offsets[i]) for i in kept]


def question_windows(
    tokenizer: Any,
    question: str,
    context: str,
    *,
    max_length: int = 384,
    doc_stride: int = 128,
    example_index: int = 0,
) -> list[QAFeature]:
    """The windows ``[CLS] question [SEP] context-window [SEP]`` of one question (see the module)."""
    check_text(question, "question")
    check_text(context, "context")
    max_length = check_int(max_length, "max_length", minimum=NUM_SPECIAL_TOKENS + 1)
    doc_stride = check_non_negative_int(doc_stride, "doc_stride")
    question_ids, _ = _content(tokenizer.encode(question))
    context_ids, context_offsets = _content(tokenizer.encode(context))
    window = max_length - len(question_ids) - NUM_SPECIAL_TOKENS
    if window < 1:
        raise ValueError(
            f"the question is {len(question_ids)} tokens long: with the {NUM_SPECIAL_TOKENS} "
            f"special tokens that is already {len(question_ids) + NUM_SPECIAL_TOKENS} of "
            f"max_length={max_length}, leaving no room for the context; shorten the question "
            f"or raise max_length"
        )
    if not context_ids:
        raise ValueError(f"the context {context!r:.80} produced no tokens")
    head = [tokenizer.cls_token_id, *question_ids, tokenizer.sep_token_id]
    features = []
    for start, stop in window_spans(len(context_ids), window, doc_stride):
        tail = [*context_ids[start:stop], tokenizer.sep_token_id]
        features.append(
            QAFeature(
                input_ids=head + tail,
                token_type_ids=[0] * len(head) + [1] * len(tail),
                offsets=[None] * len(head) + [*context_offsets[start:stop], None],
                example_index=example_index,
            )
        )
    return features


def answer_positions(feature: QAFeature, start_char: int, end_char: int) -> tuple[int, int]:
    """The window positions of the first and last token of the answer ``[start_char, end_char)``.

    ``(0, 0)``, the ``[CLS]`` token, when the window does not hold the whole answer.
    """
    positions = feature.context_positions
    first, last = feature.offsets[positions[0]], feature.offsets[positions[-1]]
    if first[0] > start_char or last[1] < end_char:
        return 0, 0
    start = max(i for i in positions if feature.offsets[i][0] <= start_char)
    end = min(i for i in positions if feature.offsets[i][1] >= end_char)
    return start, end


def prepare_validation_features(
    examples: Sequence[QAExample], tokenizer: Any, *, max_length: int = 384, doc_stride: int = 128
) -> list[QAFeature]:
    """Every window of every example, in order; ``example_index`` says whose it is."""
    features = []
    for i, example in enumerate(examples):
        try:
            windows = question_windows(
                tokenizer,
                example.question,
                example.context,
                max_length=max_length,
                doc_stride=doc_stride,
                example_index=i,
            )
        except ValueError as err:
            raise type(err)(f"example {example.id!r}: {err}") from None
        features += windows
    return features


def prepare_train_features(
    examples: Sequence[QAExample], tokenizer: Any, *, max_length: int = 384, doc_stride: int = 128
) -> list[QAFeature]:
    """The windows with the positions of each example's first answer (``(0, 0)`` where it is not)."""
    features = prepare_validation_features(
        examples, tokenizer, max_length=max_length, doc_stride=doc_stride
    )
    for feature in features:
        example = examples[feature.example_index]
        if not example.answers:
            raise ValueError(f"example {example.id!r} has no answer to train on")
        start_char = example.answer_starts[0]
        end_char = start_char + len(example.answers[0])
        feature.start_position, feature.end_position = answer_positions(
            feature, start_char, end_char
        )
    return features


def feature_batch(
    features: Sequence[QAFeature], pad_token_id: int, *, with_positions: bool = True
) -> dict[str, torch.Tensor]:
    """A padded batch ``{input_ids, attention_mask, token_type_ids}`` (B, T), with
    ``start_positions`` and ``end_positions`` (B,) for training."""
    batch = pad_encoded(features, pad_token_id)
    if with_positions:
        batch["start_positions"] = torch.tensor([f.start_position for f in features])
        batch["end_positions"] = torch.tensor([f.end_position for f in features])
    return batch
