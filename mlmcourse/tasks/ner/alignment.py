"""Words to pieces: which word each piece came from, and the label each piece learns.

NER data comes as *words* with one tag each; the model sees *pieces*. We find which word each
piece came from by character offsets (:func:`word_ids_from_offsets`, used by
:func:`encode_words`) and give the label to the word's first piece only; later pieces,
``[CLS]``, ``[SEP]`` and padding get ``IGNORE_INDEX`` (``-100``), the index the loss ignores
(:func:`align_labels_with_tokens`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mlmcourse.tasks.ner.labels import LabelVocab
from mlmcourse.utils.labels import IGNORE_INDEX  # specials, padding and later pieces: not scored

__all__ = [
    "EncodedWords",
    "align_labels_with_tokens",
    "encode_words",
    "word_ids_from_offsets",
    "words_and_tags",
]


def _word_spans(words: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Join words with single spaces; return the text and each word's ``(start, end)``."""
    spans, start = [], 0
    for word in words:
        if not isinstance(word, str):
            raise TypeError(f"words must be strings, got {word!r}")
        spans.append((start, start + len(word)))
        start += len(word) + 1
    return " ".join(words), spans


def word_ids_from_offsets(
    word_spans: Sequence[tuple[int, int]],
    offsets: Sequence[tuple[int, int]],
    special_tokens_mask: Sequence[int] | None = None,
) -> list[int | None]:
    """Which word each piece came from, by character position; ``None`` for specials.

    Why not the tokenizer's own ``word_ids``? Those count the words *its* pre-tokenizer saw,
    and BERT's splits punctuation: ``"U.S."`` is four words to it (``U . S .``) but one in the
    data, so every later word id would be off. Character offsets do not depend on how the
    tokenizer splits: a piece belongs to the word whose span contains its first character.
    """
    starts = [s for s, _ in word_spans]
    word_ids: list[int | None] = []
    for k, (start, end) in enumerate(offsets):
        special = special_tokens_mask[k] if special_tokens_mask is not None else start == end
        if special:
            word_ids.append(None)
            continue
        w = bisect.bisect_right(starts, start) - 1  # the last word starting at or before it
        if w < 0 or not word_spans[w][0] <= start < word_spans[w][1]:
            raise ValueError(
                f"piece {k} at characters {start}:{end} lies in no word (word spans "
                f"{list(word_spans)[:8]}); does the tokenizer report offsets into its input text?"
            )
        word_ids.append(w)
    return word_ids


@dataclass(frozen=True)
class EncodedWords:
    """One encoded word sequence: the model inputs plus where each piece came from."""

    input_ids: list[int]
    token_type_ids: list[int]
    word_ids: list[int | None]  # word index of each piece, None for [CLS], [SEP], ...
    offsets: list[tuple[int, int]]  # character span of each piece in ``text``
    text: str
    num_words: int


def _kept_positions(length: int, max_length: int, ends_with_special: bool) -> list[int]:
    """The first pieces and the closing special token, like the tokenizer's truncation."""
    if max_length < 2:
        raise ValueError(f"max_length must leave room for [CLS] and [SEP], got {max_length}")
    if ends_with_special:
        return list(range(max_length - 1)) + [length - 1]
    return list(range(max_length))


def encode_words(
    tokenizer: Any,
    words: Sequence[str],
    *,
    max_length: int | None = None,
    word_spans: Sequence[tuple[int, int]] | None = None,
    text: str | None = None,
) -> EncodedWords:
    """Encode pre-split words so that ``word_ids`` refer to *those* words.

    The words are joined with spaces (or ``text`` and its ``word_spans`` are used as given) and
    each piece is assigned to a word by its character offsets. ``max_length`` keeps the first
    pieces and the closing special token, like the tokenizer's truncation; words cut off get
    no piece (their predictions default to ``O``).
    """
    if isinstance(words, str):
        raise TypeError(
            f"words must be a list of words, got the string {words[:40]!r}; split it first "
            "(or call predict_entities for raw text)"
        )
    if (text is None) != (word_spans is None):
        raise ValueError("pass text and word_spans together (or neither, to join the words)")
    if text is None:
        text, word_spans = _word_spans(words)
    enc = tokenizer.encode(text)
    ids, type_ids = list(enc.ids), list(enc.type_ids)
    offsets = [tuple(o) for o in enc.offsets]
    specials = list(enc.special_tokens_mask)
    word_ids = word_ids_from_offsets(word_spans, offsets, specials)
    if max_length is not None and len(ids) > max_length:
        keep = _kept_positions(len(ids), max_length, bool(specials[-1]))
        ids, type_ids, offsets, word_ids = (
            [seq[i] for i in keep] for seq in (ids, type_ids, offsets, word_ids)
        )
    return EncodedWords(ids, type_ids, word_ids, offsets, text, len(word_spans))


def align_labels_with_tokens(
    tags: Sequence[str],
    word_ids: Sequence[int | None],
    label_vocab: LabelVocab,
    *,
    label_all_pieces: bool = False,
) -> list[int]:
    """One label id per piece: the word's label on its first piece, ``-100`` elsewhere.

    With ``label_all_pieces=True`` every piece is labelled and a ``B-X`` word's later pieces
    get ``I-X`` (the entity has one beginning). Specials always get ``-100``.
    """
    ids = label_vocab.encode(tags)
    labels, previous = [], None
    for w in word_ids:
        if w is None:
            labels.append(IGNORE_INDEX)
        elif w >= len(tags):
            raise ValueError(f"a piece belongs to word {w} but there are only {len(tags)} tags")
        elif w != previous:
            labels.append(ids[w])
        elif label_all_pieces:
            labels.append(label_vocab.label2id[label_vocab.continuation(tags[w])])
        else:
            labels.append(IGNORE_INDEX)
        previous = w
    return labels


def words_and_tags(sentence: Any, i: int) -> tuple[Sequence[str], Sequence[str] | None]:
    """``Sentence``-like objects (``.tokens``, ``.tags``), ``(tokens, tags)`` pairs or words.

    ``i`` is the sentence's index, named in the errors.
    """
    if hasattr(sentence, "tokens"):
        words, tags = sentence.tokens, getattr(sentence, "tags", None)
    elif isinstance(sentence, tuple) and len(sentence) == 2 and not isinstance(sentence[0], str):
        words, tags = sentence
    elif isinstance(sentence, Sequence) and not isinstance(sentence, str):
        words, tags = sentence, None
    else:
        raise TypeError(
            f"sentence {i}: expected a Sentence (tokens, tags), a (tokens, tags) pair or a list "
            f"of words, got {type(sentence).__name__}"
        )
    if len(words) == 0:
        raise ValueError(
            f"sentence {i} has no words (an empty sentence: a blank line read twice, or a "
            f"filter that removed every token); drop it, e.g. [s for s in sentences if s.tokens]"
        )
    if tags is not None and len(tags) != len(words):
        raise ValueError(
            f"sentence {i} has {len(words)} words but {len(tags)} tags; each word needs exactly "
            f"one tag (words: {list(words)[:8]}{' ...' if len(words) > 8 else ''})"
        )
    return words, tags
