"""Tests for mlmcourse.tokenization: both tokenizers through their one shared interface."""

from __future__ import annotations

import json
import pickle
import random
import warnings

import numpy as np
import pytest
import torch

from mlmcourse.data import world_texts
from mlmcourse.tokenization import (
    SPECIAL_TOKENS,
    BatchEncoding,
    WordLevelTokenizer,
    WordPieceTokenizer,
    build_vocab,
    count_words,
    learn_wordpiece_vocab,
    load_tokenizer,
    pre_tokenize,
    stats_row,
    tokenization_stats,
    truncation_lengths,
    wikitext2_comparison,
)

CORPUS = [
    "the cat sat on the mat .",
    "the dog sat on the log .",
    "a cat and a dog met in Paris .",
    "Marie Curie worked in Paris , then in Warsaw .",
    "the capital of Poland is Warsaw .",
    "the mat was warm and the log was cold .",
    "dogs and cats play in the park every morning .",
    "the museum of natural history opened in 1869 .",
] * 3


@pytest.fixture(scope="module")
def word_level() -> WordLevelTokenizer:
    return WordLevelTokenizer.train(CORPUS)


@pytest.fixture(scope="module")
def wordpiece() -> WordPieceTokenizer:
    return WordPieceTokenizer.train(CORPUS, vocab_size=120, min_frequency=1)


@pytest.fixture(params=["word_level", "wordpiece"])
def tokenizer(request):
    # A fresh instance per test, so the warn-once flag of one test never hides another's.
    if request.param == "word_level":
        return WordLevelTokenizer.train(CORPUS)
    return WordPieceTokenizer.train(CORPUS, vocab_size=120, min_frequency=1)


# --- vocabulary building --------------------------------------------------------------------


def test_specials_come_first_with_fixed_ids(tokenizer):
    vocab = tokenizer.get_vocab()
    assert [vocab[t] for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    assert (tokenizer.pad_token_id, tokenizer.unk_token_id) == (0, 1)
    assert (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.mask_token_id) == (2, 3, 4)
    assert tokenizer.all_special_ids == [0, 1, 2, 3, 4]
    assert tokenizer.all_special_tokens == list(SPECIAL_TOKENS)
    assert tokenizer.vocab_size == len(vocab) == len(tokenizer)


def test_build_vocab_orders_by_frequency_then_alphabetically():
    counts = count_words(["b a c a b a d", "e"])  # a:3 b:2, then c d e once each
    vocab = build_vocab(counts)
    words = sorted(vocab, key=vocab.get)[len(SPECIAL_TOKENS) :]
    assert words == ["a", "b", "c", "d", "e"]
    assert build_vocab(counts, min_freq=2) == {
        **{t: i for i, t in enumerate(SPECIAL_TOKENS)},
        "a": 5,
        "b": 6,
    }
    assert list(build_vocab(counts, max_size=7)) == [*SPECIAL_TOKENS, "a", "b"]


def test_vocab_ids_do_not_depend_on_text_order():
    shuffled = CORPUS[:]
    random.Random(0).shuffle(shuffled)
    assert (
        WordLevelTokenizer.train(CORPUS).get_vocab()
        == WordLevelTokenizer.train(shuffled).get_vocab()
    )


def test_wordpiece_training_is_deterministic():
    shuffled = CORPUS[:]
    random.Random(0).shuffle(shuffled)
    a = WordPieceTokenizer.train(CORPUS, vocab_size=120, min_frequency=1)
    b = WordPieceTokenizer.train(shuffled, vocab_size=120, min_frequency=1)
    assert a.get_vocab() == b.get_vocab()
    assert a.vocab_size == 120


def test_learn_wordpiece_vocab_merges_the_most_frequent_pair_first():
    vocab = learn_wordpiece_vocab({"hug": 10, "pug": 5, "hugs": 5}, vocab_size=100, min_frequency=2)
    # every character, then the ones seen inside a word with "##"
    alphabet = ["g", "h", "p", "s", "u", "##g", "##s", "##u"]
    assert vocab[: len(SPECIAL_TOKENS) + 8] == [*SPECIAL_TOKENS, *alphabet]
    # "##u ##g" occurs 20 times: the first merge. Then "h ##ug" (15 times); then "p ##ug" and
    # "hug ##s" tie at 5 and the pair with the lower ids ("p" is older than "hug") goes first.
    assert vocab[len(SPECIAL_TOKENS) + 8 :] == ["##ug", "hug", "pug", "hugs"]
    assert learn_wordpiece_vocab({"hug": 1}, vocab_size=100, min_frequency=2)[-1] == "##u"


def test_deterministic_trainer_agrees_with_the_library_up_to_ties():
    texts = world_texts("train")[:4000]
    ours = WordPieceTokenizer.train(texts, vocab_size=1200)
    library = WordPieceTokenizer.train(texts, vocab_size=1200, deterministic=False)
    assert [library.get_vocab()[t] for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    shared = set(ours.get_vocab()) & set(library.get_vocab())
    assert len(shared) >= 0.97 * 1200  # measured: 1,189 of 1,200; the rest are ties
    held_out = world_texts("validation")[:200]
    same = sum(ours.tokenize(t) == library.tokenize(t) for t in held_out)
    assert same >= 0.9 * len(held_out)


def test_count_words_lowercase_and_specials_are_not_counted():
    counts = count_words(["The the [MASK] cat"], lowercase=True)
    assert counts == {"the": 2, "cat": 1}


def test_pre_tokenize_splits_punctuation_and_keeps_specials_whole():
    words = pre_tokenize("Hello, [MASK] world!")
    assert [w for w, _ in words] == ["Hello", ",", "[MASK]", "world", "!"]
    assert [s for _, s in words] == [(0, 5), (5, 6), (7, 13), (14, 19), (19, 20)]


def test_min_freq_and_max_size(word_level):
    rare = WordLevelTokenizer.train(CORPUS[:8] + ["zebra"], min_freq=2)
    assert "zebra" not in rare.get_vocab()  # seen once only
    small = WordLevelTokenizer.train(CORPUS, max_size=10)
    assert small.vocab_size == 10
    assert list(small.get_vocab())[5] == "the"  # the most frequent word gets the first free id


# --- encoding ---------------------------------------------------------------------------------


def test_unknown_words_become_unk_not_mask(word_level):
    enc = word_level.encode("the zebra sat")
    assert enc.tokens == ["[CLS]", "the", "[UNK]", "sat", "[SEP]"]
    assert enc.ids[2] == word_level.unk_token_id != word_level.mask_token_id


def test_encode_adds_cls_and_sep(tokenizer):
    enc = tokenizer.encode("the cat sat")
    assert enc.ids[0] == tokenizer.cls_token_id and enc.ids[-1] == tokenizer.sep_token_id
    assert enc.special_tokens_mask == [1] + [0] * (len(enc) - 2) + [1]
    assert enc.type_ids == [0] * len(enc)
    assert len(enc.ids) == len(enc.tokens) == len(enc.word_ids) == len(enc.offsets)
    assert tokenizer.tokenize("the cat sat") == enc.tokens[1:-1]


def test_pair_template_and_token_type_ids(tokenizer):
    enc = tokenizer.encode("the cat", "the dog sat")
    a, b = tokenizer.tokenize("the cat"), tokenizer.tokenize("the dog sat")
    assert enc.tokens == ["[CLS]", *a, "[SEP]", *b, "[SEP]"]
    assert enc.type_ids == [0] * (len(a) + 2) + [1] * (len(b) + 1)
    assert enc.sequence_ids == [None, *[0] * len(a), None, *[1] * len(b), None]


def test_mask_written_in_text_stays_one_token(tokenizer):
    enc = tokenizer.encode("the [MASK] sat")
    assert enc.tokens[1:-1] == ["the", "[MASK]", "sat"]
    assert enc.ids[2] == tokenizer.mask_token_id


def test_offsets_point_into_the_original_text(tokenizer):
    text = "Marie Curie  worked in Paris."
    enc = tokenizer.encode(text)
    for token, (start, end), special in zip(
        enc.tokens, enc.offsets, enc.special_tokens_mask, strict=True
    ):
        if special:
            assert (start, end) == (0, 0)
        elif token != "[UNK]":
            assert text[start:end] == token.removeprefix("##")


def test_round_trip_word_level(word_level):
    text = "the cat sat on the mat ."
    assert word_level.decode(word_level.encode(text).ids) == text
    assert (
        word_level.decode(word_level.encode(text).ids, skip_special_tokens=False)
        == f"[CLS] {text} [SEP]"
    )


def test_round_trip_wordpiece(wordpiece):
    text = "the cat sat on the mat in Paris"
    ids = wordpiece.encode(text).ids
    assert wordpiece.decode(ids) == text
    # unseen words come back spelled from pieces, so encoding the decoded text is stable
    new = "Curiously, a catamaran sat in Warsaw."
    again = wordpiece.decode(wordpiece.encode(new).ids)
    assert wordpiece.encode(again).ids == wordpiece.encode(new).ids
    assert "[UNK]" not in wordpiece.tokenize(new)


def test_decode_accepts_tensors_and_convert_helpers(tokenizer):
    batch = tokenizer(["the cat sat", "the dog"])
    assert tokenizer.decode(batch["input_ids"][1]) == tokenizer.decode(
        tokenizer.encode("the dog").ids
    )
    assert tokenizer.convert_ids_to_tokens(tokenizer.mask_token_id) == "[MASK]"
    assert tokenizer.convert_tokens_to_ids(["[CLS]", "no-such-token!"]) == [
        2,
        tokenizer.unk_token_id,
    ]
    assert tokenizer.convert_tokens_to_ids("[SEP]") == 3
    ids = tokenizer.encode("the cat").ids
    assert tokenizer.decode(np.array(ids)) == tokenizer.decode(tuple(ids)) == "the cat"
    assert tokenizer.convert_ids_to_tokens(np.int64(4)) == "[MASK]"
    with pytest.raises(TypeError, match="list of int ids"):
        tokenizer.decode([True, 2])


# --- batches: padding, truncation, word_ids ---------------------------------------------------


def test_batch_padding_longest(tokenizer):
    batch = tokenizer(["the cat sat on the mat", "the dog"])
    assert isinstance(batch, BatchEncoding)
    assert set(batch) == {"input_ids", "attention_mask", "token_type_ids", "special_tokens_mask"}
    for value in batch.values():
        assert value.dtype == torch.long and value.shape == batch["input_ids"].shape
    short = tokenizer.encode("the dog")
    n = len(short)
    assert batch["input_ids"][1, :n].tolist() == short.ids
    assert (batch["input_ids"][1, n:] == tokenizer.pad_token_id).all()
    assert batch["attention_mask"][1].tolist() == [1] * n + [0] * (batch["input_ids"].shape[1] - n)
    assert (batch["special_tokens_mask"][1, n:] == 1).all()  # padding is never maskable
    assert batch["input_ids"].shape[1] == len(tokenizer.encode("the cat sat on the mat"))


def test_padding_max_length_and_false(tokenizer):
    batch = tokenizer(["the cat", "the dog"], padding="max_length", max_length=12)
    assert batch["input_ids"].shape == (2, 12)
    same = tokenizer(["the cat", "the dog"], padding=False)
    assert same["input_ids"].shape == (2, len(tokenizer.encode("the cat")))
    single = tokenizer("the cat sat", padding=False)
    assert single["input_ids"].shape[0] == 1
    with pytest.raises(ValueError, match="padding=False needs every row"):
        tokenizer(["the cat sat on the mat", "the"], padding=False)
    with pytest.raises(ValueError, match="needs max_length"):
        tokenizer(["the cat"], padding="max_length")
    with pytest.raises(ValueError, match="padding must be"):
        tokenizer(["the cat"], padding="left")


def test_truncation_keeps_final_sep_and_warns_once(tokenizer):
    long_text = "the cat sat on the mat and the dog sat on the log"
    with pytest.warns(UserWarning, match="truncated"):
        batch = tokenizer([long_text, "the cat"], max_length=6)
    assert batch["input_ids"].shape == (2, 6)
    assert batch["input_ids"][0, -1].item() == tokenizer.sep_token_id
    assert batch["input_ids"][0, :5].tolist() == tokenizer.encode(long_text).ids[:5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second truncation stays silent
        again = tokenizer.encode(long_text, max_length=6)
    assert len(again) == 6 and again.ids[-1] == tokenizer.sep_token_id
    untouched = tokenizer([long_text], max_length=6, truncation=False)
    assert untouched["input_ids"].shape[1] == len(tokenizer.encode(long_text))


def test_pair_truncation_cuts_the_longer_text_first(tokenizer):
    long_text = "the cat sat on the mat and the dog sat on the log"
    with pytest.warns(UserWarning, match="truncated"):
        enc = tokenizer.encode("the dog", long_text, max_length=10)
    assert len(enc) == 10
    assert enc.tokens[: 2 + len(tokenizer.tokenize("the dog"))][-2:] == ["dog", "[SEP]"]
    assert enc.tokens[-1] == "[SEP]" and sum(t == "[SEP]" for t in enc.tokens) == 2


@pytest.mark.parametrize(
    ("first", "second", "budget", "expected"),
    [
        (10, None, 4, (4, None)),
        (3, 4, 10, (3, 4)),  # fits: nothing cut
        (2, 20, 10, (2, 8)),  # the short text is kept whole
        (20, 2, 10, (8, 2)),
        (6, 20, 9, (4, 5)),  # both cut: halves, the longer one gets the odd token
        (20, 6, 9, (5, 4)),
        (7, 7, 9, (4, 5)),  # a tie: the second text gets the odd token, as in 🤗 tokenizers
    ],
)
def test_truncation_lengths(first, second, budget, expected):
    assert truncation_lengths(first, second, budget) == expected


def test_truncation_matches_the_tokenizers_library(wordpiece):
    backend = WordPieceTokenizer.train(CORPUS, vocab_size=120, min_frequency=1).backend_tokenizer
    rng = random.Random(0)
    words = " ".join(CORPUS).split()
    for _ in range(40):
        a = " ".join(rng.choices(words, k=rng.randint(1, 15)))
        b = " ".join(rng.choices(words, k=rng.randint(1, 15)))
        max_length = rng.randint(5, 20)
        backend.enable_truncation(max_length, strategy="longest_first")
        expected = backend.encode(a, b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = wordpiece.encode(a, b, max_length=max_length)
        assert got.ids == expected.ids and got.type_ids == expected.type_ids


def test_word_level_and_wordpiece_truncate_alike(word_level, wordpiece):
    # When every word is one piece, both tokenizers keep the same words.
    a, b = "the cat sat on the mat", "the dog sat"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = word_level.encode(a, b, max_length=8).tokens
        theirs = wordpiece.encode(a, b, max_length=8).tokens
    assert ours == theirs


def test_word_ids(word_level, wordpiece):
    enc = word_level.encode("the cat sat")
    assert enc.word_ids == [None, 0, 1, 2, None]
    text = "the catamaran sat"
    pieces = wordpiece.encode(text)
    assert len(pieces) > 5  # "catamaran" is split into several pieces ...
    assert sorted({w for w in pieces.word_ids if w is not None}) == [0, 1, 2]
    catamaran = [t for t, w in zip(pieces.tokens, pieces.word_ids, strict=True) if w == 1]
    assert "".join(t.removeprefix("##") for t in catamaran) == "catamaran"  # ... all word 1
    batch = wordpiece([text, "the cat"], ["a dog", "a dog"])
    row = batch.word_ids(1)
    assert len(row) == batch["input_ids"].shape[1] and row[-1] is None  # padded with None
    assert batch.word_ids(0) == [*pieces.word_ids, 0, 1, None]  # the pair's words count from 0
    assert batch.tokens(1)[-1] == "[PAD]"
    assert batch.sequence_ids(0)[-2] == 1
    with pytest.raises(IndexError, match="out of range"):
        batch.word_ids(5)


def test_batch_to_device_keeps_encodings(word_level):
    batch = word_level(["the cat"]).to("cpu")
    assert isinstance(batch, BatchEncoding) and batch.word_ids(0) == [None, 0, 1, None]


# --- save and load ----------------------------------------------------------------------------


def test_save_load_round_trip(tokenizer, tmp_path):
    path = tokenizer.save(tmp_path / "tok.json")
    loaded = load_tokenizer(path)
    assert type(loaded) is type(tokenizer)
    assert loaded.get_vocab() == tokenizer.get_vocab()
    texts = ["the cat sat", "Marie met a zebra in Paris [MASK] ."]
    for key, value in tokenizer(texts, texts[::-1]).items():
        assert torch.equal(loaded(texts, texts[::-1])[key], value), key
    directory = tmp_path / "model"
    directory.mkdir()
    assert tokenizer.save(directory).name == "tokenizer.json"
    assert load_tokenizer(directory).get_vocab() == tokenizer.get_vocab()


def test_word_level_save_keeps_lowercase(tmp_path):
    tok = WordLevelTokenizer.train(CORPUS, lowercase=True)
    loaded = load_tokenizer(tok.save(tmp_path / "t.json"))
    assert loaded.lowercase and loaded.encode("THE Cat").tokens[1:-1] == ["the", "cat"]


def test_wordpiece_from_vocab_txt(wordpiece, tmp_path):
    vocab = wordpiece.get_vocab()
    lines = sorted(vocab, key=vocab.get)
    (tmp_path / "vocab.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_tokenizer(tmp_path)  # a directory with only vocab.txt
    assert loaded.get_vocab() == vocab
    assert not loaded.lowercase  # the vocabulary has capitals, so it is cased
    text = "the cat sat in Warsaw"
    assert loaded.encode(text).ids == wordpiece.encode(text).ids


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("texts", "error", "match"),
    [
        (None, TypeError, "texts must be a string or a list of strings, got NoneType"),
        (42, TypeError, "got int"),
        (["the cat", None], TypeError, r"texts\[1\] must be a string, got NoneType"),
        (["the cat", 3], TypeError, r"texts\[1\] must be a string, got int"),
        ([], ValueError, "empty list"),
        ("", ValueError, "empty or whitespace-only"),
        (["the cat", "  \n\t "], ValueError, r"texts\[1\] is empty or whitespace-only"),
    ],
)
def test_bad_texts(tokenizer, texts, error, match):
    with pytest.raises(error, match=match):
        tokenizer(texts)


def test_bad_encode_arguments(tokenizer):
    with pytest.raises(TypeError, match="text must be a string"):
        tokenizer.encode(None)
    with pytest.raises(ValueError, match="text_pair is empty"):
        tokenizer.encode("the cat", "   ")
    with pytest.raises(ValueError, match="same length"):
        tokenizer(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="max_length must be a positive int"):
        tokenizer(["the cat"], max_length=0)
    with pytest.raises(ValueError, match="leaves no room"):
        tokenizer.encode("the cat", "the dog", max_length=4)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tokenizer.decode([2, 10_000])
    with pytest.raises(ValueError, match="1-D"):
        tokenizer.decode(torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="list of int ids"):
        tokenizer.decode(["the"])


def test_bad_training_arguments():
    with pytest.raises(TypeError, match="single string"):
        WordLevelTokenizer.train("the cat sat")
    with pytest.raises(ValueError, match="min_freq"):
        WordLevelTokenizer.train(CORPUS, min_freq=0)
    with pytest.raises(ValueError, match="max_size counts the 5 special tokens"):
        WordLevelTokenizer.train(CORPUS, max_size=5)
    with pytest.raises(ValueError, match=r"texts\[1\] is empty"):
        WordLevelTokenizer.train(["the cat", ""])
    with pytest.raises(ValueError, match="vocab_size"):
        WordPieceTokenizer.train(CORPUS, vocab_size=3)
    with pytest.raises(TypeError, match="single string"):
        WordPieceTokenizer.train("the cat sat")


def test_vocab_missing_a_special_token(tmp_path):
    with pytest.raises(ValueError, match=r"missing the special tokens \['\[MASK\]'\]"):
        WordLevelTokenizer({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "cat": 4})
    with pytest.raises(ValueError, match="ids must be 0, 1"):
        WordLevelTokenizer({t: i * 2 for i, t in enumerate(SPECIAL_TOKENS)})
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\ncat\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"missing the special tokens \['\[MASK\]'\]"):
        load_tokenizer(tmp_path / "vocab.txt")
    saved = json.dumps({"format": "mlmcourse.WordLevelTokenizer", "vocab": ["[PAD]", "cat"]})
    (tmp_path / "wl.json").write_text(saved, encoding="utf-8")
    with pytest.raises(ValueError, match="missing the special tokens"):
        load_tokenizer(tmp_path / "wl.json")


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no tokenizer file"):
        load_tokenizer(tmp_path / "nope.json")
    with pytest.raises(FileNotFoundError, match="neither tokenizer.json nor vocab.txt"):
        load_tokenizer(tmp_path)
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_tokenizer(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match="neither a tokenizer saved by mlmcourse"):
        load_tokenizer(tmp_path / "other.json")
    (tmp_path / "bpe.json").write_text('{"model": {"type": "BPE"}}', encoding="utf-8")
    with pytest.raises(ValueError, match="expected a WordPiece"):
        load_tokenizer(tmp_path / "bpe.json")


# --- measuring --------------------------------------------------------------------------------


def test_tokenization_stats_counts_oov_words_and_pieces(word_level, wordpiece):
    texts = ["the cat sat", "the mole and the pilot sat"]  # 9 words, 2 unseen
    stats = tokenization_stats(word_level, texts)
    assert (stats.texts, stats.words, stats.tokens, stats.unk_words) == (2, 9, 9, 2)
    assert stats.oov_rate == pytest.approx(2 / 9)
    assert stats.tokens_per_word == 1.0
    assert stats.mean_length == pytest.approx((9 + 4) / 2)
    assert stats.vocab_size == word_level.vocab_size
    pieces = tokenization_stats(wordpiece, texts)
    assert pieces.words == 9 and pieces.unk_words == 0  # spelled from pieces instead
    assert pieces.tokens == sum(len(wordpiece.tokenize(t)) for t in texts) > 9
    # a character never seen in training ("z") leaves even WordPiece with [UNK]
    assert tokenization_stats(wordpiece, ["the zebra sat"]).unk_words == 1
    with pytest.raises(ValueError, match="empty list"):
        tokenization_stats(word_level, [])


def test_tokenizers_and_batches_pickle(tokenizer):
    # DataLoader workers pickle the collator (and so the tokenizer) and the batches they build.
    batch = tokenizer(["the cat sat", "the dog"])
    again = pickle.loads(pickle.dumps(batch))
    assert isinstance(again, BatchEncoding) and again.word_ids(1) == batch.word_ids(1)
    copy = pickle.loads(pickle.dumps(tokenizer))
    assert copy.encode("the cat sat").ids == tokenizer.encode("the cat sat").ids


def test_the_wikitext2_comparison_trains_on_80_percent_and_measures_the_rest():
    names = ["anna", "bert", "carl", "dora", "emil", "finn", "gina", "hugo", "ida", "jon"]
    paragraphs = [
        f"the river of {names[i % 10]} runs past the mill <unk> at dawn ." for i in range(16)
    ]
    paragraphs += [
        "the river of nora runs past the mill at dawn ."
    ] * 4  # "nora": never in training
    paragraphs += ["", " <unk> "]  # empty once the markers are gone: dropped
    rows, n_train, n_test = wikitext2_comparison(paragraphs)
    assert (n_train, n_test) == (16, 4)
    assert [r["tokenizer"] for r in rows] == ["word-level", "WordPiece"]
    word_level, wordpiece = rows
    assert word_level["oov_rate"] == pytest.approx(1 / 11)  # one word in each 11-word paragraph
    assert wordpiece["oov_rate"] == 0 and wordpiece["tokens_per_word"] > 1  # "nora" in pieces
    assert word_level == stats_row(
        "WikiText-2",
        "word-level",
        WordLevelTokenizer.train(
            [p.replace("<unk>", " ").strip() for p in paragraphs[:16]], max_size=8000
        ),
        paragraphs[16:20],
    )
    with pytest.raises(ValueError, match="at least 5 paragraphs"):
        wikitext2_comparison(["one", "<unk>"])
