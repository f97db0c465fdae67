"""The tokenizers chapter's plain WordPiece encoder is the library's WordPiece model."""

from __future__ import annotations

import random

from tokenizers.models import WordPiece

from mlmcourse.data import world_texts
from mlmcourse.tokenization import WordPieceTokenizer
from tests.teaching import teaching_namespace


def _library_split(word: str, vocab: set[str]) -> list[str]:
    ids = {piece: i for i, piece in enumerate(sorted(vocab | {"[UNK]"}))}
    model = WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=100)
    return [token.value for token in model.tokenize(word)]


def test_the_plain_split_equals_the_librarys_model_on_random_vocabularies():
    split = teaching_namespace("tokenizers")["wordpiece_split"]
    rng = random.Random(0)
    for _ in range(300):
        letters = "abc"[: rng.randint(2, 3)]
        pieces = {"".join(rng.choices(letters, k=rng.randint(1, 3))) for _ in range(6)}
        vocab = {p for p in pieces} | {"##" + p for p in pieces if rng.random() < 0.7}
        word = "".join(rng.choices(letters, k=rng.randint(1, 7)))
        assert split(word, vocab) == _library_split(word, vocab), (word, sorted(vocab))


def test_the_plain_split_equals_the_trained_tokenizer_on_unseen_words():
    split = teaching_namespace("tokenizers")["wordpiece_split"]
    tokenizer = WordPieceTokenizer.train(world_texts("train")[:3000], vocab_size=600)
    vocab = set(tokenizer.get_vocab())
    words = sorted({w for t in world_texts("unseen")[:200] for w in t.split() if w.isalpha()})
    assert len(words) > 100
    for word in words:
        assert split(word, vocab) == tokenizer.tokenize(word), word
