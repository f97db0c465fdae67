"""NER: labels, word-to-piece alignment, the token-classification model, decoding and spans."""

from __future__ import annotations

import itertools
import math
import random

import pytest
import torch
import torch.nn.functional as F

from mlmcourse.data.bio import get_entities
from mlmcourse.heads import BertForTokenClassification
from mlmcourse.masking import IGNORE_INDEX
from mlmcourse.model import BertModel, EncoderConfig
from mlmcourse.model.inputs import check_model_inputs
from mlmcourse.tasks.ner import (
    LabelVocab,
    align_labels_with_tokens,
    allowed_transitions,
    decode_pieces,
    encode_words,
    entities_from_probabilities,
    group_entities,
    predict_entities,
    predict_tags,
    tokenize_and_align_labels,
    viterbi_decode,
    word_ids_from_offsets,
)
from tests.tiny import BERT_VOCAB_SIZE, tiny_encoder_config

# The seed chapter's four toy sentences.
TOY = [
    ("John Smith works at Microsoft".split(), ["B-PER", "I-PER", "O", "O", "B-ORG"]),
    ("Apple Inc is in California".split(), ["B-ORG", "I-ORG", "O", "O", "B-LOC"]),
    ("Barack Obama visited New York".split(), ["B-PER", "I-PER", "O", "B-LOC", "I-LOC"]),
    ("Google was founded in Stanford".split(), ["B-ORG", "O", "O", "O", "B-LOC"]),
]
LABELS = ["O", "B-LOC", "B-ORG", "B-PER", "I-LOC", "I-ORG", "I-PER"]


@pytest.fixture(scope="module")
def tokenizer(minilm_tokenizer):
    """The real BERT WordPiece tokenizer (bert-base-uncased vocabulary) of all-MiniLM-L6-v2."""
    return minilm_tokenizer


def ner_config(**overrides) -> EncoderConfig:
    """The tiny encoder over BERT's 30,522 pieces, 64 long (messages below name both)."""
    return tiny_encoder_config(
        **{"vocab_size": BERT_VOCAB_SIZE, "max_position_embeddings": 64, **overrides}
    )


# ------------------------------------------------------------------------------- labels
def test_label_vocab_from_sentences_puts_o_first_then_sorted_and_completes_b_i():
    vocab = LabelVocab.from_sentences([["B-PER", "I-PER", "O"], ["B-LOC"], ["I-ORG"]])
    assert vocab.labels == tuple(LABELS)
    assert vocab.label2id["O"] == 0 and vocab.id2label[3] == "B-PER"
    assert len(vocab) == vocab.num_labels == 7 and "I-LOC" in vocab


def test_label_vocab_reads_sentence_objects():
    class Sentence:
        def __init__(self, tokens, tags):
            self.tokens, self.tags = tuple(tokens), tuple(tags)

    vocab = LabelVocab.from_sentences(Sentence(w, t) for w, t in TOY)
    assert vocab == LabelVocab(LABELS)


def test_unknown_label_is_an_error_naming_it():
    vocab = LabelVocab(LABELS)
    with pytest.raises(ValueError, match=r"unknown label 'B-MISC'.*'I-PER'"):
        vocab.encode(["O", "B-MISC"])
    with pytest.raises(ValueError, match="out of range"):
        vocab.decode([7])
    assert vocab.decode(vocab.encode(LABELS)) == LABELS


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        (["O", "B-PER", "B-PER"], "repeated"),
        (["B-PER", "I-PER"], "must include 'O'"),
        (["O", "PER"], "malformed BIO tag 'PER'"),
    ],
)
def test_bad_label_sets_are_rejected(labels, match):
    with pytest.raises(ValueError, match=match):
        LabelVocab(labels)


def test_continuation_turns_b_into_i():
    vocab = LabelVocab(LABELS)
    assert [vocab.continuation(t) for t in ("B-PER", "I-PER", "O")] == ["I-PER", "I-PER", "O"]
    with pytest.raises(ValueError, match="no continuation label 'I-X'"):
        LabelVocab(["O", "B-X"]).continuation("B-X")


# ---------------------------------------------------------------------------- alignment
def test_word_ids_follow_the_words_not_the_pre_tokenizer(tokenizer):
    words = ["The", "U.S.", "don't", "like", "Schwarzenegger", "!"]
    enc = encode_words(tokenizer, words)
    pieces = [enc.text[s:e] for s, e in enc.offsets]
    by_word = {}
    for piece, w in zip(pieces, enc.word_ids, strict=True):
        if w is not None:
            by_word.setdefault(w, []).append(piece)
    assert by_word == {
        0: ["The"],
        1: ["U", ".", "S", "."],
        2: ["don", "'", "t"],
        3: ["like"],
        4: ["Schwarz", "ene", "gger"],
        5: ["!"],
    }
    assert enc.word_ids[0] is None and enc.word_ids[-1] is None  # [CLS], [SEP]
    # the tokenizer's own word ids count its pre-tokenizer's words: 11, not 6
    own = [w for w in tokenizer.encode(enc.text).word_ids if w is not None]
    assert max(own) == 10


def test_every_word_gets_its_own_pieces_on_random_punctuated_words(tokenizer):
    rng = random.Random(0)
    alphabet = "abcXYZ.'-,:éß0"
    for _ in range(50):
        words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(8)]
        enc = encode_words(tokenizer, words)
        text_spans = []
        start = 0
        for word in words:
            text_spans.append((start, start + len(word)))
            start += len(word) + 1
        for (s, e), w in zip(enc.offsets, enc.word_ids, strict=True):
            if w is not None:
                assert text_spans[w][0] <= s < e <= text_spans[w][1]
        assert {w for w in enc.word_ids if w is not None} == set(range(len(words)))


def test_word_ids_from_offsets_without_a_special_mask_and_errors():
    spans = [(0, 3), (4, 8)]
    assert word_ids_from_offsets(spans, [(0, 0), (0, 3), (4, 6), (6, 8), (0, 0)]) == [
        None,
        0,
        1,
        1,
        None,
    ]
    with pytest.raises(ValueError, match="lies in no word"):
        word_ids_from_offsets(spans, [(3, 4)], [0])


def test_first_piece_gets_the_label_and_the_rest_minus_100():
    vocab = LabelVocab(LABELS)
    word_ids = [None, 0, 1, 1, 1, 2, None]
    tags = ["O", "B-PER", "I-PER"]
    o, b_per, i_per = (vocab.label2id[t] for t in tags)
    assert align_labels_with_tokens(tags, word_ids, vocab) == [
        IGNORE_INDEX,
        o,
        b_per,
        IGNORE_INDEX,
        IGNORE_INDEX,
        i_per,
        IGNORE_INDEX,
    ]
    # every piece labelled: a B- word continues with I-
    assert align_labels_with_tokens(tags, word_ids, vocab, label_all_pieces=True) == [
        IGNORE_INDEX,
        o,
        b_per,
        i_per,
        i_per,
        i_per,
        IGNORE_INDEX,
    ]
    with pytest.raises(ValueError, match="only 2 tags"):
        align_labels_with_tokens(tags[:2], word_ids, vocab)


def test_batch_has_hf_keys_shapes_and_padding(tokenizer):
    vocab = LabelVocab(LABELS)
    batch = tokenize_and_align_labels(TOY + [(["Hi"], ["O"])], tokenizer, vocab)
    assert set(batch) == {"input_ids", "attention_mask", "token_type_ids", "labels"}
    shapes = {tuple(v.shape) for v in batch.values()}
    assert len(shapes) == 1 and next(iter(shapes))[0] == 5
    assert all(v.dtype == torch.long for v in batch.values())
    last = batch["attention_mask"][-1]
    assert last.tolist()[:3] == [1, 1, 1] and last[3:].sum() == 0
    assert (batch["input_ids"][-1][3:] == tokenizer.pad_token_id).all()
    assert (batch["labels"][-1][3:] == IGNORE_INDEX).all()
    # one label per word, in order
    for row, (_, tags) in zip(batch["labels"], TOY, strict=False):
        assert vocab.decode(row[row != IGNORE_INDEX].tolist()) == tags


def test_word_and_tag_count_mismatch_is_a_clear_error(tokenizer):
    with pytest.raises(ValueError, match="sentence 1 has 3 words but 2 tags"):
        tokenize_and_align_labels(
            [(["a"], ["O"]), (["a", "b", "c"], ["O", "O"])], tokenizer, LabelVocab(LABELS)
        )


def test_unknown_label_in_a_batch_is_a_clear_error(tokenizer):
    with pytest.raises(ValueError, match=r"sentence 0: unknown label 'B-MISC'"):
        tokenize_and_align_labels([(["Paris"], ["B-MISC"])], tokenizer, LabelVocab(LABELS))


def test_truncation_keeps_sep_and_drops_the_labels_of_cut_words(tokenizer):
    vocab = LabelVocab(LABELS)
    words, tags = TOY[2]
    batch = tokenize_and_align_labels([(words, tags)], tokenizer, vocab, max_length=4)
    assert batch["input_ids"].shape == (1, 4)
    assert batch["input_ids"][0, -1] == tokenizer.encode("x").ids[-1]  # [SEP] kept
    kept = batch["labels"][0][batch["labels"][0] != IGNORE_INDEX]
    assert vocab.decode(kept.tolist()) == tags[: len(kept)] and len(kept) < len(tags)


# -------------------------------------------------------------------------------- model
def test_logits_shape_and_loss_is_cross_entropy_ignoring_minus_100(tokenizer):
    torch.manual_seed(0)
    vocab = LabelVocab(LABELS)
    model = BertForTokenClassification(ner_config(), len(vocab), id2label=vocab).eval()
    batch = tokenize_and_align_labels(TOY, tokenizer, vocab)
    out = model(**batch)
    assert out.logits.shape == (*batch["input_ids"].shape, len(vocab))
    keep = batch["labels"] != IGNORE_INDEX
    expected = F.cross_entropy(out.logits[keep], batch["labels"][keep])
    assert torch.allclose(out.loss, expected)
    assert model(batch["input_ids"], batch["attention_mask"]).loss is None


def test_class_weights_weigh_the_loss(tokenizer):
    torch.manual_seed(0)
    vocab = LabelVocab(LABELS)
    weights = torch.tensor([0.2, 1, 2, 3, 4, 5, 6.0])
    model = BertForTokenClassification(ner_config(), 7, class_weights=weights).eval()
    batch = tokenize_and_align_labels(TOY, tokenizer, vocab)
    out = model(**batch)
    keep = batch["labels"] != IGNORE_INDEX
    logits, labels = out.logits[keep], batch["labels"][keep]
    nll = -logits.log_softmax(-1).gather(1, labels[:, None])[:, 0]
    expected = (weights[labels] * nll).sum() / weights[labels].sum()
    assert torch.allclose(out.loss, expected)
    assert "class_weights" not in model.state_dict()  # a training choice, not a weight
    with pytest.raises(ValueError, match="7 positive numbers"):
        BertForTokenClassification(ner_config(), 7, class_weights=[1.0, 2.0])


def test_dropout_is_on_in_training_and_off_in_eval(tokenizer):
    torch.manual_seed(0)
    model = BertForTokenClassification(ner_config(), 7, classifier_dropout=0.5)
    assert model.dropout.p == 0.5
    batch = tokenize_and_align_labels(TOY, tokenizer, LabelVocab(LABELS))
    model.train()
    assert not torch.equal(model(**batch).logits, model(**batch).logits)
    model.eval()
    assert torch.equal(model(**batch).logits, model(**batch).logits)
    assert BertForTokenClassification(ner_config(hidden_dropout_prob=0.3), 3).dropout.p == 0.3


def test_a_batch_with_nothing_to_score_has_zero_loss_with_a_graph():
    model = BertForTokenClassification(ner_config(), 3)
    ids = torch.tensor([[101, 102]])
    out = model(ids, labels=torch.full_like(ids, IGNORE_INDEX))
    assert out.loss.item() == 0.0 and out.loss.requires_grad


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        (torch.tensor([[0, 1, 2]]), "shape of input_ids"),
        (torch.tensor([[0.0, 1.0]]), "integer ids"),
    ],
)
def test_labels_of_the_wrong_shape_or_kind_are_clear_errors(labels, match):
    model = BertForTokenClassification(ner_config(), 3)
    with pytest.raises(ValueError, match=match):  # where a batch comes in: train's first batch
        check_model_inputs(
            model.config, {"input_ids": torch.tensor([[101, 102]]), "labels": labels}
        )


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        (torch.tensor([[0, 3]]), r"labels must be in \[0, 3\) or -100 \(not scored\), found 3"),
        (torch.tensor([[0, -5]]), "found -5"),
    ],
)
def test_labels_the_tagger_has_not_are_clear_errors_where_a_batch_comes_in(labels, match):
    model = BertForTokenClassification(ner_config(), 3)
    batch = {"input_ids": torch.tensor([[101, 102]]), "labels": labels}
    with pytest.raises(ValueError, match=match):
        check_model_inputs(model.config, batch, label_classes=model.label_classes)


def test_bad_constructor_arguments_are_refused():
    with pytest.raises(ValueError, match="num_labels"):
        BertForTokenClassification(ner_config(), 0)
    with pytest.raises(ValueError, match="classifier_dropout"):
        BertForTokenClassification(ner_config(), 3, classifier_dropout=1.5)
    with pytest.raises(ValueError, match="id2label has 7 labels but num_labels=3"):
        BertForTokenClassification(ner_config(), 3, id2label=LABELS)


def test_matches_transformers_bert_for_token_classification(tokenizer):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = ner_config()
    ours = BertForTokenClassification(config, 7).eval()
    hf_config = transformers.BertConfig(num_labels=7, **config.to_dict())
    theirs = transformers.BertForTokenClassification(hf_config).eval()
    missing, unexpected = theirs.load_state_dict(ours.state_dict(), strict=False)
    assert not unexpected and all("position_ids" in k for k in missing)
    batch = tokenize_and_align_labels(TOY, tokenizer, LabelVocab(LABELS))
    a, b = ours(**batch), theirs(**batch)
    assert torch.allclose(a.logits, b.logits, atol=1e-5)
    assert torch.allclose(a.loss, b.loss, atol=1e-6)


def test_from_encoder_copies_a_bert_model():
    torch.manual_seed(0)
    encoder = BertModel(ner_config())
    model = BertForTokenClassification.from_encoder(encoder, 7, id2label=LABELS)
    for name, value in encoder.state_dict().items():
        assert torch.equal(model.bert.state_dict()[name], value)
    with torch.no_grad():  # a copy: fine-tuning must not change the pretrained encoder
        model.bert.embeddings.word_embeddings.weight.add_(1.0)
    assert not torch.equal(
        model.bert.embeddings.word_embeddings.weight, encoder.embeddings.word_embeddings.weight
    )
    assert model.id2label[6] == "I-PER"


def test_from_encoder_reads_an_mlm_style_state_dict():
    torch.manual_seed(0)
    config = ner_config()
    encoder = BertModel(config)
    state = {f"bert.{k}": v for k, v in encoder.state_dict().items()}
    state["cls.predictions.bias"] = torch.zeros(config.vocab_size)  # the MLM head is left out
    model = BertForTokenClassification.from_encoder(state, 3, config=config)
    ids = torch.tensor([[101, 7592, 102]])
    assert torch.allclose(
        model.eval().bert(ids).last_hidden_state, encoder.eval()(ids).last_hidden_state
    )
    # bare names, and an HF checkpoint's pooler, load too
    bare = dict(encoder.state_dict(), **{"pooler.dense.weight": torch.zeros(32, 32)})
    BertForTokenClassification.from_encoder(bare, 3, config=config)


def test_from_encoder_refuses_a_missing_config_and_mismatched_weights():
    config = ner_config()
    state = BertModel(config).state_dict()
    with pytest.raises(ValueError, match="needs the encoder's config"):
        BertForTokenClassification.from_encoder(state, 3)
    partial = {k: v for k, v in state.items() if not k.startswith("encoder.layer.1.")}
    # the one strict loader's report (mlmcourse.checkpoint): every missing key, every shape
    with pytest.raises(ValueError, match=r"missing from the encoder \(16\): encoder.layer.1"):
        BertForTokenClassification.from_encoder(partial, 3, config=config)
    with pytest.raises(
        ValueError, match=r"word_embeddings.weight: \(30522, 32\) .* vs \(100, 32\)"
    ):
        BertForTokenClassification.from_encoder(state, 3, config=ner_config(vocab_size=100))
    with pytest.raises(TypeError, match="BertModel"):
        BertForTokenClassification.from_encoder(torch.nn.Linear(2, 2), 3)


# ----------------------------------------------------------------------------- decoding
def _valid(path: list[int], labels: list[str]) -> bool:
    start, trans = allowed_transitions(labels)
    return not path or (
        bool(start[path[0]]) and all(bool(trans[a, b]) for a, b in itertools.pairwise(path))
    )


def test_allowed_transitions_encode_bio():
    start, trans = allowed_transitions(LABELS)
    i = {label: k for k, label in enumerate(LABELS)}
    assert start[i["O"]] and start[i["B-PER"]] and not start[i["I-PER"]]
    assert trans[i["B-PER"], i["I-PER"]] and trans[i["I-PER"], i["I-PER"]]
    assert not trans[i["O"], i["I-PER"]] and not trans[i["B-LOC"], i["I-PER"]]
    assert not trans[i["I-LOC"], i["I-PER"]]
    assert trans[i["I-LOC"], i["B-PER"]] and trans[i["B-PER"], i["O"]]


@pytest.mark.parametrize("seed", range(25))
def test_viterbi_equals_brute_force(seed):
    labels = ["O", "B-A", "I-A", "B-B", "I-B"]
    gen = torch.Generator().manual_seed(seed)
    length = 1 + seed % 5
    log_probs = torch.randn(length, len(labels), generator=gen).log_softmax(-1) * 3
    best = max(
        (
            p
            for p in itertools.product(range(len(labels)), repeat=length)
            if _valid(list(p), labels)
        ),
        key=lambda p: sum(float(log_probs[t, k]) for t, k in enumerate(p)),
    )
    path = viterbi_decode(log_probs, labels)
    assert _valid(path, labels)
    assert path == list(best)


def test_viterbi_fixes_what_argmax_gets_wrong():
    labels = ["O", "B-PER", "I-PER"]
    # argmax says O I-PER I-PER: an entity with no beginning
    log_probs = torch.tensor([[0.9, 0.05, 0.05], [0.1, 0.4, 0.5], [0.1, 0.1, 0.8]]).log()
    assert log_probs.argmax(-1).tolist() == [0, 2, 2]
    assert viterbi_decode(log_probs, labels) == [0, 1, 2]
    assert viterbi_decode(torch.zeros(0, 3), labels) == []
    with pytest.raises(ValueError, match=r"\(seq_len, 3 labels\)"):
        viterbi_decode(torch.zeros(2, 4), labels)


def test_constrained_tags_are_always_valid_bio_on_random_scores():
    gen = torch.Generator().manual_seed(0)
    for _ in range(100):
        log_probs = torch.randn(12, len(LABELS), generator=gen).log_softmax(-1)
        tags = [LABELS[k] for k in viterbi_decode(log_probs, LABELS)]
        assert all(
            tag[0] != "I" or (i > 0 and tags[i - 1][2:] == tag[2:] and tags[i - 1] != "O")
            for i, tag in enumerate(tags)
        )


def _probs(rows: list[dict[str, float]], labels: list[str] = LABELS) -> torch.Tensor:
    """Hand-built logits: each row names its favourite labels; the rest get logit 0."""
    logits = torch.zeros(len(rows), len(labels))
    for t, row in enumerate(rows):
        for label, value in row.items():
            logits[t, labels.index(label)] = value
    return logits.softmax(-1)


def test_spans_from_a_hand_built_logits_tensor():
    # "Barack Obama visited New York": pieces [CLS] barack obama visited new york [SEP]
    text = "Barack Obama visited New York"
    offsets = [(0, 0), (0, 6), (7, 12), (13, 20), (21, 24), (25, 29), (0, 0)]
    word_ids = [None, 0, 1, 2, 3, 4, None]
    probs = _probs(
        [{"O": 9}, {"B-PER": 4}, {"I-PER": 3}, {"O": 5}, {"B-LOC": 2}, {"I-LOC": 6}, {"O": 9}]
    )
    entities = entities_from_probabilities(text, offsets, probs, word_ids, LABELS)
    score = lambda t, label: float(probs[t, LABELS.index(label)])  # noqa: E731
    assert entities == [
        {
            "entity_group": "PER",
            "word": "Barack Obama",
            "start": 0,
            "end": 12,
            "score": pytest.approx((score(1, "B-PER") + score(2, "I-PER")) / 2),
        },
        {
            "entity_group": "LOC",
            "word": "New York",
            "start": 21,
            "end": 29,
            "score": pytest.approx((score(4, "B-LOC") + score(5, "I-LOC")) / 2),
        },
    ]


def test_pieces_of_a_word_are_merged_and_scored_by_their_first_piece():
    # "Schwarzenegger rules": schwarz ##ene ##gger rules; the later pieces' outputs are ignored
    text = "Schwarzenegger rules"
    offsets = [(0, 0), (0, 7), (7, 10), (10, 14), (15, 20), (0, 0)]
    word_ids = [None, 0, 0, 0, 1, None]
    probs = _probs([{}, {"B-PER": 5}, {"O": 9}, {"B-LOC": 9}, {"O": 5}, {}])
    tags, scores = decode_pieces(probs, word_ids, LABELS)
    assert tags == [None, "B-PER", "I-PER", "I-PER", "O", None]
    assert math.isnan(scores[2]) and math.isnan(scores[0])
    (entity,) = entities_from_probabilities(text, offsets, probs, word_ids, LABELS)
    assert entity["word"] == "Schwarzenegger" and (entity["start"], entity["end"]) == (0, 14)
    assert entity["score"] == pytest.approx(float(probs[1, LABELS.index("B-PER")]))
    # when every piece was trained, every piece decides and counts in the score
    tags, _ = decode_pieces(probs, word_ids, LABELS, constrained=False, label_all_pieces=True)
    assert tags == [None, "B-PER", "O", "B-LOC", "O", None]


def test_unconstrained_i_after_o_opens_an_entity_and_constrained_repairs_it():
    text = "in New York"
    offsets = [(0, 0), (0, 2), (3, 6), (7, 11), (0, 0)]
    word_ids = [None, 0, 1, 2, None]
    probs = _probs([{}, {"O": 6}, {"I-LOC": 3, "B-LOC": 2.5}, {"I-LOC": 5}, {}])
    loose = entities_from_probabilities(text, offsets, probs, word_ids, LABELS, constrained=False)
    strict = entities_from_probabilities(text, offsets, probs, word_ids, LABELS, constrained=True)
    assert [e["word"] for e in loose] == ["New York"]  # I-LOC I-LOC, read as conlleval does
    assert [e["word"] for e in strict] == ["New York"]
    # different types next to each other make two entities
    tags = [None, "B-PER", "I-LOC", None]
    spans = group_entities("Ann Arbor", [(0, 0), (0, 3), (4, 9), (0, 0)], tags, [0.5] * 4)
    assert [(e["entity_group"], e["word"]) for e in spans] == [("PER", "Ann"), ("LOC", "Arbor")]


def test_group_entities_checks_lengths():
    with pytest.raises(ValueError, match="one entry per piece"):
        group_entities("a", [(0, 1)], ["O", "O"], [1.0])


def test_decode_pieces_checks_shapes():
    with pytest.raises(ValueError, match="num_pieces=2"):
        decode_pieces(torch.zeros(3, 7), [None, 0], LABELS)


# ---------------------------------------------------------------- end to end, tiny model
@pytest.fixture(scope="module")
def trained(tokenizer):
    """A tiny model fitted to the four toy sentences (seconds on a CPU)."""
    torch.manual_seed(0)
    vocab = LabelVocab.from_sentences(tags for _, tags in TOY)
    model = BertForTokenClassification(ner_config(), len(vocab), id2label=vocab)
    batch = tokenize_and_align_labels(TOY, tokenizer, vocab)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    model.train()
    for _ in range(30):
        optimizer.zero_grad()
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
    return model, vocab, loss.item()


def test_predicting_leaves_a_models_dropout_as_it_was_for_later_training(tokenizer):
    """The pipeline puts a BERT tagger on the speed path to predict (unpadded) for the call
    only; training it afterwards must draw the same dropout as a twin that never predicted."""
    from mlmcourse.model.speed import SpeedBertModel

    torch.manual_seed(0)
    vocab = LabelVocab(LABELS)
    model = BertForTokenClassification(ner_config(), len(vocab), id2label=vocab)
    twin = BertForTokenClassification(ner_config(), len(vocab), id2label=vocab)
    twin.load_state_dict(model.state_dict())
    seen = []
    model.bert.register_forward_pre_hook(lambda module, _: seen.append(type(module)))
    predict_tags(model, tokenizer, [words for words, _ in TOY])
    assert seen and set(seen) == {SpeedBertModel}  # it predicted on the speed path
    assert [type(m) for m in model.modules()] == [type(m) for m in twin.modules()]
    batch = tokenize_and_align_labels(TOY, tokenizer, vocab)
    losses = []
    for m in (model.train(), twin.train()):
        torch.manual_seed(1)
        losses.append(m(**batch).loss)
    assert torch.equal(*losses)


def test_a_tiny_model_fits_the_toy_sentences_and_predicts_their_tags(trained, tokenizer):
    model, _, loss = trained
    assert loss < 0.2  # measured 0.08 after 30 steps
    predicted = predict_tags(model, tokenizer, TOY, batch_size=3)
    assert predicted == [tags for _, tags in TOY]
    assert model.training  # predict_tags restores the mode it found


def test_predict_entities_returns_character_spans(trained, tokenizer):
    model, _, _ = trained
    text = "Barack  Obama visited New York"  # two spaces: offsets must follow the real text
    entities = predict_entities(model, tokenizer, text)
    assert [(e["entity_group"], e["word"]) for e in entities] == [
        ("PER", "Barack  Obama"),
        ("LOC", "New York"),
    ]
    for e in entities:
        assert text[e["start"] : e["end"]] == e["word"] and 0 < e["score"] <= 1
    assert predict_entities(model, tokenizer, "   ") == []
    with pytest.raises(TypeError, match="text must be a str"):
        predict_entities(model, tokenizer, ["Barack"])


def test_predict_tags_gives_o_to_words_cut_off_by_max_length(trained, tokenizer):
    model, _, _ = trained
    words, tags = TOY[2]
    (predicted,) = predict_tags(model, tokenizer, [words], max_length=4)
    assert len(predicted) == len(words) and predicted[2:] == ["O"] * 3
    assert predicted[:2] == tags[:2]


def test_prediction_needs_label_names(tokenizer):
    model = BertForTokenClassification(ner_config(), 3)
    with pytest.raises(ValueError, match="id2label"):
        predict_entities(model, tokenizer, "hello")


def test_prediction_refuses_text_longer_than_the_model(trained, tokenizer):
    model, _, _ = trained
    with pytest.raises(ValueError, match="at most 64"):
        predict_entities(model, tokenizer, "word " * 100)


def test_entities_agree_with_the_metrics_reading_of_the_tags(trained, tokenizer):
    model, _, _ = trained
    for words, _ in TOY:
        (tags,) = predict_tags(model, tokenizer, [words])
        spans = predict_entities(model, tokenizer, " ".join(words))
        assert [t for t, _, _ in get_entities(tags)] == [e["entity_group"] for e in spans]


def test_from_encoder_takes_the_encoder_of_an_mlm_model():
    mlm = pytest.importorskip("mlmcourse.heads")
    torch.manual_seed(0)
    pretrained = mlm.BertForMaskedLM(ner_config())
    model = BertForTokenClassification.from_encoder(pretrained, 3)
    name = "encoder.layer.1.attention.self.query.weight"
    assert torch.equal(model.bert.state_dict()[name], pretrained.bert.state_dict()[name])
    from_state = BertForTokenClassification.from_encoder(
        pretrained.state_dict(), 3, config=pretrained.config
    )
    assert torch.equal(from_state.bert.state_dict()[name], pretrained.bert.state_dict()[name])


def test_from_checkpoint_reads_the_encoder_of_an_mlm_checkpoint(tmp_path):
    mlm = pytest.importorskip("mlmcourse.heads")
    checkpoint = pytest.importorskip("mlmcourse.checkpoint")
    torch.manual_seed(0)
    pretrained = mlm.BertForMaskedLM(ner_config())
    checkpoint.save_checkpoint(tmp_path / "mlm", pretrained)
    model = BertForTokenClassification.from_checkpoint(tmp_path / "mlm", 7, id2label=LABELS)
    for name, value in pretrained.bert.state_dict().items():
        assert torch.equal(model.bert.state_dict()[name], value)
    assert model.training and model.config.hidden_size == 32


def test_encode_words_refuses_a_string_and_keeps_a_spaced_word_whole(tokenizer):
    with pytest.raises(TypeError, match="list of words"):
        encode_words(tokenizer, "Barack Obama")
    enc = encode_words(tokenizer, ["New York", "rocks"])  # a word with a space inside
    assert [w for w in enc.word_ids if w is not None] == [0, 0, 1]


def test_class_weights_from_tags_favour_rare_labels():
    from mlmcourse.tasks.ner import class_weights_from_tags

    vocab = LabelVocab(LABELS)
    tags = [t for _, t in TOY]
    full = class_weights_from_tags(tags, vocab, power=1.0)
    counts = torch.tensor(
        [sum(t.count(label) for t in tags) for label in LABELS], dtype=torch.float
    )
    assert torch.allclose(full, counts.sum() / (7 * counts.clamp_min(1)))
    assert full[vocab.label2id["O"]] < full[vocab.label2id["I-ORG"]]
    assert torch.allclose(class_weights_from_tags(tags, vocab), full.sqrt())
    assert torch.equal(class_weights_from_tags(tags, vocab, power=0), torch.ones(7))
    with pytest.raises(ValueError, match="unknown label 'B-X'"):
        class_weights_from_tags([["B-X"]], vocab)
    with pytest.raises(ValueError, match="empty"):
        class_weights_from_tags([[]], vocab)
    BertForTokenClassification(ner_config(), 7, class_weights=full)  # accepted as is


def test_evaluate_ner_scores_words_against_gold(trained, tokenizer):
    from mlmcourse.tasks.ner import evaluate_ner

    model, _, _ = trained
    result = evaluate_ner(model, tokenizer, [(w, t) for w, t in TOY], batch_size=2)
    assert result["f1"] == result["precision"] == result["recall"] == 1.0
    assert result["token_accuracy"] == 1.0
    assert result["report"]["PER"]["support"] == 2
    assert result["predictions"] == [t for _, t in TOY]
    wrong = [(w, ["O"] * len(t)) for w, t in TOY]  # gold says nothing: every entity is wrong
    assert evaluate_ner(model, tokenizer, wrong)["precision"] == 0.0
    with pytest.raises(ValueError, match="gold tags"):
        evaluate_ner(model, tokenizer, [["just", "words"]])


def test_word_dropout_hides_only_labelled_pieces_at_the_given_rate():
    from mlmcourse.tasks.ner import word_dropout

    g = torch.Generator().manual_seed(0)
    labels = torch.full((64, 50), IGNORE_INDEX)
    labels[:, 1:40] = 1  # labelled words; position 0 and 40+ stand for specials and padding
    batch = {"input_ids": torch.full((64, 50), 7), "labels": labels, "attention_mask": labels}
    out = word_dropout(batch, unk_token_id=1, probability=0.3, generator=g)
    hidden = out["input_ids"] == 1
    assert not hidden[labels == IGNORE_INDEX].any()
    assert abs(hidden[labels != IGNORE_INDEX].float().mean().item() - 0.3) < 0.03
    assert (batch["input_ids"] == 7).all()  # the input batch is not modified
    assert out["labels"] is labels and out["attention_mask"] is labels
    again = word_dropout(
        batch, unk_token_id=1, probability=0.3, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(again["input_ids"], out["input_ids"])  # reproducible with a generator
    assert torch.equal(
        word_dropout(batch, unk_token_id=1, probability=0.0)["input_ids"], batch["input_ids"]
    )


def test_word_dropout_rejects_bad_arguments():
    from mlmcourse.tasks.ner import word_dropout

    batch = {
        "input_ids": torch.zeros(2, 3, dtype=torch.long),
        "labels": torch.zeros(2, 3, dtype=torch.long),
    }
    with pytest.raises(ValueError, match="probability"):
        word_dropout(batch, unk_token_id=1, probability=1.5)
    with pytest.raises(ValueError, match="labels"):
        word_dropout({"input_ids": batch["input_ids"]}, unk_token_id=1, probability=0.1)
    with pytest.raises(ValueError, match="shape"):
        word_dropout({**batch, "labels": torch.zeros(2, 4)}, unk_token_id=1, probability=0.1)
