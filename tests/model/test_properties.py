"""Property tests of the model's forward pass and fill_mask: any valid batch gives finite
outputs of the documented shapes, padding never changes what real tokens see; any bad input is
a clear error (see ``clear_errors.py``), not an ``IndexError`` from an embedding lookup."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

import torch  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mlmcourse.data import world_texts  # noqa: E402
from mlmcourse.heads import BertForMaskedLM
from mlmcourse.model import EncoderConfig  # noqa: E402
from mlmcourse.model.inputs import check_model_inputs  # noqa: E402
from mlmcourse.tasks.fill_mask import fill_mask  # noqa: E402
from mlmcourse.tokenization import WordLevelTokenizer  # noqa: E402
from tests.clear_errors import clear_error, valid_or_clear  # noqa: E402

TOKENIZER = WordLevelTokenizer.train(world_texts("train")[:300])
VOCAB = TOKENIZER.vocab_size
torch.manual_seed(0)
MODEL = BertForMaskedLM(
    EncoderConfig(
        vocab_size=VOCAB,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=24,
    )
).eval()


@st.composite
def padded_batches(draw):
    """``(input_ids, attention_mask, token_type_ids)`` with rows of random real lengths."""
    lengths = draw(st.lists(st.integers(1, 24), min_size=1, max_size=4))
    width = max(lengths)
    ids = torch.tensor(
        [draw(st.lists(st.integers(0, VOCAB - 1), min_size=width, max_size=width)) for _ in lengths]
    )
    mask = torch.tensor([[1] * n + [0] * (width - n) for n in lengths])
    types = torch.tensor(
        [draw(st.lists(st.integers(0, 1), min_size=width, max_size=width)) for _ in lengths]
    )
    return ids, mask, types


@given(batch=padded_batches(), seed=st.integers(0, 2**31))
def test_forward_is_finite_and_padding_does_not_leak(batch, seed):
    ids, mask, types = batch
    with torch.no_grad():
        out = MODEL(ids, mask, types)
        assert out.logits.shape == (*ids.shape, VOCAB)
        assert torch.isfinite(out.logits).all()
        # Whatever sits in the padding, real tokens see the same thing.
        noise = torch.randint(VOCAB, ids.shape, generator=torch.Generator().manual_seed(seed))
        other = MODEL(torch.where(mask.bool(), ids, noise), mask, types)
    real = mask.bool()
    torch.testing.assert_close(other.logits[real], out.logits[real], atol=1e-5, rtol=1e-5)


@given(batch=padded_batches(), share=st.floats(0.0, 1.0), seed=st.integers(0, 2**31))
def test_the_loss_is_finite_and_counts_only_labelled_tokens(batch, share, seed):
    ids, mask, types = batch
    pick = torch.rand(ids.shape, generator=torch.Generator().manual_seed(seed)) < share
    labels = torch.where(pick & mask.bool(), ids, -100)
    with torch.no_grad():
        out = MODEL(ids, mask, types, labels=labels, logits_at_labels=True)
    n = int((labels != -100).sum())
    assert out.logits.shape == (n, VOCAB)
    assert torch.isfinite(out.loss) and (n > 0 or out.loss == 0.0)


def _bad_inputs():
    good = torch.tensor([[2, 7, 8, 3]])
    return st.one_of(
        st.builds(lambda v: {"input_ids": torch.tensor([[2, v, 3]])}, st.integers(-(2**40), -1)),
        st.builds(lambda v: {"input_ids": torch.tensor([[2, v, 3]])}, st.integers(VOCAB, 2**40)),
        st.builds(lambda n: {"input_ids": torch.full((1, n), 5)}, st.integers(25, 60)),
        st.builds(
            lambda d: {"input_ids": torch.ones([1] * d, dtype=torch.long)},
            st.sampled_from([0, 3, 4]),
        ),
        st.just({"input_ids": good.float()}),
        st.just({"input_ids": good.bool()}),
        st.just({"input_ids": good.tolist()}),
        st.just({"input_ids": None}),
        st.builds(
            lambda t: {"input_ids": good, "token_type_ids": torch.tensor([[0, t, 0, 0]])},
            st.integers(2, 9),
        ),
        st.builds(
            lambda n: {"input_ids": good, "attention_mask": torch.ones(1, n)},
            st.integers(1, 6).filter(lambda n: n != 4),
        ),
        st.just({"input_ids": good, "attention_mask": torch.tensor([[1, 2, 1, 1]])}),
        st.just({"input_ids": good, "labels": torch.tensor([[0, 5, VOCAB, -100]])}),
        st.just({"input_ids": good, "labels": torch.tensor([[0.0, 5.0, 1.0, -100.0]])}),
        st.just({"input_ids": good, "labels": torch.tensor([[5, 5]])}),
    )


@given(inputs=_bad_inputs())
def test_bad_model_inputs_are_clear_errors_where_a_batch_comes_in(inputs):
    clear_error(check_model_inputs, MODEL.config, inputs, label_classes=MODEL.label_classes)


known = sorted(TOKENIZER.get_vocab())


@given(
    words=st.lists(st.sampled_from([*known, "[MASK]", "zzz-unknown"]), min_size=1, max_size=20),
    top_k=st.integers(1, 8),
)
def test_fill_mask_gives_top_k_ordinary_candidates_for_each_mask(words, top_k):
    text = " ".join(words)
    result = valid_or_clear(fill_mask, MODEL, TOKENIZER, text, top_k=top_k)
    if result is None:  # no [MASK], or longer than the model: refused with a clear message
        return
    per_mask = result if isinstance(result[0], list) else [result]
    assert len(per_mask) == words.count("[MASK]")
    specials = {"[PAD]", "[CLS]", "[SEP]", "[MASK]"}
    for candidates in per_mask:
        assert len(candidates) == top_k
        scores = [c["score"] for c in candidates]
        assert scores == sorted(scores, reverse=True) and 0 <= scores[-1] <= scores[0] <= 1
        assert not {c["token_str"] for c in candidates} & specials


@given(
    text=st.one_of(
        st.none(),
        st.integers(),
        st.just(""),
        st.just("   "),
        st.lists(st.text(max_size=3), max_size=2),
        st.text(max_size=20).filter(lambda t: "[MASK]" not in t),
    ),
    top_k=st.one_of(
        st.just(3), st.integers(-3, 0), st.floats(), st.text(max_size=2), st.booleans()
    ),
)
def test_bad_fill_mask_calls_are_clear_errors(text, top_k):
    clear_error(fill_mask, MODEL, TOKENIZER, text, top_k=top_k)
