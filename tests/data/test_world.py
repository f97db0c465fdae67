"""The small-world corpus: reproducible from its seed, well-formed, and split as promised."""

import hashlib
import os
import re
import subprocess
import sys
import time
from collections import Counter

import pytest

from mlmcourse.data import (
    WORLD_LABELS,
    Sentence,
    load_probes,
    load_world,
    load_world_facts,
    world_texts,
)
from mlmcourse.data import world as W

SPLITS = ("train", "validation", "test", "unseen")


@pytest.fixture(scope="module")
def generated():
    return W.file_contents()


def test_generator_reproduces_shipped_files_byte_for_byte(generated):
    assert sorted(generated) == sorted(p.name for p in W.DATA_DIR.glob("*.*") if p.suffix != ".py")
    for name, text in generated.items():
        shipped = (W.DATA_DIR / name).read_bytes()
        assert shipped == text.encode("utf-8"), (
            f"{name} differs: run python -m mlmcourse.data.world"
        )


@pytest.mark.slow
def test_generator_does_not_depend_on_hash_order(generated):
    # A fresh interpreter with another string-hash seed must write the same bytes.
    code = (
        "import hashlib, sys; from mlmcourse.data import world as W; f = W.file_contents();"
        "sys.stdout.write(hashlib.sha256(''.join(f[k] for k in sorted(f)).encode()).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    shipped = {name: (W.DATA_DIR / name).read_text(encoding="utf-8") for name in generated}
    ours = hashlib.sha256("".join(shipped[k] for k in sorted(shipped)).encode()).hexdigest()
    assert other == ours


def test_generator_is_deterministic_and_seed_dependent():
    small = {"train": 200, "validation": 20, "test": 20, "unseen": 20}
    a = W.generate(seed=7, sizes=small)["splits"]
    b = W.generate(seed=7, sizes=small)["splits"]
    c = W.generate(seed=8, sizes=small)["splits"]
    assert a == b
    assert a["train"] != c["train"]


def test_labels_and_bio_validity():
    assert WORLD_LABELS[0] == "O"
    assert {"B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"} <= set(WORLD_LABELS)
    for split in SPLITS:
        for s in load_world(split):
            assert isinstance(s, Sentence) and len(s.tokens) == len(s.tags)
            previous = "O"
            for tag in s.tags:
                assert tag in WORLD_LABELS
                if tag.startswith("I-"):
                    assert previous[2:] == tag[2:], (split, s.text, s.tags)
                previous = tag


def test_casing_and_tokens():
    # Every token is one word as BERT's pre-tokenizer sees it (letters/digits, or one
    # punctuation mark), so re-tokenizing the text never splits a tagged token in two.
    word = re.compile(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]")
    for s in load_world("train")[:5000] + load_world("unseen"):
        assert s.tokens[0][0].isupper(), s.text
        assert all(word.fullmatch(t) for t in s.tokens), s.text
        for tok, tag in zip(s.tokens, s.tags, strict=True):
            if tag != "O":
                assert tok[0].isupper(), (tok, s.text)
        assert s.tokens[-1] in {".", "?"}


def test_splits_are_disjoint_at_the_sentence_level():
    texts = {split: set(world_texts(split)) for split in SPLITS}
    for i, a in enumerate(SPLITS):
        for b in SPLITS[i + 1 :]:
            assert not texts[a] & texts[b], (a, b)


def test_unseen_split_names_never_occur_elsewhere():
    def entity_words(split):
        return {
            t for s in load_world(split) for t, g in zip(s.tokens, s.tags, strict=True) if g != "O"
        }

    seen = entity_words("train") | entity_words("validation") | entity_words("test")
    unseen = entity_words("unseen")
    # Organization names end with a shared word such as "Bank"; the invented part is new.
    shared = {suffix for _, suffix in W.INDUSTRIES} | {"Isles"}
    assert unseen and not (unseen & seen) - shared
    facts = load_world_facts()
    unseen_names = {p["name"] for p in facts["unseen_world"]["people"]}
    assert unseen_names and not unseen_names & {p["name"] for p in facts["world"]["people"]}


def test_names_are_not_template_words():
    plain = {
        t.lower()
        for s in load_world("train")
        for t, g in zip(s.tokens, s.tags, strict=True)
        if g == "O"
    }
    for split in SPLITS:
        for s in load_world(split):
            for tok, tag in zip(s.tokens, s.tags, strict=True):
                if tag.startswith("B-"):
                    assert tok.lower() not in plain, (tok, s.text)


def test_loaders_return_copies_and_validate_names():
    a = load_world("train")
    a.clear()
    assert load_world("train")
    with pytest.raises(ValueError, match="split must be one of"):
        load_world("dev")
    with pytest.raises(ValueError, match="kind must be one of"):
        load_probes("facts")


def test_loading_every_split_is_fast():
    from mlmcourse.data import _probes, _world_split

    _world_split.cache_clear()
    _probes.cache_clear()
    start = time.perf_counter()
    sizes = {split: len(load_world(split)) for split in SPLITS}
    elapsed = time.perf_counter() - start
    print(f"loaded {sizes} in {elapsed:.3f} s")  # a figure for the report, not an assertion
    assert sizes == W.SPLIT_SIZES


def test_entity_types_all_present():
    counts = Counter(tag[2:] for s in load_world("train") for tag in s.tags if tag.startswith("B-"))
    assert set(counts) == {"PER", "ORG", "LOC"}


def test_sentence_needs_one_tag_per_token():
    s = Sentence(("Tarvo", "sails", "."), ("B-PER", "O", "O"))
    assert s.text == "Tarvo sails ."
    with pytest.raises(ValueError, match="one tag per token, got 2 tokens and 1 tags"):
        Sentence(("a", "b"), ("O",))
