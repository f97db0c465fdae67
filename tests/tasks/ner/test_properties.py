"""Property tests of NER: alignment gives one label per word, decoding always yields valid BIO
(and Viterbi finds the best valid path), the metrics equal seqeval's and stay in [0, 1]; any
bad input is a clear error (see ``clear_errors.py``)."""

from __future__ import annotations

import itertools
import warnings

import pytest

pytest.importorskip("hypothesis")

import torch  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mlmcourse.data import bio, world_texts  # noqa: E402
from mlmcourse.data.sentence import Sentence  # noqa: E402
from mlmcourse.tasks.ner import (  # noqa: E402
    LabelVocab,
    allowed_transitions,
    decode_pieces,
    metrics,
    tokenize_and_align_labels,
    viterbi_decode,
)
from mlmcourse.tokenization import WordLevelTokenizer, WordPieceTokenizer  # noqa: E402
from tests.clear_errors import clear_error  # noqa: E402

TEXTS = world_texts("train")[:300]
TOKENIZERS = {
    "word": WordLevelTokenizer.train(TEXTS),
    "wordpiece": WordPieceTokenizer.train(TEXTS, vocab_size=200),  # small: words split in pieces
}
WORDS = sorted({w for t in TEXTS for w in t.split()})
TYPES = ["LOC", "PER", "ORG"]
LABELS = LabelVocab(["O"] + [f"{p}-{t}" for t in TYPES for p in "BI"])
tags = st.sampled_from(list(LABELS))
word = st.one_of(
    st.sampled_from(WORDS), st.text(st.characters(categories=("L", "N")), min_size=1, max_size=8)
)


@st.composite
def sentences(draw, min_size=1, max_size=12):
    words = draw(st.lists(word, min_size=min_size, max_size=max_size))
    return Sentence(
        tuple(words), tuple(draw(st.lists(tags, min_size=len(words), max_size=len(words))))
    )


def valid_bio(sequence) -> bool:
    previous = "O"
    for tag in sequence:
        prefix, type_ = bio.split_tag(tag)
        if prefix == "I" and previous not in (f"B-{type_}", f"I-{type_}"):
            return False
        previous = tag
    return True


@given(
    kind=st.sampled_from(sorted(TOKENIZERS)),
    batch=st.lists(sentences(), min_size=1, max_size=4),
    all_pieces=st.booleans(),
)
def test_alignment_gives_one_label_per_word(kind, batch, all_pieces):
    tokenizer = TOKENIZERS[kind]
    encoded = tokenize_and_align_labels(
        batch, tokenizer, LABELS, max_length=None, label_all_pieces=all_pieces
    )
    for i, sentence in enumerate(batch):
        labels = encoded["labels"][i]
        labelled = labels[labels != -100].tolist()
        if not all_pieces:  # one label per word, the word's own, in order
            assert LABELS.decode(labelled) == list(sentence.tags)
        else:  # every piece labelled, and the pieces of a word form one valid BIO run
            assert len(labelled) >= len(sentence.tokens)
            assert valid_bio(LABELS.decode(labelled)) == valid_bio(sentence.tags)
        specials = encoded["input_ids"][i] == tokenizer.cls_token_id
        assert (labels[specials] == -100).all()


@given(
    kind=st.sampled_from(sorted(TOKENIZERS)), sentence=sentences(), max_length=st.integers(3, 10)
)
def test_truncation_keeps_a_prefix_of_the_labels(kind, sentence, max_length):
    encoded = tokenize_and_align_labels([sentence], TOKENIZERS[kind], LABELS, max_length=max_length)
    labels = encoded["labels"][0]
    assert encoded["input_ids"].shape[1] <= max_length
    labelled = LABELS.decode(labels[labels != -100].tolist())
    assert labelled == list(sentence.tags[: len(labelled)])


@st.composite
def log_probs(draw, max_len=6):
    length = draw(st.integers(0, max_len))
    values = draw(
        st.lists(st.floats(-20, 0), min_size=length * len(LABELS), max_size=length * len(LABELS))
    )
    return torch.tensor(values, dtype=torch.float64).reshape(length, len(LABELS))


@given(scores=log_probs())
def test_viterbi_always_decodes_valid_bio(scores):
    path = viterbi_decode(scores, LABELS)
    assert len(path) == len(scores)
    assert valid_bio(LABELS.decode(path))


@given(scores=log_probs(max_len=3))
def test_viterbi_finds_the_best_valid_sequence(scores):
    start, transitions = allowed_transitions(LABELS)
    best = max(
        (
            sum(float(scores[t, c]) for t, c in enumerate(seq))
            for seq in itertools.product(range(len(LABELS)), repeat=len(scores))
            if not seq
            or (start[seq[0]] and all(transitions[a, b] for a, b in itertools.pairwise(seq)))
        ),
        default=0.0,
    )
    path = viterbi_decode(scores, LABELS)
    assert sum(float(scores[t, c]) for t, c in enumerate(path)) == pytest.approx(best)


@given(
    pieces=st.lists(st.integers(1, 3), min_size=1, max_size=6),
    seed=st.integers(0, 2**31),
    constrained=st.booleans(),
    all_pieces=st.booleans(),
)
def test_decoding_pieces_gives_one_tag_per_piece_and_valid_bio(
    pieces, seed, constrained, all_pieces
):
    word_ids = [None] + [w for w, n in enumerate(pieces) for _ in range(n)] + [None]
    g = torch.Generator().manual_seed(seed)
    probs = torch.rand(len(word_ids), len(LABELS), generator=g).softmax(-1)
    decoded, scores = decode_pieces(
        probs, word_ids, LABELS, constrained=constrained, label_all_pieces=all_pieces
    )
    assert len(decoded) == len(scores) == len(word_ids)
    assert (decoded[0], decoded[-1]) == (None, None)
    real = [t for t in decoded if t is not None]
    assert len(real) == sum(pieces)
    if constrained:
        assert valid_bio(real)
    for w in range(len(pieces)):  # later pieces of a word continue its first piece
        word_tags = [t for t, i in zip(decoded, word_ids, strict=True) if i == w]
        if not all_pieces:
            assert all(t == "O" for t in word_tags[1:]) or all(
                t.startswith("I-") for t in word_tags[1:]
            )


tag_sequences = st.lists(st.lists(tags, min_size=0, max_size=10), min_size=1, max_size=5)


@given(gold=tag_sequences, seed=st.integers(0, 2**31))
def test_metrics_equal_seqeval_and_stay_in_range(gold, seed):
    seqeval = pytest.importorskip("seqeval.metrics")
    rng = torch.Generator().manual_seed(seed)
    names = list(LABELS)
    predicted = [
        [names[int(i)] for i in torch.randint(len(names), (len(s),), generator=rng)] for s in gold
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined ratios: both sides say 0
        for ours, theirs in (
            (metrics.precision_score, seqeval.precision_score),
            (metrics.recall_score, seqeval.recall_score),
            (metrics.f1_score, seqeval.f1_score),
        ):
            value = ours(gold, predicted)
            assert 0.0 <= value <= 1.0
            assert value == pytest.approx(theirs(gold, predicted))
        if any(bio.get_entities(s) for s in gold):
            assert metrics.f1_score(gold, gold) == 1.0


@given(sequence=st.lists(tags, max_size=15))
def test_entities_are_ordered_disjoint_and_inside_the_sequence(sequence):
    entities = bio.get_entities(sequence)
    ends = -1
    for type_, start, end in entities:
        assert type_ in TYPES and ends < start <= end < len(sequence)
        assert sequence[start] != "O"
        ends = end


not_bio = st.text(max_size=6).filter(
    lambda t: t != "O" and not (len(t) > 2 and t[0] in "BI" and t[1] == "-")
)


@given(good=tag_sequences, bad=st.one_of(not_bio, st.none(), st.integers()), at=st.integers(0, 4))
def test_a_malformed_tag_is_a_clear_error(good, bad, at):
    broken = [list(s) for s in good]
    row = broken[at % len(broken)]
    row.insert(min(at, len(row)), bad)
    clear_error(metrics.f1_score, broken, broken)
    clear_error(bio.get_entities, row)


@given(
    gold=tag_sequences,
    predicted=st.one_of(
        st.just("B-PER"),
        st.lists(tags, min_size=1, max_size=3),
        st.lists(st.lists(tags, max_size=3), min_size=6, max_size=7),
    ),
)
def test_misaligned_predictions_are_a_clear_error(gold, predicted):
    clear_error(metrics.f1_score, gold, predicted)


@given(
    sentence=st.one_of(
        st.just(Sentence((), ())),
        st.just("a plain string"),
        st.just(42),
        st.tuples(st.lists(word, min_size=1, max_size=3), st.lists(tags, min_size=4, max_size=5)),
        sentences().map(lambda s: Sentence(s.tokens, tuple("X-BAD" for _ in s.tags))),
    )
)
def test_bad_sentences_are_a_clear_error(sentence):
    good = Sentence(("Tival",), ("B-LOC",))
    clear_error(tokenize_and_align_labels, [good, sentence], TOKENIZERS["word"], LABELS)
