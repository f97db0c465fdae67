"""The most-frequent-tag baseline: each word's most frequent training tag, ``O`` for a new word."""

import pytest

from mlmcourse.data import Sentence
from mlmcourse.tasks.ner import most_frequent_tag_baseline

TRAIN = [
    Sentence(("Ana", "Kos", "flies"), ("B-PER", "I-PER", "O")),
    Sentence(("Ana", "Bank", "pays"), ("B-ORG", "I-ORG", "O")),
    Sentence(("Ana", "Kos", "pays"), ("B-PER", "I-PER", "O")),
]


def test_each_word_gets_its_most_frequent_tag_and_new_words_o():
    tag = most_frequent_tag_baseline(TRAIN)
    assert tag(["Ana", "Bank", "Zorbel", "pays"]) == ["B-PER", "I-ORG", "O", "O"]
    assert tag([]) == []


def test_a_tie_goes_to_the_tag_seen_first():
    tie = [Sentence(("Lin",), ("B-LOC",)), Sentence(("Lin",), ("B-PER",))]
    assert most_frequent_tag_baseline(tie)(["Lin"]) == ["B-LOC"]
    assert most_frequent_tag_baseline(tie[::-1])(["Lin"]) == ["B-PER"]


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        ("Ana Kos", TypeError, "takes a list of Sentence"),
        (TRAIN[0], TypeError, "takes a list of Sentence"),
        ([TRAIN[0], ("Ana", "B-PER")], TypeError, "training sentence 1 is a tuple"),
        ([], ValueError, "at least one training sentence"),
    ],
)
def test_bad_training_data_is_named(bad, error, message):
    with pytest.raises(error, match=message):
        most_frequent_tag_baseline(bad)
