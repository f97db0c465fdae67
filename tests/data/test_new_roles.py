"""Names in new roles: every name known from training, every one in a role it never had there."""

from __future__ import annotations

import pytest

from mlmcourse.data import Sentence, load_world, names_in_new_roles
from mlmcourse.data.bio import get_entities
from mlmcourse.data.new_roles import name_words
from mlmcourse.tasks.ner import most_frequent_tag_baseline
from mlmcourse.tasks.ner.metrics import f1_score

TRAIN = [
    Sentence(("Ana", "Kos", "lives", "in", "Orlen", "."), ("B-PER", "I-PER", "O", "O", "B-LOC", "O")),
    Sentence(("Kelso", "Bank", "is", "in", "Tarvo", "."), ("B-ORG", "I-ORG", "O", "O", "B-LOC", "O")),
    Sentence(("Orlen", "Bank", "opened", "."), ("B-ORG", "I-ORG", "O", "O")),
]  # fmt: skip


def test_name_words_keeps_only_words_with_one_role_in_training():
    pools = name_words(TRAIN)
    # "Orlen" is a place and a bank's name: two roles, left out; "Bank" is a kind, not a name
    assert pools == {"PER": ["Ana", "Kos"], "LOC": ["Tarvo"], "ORG": ["Kelso"]}


def test_tags_and_context_stay_and_every_name_comes_from_another_type():
    train, unseen = load_world("train"), load_world("unseen")[:300]
    pools = name_words(train)
    role = {word: kind for kind, words in pools.items() for word in words}
    hard = names_in_new_roles(unseen, train, seed=3)
    assert hard == names_in_new_roles(unseen, train, seed=3)  # deterministic
    changed = 0
    for before, after in zip(unseen, hard, strict=True):
        assert after.tags == before.tags
        names = {
            k
            for kind, a, b in get_entities(list(before.tags))
            for k in range(a, b + (kind != "ORG"))
        }
        for k, (old, new) in enumerate(zip(before.tokens, after.tokens, strict=True)):
            if k in names:
                kind = before.tags[k][2:]
                assert new in role and role[new] != kind, (after.text, new)
                changed += 1
            else:
                assert new == old  # the context, and an organisation's kind word, stay
    assert changed > 400


def test_the_most_frequent_tag_baseline_fails_on_names_in_new_roles():
    train = load_world("train")
    tag = most_frequent_tag_baseline(train)
    hard = names_in_new_roles(load_world("test")[:500], train)
    predicted = [tag(s.tokens) for s in hard]
    assert f1_score([list(s.tags) for s in hard], predicted) < 0.02


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="sentence 1 is a str"):
        names_in_new_roles([TRAIN[0], "Ana Kos"], TRAIN)
    only_people = [TRAIN[0].__class__(("Ana", "Kos"), ("B-PER", "I-PER"))]
    with pytest.raises(ValueError, match="no entity of a type other than PER"):
        names_in_new_roles(only_people, only_people)
