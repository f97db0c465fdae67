"""The two records the data module hands out: a tagged sentence, and a cloze probe."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sentence:
    """One sentence: word tokens and their BIO tags, aligned one to one."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.tags):
            raise ValueError(
                f"a Sentence needs one tag per token, got {len(self.tokens)} tokens "
                f"and {len(self.tags)} tags"
            )

    @property
    def text(self) -> str:
        return " ".join(self.tokens)


@dataclass(frozen=True)
class Probe:
    """A cloze sentence with one ``[MASK]`` standing for one word, and why the answer is known.

    ``relation`` names what the probe tests (``"capital_of"``, ``"article"``, ...), so results
    can be broken down by kind.
    """

    text: str
    answer: str
    evidence: str
    relation: str = ""

    @property
    def filled(self) -> str:
        """The sentence with the answer in place of ``[MASK]``."""
        return self.text.replace("[MASK]", self.answer, 1)
