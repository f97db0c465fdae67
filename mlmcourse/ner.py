"""Named-entity recognition as token classification on the encoder.

The pieces, in the order a batch meets them:

1. :class:`LabelVocab`: the BIO labels, read from the data, with ``label2id`` / ``id2label``.
2. Alignment: NER data comes as *words* with one tag each, the model sees *pieces*. We find
   which word each piece came from (:func:`word_ids_from_offsets`) and give the label to the
   word's first piece only; later pieces, ``[CLS]``, ``[SEP]`` and padding get ``-100``, the
   index the loss ignores (:func:`align_labels_with_tokens`, :func:`tokenize_and_align_labels`).
3. :class:`BertForTokenClassification`: dropout and one linear layer on the encoder's output,
   started from a pretrained encoder (:meth:`~BertForTokenClassification.from_encoder`,
   :meth:`~BertForTokenClassification.from_pretrained`), with optional class weights
   (:func:`class_weights_from_tags`).
4. Decoding: the argmax label per word, or the best label sequence that is valid BIO
   (:func:`viterbi_decode`); word tags for evaluation (:func:`predict_tags`,
   :func:`evaluate_ner`) and entity spans with character offsets for raw text
   (:func:`predict_entities`, whose pure core is :func:`entities_from_probabilities`).
"""

from __future__ import annotations

import bisect
import copy
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mlmcourse.masking import IGNORE_INDEX  # specials, padding and later pieces: not scored
from mlmcourse.metrics import split_tag
from mlmcourse.model import BertModel, EncoderConfig

__all__ = [
    "IGNORE_INDEX",
    "BertForTokenClassification",
    "EncodedWords",
    "LabelVocab",
    "TokenClassifierOutput",
    "align_labels_with_tokens",
    "allowed_transitions",
    "class_weights_from_tags",
    "decode_pieces",
    "encode_words",
    "entities_from_probabilities",
    "evaluate_ner",
    "group_entities",
    "predict_entities",
    "predict_tags",
    "tokenize_and_align_labels",
    "viterbi_decode",
    "word_dropout",
    "word_ids_from_offsets",
]


# ------------------------------------------------------------------------------- labels
class LabelVocab:
    """The BIO label set with Hugging Face's ``label2id`` / ``id2label``.

    Ids are fixed by the label order, never by hash order, so a model trained today and the
    vocabulary rebuilt tomorrow agree. An unknown label is an error naming it (mapping it
    silently to ``O`` would teach the model that an entity is not one).
    """

    def __init__(self, labels: Iterable[str]) -> None:
        labels = tuple(labels)
        for label in labels:
            split_tag(label)  # a malformed label is an error naming it
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise ValueError(f"labels must be unique; repeated: {duplicates}")
        if "O" not in labels:
            raise ValueError(
                f"the labels must include 'O' (outside any entity), got {list(labels)}"
            )
        self.labels = labels
        self.label2id = {label: i for i, label in enumerate(labels)}
        self.id2label = dict(enumerate(labels))

    @classmethod
    def from_sentences(cls, sentences: Iterable[Any]) -> LabelVocab:
        """Collect the labels of ``sentences`` (objects with ``.tags``, or tag sequences).

        ``"O"`` comes first, then the other labels sorted. Every type gets both its ``B-`` and
        ``I-`` label even when the data shows only one (a type seen only as one-word entities
        can still be continued, and constrained decoding needs both).
        """
        types = set()
        for sentence in sentences:
            for tag in getattr(sentence, "tags", sentence):
                prefix, type_ = split_tag(tag)
                if prefix != "O":
                    types.add(type_)
        return cls(["O", *sorted(f"{p}-{t}" for t in types for p in "BI")])

    @property
    def num_labels(self) -> int:
        return len(self.labels)

    def __len__(self) -> int:
        return len(self.labels)

    def __iter__(self):
        return iter(self.labels)

    def __contains__(self, label: object) -> bool:
        return label in self.label2id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabelVocab) and self.labels == other.labels

    def __repr__(self) -> str:
        return f"LabelVocab({list(self.labels)})"

    def encode(self, tags: Iterable[str]) -> list[int]:
        """Tags to ids; an unknown tag is a ``ValueError`` naming it and the known labels."""
        ids = []
        for tag in tags:
            if tag not in self.label2id:
                raise ValueError(f"unknown label {tag!r}; this vocabulary has {list(self.labels)}")
            ids.append(self.label2id[tag])
        return ids

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Ids to tags (an id out of range is an error, not a silent ``O``)."""
        out = []
        for i in ids:
            i = int(i)
            if i not in self.id2label:
                raise ValueError(f"label id {i} is out of range [0, {len(self)})")
            out.append(self.id2label[i])
        return out

    def continuation(self, label: str) -> str:
        """The label of a word's later pieces: ``B-X -> I-X``; ``I-X`` and ``O`` stay."""
        prefix, type_ = split_tag(label)
        if prefix != "B":
            return label
        inside = f"I-{type_}"
        if inside not in self.label2id:
            raise ValueError(
                f"{label!r} has no continuation label {inside!r} in {list(self.labels)}"
            )
        return inside


def class_weights_from_tags(
    sentences: Iterable[Any], label_vocab: LabelVocab, *, power: float = 0.5
) -> torch.Tensor:
    """Per-label loss weights ``(total / (num_labels * count)) ** power`` from word tags.

    NER data is mostly ``O``; weighting a label by its inverse frequency makes a missed
    entity word cost more than a missed ``O``. ``power=1`` is full inverse frequency (often
    too strong: the model then over-predicts entities), ``0.5`` the usual compromise, ``0``
    no weighting. A label that never occurs gets the weight of a label seen once.
    """
    if not isinstance(power, int | float) or power < 0:
        raise ValueError(f"power must be a non-negative number, got {power!r}")
    counts = torch.zeros(len(label_vocab))
    for sentence in sentences:
        for i in label_vocab.encode(getattr(sentence, "tags", sentence)):
            counts[i] += 1
    if counts.sum() == 0:
        raise ValueError("no tags to count: the sentences are empty")
    weights = counts.sum() / (len(label_vocab) * counts.clamp_min(1))
    return weights**power


def _as_labels(labels: LabelVocab | Mapping[int, str] | Sequence[str]) -> list[str]:
    """Label names in id order, from a ``LabelVocab``, an ``id2label`` dict or a list."""
    if isinstance(labels, LabelVocab):
        return list(labels.labels)
    if isinstance(labels, Mapping):
        if sorted(labels) != list(range(len(labels))):
            raise ValueError(
                f"id2label must have the keys 0..{len(labels) - 1}, got {sorted(labels)}"
            )
        return [labels[i] for i in range(len(labels))]
    return list(labels)


# ---------------------------------------------------------------------------- alignment
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
        if max_length < 2:
            raise ValueError(f"max_length must leave room for [CLS] and [SEP], got {max_length}")
        keep = (
            list(range(max_length - 1)) + [len(ids) - 1]
            if specials[-1]
            else list(range(max_length))
        )
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


def _words_and_tags(sentence: Any, i: int) -> tuple[Sequence[str], Sequence[str] | None]:
    """``Sentence``-like objects (``.tokens``, ``.tags``), ``(tokens, tags)`` pairs or words."""
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


def _pad(rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    width = max((len(r) for r in rows), default=0)
    return torch.tensor([list(r) + [value] * (width - len(r)) for r in rows], dtype=torch.long)


def tokenize_and_align_labels(
    sentences: Sequence[Any],
    tokenizer: Any,
    label_vocab: LabelVocab,
    *,
    max_length: int | None = 128,
    label_all_pieces: bool = False,
) -> dict[str, torch.Tensor]:
    """A padded batch ``{input_ids, attention_mask, token_type_ids, labels}``, each (B, T).

    ``sentences`` are ``Sentence`` objects or ``(tokens, tags)`` pairs. Use it as a
    ``DataLoader``'s ``collate_fn`` with ``functools.partial``.
    """
    encoded, labels = [], []
    for i, sentence in enumerate(sentences):
        words, tags = _words_and_tags(sentence, i)
        if tags is None:
            raise ValueError(f"sentence {i} has no tags; training batches need labels")
        enc = encode_words(tokenizer, words, max_length=max_length)
        encoded.append(enc)
        try:
            labels.append(
                align_labels_with_tokens(
                    tags, enc.word_ids, label_vocab, label_all_pieces=label_all_pieces
                )
            )
        except ValueError as err:
            raise ValueError(f"sentence {i}: {err}") from None
    return {
        "input_ids": _pad([e.input_ids for e in encoded], tokenizer.pad_token_id),
        "attention_mask": _pad([[1] * len(e.input_ids) for e in encoded], 0),
        "token_type_ids": _pad([e.token_type_ids for e in encoded], 0),
        "labels": _pad(labels, IGNORE_INDEX),
    }


def word_dropout(
    batch: Mapping[str, torch.Tensor],
    *,
    unk_token_id: int,
    probability: float,
    generator: torch.Generator | None = None,
) -> dict[str, torch.Tensor]:
    """A copy of ``batch`` where each labelled piece's input id became ``[UNK]`` with ``probability``.

    A word-level vocabulary built from the training text has no unknown word *in* that text, so
    a model fine-tuned on it never sees ``[UNK]``, yet every new name at test time is one. Hiding
    words during training (Lample et al., 2016, replaced singletons) teaches the model to tag a
    word from its context. Only positions with a label (``!= -100``: a word's first piece) are
    replaced; specials, padding and labels are left alone.
    """
    if not (isinstance(probability, int | float) and 0.0 <= probability <= 1.0):
        raise ValueError(f"probability must be in [0, 1], got {probability!r}")
    missing = {"input_ids", "labels"} - set(batch)
    if missing:
        raise ValueError(f"batch lacks {sorted(missing)}; word_dropout needs input_ids and labels")
    input_ids, labels = batch["input_ids"], batch["labels"]
    if input_ids.shape != labels.shape:
        raise ValueError(
            f"input_ids {tuple(input_ids.shape)} and labels {tuple(labels.shape)} differ in shape"
        )
    draw = torch.rand(input_ids.shape, generator=generator)  # (B, T), on the CPU like the batch
    hidden = (draw < probability).to(input_ids.device) & (labels != IGNORE_INDEX)
    return {**batch, "input_ids": input_ids.masked_fill(hidden, unk_token_id)}


# -------------------------------------------------------------------------------- model
@dataclass
class TokenClassifierOutput:
    """Hugging Face's output shape: ``loss`` (when labels are given) and ``logits`` (B, T, L)."""

    loss: torch.Tensor | None
    logits: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class BertForTokenClassification(nn.Module):
    """The encoder, dropout, and one linear layer that scores every label at every piece.

    ``class_weights`` (one per label) scale the cross-entropy so rare entity labels are not
    drowned by ``O``. Dropout is an ``nn.Dropout``, so ``model.eval()`` switches it off (the
    seed chapter kept it on at inference, and its predictions changed from run to run).
    ``id2label`` names the labels, which decoding into entities needs.
    """

    def __init__(
        self,
        config: EncoderConfig,
        num_labels: int,
        class_weights: Sequence[float] | torch.Tensor | None = None,
        classifier_dropout: float | None = None,
        *,
        id2label: LabelVocab | Mapping[int, str] | Sequence[str] | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(num_labels, int) or isinstance(num_labels, bool) or num_labels < 1:
            raise ValueError(f"num_labels must be a positive int, got {num_labels!r}")
        dropout = config.hidden_dropout_prob if classifier_dropout is None else classifier_dropout
        if not isinstance(dropout, int | float) or not 0 <= dropout < 1:
            raise ValueError(f"classifier_dropout must be a probability in [0, 1), got {dropout!r}")
        self.num_labels = num_labels
        self.id2label = None
        if id2label is not None:
            names = _as_labels(id2label)
            if len(names) != num_labels:
                raise ValueError(f"id2label has {len(names)} labels but num_labels={num_labels}")
            self.id2label = dict(enumerate(names))
        self.bert = BertModel(config)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, num_labels)
        nn.init.normal_(self.classifier.weight, std=config.initializer_range)
        nn.init.zeros_(self.classifier.bias)
        weights = None
        if class_weights is not None:
            weights = torch.as_tensor(class_weights, dtype=torch.float).flatten()
            if weights.numel() != num_labels or not bool((weights > 0).all()):
                raise ValueError(
                    f"class_weights must be {num_labels} positive numbers (one per label), "
                    f"got {class_weights!r}"
                )
        # a buffer moves with .to(device) but is not saved: it is a training choice, not a weight
        self.register_buffer("class_weights", weights, persistent=False)

    @property
    def config(self) -> EncoderConfig:
        return self.bert.config

    @classmethod
    def from_encoder(
        cls,
        encoder: nn.Module | Mapping[str, torch.Tensor],
        num_labels: int,
        *,
        config: EncoderConfig | None = None,
        class_weights: Sequence[float] | torch.Tensor | None = None,
        classifier_dropout: float | None = None,
        id2label: LabelVocab | Mapping[int, str] | Sequence[str] | None = None,
    ) -> BertForTokenClassification:
        """Start from pretrained encoder weights; only the classifier starts at random.

        ``encoder`` is a :class:`BertModel` (or a model holding one as ``.bert``, such as an
        MLM model), whose weights are copied, or a state dict with ``transformers`` names,
        either bare (``embeddings.…``) or prefixed ``bert.`` as in a whole MLM checkpoint (its
        ``cls.*`` head is then left out). A state dict needs ``config``.
        """
        if isinstance(encoder, nn.Module):
            encoder = getattr(encoder, "bert", encoder)
            if not isinstance(encoder, BertModel):
                raise TypeError(
                    f"expected a BertModel (or a model with .bert), got {type(encoder).__name__}"
                )
            config = copy.deepcopy(encoder.config) if config is None else config
            state = encoder.state_dict()
        elif isinstance(encoder, Mapping):
            if config is None:
                raise ValueError(
                    "loading from a state dict needs the encoder's config=EncoderConfig(...)"
                )
            state = dict(encoder)
        else:
            raise TypeError(
                f"encoder must be a BertModel or a state dict, got {type(encoder).__name__}"
            )
        if any(k.startswith("bert.") for k in state):
            state = {k[len("bert.") :]: v for k, v in state.items() if k.startswith("bert.")}
        model = cls(config, num_labels, class_weights, classifier_dropout, id2label=id2label)
        own = model.bert.state_dict()
        optional = ("pooler.", "embeddings.position_ids")  # saved by HF, unused here
        missing = sorted(set(own) - set(state))
        unexpected = sorted(k for k in set(state) - set(own) if not k.startswith(optional))
        if missing or unexpected:
            raise ValueError(
                f"the encoder weights do not fit this config: missing {missing[:6]}, "
                f"unexpected {unexpected[:6]}"
            )
        for key, value in state.items():
            if key in own and tuple(value.shape) != tuple(own[key].shape):
                raise ValueError(
                    f"{key} has shape {tuple(value.shape)} in the checkpoint but "
                    f"{tuple(own[key].shape)} in a model with this config"
                )
        model.bert.load_state_dict({k: v for k, v in state.items() if k in own})
        return model

    @classmethod
    def from_pretrained(
        cls, directory: Any, num_labels: int, **kwargs: Any
    ) -> BertForTokenClassification:
        """Start from the encoder of a checkpoint directory (an MLM model's or an encoder's).

        ``kwargs`` go to :meth:`from_encoder` (``class_weights``, ``id2label``, ...).
        """
        from mlmcourse.checkpoint import load_encoder

        return cls.from_encoder(load_encoder(directory), num_labels, **kwargs)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> TokenClassifierOutput:
        """Logits (B, T, num_labels); with ``labels`` (B, T, ``-100`` = skip), the loss too."""
        out = self.bert(
            input_ids,
            attention_mask,
            token_type_ids,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        logits = self.classifier(self.dropout(out.last_hidden_state))  # (B, T, L)
        loss = None if labels is None else self._loss(logits, labels, input_ids)
        return TokenClassifierOutput(loss, logits, out.hidden_states, out.attentions)

    def _loss(
        self, logits: torch.Tensor, labels: torch.Tensor, input_ids: torch.Tensor
    ) -> torch.Tensor:
        if labels.shape != input_ids.shape:
            raise ValueError(
                f"labels must have the shape of input_ids {tuple(input_ids.shape)}, got {tuple(labels.shape)}"
            )
        if labels.dtype.is_floating_point:
            raise ValueError(f"labels must be integer label ids, got dtype {labels.dtype}")
        scored = labels != IGNORE_INDEX
        bad = scored & ((labels < 0) | (labels >= self.num_labels))
        if bad.any():
            raise ValueError(
                f"labels must be in [0, {self.num_labels}) or {IGNORE_INDEX}, found {int(labels[bad][0])}"
            )
        if not scored.any():  # nothing to learn from; a zero that still has a graph
            return logits.sum() * 0.0
        return F.cross_entropy(
            logits.reshape(-1, self.num_labels),
            labels.reshape(-1),
            weight=self.class_weights,
            ignore_index=IGNORE_INDEX,
        )


# ----------------------------------------------------------------------------- decoding
def allowed_transitions(
    labels: LabelVocab | Mapping[int, str] | Sequence[str],
) -> tuple[torch.Tensor, torch.Tensor]:
    """BIO's rules as masks: ``start`` (L,) and ``transitions`` (L_prev, L_next), True = allowed.

    ``I-X`` may only follow ``B-X`` or ``I-X``; in particular not ``O``, not ``B-Y``/``I-Y``
    and not the start. Everything else is allowed.
    """
    parsed = [split_tag(label) for label in _as_labels(labels)]
    start = torch.tensor([p != "I" for p, _ in parsed])
    transitions = torch.tensor(
        [
            [nxt != "I" or (prv != "O" and t_prv == t_nxt) for nxt, t_nxt in parsed]
            for prv, t_prv in parsed
        ]
    )
    return start, transitions


def viterbi_decode(
    log_probs: torch.Tensor, labels: LabelVocab | Mapping[int, str] | Sequence[str]
) -> list[int]:
    """The label sequence with the highest total log-probability among the valid BIO ones.

    ``log_probs`` is (T, L). Each step keeps, for every label, the best valid path ending in
    it (T·L² work instead of the Lᵀ sequences a brute-force search would score).
    """
    if log_probs.dim() != 2:
        raise ValueError(
            f"log_probs must be (seq_len, num_labels), got shape {tuple(log_probs.shape)}"
        )
    start, transitions = allowed_transitions(labels)
    if log_probs.shape[1] != len(start):
        raise ValueError(
            f"log_probs has {log_probs.shape[1]} labels but {len(start)} label names were given"
        )
    if log_probs.shape[0] == 0:
        return []
    # NumPy, not torch: these are tiny (L,) vectors, and per-op overhead dominates in torch
    emissions = log_probs.detach().double().cpu().numpy()  # (T, L)
    penalty = np.where(transitions.numpy(), 0.0, -np.inf)  # (L_prev, L_next)
    score = np.where(start.numpy(), emissions[0], -np.inf)  # (L,)
    backpointers = []
    for t in range(1, len(emissions)):
        candidates = score[:, None] + penalty  # (L_prev, L_next)
        back = candidates.argmax(axis=0)  # the best previous label for each next label
        score = candidates[back, np.arange(len(back))] + emissions[t]
        backpointers.append(back)
    path = [int(score.argmax())]
    for back in reversed(backpointers):
        path.append(int(back[path[-1]]))
    return path[::-1]


def decode_pieces(
    probabilities: torch.Tensor,
    word_ids: Sequence[int | None],
    labels: LabelVocab | Mapping[int, str] | Sequence[str],
    *,
    constrained: bool = True,
    label_all_pieces: bool = False,
) -> tuple[list[str | None], list[float]]:
    """One tag per piece (``None`` for specials) and the probability of each piece's decision.

    A model trained with first-piece labels only decides at each word's first piece; the word's
    later pieces inherit (``B-X`` continues as ``I-X``) and their score is ``nan``, so an
    entity's score averages the decisions actually made. With ``label_all_pieces=True`` every
    piece decides. ``constrained`` decodes with :func:`viterbi_decode` over the deciding pieces.
    """
    names = _as_labels(labels)
    if probabilities.dim() != 2 or probabilities.shape != (len(word_ids), len(names)):
        raise ValueError(
            f"probabilities must be (num_pieces={len(word_ids)}, num_labels={len(names)}), "
            f"got {tuple(probabilities.shape)}"
        )
    deciding = [
        k
        for k, w in enumerate(word_ids)
        if w is not None and (label_all_pieces or k == 0 or word_ids[k - 1] != w)
    ]
    probs = probabilities.detach().float().cpu()[deciding]  # (D, L)
    if constrained:
        chosen = viterbi_decode(probs.clamp_min(1e-30).log(), names)
    else:
        chosen = probs.argmax(-1).tolist()
    tags: list[str | None] = [None] * len(word_ids)
    scores = [math.nan] * len(word_ids)
    for row, (k, c) in enumerate(zip(deciding, chosen, strict=True)):
        tags[k], scores[k] = names[c], float(probs[row, c])
    for k, w in enumerate(word_ids):  # later pieces of a word inherit its decision
        if w is not None and tags[k] is None:
            prefix, type_ = split_tag(tags[k - 1])
            tags[k] = "O" if prefix == "O" else f"I-{type_}"
    return tags, scores


def group_entities(
    text: str,
    offsets: Sequence[tuple[int, int]],
    tags: Sequence[str | None],
    scores: Sequence[float],
) -> list[dict[str, Any]]:
    """Merge tagged pieces into entity spans, like the ``transformers`` pipeline's "simple" mode.

    ``B-X`` opens a span, ``I-X`` extends an open span of type ``X`` (and otherwise opens one,
    as conlleval reads it), ``O`` and specials (``None``) close it. Each span is
    ``{entity_group, word, start, end, score}``: character offsets into ``text``, ``word`` is
    ``text[start:end]`` (the original spelling, not the lower-cased pieces), and ``score`` the
    mean of its pieces' scores (``nan`` ones skipped).
    """
    if not len(offsets) == len(tags) == len(scores):
        raise ValueError(
            f"offsets, tags and scores must have one entry per piece, got {len(offsets)}, "
            f"{len(tags)} and {len(scores)}"
        )
    entities: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for (start, end), tag, score in zip(offsets, tags, scores, strict=True):
        prefix, type_ = ("O", "") if tag is None else split_tag(tag)
        if current is not None and (prefix != "I" or type_ != current["entity_group"]):
            entities.append(current)
            current = None
        if prefix == "O":
            continue
        if current is None:
            current = {"entity_group": type_, "start": start, "end": end, "scores": []}
        current["end"] = max(current["end"], end)
        if not math.isnan(score):
            current["scores"].append(score)
    if current is not None:
        entities.append(current)
    return [
        {
            "entity_group": e["entity_group"],
            "word": text[e["start"] : e["end"]],
            "start": e["start"],
            "end": e["end"],
            "score": sum(e["scores"]) / len(e["scores"]) if e["scores"] else math.nan,
        }
        for e in entities
    ]


def entities_from_probabilities(
    text: str,
    offsets: Sequence[tuple[int, int]],
    probabilities: torch.Tensor,
    word_ids: Sequence[int | None],
    labels: LabelVocab | Mapping[int, str] | Sequence[str],
    *,
    constrained: bool = True,
    label_all_pieces: bool = False,
) -> list[dict[str, Any]]:
    """Entity spans from per-piece label probabilities (num_pieces, num_labels): decode, group.

    The pure part of :func:`predict_entities`, with no model or tokenizer in it.
    """
    tags, scores = decode_pieces(
        probabilities, word_ids, labels, constrained=constrained, label_all_pieces=label_all_pieces
    )
    return group_entities(text, offsets, tags, scores)


def _model_labels(model: nn.Module) -> dict[int, str]:
    id2label = getattr(model, "id2label", None)
    if not id2label:
        raise ValueError(
            "the model has no label names; build it with id2label=label_vocab so that its "
            "predictions can be read as BIO tags"
        )
    return id2label


def _device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


def _probabilities(model: nn.Module, batch: Sequence[EncodedWords]) -> torch.Tensor:
    """Softmax over labels for a padded batch, in eval mode (dropout off), (B, T, L)."""
    device = _device(model)
    inputs = {
        "input_ids": _pad([e.input_ids for e in batch], model.config.pad_token_id),
        "attention_mask": _pad([[1] * len(e.input_ids) for e in batch], 0),
        "token_type_ids": _pad([e.token_type_ids for e in batch], 0),
    }
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            logits = model(**{k: v.to(device) for k, v in inputs.items()}).logits
    finally:
        model.train(was_training)
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
    """One predicted tag per *word* for each sentence, ready for :mod:`mlmcourse.metrics`.

    ``sentences`` are ``Sentence`` objects, ``(tokens, tags)`` pairs or lists of words. A word
    is tagged by its first piece; a word with no piece (cut off by ``max_length``) gets ``O``.
    """
    labels = _model_labels(model)
    max_length = max_length or model.config.max_position_embeddings
    predictions: list[list[str]] = []
    for begin in range(0, len(sentences), batch_size):
        chunk = [
            _words_and_tags(s, begin + i)[0]
            for i, s in enumerate(sentences[begin : begin + batch_size])
        ]
        encoded = [encode_words(tokenizer, words, max_length=max_length) for words in chunk]
        probs = _probabilities(model, encoded)
        for enc, p in zip(encoded, probs, strict=True):
            tags, _ = decode_pieces(
                p[: len(enc.input_ids)],
                enc.word_ids,
                labels,
                constrained=constrained,
                label_all_pieces=label_all_pieces,
            )
            words = ["O"] * enc.num_words
            for k in reversed(range(len(tags))):  # reversed: the first piece of a word wins
                if enc.word_ids[k] is not None:
                    words[enc.word_ids[k]] = tags[k]
            predictions.append(words)
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
    from mlmcourse import metrics

    gold = []
    for i, sentence in enumerate(sentences):
        tags = _words_and_tags(sentence, i)[1]
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
