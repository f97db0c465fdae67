"""Reading-comprehension questions about the course's small world, answered by a span.

"Where does Droei Grithath live?" is asked about a short passage: one sentence about Droei
Grithath that states where she lives, and sentences about other people that state where *they*
live, in a random order. Every passage names several cities, so the model must find the one
next to the right name: it has to read. The sentences are the world corpus's own templates
(:mod:`mlmcourse.data.templates_facts`, :mod:`mlmcourse.data.templates_discourse`: plain
statements, and pairs of sentences where the second says *she*), rendered about the people of
the world (:func:`mlmcourse.data.corpus.generate_worlds`).

Three questions are asked, each in three wordings: where a person lives (a city), what they
work as (a profession) and whom they work for (an organization). The people are split once and
for all (28 for training, 6 for validation, 6 for test), so no split asks about, or even
mentions, a person of another: a model cannot pass validation by remembering training answers.
``"unseen"`` asks about the 30 people of the second world, whose names the world corpus's
train split never saw. The examples are :class:`~mlmcourse.tasks.qa.QAExample` objects, like
SQuAD's, so the same features, training and metric serve both.
"""

from __future__ import annotations

import functools
import random

from mlmcourse.data.corpus import SEED, generate_worlds
from mlmcourse.data.entities import Person, World
from mlmcourse.data.templates import TEMPLATES, Rendered, Sampler
from mlmcourse.tasks.qa.squad import QAExample
from mlmcourse.utils.checks import check_non_negative_int, check_positive_int, check_seed

__all__ = ["QUESTIONS", "WORLD_QA_SIZES", "world_people", "world_questions"]

QUESTIONS = {  # relation -> wordings; the answer is the relation's object
    "lives_in": (
        "Where does {name} live?",
        "In which city does {name} live?",
        "Which city is home to {name}?",
    ),
    "profession": (
        "What does {name} work as?",
        "What is the job of {name}?",
        "What is {name}'s profession?",
    ),
    "works_for": (
        "Which organization does {name} work for?",
        "Who employs {name}?",
        "Who is the employer of {name}?",
    ),
}
WORLD_QA_SIZES = {"train": 2000, "validation": 300, "test": 300, "unseen": 300}
SPLITS = tuple(WORLD_QA_SIZES)
FAMILIES = ("person", "pronoun")  # templates that state facts about one person
_TEMPLATE_NAMES = [name for name, (family, _) in TEMPLATES.items() if family in FAMILIES]


@functools.cache
def _worlds() -> tuple[World, World]:
    return generate_worlds(SEED)


def world_people(split: str) -> list[Person]:
    """The people a split asks about: of the 40 in the world, those whose index ``i`` has
    ``i % 20`` below 14 (train), from 14 to 16 (validation) or from 17 (test); the 30 people of
    the second world for ``"unseen"``."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(map(repr, SPLITS))}; got {split!r}")
    seen, unseen = _worlds()
    if split == "unseen":
        return list(unseen.people)
    bounds = {"train": (0, 14), "validation": (14, 17), "test": (17, 20)}[split]
    return [p for i, p in enumerate(seen.people) if bounds[0] <= i % 20 < bounds[1]]


class _About(Sampler):
    """A sampler whose every person is ``subject``, so a person template talks about them."""

    def __init__(self, world: World, rng: random.Random, subject: Person) -> None:
        super().__init__(world, rng)
        self.subject = subject

    def person(self) -> Person:
        return self.subject


def _answer(person: Person, relation: str) -> str:
    """The object of ``relation`` for ``person``: what the question asks for."""
    objects = {"lives_in": person.home, "profession": person.profession}
    return objects.get(relation) or person.employer  # "works_for"


def _statement(world: World, rng: random.Random, person: Person, relation: str) -> Rendered:
    """A sentence (or two) from a person template that states ``relation`` of ``person``."""
    fact = (relation, person.name, _answer(person, relation))
    while True:
        name = rng.choice(_TEMPLATE_NAMES)
        rendered = TEMPLATES[name][1](_About(world, rng, person))
        if rendered is not None and fact in rendered.facts:
            return rendered


def _find(tokens: tuple[str, ...], words: list[str]) -> int:
    """The index of the first token of ``words`` in ``tokens``."""
    for i in range(len(tokens) - len(words) + 1):
        if list(tokens[i : i + len(words)]) == words:
            return i
    raise ValueError(f"{' '.join(words)!r} is not in {' '.join(tokens)!r}")


def _passage(
    world: World,
    rng: random.Random,
    person: Person,
    relation: str,
    others: list[Person],
) -> tuple[str, int]:
    """The passage's text and the character where the answer starts in it."""
    sentences = [_statement(world, rng, p, relation) for p in [person, *others]]
    order = list(range(len(sentences)))
    rng.shuffle(order)
    text, answer_start = "", -1
    for i in order:
        if text:
            text += " "
        if i == 0:  # the evidence: find the answer's words in it
            tokens = sentences[0].tokens
            at = _find(tokens, _answer(person, relation).split())
            answer_start = len(text) + len(" ".join(tokens[:at])) + (1 if at else 0)
        text += " ".join(sentences[i].tokens)
    return text, answer_start


def world_questions(
    split: str = "train", n: int | None = None, *, seed: int = 0, distractors: int = 2
) -> list[QAExample]:
    """``n`` questions about the people of ``split`` (default: :data:`WORLD_QA_SIZES`).

    Each passage holds the evidence and ``distractors`` sentences that state the same relation
    of other people of the split. The same ``(split, n, seed, distractors)`` gives the same
    examples.
    """
    people = world_people(split)
    n = WORLD_QA_SIZES[split] if n is None else check_positive_int(n, "n")
    check_seed(seed)
    check_non_negative_int(distractors, "distractors")
    if distractors >= len(people):
        raise ValueError(
            f"distractors={distractors} needs more people than the {len(people)} of split "
            f"{split!r}; use at most {len(people) - 1}"
        )
    world = _worlds()[1 if split == "unseen" else 0]
    rng = random.Random(seed * 1_000_003 + SPLITS.index(split))
    relations = list(QUESTIONS)
    examples = []
    for i in range(n):
        person = rng.choice(people)
        relation = rng.choice(relations)
        question = rng.choice(QUESTIONS[relation]).format(name=person.name)
        others = rng.sample([p for p in people if p is not person], distractors)
        context, start = _passage(world, rng, person, relation, others)
        text = _answer(person, relation)
        examples.append(
            QAExample(f"world-{split}-{i}", person.name, context, question, (text,), (start,))
        )
    return examples
