"""The measurements the CLM vs MLM chapter and ``experiments/clm_vs_mlm.py`` share: probe breakdowns,
well-formed generation, the three decoders and the unseen-name linear probe."""

from __future__ import annotations

import pytest
import torch

from mlmcourse.data import WORLD_LABELS, Probe, load_probes, load_world
from mlmcourse.data.probes import by_blank_position, by_relation
from mlmcourse.heads import BertForCausalLM, BertForMaskedLM
from mlmcourse.tasks.generation import (
    continue_prompts,
    corpus_trigrams,
    generation_quality,
    trigrams,
)
from mlmcourse.tasks.ner import LabelVocab
from mlmcourse.tasks.probing import linear_probe, unseen_name_probe
from tests.tiny import tiny_encoder_config


def _probe(text, answer, relation):
    return Probe(text=text, answer=answer, evidence="test", relation=relation)


PROBES = [
    _probe("[MASK] is the capital of Peifi .", "Tival", "capital"),
    _probe("[MASK] Pouend works as a pilot .", "Kepaix", "first_name"),
    _probe("[MASK] is the capital of Zuimai .", "Sokous", "capital"),
    _probe("He is [MASK] engineer .", "an", "article"),
]


def test_by_relation_gives_accuracy_and_count_per_relation_in_sorted_order():
    rows = [{"correct": c} for c in (True, True, False, False)]
    table = by_relation(rows, PROBES)
    assert list(table) == ["article", "capital", "first_name"]
    assert table == {"article": (0.0, 1), "capital": (0.5, 2), "first_name": (1.0, 1)}


def test_by_relation_refuses_rows_that_do_not_match_the_probes():
    with pytest.raises(ValueError):
        by_relation([{"correct": True}], PROBES)


def test_by_blank_position_splits_on_what_follows_the_blank():
    probes = [
        _probe("The capital of Kroudron is [MASK] .", "Tival", "capital_of"),
        _probe("Pokronpes has [MASK] as its capital .", "Guiun", "capital_of"),
    ]
    split = by_blank_position(probes)
    assert list(split) == ["answer at the end", "answer inside", "all"]
    assert split["answer at the end"] == probes[:1] and split["answer inside"] == probes[1:]
    assert split["all"] == probes


def test_the_fact_probes_split_into_both_positions_and_nothing_is_lost():
    facts = load_probes("fact")
    split = by_blank_position(facts)
    assert split["answer at the end"] and split["answer inside"]
    assert len(split["answer at the end"]) + len(split["answer inside"]) == len(facts)
    assert all(p.text.endswith("[MASK] .") for p in split["answer at the end"])
    assert not any(p.text.endswith("[MASK] .") for p in split["answer inside"])


def test_trigrams_mark_the_start_and_end_of_the_sentence():
    assert trigrams(["Tival", "is", "big"]) == {
        ("<s>", "Tival", "is"),
        ("Tival", "is", "big"),
        ("is", "big", "</s>"),
    }
    assert trigrams(["Tival"]) == {("<s>", "Tival", "</s>")}


def test_generation_quality_counts_known_sentences_and_repeated_words():
    known = corpus_trigrams(["Tival is in Peifi .", "Guiun is in Zuimai ."])
    sentences = [
        "Tival is in Zuimai .",  # every trigram occurs: a sentence the templates could write
        "Tival is in Peifi",  # stops where no corpus sentence stops
        "Tival is is in Peifi .",  # a repeated word, and unknown trigrams
        "is in Peifi .",  # starts where no corpus sentence starts
    ]
    assert generation_quality(sentences, known) == {"well-formed": 0.25, "repeated word": 0.25}


def _models(tokenizer):
    torch.manual_seed(0)
    config = tiny_encoder_config(vocab_size=tokenizer.vocab_size)
    mlm = BertForMaskedLM(config).eval()
    clm = BertForCausalLM(tiny_encoder_config(vocab_size=tokenizer.vocab_size, is_causal=True))
    return clm.eval(), mlm


def test_continue_prompts_runs_three_decoders_on_the_same_prompts(world_tokenizer):
    clm, mlm = _models(world_tokenizer)
    references = ["Tival is the capital of Peifi .", "Kepaix Pouend works as a pilot ."]
    prompts, outputs = continue_prompts(clm, mlm, world_tokenizer, references)
    assert prompts == ["Tival is", "Kepaix Pouend"]
    assert list(outputs) == ["CLM greedy", "CLM top-10 sampling", "MLM mask-predict"]
    for sentences in outputs.values():
        assert len(sentences) == len(references)
        assert all(s.startswith(p) for s, p in zip(sentences, prompts, strict=True))
    # mask-predict is told the reference's length: it writes exactly that many words
    lengths = [len(s.split()) for s in outputs["MLM mask-predict"]]
    assert lengths == [len(r.split()) for r in references]
    # the sampled outputs repeat with the seed
    assert continue_prompts(clm, mlm, world_tokenizer, references)[1] == outputs


def test_unseen_name_probe_is_the_linear_probe_on_the_unseen_split(world_tokenizer):
    torch.manual_seed(0)
    encoder = BertForMaskedLM(tiny_encoder_config(vocab_size=world_tokenizer.vocab_size)).bert
    got = unseen_name_probe(encoder, world_tokenizer, train_size=200, epochs=1)
    unseen, labels = load_world("unseen"), LabelVocab(WORLD_LABELS)
    expected = linear_probe(
        encoder, world_tokenizer, unseen[:200], unseen[200:], label_vocab=labels, epochs=1
    )
    assert got.metrics["f1"] == expected.metrics["f1"] and got.losses == expected.losses
    with pytest.raises(ValueError, match="train_size"):
        unseen_name_probe(encoder, world_tokenizer, train_size=0)
