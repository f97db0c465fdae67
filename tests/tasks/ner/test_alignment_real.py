"""Alignment on real sentences: every word's label lands on its first piece, for both tokenizers.

The world corpus ships with the package; WNUT-17 (tweets: emoji, URLs, @handles, odd unicode)
is read from ``MLMCOURSE_DATA_DIR`` or ``../shared/data`` and skipped when absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlmcourse.masking import IGNORE_INDEX
from mlmcourse.tasks.ner import LabelVocab, encode_words, tokenize_and_align_labels

tokenization = pytest.importorskip("mlmcourse.tokenization")
data = pytest.importorskip("mlmcourse.data")

DATA_DIR = Path(
    os.environ.get("MLMCOURSE_DATA_DIR") or Path(__file__).resolve().parents[4] / "shared" / "data"
)


def _check_alignment(sentences, tokenizer, vocab) -> int:
    """Assert first-piece labels read back as the tags; return how many words got no piece."""
    no_piece = 0
    for start in range(0, len(sentences), 64):
        chunk = sentences[start : start + 64]
        batch = tokenize_and_align_labels(chunk, tokenizer, vocab, max_length=None)
        for sentence, row in zip(chunk, batch["labels"], strict=True):
            enc = encode_words(tokenizer, sentence.tokens)
            present = sorted({w for w in enc.word_ids if w is not None})
            no_piece += len(sentence.tokens) - len(present)
            got = vocab.decode(row[row != IGNORE_INDEX].tolist())
            assert got == [sentence.tags[w] for w in present], sentence
    return no_piece


def test_world_labels_and_alignment(minilm_tokenizer):
    train = data.load_world("train")
    vocab = LabelVocab.from_sentences(train)
    assert set(vocab.labels) == set(data.WORLD_LABELS)
    assert LabelVocab(data.WORLD_LABELS).labels == tuple(data.WORLD_LABELS)
    sample = train[:1500] + data.load_world("unseen")[:500]
    assert _check_alignment(sample, minilm_tokenizer, vocab) == 0
    word_level = tokenization.WordLevelTokenizer.train([s.text for s in train[:3000]])
    assert _check_alignment(sample, word_level, vocab) == 0


def test_wnut17_alignment_with_wordpiece(minilm_tokenizer):
    path = DATA_DIR / "wnut17" / "wnut17train.conll"
    if not path.is_file():
        pytest.skip(f"WNUT-17 not found at {path} (set MLMCOURSE_DATA_DIR)")
    read_conll = getattr(data, "read_conll", None)
    if read_conll is None:
        pytest.skip("mlmcourse.data.read_conll is not available yet")
    sentences = read_conll(path)
    assert len(sentences) > 3000
    vocab = LabelVocab.from_sentences(sentences)
    assert "B-creative-work" in vocab and "I-corporation" in vocab
    # no word of the 62,730 vanishes in BERT's normaliser (measured), so no label is lost
    assert _check_alignment(sentences, minilm_tokenizer, vocab) == 0
