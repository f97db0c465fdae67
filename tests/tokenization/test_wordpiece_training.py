"""The naive WordPiece training loop the book teaches learns exactly what the fast one ships.

Hand-checked merges on tiny counts, then the two learners side by side on real text: the course's
world corpus (always here) and WikiText-2 paragraphs (when the shared data folder is).
"""

import os
from pathlib import Path

import pytest

from mlmcourse.data import load_wikitext2, world_texts
from mlmcourse.tokenization import (
    SPECIAL_TOKENS,
    WordPieceTokenizer,
    count_bert_words,
    learn_wordpiece_vocab,
    learn_wordpiece_vocab_naive,
)
from mlmcourse.tokenization.wordpiece_training import merge_pair, spell_in_characters

LEARNERS = [learn_wordpiece_vocab, learn_wordpiece_vocab_naive]
SHARED = Path(
    os.environ.get("MLMCOURSE_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "data"
)


def merges(counts: dict[str, int], vocab: list[str]) -> list[str]:
    """The pieces a learner added to the starting vocabulary of characters."""
    start, _, _ = spell_in_characters(counts, limit_alphabet=1000)
    assert vocab[: len(start)] == start
    return vocab[len(start) :]


def test_starting_vocabulary_is_specials_then_characters_then_inner_characters():
    vocab, words, counts = spell_in_characters({"cat": 3, "act": 1}, limit_alphabet=1000)
    assert vocab == [*SPECIAL_TOKENS, "a", "c", "t", "##a", "##c", "##t"]
    assert (words, counts) == ([["a", "##c", "##t"], ["c", "##a", "##t"]], [1, 3])


def test_merge_pair_merges_left_to_right_without_overlap():
    assert merge_pair(["##a", "##a", "##a"], ("##a", "##a"), "##aa") == ["##aa", "##a"]
    assert merge_pair(["a", "##b", "a", "##b"], ("a", "##b"), "ab") == ["ab", "ab"]


@pytest.mark.parametrize("learn", LEARNERS, ids=["fast", "naive"])
def test_both_learners_merge_the_hand_checked_pairs(learn):
    # "hug": ##u ##g (20) first, then h ##ug (15); p ##ug and hug ##s tie at 5: "p" has the
    # lower id, so "pug" comes before "hugs".
    vocab = learn({"hug": 10, "pug": 5, "hugs": 5}, vocab_size=100, min_frequency=2)
    assert vocab[len(SPECIAL_TOKENS) + 8 :] == ["##ug", "hug", "pug", "hugs"]
    # "aaaa" x2: ##a ##a occurs 4 times and merges first, left to right: a ##aa ##a. Then
    # (a, ##aa) and (##aa, ##a) tie at 2; ids (5, 7) beat (7, 6), so "aaa" comes next.
    vocab = learn({"aaaa": 2}, vocab_size=100, min_frequency=2)
    assert vocab == [*SPECIAL_TOKENS, "a", "##a", "##aa", "aaa", "aaaa"]
    # vocab_size and min_frequency stop the loop
    assert learn({"aaaa": 2}, vocab_size=8, min_frequency=2)[-1] == "##aa"
    assert learn({"aaaa": 2}, vocab_size=100, min_frequency=5) == [*SPECIAL_TOKENS, "a", "##a"]


def test_naive_and_fast_learners_agree_on_the_world_corpus():
    counts = count_bert_words(world_texts("train"))
    naive = learn_wordpiece_vocab_naive(counts, vocab_size=2000)  # stops at about 1,800
    assert naive == learn_wordpiece_vocab(counts, vocab_size=2000)
    assert len(merges(counts, naive)) > 1000  # the tail: many merges, many ties
    shipped = WordPieceTokenizer.train(world_texts("train"), vocab_size=2000).get_vocab()
    assert shipped == {token: i for i, token in enumerate(naive)}


@pytest.mark.skipif(
    not (SHARED / "wikitext-2" / "valid.txt").is_file(), reason="no shared data folder"
)
def test_naive_and_fast_learners_agree_on_wikitext2(monkeypatch, tmp_path):
    monkeypatch.setenv("MLMCOURSE_DATA_DIR", str(SHARED))
    monkeypatch.setenv("MLMCOURSE_CACHE", str(tmp_path / "cache"))
    paragraphs = load_wikitext2("validation")[:150]
    counts = count_bert_words(paragraphs, lowercase=True)
    naive = learn_wordpiece_vocab_naive(counts, vocab_size=300)
    assert naive == learn_wordpiece_vocab(counts, vocab_size=300)
    assert len(naive) == 300 and len(merges(counts, naive)) >= 100
