"""The course's English corpus: WikiText-2's articles as plain text, split by whole article.

The course's English MLM (the ``english`` config and the shipped ``english`` checkpoint) reads
WikiText-2's validation and test splits, which the course can reach offline: 120 Wikipedia
articles, about 380k words. A model scored on sentences from an article it trained on would
be tested on its own text, so the articles, not the paragraphs, are split: every eighth article
is held out for the test (15 articles, 51k words), every sixteenth of the rest for the dev set
(8 articles, 20k words), and the other 97 (309k words) train.

The files come in WikiText's *tokenized* form (``1 @,@ 000``, ``state @-@ of``, ``the city 's
walls``, ``<unk>`` for a rare word). :func:`plain_text` turns a line back into plain English by
the rules in :data:`PLAIN_TEXT_RULES`, the one normalisation of this corpus: the page that runs
the model applies the same rules, read from the same list, to what a reader types.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mlmcourse.data.real import fetch
from mlmcourse.utils.checks import read_text

__all__ = [
    "PLAIN_TEXT_RULES",
    "ENGLISH_SPLITS",
    "Article",
    "english_articles",
    "english_texts",
    "plain_text",
    "text_pieces",
]

PLAIN_TEXT_RULES: tuple[tuple[str, str], ...] = (
    (r"<unk>", "[UNK]"),  # the tokenized release's rare word: the tokenizer's unknown token
    (r" @([-,.])@ ", r"\1"),  # 1 @,@ 000 -> 1,000; state @-@ of -> state-of; 3 @.@ 5 -> 3.5
    (r"([(\[{$]) ", r"\1"),  # ( 24 in -> (24 in
    (r" ([.,;:!?%)\]}])", r"\1"),  # lobster , is -> lobster, is
    (r" '(s|t|re|ve|ll|d|m)(?![A-Za-z0-9_])", r"'\1"),  # city 's -> city's; don 't -> don't
    (r'" ([^"]*?) "', r'"\1"'),  # " lobster red " -> "lobster red"
    (r"[ \t\n\r\f\v]+", " "),  # one space between words
    (r"^ | $", ""),  # none around the text
)
"""The normalisation, as ``(pattern, replacement)`` pairs applied in order. The patterns use
only syntax that Python's ``re`` and JavaScript's ``RegExp`` read alike (no ``\\b``, ``\\s`` or
``\\w``, whose Unicode meanings differ; the page turns ``\\1`` into ``$1``). Spacing around
punctuation never changes a BERT tokenizer's ids (its pre-tokenizer splits punctuation off), so
the rules make the text read as English without changing what the model sees, except
``<unk>``, which becomes ``[UNK]``. They are written for the tokenized release: on English
typed as usual they change at most the spacing around punctuation (``he said "yes" and "no"``
loses the spaces around ``and``), which the tokenizer does not see either."""

_RULES = tuple((re.compile(p), r) for p, r in PLAIN_TEXT_RULES)
_ARTICLE_TITLE = re.compile(r"^\s*= ([^=].*[^=]) =\s*$")
_SUBHEADING = re.compile(r"^\s*(=+) .* \1\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?]) (?=\S)")
ENGLISH_SPLITS = ("train", "dev", "test")
MAX_WORDS = 80


def plain_text(line: str) -> str:
    """``line`` as plain English, by :data:`PLAIN_TEXT_RULES` (see the module's docstring)."""
    for pattern, replacement in _RULES:
        line = pattern.sub(replacement, line)
    return line


@dataclass(frozen=True)
class Article:
    """One Wikipedia article: its title and its paragraphs, in plain text."""

    title: str
    paragraphs: tuple[str, ...]

    @property
    def words(self) -> int:
        return sum(len(p.split()) for p in self.paragraphs)


def split_articles(lines: Sequence[str]) -> list[Article]:
    """The articles of a WikiText file's lines. A ``= Title =`` line between two blank lines
    starts one (inside an article, a formula can also start with ``=``); section headings
    (``= = Section = =``) and blank lines are dropped."""
    articles: list[tuple[str, list[str]]] = []
    for i, line in enumerate(lines):
        title = _ARTICLE_TITLE.match(line)
        if title and _blank(lines, i - 1) and _blank(lines, i + 1):
            articles.append((plain_text(title.group(1)), []))
        elif articles and line.strip() and not _SUBHEADING.match(line):
            articles[-1][1].append(plain_text(line))
    return [Article(t, tuple(ps)) for t, ps in articles if ps]


def _blank(lines: Sequence[str], i: int) -> bool:
    return not 0 <= i < len(lines) or not lines[i].strip()


def english_articles(split: str = "train") -> list[Article]:
    """The English corpus's articles of ``split``: ``"train"``, ``"dev"`` or ``"test"``.

    All 120 articles of WikiText-2's validation and test splits (the tokenized release, checked
    by its sha256), in file order; article ``i`` is in the test split when ``i % 8 == 7``, else
    in dev when ``i % 16 == 0``, else in train.
    """
    if split not in ENGLISH_SPLITS:
        raise ValueError(f"split must be 'train', 'dev' or 'test'; got {split!r}")
    lines = [*_lines("wikitext2/tokenized-validation"), *_lines("wikitext2/tokenized-test")]
    return [a for i, a in enumerate(split_articles(lines)) if _split_of(i) == split]


@functools.cache
def _lines(name: str) -> tuple[str, ...]:
    return tuple(read_text(fetch(name)).splitlines())


def _split_of(index: int) -> str:
    return "test" if index % 8 == 7 else "dev" if index % 16 == 0 else "train"


def text_pieces(paragraph: str, max_words: int = MAX_WORDS) -> list[str]:
    """``paragraph`` cut after sentence ends into pieces of at most ``max_words`` words, so that
    a piece fits a 128-token row (a longer sentence is cut where the limit falls)."""
    out: list[list[str]] = [[]]
    for sentence in _SENTENCE_END.split(paragraph):
        words = sentence.split()
        while words:
            if len(out[-1]) + len(words) > max_words and out[-1]:
                out.append([])
            room = max_words - len(out[-1])
            out[-1] += words[:room]
            words = words[room:]
    return [" ".join(p) for p in out if p]


def english_texts(split: str = "train", max_words: int = MAX_WORDS) -> list[str]:
    """Every paragraph of the split's articles, in pieces of at most ``max_words`` words: the
    texts the ``english`` config trains on (``"train"``) and is scored on."""
    return [
        piece
        for article in english_articles(split)
        for paragraph in article.paragraphs
        for piece in text_pieces(paragraph, max_words)
    ]
