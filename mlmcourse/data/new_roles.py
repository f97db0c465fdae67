"""Names in new roles: a harder NER test, where every name is known but plays another part.

The world's ordinary test split reuses the training names, so a tagger that memorised "Kepaix
is a person" scores F1 1.000 without reading a single context word; the unseen split replaces
the names by new ones (one ``[UNK]`` each for a word-level vocabulary). Here the names are
*familiar with the wrong type*: a person called after a place and a company ("Keoul Drafer is
a lawyer"), a town with a person's name ("moved to Pouend"), a bank named after a town ("Keoul
Bank"). A tagger that goes by the identity of the name gets the type wrong; only the context
gives it away. This is the world's version of the ambiguous names of real text (*Paris* the
city and the person, *Jordan* the country and the river and the player).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from mlmcourse.data.bio import get_entities
from mlmcourse.data.sentence import Sentence

__all__ = ["name_words", "names_in_new_roles"]

# The part of an organisation's name that says what it is ("Bank", "Museum") stays: it is
# context, as "is a lawyer" is. Only the word before it is a name.
KIND_WORD_TYPES = {"ORG"}


def _name_positions(sentence: Sentence) -> list[tuple[str, int]]:
    """(type, word index) of every name word: all words of an entity, but for an organisation
    only the words before its last one (its kind)."""
    out = []
    for kind, start, end in get_entities(list(sentence.tags)):
        last = end - 1 if kind in KIND_WORD_TYPES and end > start else end
        out.extend((kind, k) for k in range(start, last + 1))
    return out


def name_words(train: Sequence[Sentence]) -> dict[str, list[str]]:
    """Per entity type, the words that occur in ``train`` only as names of that type.

    A word also seen outside a name, as the kind of an organisation, or in names of two types
    is left out, so each word listed has one role in training. Sorted, so draws are stable.
    """
    roles: dict[str, set[str]] = defaultdict(set)
    for sentence in train:
        named = dict((k, kind) for kind, k in _name_positions(sentence))
        for k, word in enumerate(sentence.tokens):
            roles[word].add(named.get(k, "not a name"))
    pools: dict[str, list[str]] = defaultdict(list)
    for word, kinds in sorted(roles.items()):
        if len(kinds) == 1 and "not a name" not in kinds:
            pools[next(iter(kinds))].append(word)
    return dict(pools)


def names_in_new_roles(
    sentences: Sequence[Sentence], train: Sequence[Sentence], *, seed: int = 0
) -> list[Sentence]:
    """``sentences`` with each name word replaced by a training name of *another* type.

    Tags are unchanged: the sentence says what the entity is, the name now says otherwise.
    Each replacement is drawn (with ``seed``) from the name words of the other types
    (:func:`name_words`), so every name is in the training vocabulary and was only ever seen
    in a different role.
    """
    pools = name_words(train)
    rng = random.Random(seed)
    out = []
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, Sentence):
            raise TypeError(f"sentence {i} is a {type(sentence).__name__}, expected a Sentence")
        tokens = list(sentence.tokens)
        for kind, k in _name_positions(sentence):
            others = [t for t in sorted(pools) if t != kind and pools[t]]
            if not others:
                raise ValueError(
                    f"the training sentences name no entity of a type other than {kind}, so "
                    f"there is no name to give a {kind} a new role (sentence {i})"
                )
            tokens[k] = rng.choice(pools[rng.choice(others)])
        out.append(Sentence(tuple(tokens), sentence.tags))
    return out
