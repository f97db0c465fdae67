"""The English corpus: plain text from WikiText's tokenized form, whole articles per split."""

from __future__ import annotations

import pytest

from mlmcourse.data import english as E
from tests.data.test_real import SHARED, needs_shared


@pytest.mark.parametrize(
    ("tokenized", "plain"),
    [
        ("It may grow to 1 @,@ 000 m ( 24 in ) .", "It may grow to 1,000 m (24 in)."),
        ("a state @-@ of @-@ the @-@ art 3 @.@ 5 % rise", "a state-of-the-art 3.5% rise"),
        ("the city 's walls ; he didn 't go !", "the city's walls; he didn't go!"),
        ('the " lobster red " colour , and " cutter "', 'the "lobster red" colour, and "cutter"'),
        ("a <unk> lobster [ 1 ]", "a [UNK] lobster [1]"),
        ("  two   spaces\tand a tab  ", "two spaces and a tab"),
        ("the 'sé and ' quoted", "the'sé and ' quoted"),  # 's before a non-ASCII letter joins
        (
            "Already plain English, it stays (as it is).",
            "Already plain English, it stays (as it is).",
        ),
    ],
)
def test_plain_text_undoes_the_tokenized_release(tokenized, plain, minilm_tokenizer):
    assert E.plain_text(tokenized) == plain
    # plain English keeps its ids, and its text unless it quotes twice (see the next test)
    assert minilm_tokenizer.encode(E.plain_text(plain)).ids == minilm_tokenizer.encode(plain).ids
    assert E.plain_text(plain) == plain or plain.count('"') > 2


def test_on_english_typed_as_usual_only_the_spacing_changes(minilm_tokenizer):
    typed = 'he said "yes" and "no" (twice) - it\'s $5, or 5%!'
    assert E.plain_text(typed) == 'he said "yes"and"no" (twice) - it\'s $5, or 5%!'
    assert minilm_tokenizer.encode(E.plain_text(typed)).ids == minilm_tokenizer.encode(typed).ids


def test_plain_text_keeps_a_bert_tokenizers_ids(minilm_tokenizer):
    """Spacing around punctuation is not seen by BERT's pre-tokenizer: only <unk> changes."""
    line = 'It \'s 1 @,@ 000 m ( 24 in ) " long " ; the city @-@ state , 3 @.@ 5 % .'
    joined = line.replace(" @,@ ", ",").replace(" @-@ ", "-").replace(" @.@ ", ".")
    ids = minilm_tokenizer.encode
    assert ids(E.plain_text(line)).ids == ids(joined).ids
    assert ids(E.plain_text("a <unk> word")).ids == ids("a [UNK] word").ids


LINES = [
    " ",
    " = First article = ",
    " ",
    " Its first paragraph . Another sentence ! ",
    " ",
    " = = A section = = ",
    " ",
    " Its second paragraph , with <unk> . ",
    " A formula line follows : ",
    " = 1 <unk> / s = ",
    " Still the first article . ",
    " ",
    " = Second article = ",
    " ",
    " Text of the second . ",
]


def test_articles_start_at_a_title_between_blank_lines_and_drop_headings():
    articles = E.split_articles(LINES)
    assert [a.title for a in articles] == ["First article", "Second article"]
    first = articles[0].paragraphs
    assert first[0] == "Its first paragraph. Another sentence!"
    assert first[1] == "Its second paragraph, with [UNK]."
    # a formula line that starts with "=" starts no article (it is dropped, like a heading)
    assert first[-2:] == ("A formula line follows:", "Still the first article.")
    assert articles[1].words == 4


def test_pieces_end_at_sentence_ends_and_hold_at_most_max_words():
    paragraph = "One two three. Four five six seven! Eight nine ten eleven twelve thirteen."
    assert E.text_pieces(paragraph, max_words=6) == [
        "One two three.",
        "Four five six seven!",
        "Eight nine ten eleven twelve thirteen.",
    ]
    assert E.text_pieces("a b c d e f g h", max_words=3) == ["a b c", "d e f", "g h"]
    assert E.text_pieces("a b. c d.", max_words=80) == ["a b. c d."]


def test_a_wrong_split_is_refused():
    with pytest.raises(ValueError, match="split must be 'train', 'dev' or 'test'; got 'valid'"):
        E.english_articles("valid")


@needs_shared
def test_the_real_corpus_splits_whole_articles(monkeypatch, tmp_path):
    monkeypatch.setenv("MLMCOURSE_DATA_DIR", str(SHARED))
    monkeypatch.setenv("MLMCOURSE_CACHE", str(tmp_path / "cache"))
    splits = {s: E.english_articles(s) for s in E.ENGLISH_SPLITS}
    assert {s: len(a) for s, a in splits.items()} == {"train": 97, "dev": 8, "test": 15}
    words = {s: sum(a.words for a in arts) for s, arts in splits.items()}
    assert words["test"] >= 40_000 and words["dev"] >= 15_000  # held-out parts of real size
    paragraphs = {s: {p for a in arts for p in a.paragraphs} for s, arts in splits.items()}
    shared = paragraphs["train"] & (paragraphs["dev"] | paragraphs["test"])
    assert all(len(p.split()) <= 2 for p in shared), shared  # a table cell ("Key"), no more
    text = " ".join(p for a in splits["test"] for p in a.paragraphs)
    assert "@-@" not in text and "<unk>" not in text and " , " not in text and "\\" not in text
    pieces = E.english_texts("train")
    assert max(len(p.split()) for p in pieces) <= E.MAX_WORDS
    assert not (tmp_path / "cache").exists()  # read from the local folder, sha256-checked
