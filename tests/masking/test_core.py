"""Tests for mlmcourse.masking on plain tensors: rates, 80/10/10, protection, words and spans.

The statistical tests mask a little over a million tokens at a fixed seed, so a tolerance of a
few tenths of a point is several standard errors wide (and the seed makes them repeatable).
"""

from __future__ import annotations

import pytest
import torch
from scipy import stats

from mlmcourse.masking import (
    IGNORE_INDEX,
    expected_span_length,
    mask_spans,
    mask_tokens,
    mask_whole_words,
    span_length_probs,
)

VOCAB = 1000
PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIALS = [PAD, UNK, CLS, SEP, MASK]
ROWS, WIDTH = 2048, 512  # 1,048,576 positions


def kw(seed: int = 0, **extra):
    return dict(
        mask_token_id=MASK,
        special_ids=SPECIALS,
        vocab_size=VOCAB,
        generator=torch.Generator().manual_seed(seed),
        **extra,
    )


def make_batch(rows: int = ROWS, width: int = WIDTH, seed: int = 1) -> torch.Tensor:
    """Rows of ordinary ids framed by [CLS] ... [SEP], then [PAD] to the right, lengths varied."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(len(SPECIALS), VOCAB, (rows, width), generator=g)
    lengths = torch.randint(width // 2, width + 1, (rows,), generator=g)
    positions = torch.arange(width)
    ids[positions >= lengths[:, None]] = PAD
    ids[:, 0] = CLS
    ids[torch.arange(rows), lengths - 1] = SEP
    return ids


def make_word_ids(ids: torch.Tensor, seed: int = 2) -> torch.Tensor:
    """Words of 1-3 pieces over the ordinary tokens; -1 (None) on specials and padding."""
    g = torch.Generator().manual_seed(seed)
    starts = torch.rand(ids.shape, generator=g) < 0.55  # about 1.8 pieces per word
    ordinary = ~torch.isin(ids, torch.tensor(SPECIALS))
    word = (starts | ~ordinary).cumsum(1) - 1
    return word.masked_fill(~ordinary, -1)


@pytest.fixture(scope="module")
def batch() -> torch.Tensor:
    return make_batch()


@pytest.fixture(scope="module")
def token_masked(batch):
    return mask_tokens(batch, **kw())


def ordinary(ids: torch.Tensor) -> torch.Tensor:
    return ~torch.isin(ids, torch.tensor(SPECIALS))


def outcome_fractions(ids, inputs, labels) -> tuple[float, float, float]:
    """Among targets: fraction shown as [MASK], as another token, and unchanged."""
    target = labels != IGNORE_INDEX
    n = target.sum().item()
    as_mask = (inputs[target] == MASK).sum().item() / n
    changed = ((inputs[target] != MASK) & (inputs[target] != ids[target])).sum().item() / n
    return as_mask, changed, 1.0 - as_mask - changed


def runs(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every run of True in each row: (row, start, length), vectorised."""
    rows, width = mask.shape
    padded = torch.nn.functional.pad(mask.int(), (1, 1))  # (B, T + 2)
    step = padded.diff(dim=1)  # +1 where a run starts, -1 just after it ends
    row_s, start = (step == 1).nonzero(as_tuple=True)
    _, end = (step == -1).nonzero(as_tuple=True)
    return row_s, start, end - start


# --------------------------------------------------------------------------------------------
# mask_tokens: statistics over a million tokens
# --------------------------------------------------------------------------------------------


def test_selection_rate_is_15_percent_of_ordinary_tokens(batch, token_masked):
    _, labels = token_masked
    assert ordinary(batch).sum() > 700_000  # enough candidates for a ±0.3 point tolerance
    rate = (labels != IGNORE_INDEX).sum().item() / ordinary(batch).sum().item()
    assert abs(rate - 0.15) < 0.003, rate


def test_80_10_10_split_of_the_targets(batch, token_masked):
    as_mask, changed, kept = outcome_fractions(batch, *token_masked)
    # A random replacement hits the original id with probability 1/995: 0.01 points of "kept".
    assert abs(as_mask - 0.80) < 0.005, as_mask
    assert abs(changed - 0.10) < 0.005, changed
    assert abs(kept - 0.10) < 0.005, kept


def test_special_tokens_and_padding_are_never_targets_nor_changed(batch, token_masked):
    inputs, labels = token_masked
    special = ~ordinary(batch)
    assert (labels[special] == IGNORE_INDEX).all()
    assert torch.equal(inputs[special], batch[special])
    target = labels != IGNORE_INDEX
    assert torch.equal(labels[target], batch[target])  # labels are the original ids
    assert torch.equal(inputs[~target], batch[~target])  # non-targets are left alone


def test_random_replacements_are_uniform_over_the_non_special_vocabulary(batch, token_masked):
    inputs, labels = token_masked
    target = labels != IGNORE_INDEX
    replaced = target & (inputs != MASK) & (inputs != batch)
    drawn = inputs[replaced]
    assert not torch.isin(drawn, torch.tensor(SPECIALS)).any()
    counts = torch.bincount(drawn, minlength=VOCAB)[len(SPECIALS) :].double()
    assert counts.sum() > 10_000 and counts.min() > 0
    # Expected counts are uniform, except that a draw equal to the original id looks "kept"
    # and is not seen here: that removes a share proportional to how often the id occurs.
    occurs = torch.bincount(batch[target], minlength=VOCAB)[len(SPECIALS) :].double()
    expected = counts.sum() * (1 - occurs / occurs.sum() / (VOCAB - len(SPECIALS)))
    expected *= counts.sum() / expected.sum()
    result = stats.chisquare(counts.numpy(), expected.numpy())
    assert result.pvalue > 0.001, result


def test_the_callers_tensor_is_not_modified(batch):
    before = batch.clone()
    inputs, labels = mask_tokens(batch, **kw(mlm_probability=0.5))
    assert torch.equal(batch, before)
    assert inputs.data_ptr() != batch.data_ptr() and labels.data_ptr() != batch.data_ptr()


def test_same_generator_seed_same_masks_other_seed_other_masks():
    ids = make_batch(64, 128)
    first = mask_tokens(ids, **kw(seed=5))
    again = mask_tokens(ids, **kw(seed=5))
    other = mask_tokens(ids, **kw(seed=6))
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[1], other[1])


def test_a_single_sequence_keeps_its_1d_shape():
    ids = make_batch(1, 40)[0]
    inputs, labels = mask_tokens(ids, **kw(mlm_probability=0.5))
    assert inputs.shape == labels.shape == ids.shape
    assert inputs.dtype == labels.dtype == torch.long


def test_special_tokens_mask_protects_extra_positions():
    ids = make_batch(8, 64)
    protect = torch.zeros_like(ids)
    protect[:, 1:10] = 1
    _, labels = mask_tokens(ids, **kw(special_tokens_mask=protect, mlm_probability=1.0))
    assert (labels[:, 1:10] == IGNORE_INDEX).all()
    assert (labels[ordinary(ids) & (protect == 0)] != IGNORE_INDEX).all()


def test_ratios_at_the_extremes():
    ids = make_batch(16, 64)
    inputs, labels = mask_tokens(
        ids, **kw(mlm_probability=1.0, mask_replace_prob=1.0, random_replace_prob=0.0)
    )
    assert (inputs[ordinary(ids)] == MASK).all()
    inputs, labels = mask_tokens(
        ids, **kw(mlm_probability=1.0, mask_replace_prob=0.0, random_replace_prob=0.0)
    )
    assert torch.equal(inputs, ids) and (labels[ordinary(ids)] != IGNORE_INDEX).all()
    inputs, labels = mask_tokens(ids, **kw(mlm_probability=0.0))
    assert torch.equal(inputs, ids) and (labels == IGNORE_INDEX).all()


# --------------------------------------------------------------------------------------------
# min_masked: at least one target per sequence
# --------------------------------------------------------------------------------------------


def test_min_masked_gives_every_row_a_target_and_never_a_special():
    ids = make_batch(500, 12)  # short rows: many would have no target at 15%
    _, plain = mask_tokens(ids, **kw(seed=3))
    assert ((plain != IGNORE_INDEX).sum(1) == 0).any()  # the bug this option fixes
    _, labels = mask_tokens(ids, **kw(seed=3, min_masked=2))
    assert ((labels != IGNORE_INDEX).sum(1) >= 2).all()
    assert (labels[~ordinary(ids)] == IGNORE_INDEX).all()


def test_min_masked_leaves_rows_that_already_have_enough_unchanged():
    ids = make_batch(500, 12)
    _, plain = mask_tokens(ids, **kw(seed=3))
    _, labels = mask_tokens(ids, **kw(seed=3, min_masked=1))
    enough = (plain != IGNORE_INDEX).sum(1) >= 1
    assert torch.equal(labels[enough], plain[enough])


def test_min_masked_on_a_row_with_fewer_ordinary_tokens_takes_them_all():
    ids = torch.tensor([[CLS, 7, SEP, PAD, PAD], [CLS, SEP, PAD, PAD, PAD]])
    _, labels = mask_tokens(ids, **kw(mlm_probability=0.0, min_masked=3))
    assert labels.tolist() == [[-100, 7, -100, -100, -100], [-100] * 5]


# --------------------------------------------------------------------------------------------
# Errors a user can understand
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"mlm_probability": 1.5}, "mlm_probability must be a probability"),
        ({"mask_replace_prob": -0.1}, "mask_replace_prob must be a probability"),
        ({"random_replace_prob": "0.1"}, "random_replace_prob must be a probability"),
        ({"mask_replace_prob": 0.8, "random_replace_prob": 0.3}, "must be at most 1"),
        ({"min_masked": -1}, "min_masked must be a non-negative int"),
        ({"mask_token_id": VOCAB}, "mask_token_id must be a valid id"),
        ({"vocab_size": 0}, "vocab_size must be a positive int"),
        ({"special_tokens_mask": torch.zeros(3, 3)}, "special_tokens_mask must have the shape"),
    ],
)
def test_bad_arguments_are_refused_with_a_clear_message(change, message):
    args = kw()
    args.update(change)
    with pytest.raises(ValueError, match=message):
        mask_tokens(make_batch(4, 16), **args)


def test_bad_input_ids_are_refused_with_a_clear_message():
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        mask_tokens([[2, 5, 3]], **kw())
    with pytest.raises(TypeError, match="integer ids"):
        mask_tokens(torch.rand(2, 4), **kw())
    with pytest.raises(ValueError, match="1-D"):
        mask_tokens(torch.zeros(2, 2, 2, dtype=torch.long), **kw())
    with pytest.raises(ValueError, match=r"in \[0, vocab_size=1000\), got values from 2 to 1000"):
        mask_tokens(torch.tensor([[2, 1000, 3]]), **kw())


def test_random_replacement_needs_a_non_special_id():
    with pytest.raises(ValueError, match="all 5 ids are special"):
        mask_tokens(torch.tensor([[2, 3]]), **{**kw(), "vocab_size": 5})


# --------------------------------------------------------------------------------------------
# Whole-word masking
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def words(batch):
    return make_word_ids(batch)


@pytest.fixture(scope="module")
def word_masked(batch, words):
    return mask_whole_words(batch, words, **kw(seed=4))


def word_table(ids, word_ids, inputs, labels):
    """Per word: (row, pieces, pieces that are targets, pieces shown as [MASK])."""
    previous = torch.nn.functional.pad(word_ids[:, :-1], (1, 0), value=-1)
    start = (word_ids >= 0) & (word_ids != previous)
    index = (start.flatten().cumsum(0) - 1).reshape(ids.shape)[word_ids >= 0]
    n = int(start.sum())

    def per_word(values):
        return torch.zeros(n, dtype=torch.long).index_add_(0, index, values[word_ids >= 0].long())

    row = start.nonzero(as_tuple=True)[0]
    pieces = per_word(torch.ones_like(ids))
    return row, pieces, per_word(labels != IGNORE_INDEX), per_word(inputs == MASK)


def test_whole_words_are_never_split(batch, words, word_masked):
    _, pieces, targets, masked = word_table(batch, words, *word_masked)
    assert (pieces > 1).sum() > 100_000  # many multi-piece words were at stake
    assert ((targets == 0) | (targets == pieces)).all()
    assert ((masked == 0) | (masked == pieces)).all()  # one 80/10/10 fate per word


def test_whole_word_rate_is_counted_in_words(batch, words, word_masked):
    _, pieces, targets, masked = word_table(batch, words, *word_masked)
    chosen = targets > 0
    assert len(pieces) > 400_000  # standard error of the rate: 0.05 points
    assert abs(chosen.float().mean().item() - 0.15) < 0.003
    as_mask = (masked[chosen] > 0).float().mean().item()
    assert abs(as_mask - 0.80) < 0.005, as_mask
    assert (word_masked[1][~ordinary(batch)] == IGNORE_INDEX).all()


def test_the_second_text_of_a_pair_has_words_of_its_own():
    #                 [CLS] a  b  [SEP] c  d  [SEP]; word ids restart after [SEP]
    ids = torch.tensor([[CLS, 10, 11, SEP, 12, 13, SEP]])
    word_ids = torch.tensor([[-1, 0, 1, -1, 0, 1, -1]])
    chosen = set()
    for seed in range(40):
        _, labels = mask_whole_words(ids, word_ids, **kw(seed=seed, mlm_probability=0.5))
        chosen.add(tuple((labels[0] != IGNORE_INDEX).tolist()))
    # "a" and "c" share word id 0 but are different words, so some draw picks just one.
    assert any(row[1] != row[4] for row in chosen)


def test_whole_word_min_masked_counts_words():
    ids = make_batch(300, 10)
    word_ids = make_word_ids(ids)
    inputs, labels = mask_whole_words(ids, word_ids, **kw(mlm_probability=0.0, min_masked=1))
    row, pieces, targets, _ = word_table(ids, word_ids, inputs, labels)
    assert ((targets == 0) | (targets == pieces)).all()
    chosen_per_row = torch.zeros(len(ids), dtype=torch.long).index_add_(
        0, row, (targets > 0).long()
    )
    assert (chosen_per_row == 1).all()


def test_word_ids_must_match_input_ids():
    with pytest.raises(ValueError, match="word_ids must have the shape"):
        mask_whole_words(make_batch(2, 8), torch.zeros(2, 7, dtype=torch.long), **kw())


# --------------------------------------------------------------------------------------------
# Span masking
# --------------------------------------------------------------------------------------------


def test_span_length_distribution_is_spanberts():
    probs = span_length_probs(0.2, 10)
    assert len(probs) == 10 and abs(probs.sum().item() - 1) < 1e-12
    assert abs(expected_span_length(0.2, 10) - 3.797) < 1e-3  # the paper's "3.8"
    assert abs(expected_span_length(1.0, 10) - 1.0) < 1e-12
    with pytest.raises(ValueError, match="geometric_p must be in"):
        span_length_probs(0.0)
    with pytest.raises(ValueError, match="max_span_length must be a positive int"):
        span_length_probs(0.2, 0)


@pytest.fixture(scope="module")
def long_rows():
    """Long rows without padding, so most spans lie away from the ends."""
    ids = torch.randint(
        len(SPECIALS), VOCAB, (1024, 1024), generator=torch.Generator().manual_seed(7)
    )
    ids[:, 0], ids[:, -1] = CLS, SEP
    return ids


def test_mean_span_length_matches_the_clipped_geometric(long_rows):
    _, labels = mask_spans(long_rows, **kw(seed=8))
    target = labels != IGNORE_INDEX
    assert (labels[:, 0] == IGNORE_INDEX).all() and (labels[:, -1] == IGNORE_INDEX).all()
    _, start, length = runs(target)
    inside = (start > 1) & (start + length < long_rows.shape[1] - 1)  # not cut by an end
    measured = length[inside].double()
    assert len(measured) > 30_000
    # Standard error about 0.013; spans never touch, so a run is one span. Tolerance ±0.08.
    assert abs(measured.mean().item() - expected_span_length()) < 0.08, measured.mean()
    assert length.max() <= 10
    hist = torch.bincount(length[inside], minlength=11)[1:].double()
    result = stats.chisquare(hist.numpy(), (span_length_probs() * hist.sum()).numpy())
    assert result.pvalue > 0.001, result


def test_span_rate_and_one_fate_per_span(long_rows):
    inputs, labels = mask_spans(long_rows, **kw(seed=9))
    target = labels != IGNORE_INDEX
    rate = target.sum().item() / ordinary(long_rows).sum().item()
    assert abs(rate - 0.15) < 0.005, rate  # spans make the count lumpier than per token
    row, start, length = runs(target)
    span = torch.repeat_interleave(torch.arange(len(length)), length)
    offsets = torch.arange(int(length.sum())) - torch.repeat_interleave(
        length.cumsum(0) - length, length
    )
    positions = (
        torch.repeat_interleave(row, length),
        torch.repeat_interleave(start, length) + offsets,
    )
    shown_mask = torch.zeros(len(length), dtype=torch.long).index_add_(
        0, span, (inputs[positions] == MASK).long()
    )
    assert ((shown_mask == 0) | (shown_mask == length)).all()
    as_mask = (shown_mask > 0).double().mean().item()
    assert abs(as_mask - 0.80) < 0.01, as_mask  # about 40k spans, one draw each


def test_spans_over_words_never_split_a_word(batch, words):
    inputs, labels = mask_spans(batch, words, **kw(seed=10))
    _, pieces, targets, masked = word_table(batch, words, inputs, labels)
    assert ((targets == 0) | (targets == pieces)).all()
    assert abs((targets > 0).float().mean().item() - 0.15) < 0.005
    assert (labels[~ordinary(batch)] == IGNORE_INDEX).all()


def test_span_masking_is_deterministic_and_honours_min_masked():
    ids = make_batch(300, 10)
    first = mask_spans(ids, **kw(seed=11, min_masked=1))
    again = mask_spans(ids, **kw(seed=11, min_masked=1))
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert ((first[1] != IGNORE_INDEX).sum(1) >= 1).all()
    assert (first[1][~ordinary(ids)] == IGNORE_INDEX).all()


@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (0,)])
def test_empty_input_gives_empty_output(shape):
    ids = torch.zeros(shape, dtype=torch.long)
    for masked in (
        mask_tokens(ids, **kw(min_masked=2)),
        mask_whole_words(ids, ids - 1, **kw(min_masked=2)),
        mask_spans(ids, **kw(min_masked=2)),
    ):
        assert [t.shape for t in masked] == [ids.shape, ids.shape]


def test_a_generator_must_be_a_torch_generator():
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        mask_tokens(make_batch(2, 8), **{**kw(), "generator": 0})


def test_span_rate_holds_on_short_rows_too():
    """Spans start in a stationary state, so the ends of a row are covered as often as its middle."""
    ids = torch.randint(
        len(SPECIALS), VOCAB, (80_000, 12), generator=torch.Generator().manual_seed(12)
    )
    _, labels = mask_spans(ids, **kw(seed=13))
    target = (labels != IGNORE_INDEX).double()
    assert abs(target.mean().item() - 0.15) < 0.005
    assert abs(target[:, 0].mean().item() - 0.15) < 0.01  # first position: no edge deficit
    assert abs(target[:, -1].mean().item() - 0.15) < 0.01


@pytest.mark.parametrize(("good", "bad"), [(MASK, float(MASK)), (1, True)])
def test_a_bad_setting_is_refused_even_after_the_equal_good_one_was_used(good, bad):
    ids = make_batch(rows=2, width=8)
    mask_tokens(ids, **{**kw(), "mask_token_id": good})  # cached: a loop masks every step
    with pytest.raises((TypeError, ValueError), match="mask_token_id"):
        mask_tokens(ids, **{**kw(), "mask_token_id": bad})


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("p", [0.15, 0.5])
def test_the_chapters_plain_80_10_10_is_mask_tokens_bit_for_bit(world_tokenizer, seed, p):
    """book/masking.md's teaching cell, executed from the chapter, against the package."""
    from mlmcourse.data import world_texts
    from tests.teaching import teaching_namespace

    mask_80_10_10 = teaching_namespace("masking")["mask_80_10_10"]
    batch = world_tokenizer(world_texts("train")[seed * 50 : seed * 50 + 50])["input_ids"]
    settings = dict(
        mask_token_id=world_tokenizer.mask_token_id,
        special_ids=world_tokenizer.all_special_ids,
        vocab_size=world_tokenizer.vocab_size,
    )
    plain = mask_80_10_10(batch, **settings, p=p, generator=torch.Generator().manual_seed(seed))
    package = mask_tokens(
        batch, **settings, mlm_probability=p, generator=torch.Generator().manual_seed(seed)
    )
    assert torch.equal(plain[0], package[0]) and torch.equal(plain[1], package[1])
    assert (plain[1] != -100).any()
