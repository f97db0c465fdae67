"""``HFTokenizer``: a real checkpoint's tokenizer.json (byte-level BPE, as ModernBERT's and
RoBERTa's) gives the ids, tokens and offsets of 🤗 ``tokenizers`` and ``transformers``, behind the
course's interface. Tiny tokenizers trained here (``bpe_files``); nothing reaches a network."""

from __future__ import annotations

import json
import os

import pytest
import torch

from mlmcourse.tokenization import HFTokenizer
from mlmcourse.utils.checks import FileFormatError
from tests.tokenization.bpe_files import (
    MODERNBERT_CONFIG,
    ROBERTA_CONFIG,
    TEXTS,
    modernbert_like,
    roberta_like,
    save_tokenizer,
)

os.environ["HF_HUB_OFFLINE"] = "1"  # never try the network

KINDS = {
    "modernbert": (modernbert_like, MODERNBERT_CONFIG),
    "roberta": (roberta_like, ROBERTA_CONFIG),
}
SPECIALS = {  # role: (ModernBERT's token, RoBERTa's)
    "pad_token": ("[PAD]", "<pad>"),
    "unk_token": ("[UNK]", "<unk>"),
    "cls_token": ("[CLS]", "<s>"),
    "sep_token": ("[SEP]", "</s>"),
    "mask_token": ("[MASK]", "<mask>"),
}
PAIRS = [("The capital of France is [MASK].", "Paris is a city."), ("a", "b c d e f g")]


@pytest.fixture(scope="module", params=list(KINDS))
def files(request, tmp_path_factory):
    """``(kind, the library's tokenizer, a folder with tokenizer.json and its config)``."""
    build, config = KINDS[request.param]
    library = build()
    return request.param, library, save_tokenizer(library, tmp_path_factory.mktemp("tok"), config)


@pytest.fixture(scope="module")
def ours(files):
    return HFTokenizer.from_file(files[2] / "tokenizer.json")


@pytest.fixture(scope="module")
def theirs(files):
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(files[2])


def as_tuples(offsets):
    return [tuple(o) for o in offsets]


def test_encodings_equal_the_library_s(files, ours):
    library = files[1]
    for text in TEXTS:
        got, want = ours.encode(text), library.encode(text)
        assert got.ids == want.ids and got.tokens == want.tokens
        assert got.offsets == as_tuples(want.offsets) and got.word_ids == want.word_ids
        assert got.special_tokens_mask == want.special_tokens_mask
        assert ours.tokenize(text) == library.encode(text, add_special_tokens=False).tokens
    for first, second in PAIRS:
        got, want = ours.encode(first, second), library.encode(first, second)
        assert got.ids == want.ids and got.type_ids == want.type_ids
        assert got.offsets == as_tuples(want.offsets)
        assert got.sequence_ids == want.sequence_ids


def test_ids_batches_and_decoding_equal_transformers(ours, theirs):
    for text in TEXTS:
        ids = theirs(text)["input_ids"]
        assert ours.encode(text).ids == ids
        for skip in (True, False):
            assert ours.decode(ids, skip_special_tokens=skip) == theirs.decode(
                ids, skip_special_tokens=skip
            )
    with pytest.warns(UserWarning, match="truncated"):  # as our other tokenizers, once
        batch = ours([p[0] for p in PAIRS], [p[1] for p in PAIRS], max_length=9)
    want = theirs([p[0] for p in PAIRS], [p[1] for p in PAIRS], max_length=9, truncation=True,
                  padding=True, return_tensors="pt")  # fmt: skip
    assert torch.equal(batch["input_ids"], want["input_ids"])
    assert torch.equal(batch["attention_mask"], want["attention_mask"])
    assert batch.sequence_ids(0) == want.sequence_ids(0)
    every_id = range(ours.vocab_size)
    assert ours.vocab_size == len(theirs) and ours.get_vocab() == theirs.get_vocab()
    assert [ours.decode([i], skip_special_tokens=False) for i in every_id] == [
        theirs.decode([i]) for i in every_id
    ]  # what pipeline("fill-mask") shows as token_str


def test_special_tokens_by_each_model_s_names(files, ours, theirs):
    kind, library, _ = files
    column = 0 if kind == "modernbert" else 1
    for role, names in SPECIALS.items():
        assert getattr(ours, role) == names[column] == getattr(theirs, role)
        assert getattr(ours, f"{role}_id") == library.token_to_id(names[column])
        assert getattr(ours, f"{role}_id") == getattr(theirs, f"{role}_id")
    assert sorted(ours.all_special_ids) == sorted(theirs.all_special_ids)
    assert ours.mask_token_id in ours.encode(f"a {ours.mask_token} b").ids


def test_without_config_files_the_added_tokens_name_the_special_tokens(files, ours, tmp_path):
    bare = HFTokenizer.from_file(save_tokenizer(files[1], tmp_path) / "tokenizer.json")
    assert [getattr(bare, role) for role in SPECIALS] == [getattr(ours, r) for r in SPECIALS]
    assert HFTokenizer(files[1]).mask_token_id == ours.mask_token_id


def test_a_missing_special_token_is_none_and_a_config_naming_one_is_refused(tmp_path):
    from tokenizers import Tokenizer, models

    plain = HFTokenizer(Tokenizer(models.BPE(vocab={"[UNK]": 0, "a": 1}, merges=[])))
    assert plain.unk_token_id is None and plain.mask_token_id is None  # [UNK] is not "added"
    folder = save_tokenizer(modernbert_like(), tmp_path, {**MODERNBERT_CONFIG, "mask_token": "<m>"})
    with pytest.raises(ValueError, match="mask_token is '<m>', a token the tokenizer does not"):
        HFTokenizer.from_file(folder / "tokenizer.json")


def test_saved_and_loaded_again_it_is_the_same_and_a_damaged_file_is_refused(ours, tmp_path):
    again = HFTokenizer.from_file(ours.save(tmp_path))
    assert [again.encode(t).ids for t in TEXTS] == [ours.encode(t).ids for t in TEXTS]
    data = json.loads((tmp_path / "tokenizer.json").read_text())
    del data["post_processor"]  # the library would silently drop [CLS] and [SEP]
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(FileFormatError, match="post_processor"):
        HFTokenizer.from_file(tmp_path / "tokenizer.json")


def test_decoding_one_id_is_its_token_for_the_course_s_own_tokenizers(
    minilm_tokenizer, world_tokenizer
):
    """fill_mask's token_str is ``decode([id])`` (as the pipeline's): for WordPiece and the
    word-level tokenizer that is the token itself, as it was before, over the whole vocabulary."""
    for tokenizer in (minilm_tokenizer, world_tokenizer):
        every_id = list(range(tokenizer.vocab_size))
        decoded = [tokenizer.decode([i], skip_special_tokens=False) for i in every_id]
        assert decoded == tokenizer.convert_ids_to_tokens(every_id)
