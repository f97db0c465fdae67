"""Learning WordPiece pieces from word counts, deterministically: a naive loop and a fast one.

Both follow 🤗 ``WordPieceTrainer`` (BPE-style merges): spell every word in characters (a
character inside a word is written ``##c``), then repeatedly merge the most frequent pair of
neighbouring pieces into a new piece. :func:`learn_wordpiece_vocab_naive` recounts every pair
after each merge, so it reads like the procedure; :func:`learn_wordpiece_vocab`, the one
:meth:`~mlmcourse.tokenization.WordPieceTokenizer.train` uses, updates only the counts a merge
changes and keeps the pairs in a heap. Both break ties by the pieces' ids, never by hash order,
so both return the same vocabulary, and it depends on the counts alone.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping
from itertools import pairwise

from mlmcourse.tokenization.encoding import SPECIAL_TOKENS

Pair = tuple[str, str]


def learn_alphabet(word_counts: Mapping[str, int], limit_alphabet: int) -> set[str]:
    """The ``limit_alphabet`` most frequent characters, weighted by word counts (ties alphabetical)."""
    char_counts: Counter[str] = Counter()
    for word, count in word_counts.items():
        for ch in word:
            char_counts[ch] += count
    return set(sorted(char_counts, key=lambda c: (-char_counts[c], c))[:limit_alphabet])


def spell_in_characters(
    word_counts: Mapping[str, int], *, limit_alphabet: int = 1000, prefix: str = "##"
) -> tuple[list[str], list[list[str]], list[int]]:
    """Where training starts: a vocabulary of characters, and every word spelled in them.

    Returns ``(vocab, words, counts)``: "cat" becomes ``["c", "##a", "##t"]`` (characters
    outside the alphabet are dropped), with its count. Ids: specials, the alphabet, then the
    ``##`` characters, each group sorted, so they depend only on the counts.
    """
    alphabet = learn_alphabet(word_counts, limit_alphabet)
    words, counts = [], []
    for word in sorted(word_counts):
        chars = [c for c in word if c in alphabet]
        if chars:
            words.append([chars[0]] + [prefix + c for c in chars[1:]])
            counts.append(word_counts[word])
    inside = {piece for pieces in words for piece in pieces[1:]}
    return [*SPECIAL_TOKENS, *sorted(alphabet), *sorted(inside)], words, counts


def merge_pair(pieces: list[str], pair: Pair, merged: str) -> list[str]:
    """``pieces`` with each occurrence of ``pair`` replaced by ``merged``, left to right."""
    out, j = [], 0
    while j < len(pieces):
        if j + 1 < len(pieces) and (pieces[j], pieces[j + 1]) == pair:
            out.append(merged)
            j += 2
        else:
            out.append(pieces[j])
            j += 1
    return out


def learn_wordpiece_vocab_naive(
    word_counts: Mapping[str, int], *, vocab_size: int, min_frequency: int = 2
) -> list[str]:
    """The training loop as you would first write it: count every pair, merge the best, repeat.

    A pair's score is its count, as in 🤗 ``WordPieceTrainer``, which trains with BPE's rule
    (not the ``freq(ab) / (freq(a) * freq(b))`` score of Google's WordPiece as the 🤗 course
    reconstructs it); a tie goes to the pair whose pieces have the lower ids. Each merge reads
    every word again, so it is slow, but it returns exactly what :func:`learn_wordpiece_vocab`
    returns.
    """
    vocab, words, counts = spell_in_characters(word_counts)
    while len(vocab) < vocab_size:
        pair_counts: Counter[Pair] = Counter()
        for pieces, count in zip(words, counts, strict=True):
            for pair in pairwise(pieces):
                pair_counts[pair] += count
        if not pair_counts:  # every word is one piece
            break
        ids = {token: i for i, token in enumerate(vocab)}
        best = min(pair_counts, key=lambda p: (-pair_counts[p], ids[p[0]], ids[p[1]]))
        if pair_counts[best] < min_frequency:
            break
        merged = best[0] + best[1].removeprefix("##")  # "h" + "##ug" -> "hug"
        if merged not in ids:
            vocab.append(merged)
        words = [merge_pair(pieces, best, merged) for pieces in words]
    return vocab


class PairCounts:
    """Pair counts kept up to date merge by merge, instead of recounted over the whole corpus.

    Beside each pair's count it remembers which words hold the pair (so a merge visits only
    those) and keeps a heap of ``(-count, id, id, pair)``: the top is the pair to merge next.
    A count that changes is pushed again; the old entry is skipped when it comes up.
    """

    def __init__(self, words: list[list[str]], counts: list[int], ids: Mapping[str, int]):
        self.words, self.counts, self.ids = words, counts, ids
        self.count: Counter[Pair] = Counter()
        self.where: dict[Pair, set[int]] = {}
        for i in range(len(words)):
            self._count_word(i, +1)
        self.heap = [self._entry(pair) for pair in self.count]
        heapq.heapify(self.heap)

    def _entry(self, pair: Pair) -> tuple[int, int, int, Pair]:
        """Most frequent first, then the pair whose pieces have the lower ids."""
        return (-self.count[pair], self.ids[pair[0]], self.ids[pair[1]], pair)

    def _count_word(self, i: int, sign: int) -> set[Pair]:
        """Add (``sign=+1``) or remove (``-1``) the pairs of word ``i``; return them.

        ``where`` only grows: a word that lost a pair is visited for nothing, which is cheaper
        than searching it out.
        """
        pairs = list(pairwise(self.words[i]))
        for pair in pairs:
            self.count[pair] += sign * self.counts[i]
            if sign > 0:
                self.where.setdefault(pair, set()).add(i)
        return set(pairs)

    def most_frequent(self) -> tuple[Pair, int] | None:
        """The pair to merge next and its count; ``None`` when no pair is left."""
        while self.heap:
            negative_count, _, _, pair = heapq.heappop(self.heap)
            if -negative_count == self.count.get(pair, 0):  # else stale: the count has changed
                return pair, -negative_count
        return None

    def merge(self, pair: Pair, merged: str) -> None:
        """Merge ``pair`` in every word that holds it, and update the counts that change."""
        changed: set[Pair] = set()
        for i in sorted(self.where.pop(pair, ())):
            changed |= self._count_word(i, -1)  # forget this word's pairs ...
            self.words[i] = merge_pair(self.words[i], pair, merged)
            changed |= self._count_word(i, +1)  # ... and count the ones it has now
        for p in sorted(changed):
            if self.count[p] > 0:
                heapq.heappush(self.heap, self._entry(p))
            else:
                del self.count[p]


def learn_wordpiece_vocab(
    word_counts: Mapping[str, int],
    *,
    vocab_size: int,
    min_frequency: int = 2,
    limit_alphabet: int = 1000,
    prefix: str = "##",
) -> list[str]:
    """Learn WordPiece pieces from word counts; return the vocabulary in id order.

    🤗 ``WordPieceTrainer``'s procedure: from characters (``##c`` inside a word), merge the most
    frequent adjacent pair until ``vocab_size`` or no pair is seen ``min_frequency`` times. Ids:
    specials, alphabet, ``##`` characters, then pieces as learned; ties go to lower ids.
    """
    vocab, words, counts = spell_in_characters(
        word_counts, limit_alphabet=limit_alphabet, prefix=prefix
    )
    ids = {token: i for i, token in enumerate(vocab)}
    pairs = PairCounts(words, counts, ids)
    while len(vocab) < vocab_size:
        best = pairs.most_frequent()
        if best is None or best[1] < min_frequency:
            break
        pair, _ = best
        merged = pair[0] + pair[1].removeprefix(prefix)
        if merged not in ids:
            ids[merged] = len(vocab)
            vocab.append(merged)
        pairs.merge(pair, merged)
    return vocab
