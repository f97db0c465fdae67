"""A changed world for continued pretraining: every city renamed by a fixed shuffle.

Continued pretraining (domain adaptation) starts from a trained model and keeps running the
same masked-LM objective on new text. To see what it overwrites and what it learns, the
pretraining chapter and ``experiments/continued_pretraining.py`` move the small world: each
city takes another city's name, so capitals, homes and headquarters all change while the
vocabulary, the grammar and everything else stay. The fact probes that mention a city are
then asked twice, with the old world's answers and with the moved world's.
"""

from __future__ import annotations

import random

from mlmcourse.data.sentence import Probe

CONTINUED_PRETRAINING = {
    "max_steps": 300,
    "warmup_steps": 20,
    "learning_rate": 1e-3,
    "eval_steps": 0,
}
"""The overrides of the ``world`` config for continued pretraining on the moved world: a short
run (15% of the original 2,000 steps) at a third of the original peak rate, no evaluations."""


def city_move(cities: list[str], seed: int = 0) -> dict[str, str]:
    """Which name each city takes in the moved world: a fixed shuffle of ``cities``.

    A permutation, so the moved world has the same names, each on another city (or, by chance,
    the same one); the seed makes it the same in every run.
    """
    shuffled = list(cities)
    random.Random(seed).shuffle(shuffled)
    return dict(zip(cities, shuffled, strict=True))


def moved(text: str, move: dict[str, str]) -> str:
    """``text`` in the moved world: every word that is a city's name replaced by its new name."""
    return " ".join(move.get(word, word) for word in text.split(" "))


def moved_fact_probes(probes: list[Probe], move: dict[str, str]) -> tuple[list[Probe], list[Probe]]:
    """The fact probes a move can change, as ``(old, new)``: two lists of the same length.

    ``old`` keeps the probes that mention a city or ask for one; ``new[i]`` is ``old[i]`` asked
    in the moved world (its text and answer moved), so ``old`` scores what the model still knows
    of the old world and ``new`` what it has learned of the moved one.
    """
    old = [p for p in probes if p.answer in move or any(w in move for w in p.text.split(" "))]
    new = [
        Probe(moved(p.text, move), move.get(p.answer, p.answer), "the moved world", p.relation)
        for p in old
    ]
    return old, new
