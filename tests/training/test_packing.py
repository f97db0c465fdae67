"""Sequence packing: the rows, the block-diagonal attention, and equality with the padded path."""

import pytest
import torch

from mlmcourse.heads import BertForMaskedLM
from mlmcourse.masking import MLMCollator
from mlmcourse.model import BertModel
from mlmcourse.model.inputs import check_model_inputs
from mlmcourse.model.speed import document_ids, packed_allowed, speed_path
from mlmcourse.training import MLMBatches
from mlmcourse.training.packing import (
    PackedMLMBatches,
    PackedMLMCollator,
    pack,
    padding_share,
    padding_shares,
)
from tests.tiny import tiny_encoder_config, transformers_twin

TEXTS = [
    "Ann lives in Orlen .",
    "Bob works as a pilot for Drafer Museum .",
    "Cal lives in Vask .",
    "Dee works as a judge .",
    "Eve is a teacher who lives in Orlen and works for Drafer Museum .",
]


@pytest.fixture(scope="module")
def tokenizer(world_tokenizer):
    return world_tokenizer


def test_pack_keeps_every_document_once_in_order_and_within_max_length():
    lengths = [5, 9, 3, 7, 2, 8, 1, 6]
    rows = pack(lengths, 10)
    assert sorted(i for row in rows for i in row) == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in row) <= 10 for row in rows)
    assert all(row == sorted(row) for row in rows)  # the given order, within each row
    assert rows[0] == [0, 2, 4]  # first fit: 5 + 3 + 2 (document 1 did not fit)
    assert len(rows) < len(lengths)


def test_pack_window_bounds_how_far_back_it_looks():
    assert pack([6, 6, 4], 10, window=1) == [[0], [1, 2]]  # only the last row is open
    assert pack([6, 6, 4], 10, window=2) == [[0, 2], [1]]


@pytest.mark.parametrize(("lengths", "message"), [([3, 11], "document 1 has 11"), ([0], "1 to")])
def test_pack_refuses_documents_that_cannot_fit(lengths, message):
    with pytest.raises(ValueError, match=message):
        pack(lengths, 10)


def test_document_ids_start_a_new_document_at_each_zero_position():
    positions = torch.tensor([[0, 1, 2, 0, 1, 0, 0]])
    assert document_ids(positions).tolist() == [[1, 1, 1, 2, 2, 3, 4]]


def test_packed_attention_is_block_diagonal_and_hides_padding():
    mask = torch.tensor([[1, 1, 1, 1, 0]])
    allowed = packed_allowed(mask, torch.tensor([[0, 1, 0, 1, 0]]), is_causal=False)[0, 0]
    expected = torch.tensor(
        [[1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 1, 1, 0], [0, 0, 1, 1, 0], [0, 0, 0, 0, 1]]
    ).bool()  # the padded query sees only itself (no NaN)
    assert torch.equal(allowed, expected)


def _alone_and_packed(tokenizer, config, texts):
    """Each text on its own row, and all of them packed into one row: (ids, positions)."""
    encoded = [tokenizer([t])["input_ids"][0].tolist() for t in texts]
    row = [token for ids in encoded for token in ids]
    positions = [p for ids in encoded for p in range(len(ids))]
    assert len(row) <= config.max_position_embeddings
    return encoded, torch.tensor([row]), torch.tensor([positions])


@pytest.mark.parametrize("is_causal", [False, True])
def test_a_packed_row_gives_each_document_its_hidden_states_alone(tokenizer, is_causal):
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size, max_position_embeddings=64)
    config.is_causal = is_causal
    torch.manual_seed(0)
    model = BertModel(config).eval()
    encoded, row, positions = _alone_and_packed(tokenizer, config, TEXTS[:4])
    with speed_path(model):
        packed = model(row, torch.ones_like(row), position_ids=positions).last_hidden_state[0]
    start = 0
    for ids in encoded:
        alone = model(torch.tensor([ids])).last_hidden_state[0]
        assert torch.allclose(packed[start : start + len(ids)], alone, atol=1e-5)
        start += len(ids)


def test_packed_equals_transformers_with_the_same_block_diagonal_mask(tokenizer):
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size, max_position_embeddings=64)
    torch.manual_seed(0)
    ours = BertModel(config).eval()
    theirs = transformers_twin(ours)
    _, row, positions = _alone_and_packed(tokenizer, config, TEXTS[:3])
    docs = document_ids(positions)
    mask4d = docs[:, None, :, None] == docs[:, None, None, :]  # (B, 1, T, T): True = attend
    with speed_path(ours):
        a = ours(row, torch.ones_like(row), position_ids=positions).last_hidden_state
    b = theirs(input_ids=row, attention_mask=mask4d, position_ids=positions).last_hidden_state
    assert torch.allclose(a, b, atol=1e-5)


def test_packed_mlm_logits_and_loss_equal_the_padded_path(tokenizer):
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size, max_position_embeddings=64)
    torch.manual_seed(0)
    model = BertForMaskedLM(config).eval()
    collator = PackedMLMCollator(MLMCollator(tokenizer, max_length=64, mlm_probability=0.3))
    batch = collator([TEXTS[:3], TEXTS[3:]], generator=torch.Generator().manual_seed(0))
    with speed_path(model):
        packed = model(**batch, logits_at_labels=True)  # (N, V): the targets' rows, in order
    # The same documents, with the same masks, each on its own row of a padded batch.
    docs = document_ids(batch["position_ids"])
    pieces = []
    for r in range(2):
        real = batch["attention_mask"][r].bool()
        for d in docs[r][real].unique():
            where = (docs[r] == d) & real
            pieces.append({k: batch[k][r][where] for k in ("input_ids", "labels")})
    width = max(len(p["input_ids"]) for p in pieces)

    def pad(key, fill):
        return torch.stack(
            [torch.cat([p[key], p[key].new_full((width - len(p[key]),), fill)]) for p in pieces]
        )

    ids, labels = pad("input_ids", tokenizer.pad_token_id), pad("labels", -100)
    padded = model(
        ids, (ids != tokenizer.pad_token_id).long(), labels=labels, logits_at_labels=True
    )
    assert torch.allclose(packed.logits, padded.logits, atol=1e-5)  # the same order of targets
    assert torch.allclose(packed.loss, padded.loss, atol=1e-6)


def test_the_collator_restarts_positions_and_protects_each_documents_specials(tokenizer):
    collator = PackedMLMCollator(MLMCollator(tokenizer, max_length=64, mlm_probability=0.5))
    batch = collator([TEXTS[:3], TEXTS[3:4]], generator=torch.Generator().manual_seed(1))
    lengths = collator.lengths(TEXTS[:3])
    expected = [p for n in lengths for p in range(n)]
    assert batch["position_ids"][0, : sum(lengths)].tolist() == expected
    specials = torch.isin(batch["input_ids"], torch.tensor(tokenizer.all_special_ids))
    starts = batch["position_ids"] == 0
    real = batch["attention_mask"].bool()
    assert (specials | ~real)[starts].all()  # every document still starts with [CLS]
    assert (batch["labels"][~real] == -100).all() and (batch["labels"] != -100).any()
    with pytest.raises(ValueError, match="more than max_length"):
        PackedMLMCollator(MLMCollator(tokenizer, max_length=12))([TEXTS[:3]])


def test_packed_batches_visit_every_text_once_an_epoch_and_repeat_exactly(tokenizer):
    texts = TEXTS * 8
    collator = PackedMLMCollator(MLMCollator(tokenizer, max_length=32))
    batches = PackedMLMBatches(texts, collator, batch_size=2, seed=3)
    rows = batches.rows(0)
    assert sorted(i for row in rows for i in row) == list(range(len(texts)))
    assert all(sum(batches.lengths[i] for i in row) <= 32 for row in rows)
    again = PackedMLMBatches(texts, collator, batch_size=2, seed=3)
    for i in (0, 5, 40):  # 40 is in a later epoch
        assert all(torch.equal(batches(i)[k], again(i)[k]) for k in batches(i))
    assert not torch.equal(batches(0)["input_ids"], batches(1)["input_ids"])


def test_packing_removes_most_of_the_padding(tokenizer):
    texts = TEXTS * 20
    plain = MLMBatches(texts, MLMCollator(tokenizer, max_length=64), batch_size=8)
    shares = padding_shares(texts, MLMCollator(tokenizer, max_length=64), 8, batches=2)
    assert shares["padded"] == sum(padding_share(plain(i)["attention_mask"]) for i in (0, 1)) / 2
    assert 0 <= shares["packed"] < shares["padded"] / 2


def test_padding_share_counts_the_zeros_of_the_mask():
    assert padding_share(torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])) == 0.25


def test_ddp_ranks_split_the_global_packed_batch(tokenizer):
    collator = PackedMLMCollator(MLMCollator(tokenizer, max_length=32))
    whole = PackedMLMBatches(TEXTS * 8, collator, batch_size=4, seed=0)(2)
    for rank in range(2):
        part = PackedMLMBatches(TEXTS * 8, collator, batch_size=2, seed=0, rank=rank, world_size=2)
        assert torch.equal(part(2)["input_ids"], whole["input_ids"][rank::2])


def test_bad_position_ids_and_collators_are_clear_errors(tokenizer):
    config = tiny_encoder_config()
    ids = torch.ones(1, 4, dtype=torch.long)
    with pytest.raises(ValueError, match="position_ids must be in"):
        check_model_inputs(
            config, {"input_ids": ids, "position_ids": torch.tensor([[0, 1, 2, 99]])}
        )
    with pytest.raises(ValueError, match="position_ids must have the shape"):
        check_model_inputs(config, {"input_ids": ids, "position_ids": torch.tensor([[0, 1]])})
    with pytest.raises(TypeError, match="position_ids"):  # packed rows: the speed path's
        BertModel(config)(ids, position_ids=torch.tensor([[0, 1, 0, 1]]))
    with pytest.raises(TypeError, match="wraps an MLMCollator"):
        PackedMLMCollator(tokenizer)
    with pytest.raises(TypeError, match="PackedMLMCollator"):
        PackedMLMBatches(TEXTS, MLMCollator(tokenizer), batch_size=2)


TINY_RUN = {
    "max_steps": 3,
    "batch_size": 4,
    "hidden_size": 16,
    "num_attention_heads": 2,
    "intermediate_size": 32,
    "learning_rate": 1e-3,
    "warmup_steps": 0,
    "logging_steps": 1,
    "eval_steps": 3,
    "final_evaluation": False,
}


def test_pretrain_with_packing_sees_more_real_tokens_per_step_and_evaluates_as_before():
    from mlmcourse.pretraining import pretrain

    plain = pretrain(TINY_RUN, progress=False, log=None)
    packed = pretrain({**TINY_RUN, "packing": True}, progress=False, log=None)
    # the world's sentences are short: four packed rows hold several times four sentences
    assert packed.result.tokens_seen > 2 * plain.result.tokens_seen
    losses = [row["loss"] for row in packed.result.history["train"]]
    assert len(losses) == 3 and all(loss == loss for loss in losses)  # trained, no NaN
    # validation is not packed: the same fixed batches either way
    assert all(
        torch.equal(a["input_ids"], b["input_ids"])
        for a, b in zip(plain.eval_batches, packed.eval_batches, strict=True)
    )


def test_packing_is_refused_for_a_causal_lm():
    from mlmcourse.pretraining import load_config

    with pytest.raises(ValueError, match="packing: true is for training_mode: mlm"):
        load_config("world", {"packing": True, "training_mode": "clm"})
