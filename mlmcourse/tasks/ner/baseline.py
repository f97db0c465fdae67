"""The baseline every tagger must beat: each word's most frequent tag in the training data.

It is strong where the test names occur in training and blind where they do not (an unknown
word is ``O``), which is why the course scores NER on an *unseen* split as well.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from mlmcourse.data.sentence import Sentence


def most_frequent_tag_baseline(
    train_sentences: Sequence[Sentence],
) -> Callable[[Sequence[str]], list[str]]:
    """A tagger that gives each word its most frequent training tag, and ``O`` to a new word.

    Ties go to the tag seen first, so the baseline does not depend on hash order.
    """
    counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for s in _checked(train_sentences):
        for word, tag in zip(s.tokens, s.tags, strict=True):
            counts[word][tag] += 1
    table = {word: c.most_common(1)[0][0] for word, c in counts.items()}
    return lambda words: [table.get(w, "O") for w in words]


def _checked(train_sentences: Sequence[Sentence]) -> Sequence[Sentence]:
    if isinstance(train_sentences, (str, Sentence)) or not isinstance(train_sentences, Sequence):
        raise TypeError(
            "most_frequent_tag_baseline takes a list of Sentence (words and tags, e.g. "
            f"load_world('train')), got {type(train_sentences).__name__}"
        )
    for i, s in enumerate(train_sentences):
        if not isinstance(s, Sentence):
            raise TypeError(
                f"training sentence {i} is a {type(s).__name__}, not a Sentence with tokens and "
                "tags; build one with Sentence(tokens, tags)"
            )
    if not train_sentences:
        raise ValueError("most_frequent_tag_baseline needs at least one training sentence")
    return train_sentences
