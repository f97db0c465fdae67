"""Property tests of masking and the collator: for any batch, special tokens and padding are
never targets, labels hold the original ids, words and spans share their fate; any bad input
is a clear error (see ``clear_errors.py``)."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

import torch  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mlmcourse.masking import MLMCollator, mask_spans, mask_tokens, mask_whole_words  # noqa: E402
from mlmcourse.tokenization import WordLevelTokenizer  # noqa: E402
from tests.clear_errors import clear_error, valid_or_clear  # noqa: E402

VOCAB = 40
PAD, UNK, CLS, SEP, MASK = range(5)  # our vocabularies put the specials first
SPECIALS = [PAD, UNK, CLS, SEP, MASK]
TOKENIZER = WordLevelTokenizer.train([f"w{i}" for i in range(VOCAB - 5)])
probabilities = st.floats(0.0, 1.0)


@st.composite
def batches(draw):
    """``(input_ids, word_ids)``: rows of [CLS] words [SEP] [PAD]..., pieces grouped in words."""
    rows, words = [], []
    n_rows = draw(st.integers(1, 4))
    lengths = [draw(st.lists(st.integers(1, 3), min_size=0, max_size=8)) for _ in range(n_rows)]
    width = 2 + max(sum(pieces) for pieces in lengths)
    for pieces in lengths:
        ids, wids = [CLS], [-1]
        for w, n in enumerate(pieces):
            ids += draw(st.lists(st.integers(5, VOCAB - 1), min_size=n, max_size=n))
            wids += [w] * n
        ids, wids = ids + [SEP], wids + [-1]
        pad = width - len(ids)
        rows.append(ids + [PAD] * pad)
        words.append(wids + [-1] * pad)
    return torch.tensor(rows), torch.tensor(words)


@st.composite
def settings(draw):
    mask_replace = draw(probabilities)
    return {
        "mlm_probability": draw(probabilities),
        "mask_replace_prob": mask_replace,
        "random_replace_prob": draw(st.floats(0.0, 1.0 - mask_replace)),
        "min_masked": draw(st.integers(0, 3)),
        "generator": torch.Generator().manual_seed(draw(st.integers(0, 2**32))),
    }


def _check_masked(ids, inputs, labels, min_masked):
    targets = labels != -100
    assert inputs.shape == labels.shape == ids.shape
    special = ids < 5  # [PAD], [UNK], [CLS], [SEP], [MASK]
    assert not (targets & special).any()  # never a special token, never padding
    assert (labels[targets] == ids[targets]).all()  # a label is the original id
    assert (inputs[~targets] == ids[~targets]).all()  # only targets change
    changed = targets & (inputs != ids)
    replaced = inputs[changed]
    assert ((replaced == MASK) | (replaced >= 5)).all()  # [MASK] or an ordinary id
    ordinary = (~special).sum(1)
    assert (targets.sum(1) >= torch.clamp(ordinary, max=min_masked)).all()


@given(batch=batches(), options=settings())
def test_token_masking_keeps_its_invariants(batch, options):
    ids, _ = batch
    inputs, labels = mask_tokens(
        ids, mask_token_id=MASK, special_ids=SPECIALS, vocab_size=VOCAB, **options
    )
    _check_masked(ids, inputs, labels, options["min_masked"])


def _words_share_their_fate(word_ids, labels, inputs, ids):
    for row in range(ids.shape[0]):
        for w in set(word_ids[row].tolist()) - {-1}:
            at = word_ids[row] == w
            assert len(set((labels[row, at] != -100).tolist())) == 1  # all targets, or none


@given(batch=batches(), options=settings())
def test_whole_word_masking_masks_all_pieces_of_a_word_together(batch, options):
    ids, word_ids = batch
    inputs, labels = mask_whole_words(
        ids, word_ids, mask_token_id=MASK, special_ids=SPECIALS, vocab_size=VOCAB, **options
    )
    _check_masked(ids, inputs, labels, 0)
    _words_share_their_fate(word_ids, labels, inputs, ids)


@given(batch=batches(), options=settings(), p=st.floats(0.05, 1.0), longest=st.integers(1, 6))
def test_span_masking_covers_whole_words_and_keeps_the_invariants(batch, options, p, longest):
    ids, word_ids = batch
    inputs, labels = mask_spans(
        ids,
        word_ids,
        mask_token_id=MASK,
        special_ids=SPECIALS,
        vocab_size=VOCAB,
        geometric_p=p,
        max_span_length=longest,
        **options,
    )
    _check_masked(ids, inputs, labels, 0)
    _words_share_their_fate(word_ids, labels, inputs, ids)


@given(
    rows=st.lists(
        st.lists(st.integers(5, VOCAB - 1), min_size=0, max_size=10), min_size=1, max_size=4
    ),
    strategy=st.sampled_from(["token", "whole_word", "span"]),
    seed=st.integers(0, 1000),
)
def test_the_collator_pads_and_masks_any_examples(rows, strategy, seed):
    collator = MLMCollator(TOKENIZER, strategy=strategy, seed=seed, max_length=16)
    examples = [
        {"input_ids": [CLS, *r, SEP], "word_ids": [None, *range(len(r)), None]} for r in rows
    ]
    batch = collator(examples)
    width = max(len(r) for r in rows) + 2
    assert {tuple(v.shape) for v in batch.values()} == {(len(rows), width)}
    for i, r in enumerate(rows):
        n = len(r) + 2
        assert batch["attention_mask"][i].tolist() == [1] * n + [0] * (width - n)
        assert (batch["labels"][i, n:] == -100).all() and (batch["input_ids"][i, n:] == PAD).all()
        original = torch.tensor([CLS, *r, SEP])
        targets = batch["labels"][i, :n] != -100
        assert (batch["labels"][i, :n][targets] == original[targets]).all()
        assert targets.sum() >= min(1, len(r))  # min_masked=1: every row has a target


bad_id = st.one_of(
    st.floats(allow_nan=True).filter(lambda x: x != int(x) if x == x and abs(x) < 1e18 else True),
    st.text(max_size=2),
    st.none(),
    st.lists(st.integers(0, 5), min_size=1, max_size=2),
)


@given(
    good=st.lists(st.integers(5, VOCAB - 1), min_size=1, max_size=5),
    bad=bad_id,
    at=st.integers(0, 4),
)
def test_a_non_integer_id_in_an_example_is_a_clear_error(good, bad, at):
    ids = [CLS, *good, SEP]
    ids.insert(min(at, len(ids)), bad)
    clear_error(MLMCollator(TOKENIZER), [{"input_ids": [CLS, 6, SEP]}, {"input_ids": ids}])


@given(
    examples=st.one_of(
        st.just([]),
        st.none(),
        st.text(max_size=5),
        st.lists(
            st.one_of(
                st.integers(),
                st.none(),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            ),
            min_size=1,
            max_size=3,
        ),
        st.lists(st.tuples(st.text(min_size=1, max_size=5), st.integers()), min_size=1, max_size=2),
        st.lists(st.just({"input_ids": list(range(5, 30))}), min_size=1, max_size=2),  # too long
        st.just([{"input_ids": [2, 6, 3]}, "a text"]),
        st.just([{"input_ids": [2, 6, 3], "word_ids": [None, 0]}]),
        st.just([{"input_ids": [2, 6, 3], "token_type_ids": [0, 0, 0]}, {"input_ids": [2, 3]}]),
        st.just([{"input_ids": [2, 99, 3]}]),  # an id past the vocabulary
    )
)
def test_bad_examples_are_a_clear_error(examples):
    clear_error(MLMCollator(TOKENIZER, max_length=16), examples)


@given(
    name=st.sampled_from(
        ["mlm_probability", "mask_replace_prob", "random_replace_prob", "min_masked"]
    ),
    value=st.one_of(st.floats(), st.integers(-3, 3), st.text(max_size=3), st.none(), st.booleans()),
)
def test_bad_masking_settings_are_clear_errors_or_valid(name, value):
    ids = torch.tensor([[CLS, 6, 7, SEP]])
    result = valid_or_clear(
        mask_tokens,
        ids,
        mask_token_id=MASK,
        special_ids=SPECIALS,
        vocab_size=VOCAB,
        **{name: value},
    )
    if result is not None:
        _check_masked(ids, *result, 0)
    valid_or_clear(MLMCollator, TOKENIZER, **{name: value})


@given(
    input_ids=st.one_of(
        st.lists(st.integers(0, VOCAB - 1), max_size=4),
        st.builds(torch.rand, st.integers(1, 3), st.integers(1, 3)),
        st.builds(lambda n: torch.zeros(1, 2, n, dtype=torch.long), st.integers(1, 3)),
        st.builds(lambda v: torch.tensor([[CLS, v, SEP]]), st.integers(-5, 100)),
        st.none(),
    ),
    vocab_size=st.one_of(st.just(VOCAB), st.integers(-2, 6), st.floats(1, 50)),
)
def test_bad_tensors_or_vocabularies_are_clear_errors_or_valid(input_ids, vocab_size):
    result = valid_or_clear(
        mask_tokens, input_ids, mask_token_id=MASK, special_ids=SPECIALS, vocab_size=vocab_size
    )
    if result is not None:
        assert result[0].shape == input_ids.shape
