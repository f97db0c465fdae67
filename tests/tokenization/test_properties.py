"""Property tests of the tokenizers: any text keeps the batch invariants; any bad input is a
clear error (see ``clear_errors.py``)."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mlmcourse.data import world_texts  # noqa: E402
from mlmcourse.tokenization import WordLevelTokenizer, WordPieceTokenizer  # noqa: E402
from tests.clear_errors import clear_error, valid_or_clear  # noqa: E402

TEXTS = world_texts("train")[:400]
TOKENIZERS = {
    "word": WordLevelTokenizer.train(TEXTS),
    "wordpiece": WordPieceTokenizer.train(TEXTS, vocab_size=300),
}
WORDS = sorted({w for t in TEXTS for w in t.split()})

# Text a learner may type: letters (accents too), digits, punctuation, spaces, the odd
# special-token string; control characters are left to the invalid-input tests.
text_chars = st.characters(
    categories=("L", "N", "P", "Zs", "S"), exclude_characters="\x85\xa0\u2028\u2029"
)
texts = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
    st.text(text_chars, min_size=1, max_size=40),
    st.lists(st.sampled_from([*WORDS[:30], "[MASK]", "[UNK]", "[CLS]"]), min_size=1).map(" ".join),
)
kinds = st.sampled_from(sorted(TOKENIZERS))


@given(
    kind=kinds,
    batch=st.lists(texts, min_size=1, max_size=4),
    max_length=st.none() | st.integers(3, 20),
)
def test_a_batch_is_consistent_for_any_text(kind, batch, max_length):
    tokenizer = TOKENIZERS[kind]
    encoded = valid_or_clear(tokenizer, batch, max_length=max_length)
    if encoded is None:  # e.g. a text of only spaces: refused with a clear message
        return
    ids, attention = encoded["input_ids"], encoded["attention_mask"]
    assert {tuple(v.shape) for v in encoded.values()} == {(len(batch), ids.shape[1])}
    assert ids.min() >= 0 and ids.max() < tokenizer.vocab_size
    if max_length is not None:
        assert ids.shape[1] <= max_length
    for i, text in enumerate(batch):
        n = int(attention[i].sum())
        assert attention[i, :n].all() and not attention[i, n:].any()  # real tokens, then padding
        single = tokenizer.encode(text, max_length=max_length)
        assert ids[i, :n].tolist() == single.ids
        assert single.ids[0] == tokenizer.cls_token_id and single.ids[-1] == tokenizer.sep_token_id
        assert (ids[i, n:] == tokenizer.pad_token_id).all()
        word_ids = encoded.word_ids(i)
        assert len(word_ids) == ids.shape[1]
        assert word_ids[0] is None and word_ids[n - 1] is None
        assert all(w is None for w in word_ids[n:])
        assert (encoded["special_tokens_mask"][i, n:] == 1).all()


@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=15))
def test_word_level_decoding_gives_back_known_words(words):
    tokenizer = TOKENIZERS["word"]
    text = " ".join(words)
    assert tokenizer.decode(tokenizer.encode(text).ids) == text
    assert tokenizer.tokenize(text) == words


@given(kind=kinds, words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=15))
def test_word_ids_number_the_words_in_order(kind, words):
    encoding = TOKENIZERS[kind].encode(" ".join(words))
    numbered = [w for w in encoding.word_ids if w is not None]
    assert numbered == sorted(numbered) and set(numbered) == set(range(len(words)))


not_text = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.binary(min_size=1),
    st.lists(st.integers(), min_size=1, max_size=3),
    st.lists(st.none(), min_size=1, max_size=2),
    st.just([]),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    st.text(st.sampled_from(" \t\n\r\x0b\x0c"), max_size=4),  # nothing to encode
)


@given(kind=kinds, bad=not_text)
def test_anything_but_text_is_a_clear_error(kind, bad):
    tokenizer = TOKENIZERS[kind]
    clear_error(tokenizer, bad)
    clear_error(tokenizer.encode, bad)
    clear_error(tokenizer, ["fine text", bad])


@given(
    kind=kinds,
    max_length=st.one_of(st.integers(-5, 2), st.floats(), st.text(max_size=3), st.just([3])),
)
def test_a_bad_max_length_is_a_clear_error(kind, max_length):
    clear_error(TOKENIZERS[kind], ["Tival is in Peifi ."], max_length=max_length)


@given(
    kind=kinds,
    ids=st.one_of(
        st.lists(st.integers(-(2**70), 2**70), max_size=6),
        st.lists(st.floats(), min_size=1, max_size=3),
        st.lists(st.text(max_size=2), min_size=1, max_size=3),
        st.integers(-(2**40), 2**40),
        st.none(),
    ),
)
def test_any_ids_decode_or_fail_clearly(kind, ids):
    tokenizer = TOKENIZERS[kind]
    decoded = valid_or_clear(tokenizer.decode, ids)
    assert decoded is None or isinstance(decoded, str)
    tokens = valid_or_clear(tokenizer.convert_ids_to_tokens, ids)
    if tokens is not None and isinstance(ids, list):
        assert len(tokens) == len(ids)
