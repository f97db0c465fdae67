"""The NER chapter's seed-0 runs, over seeds 0, 1 and 2, for the tables the chapter shows.

Two of the NER chapter's runs are run live for seed 0 only; this script runs them for every seed
with the chapter's recipe (:func:`mlmcourse.tasks.ner.fine_tune_tagger`, 300 steps, word dropout
0.3 where the chapter uses it) and writes what the chapter's tables show:

- ``viterbi``: the taggers trained on 50 world sentences (pretrained and from scratch), entity
  F1 on the first 500 unseen sentences with argmax and with constrained (Viterbi) decoding;
- ``wnut17``: the world-pretrained encoder and a model of the same size from scratch (WordPiece
  on the tweets), both with class weights, on WNUT-17's test split, and the most-frequent-tag
  baseline. Needs WNUT-17 (``MLMCOURSE_DATA_DIR``)::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/ner_seeds.py \\
        --json mlmcourse/course/results/ner_seeds.json
    python experiments/ner_seeds.py --steps 2 --limit 40 --seeds 0 --json /tmp/smoke.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import torch

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.course.results import provenance, save_results
from mlmcourse.data import WORLD_LABELS, load_wnut17, load_world
from mlmcourse.data.real import WNUT17_LABELS
from mlmcourse.heads import BertForTokenClassification, load_checkpoint
from mlmcourse.tasks.ner import (
    TAGGER_RECIPE,
    LabelVocab,
    class_weights_from_tags,
    evaluate_ner,
    fine_tune_tagger,
    most_frequent_tag_baseline,
    new_tagger,
)
from mlmcourse.tasks.ner.metrics import f1_score
from mlmcourse.tokenization import WordPieceTokenizer
from mlmcourse.utils.runtime import set_seed

STEPS, UNK_RATE, EVAL_SIZE, SMALL = 300, 0.3, 500, 50


def viterbi_rows(world, seeds: list[int], steps: int = STEPS) -> list[dict]:
    """Argmax and Viterbi F1 of the 50-sentence taggers, per seed and starting point."""
    rows, evaluation = [], world["unseen"][:EVAL_SIZE]
    for seed in seeds:
        for start in ("pretrained", "from scratch"):
            model = new_tagger(world["encoder"], world["labels"], pretrained=start == "pretrained",
                               seed=seed)  # fmt: skip
            fine_tune_tagger(model, world["train"][:SMALL], world["tokenizer"], world["labels"],
                             recipe=dataclasses.replace(TAGGER_RECIPE, steps=steps,
                                                        unk_rate=UNK_RATE), seed=seed)  # fmt: skip
            f1 = {c: evaluate_ner(model, world["tokenizer"], evaluation, constrained=c)["f1"]
                  for c in (False, True)}  # fmt: skip
            rows.append({"seed": seed, "start": start, "argmax_f1": f1[False],
                         "viterbi_f1": f1[True]})  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    return rows


def wnut17_rows(
    world, seeds: list[int], steps: int = STEPS, limit: int | None = None
) -> tuple[float, list[dict]]:
    """The baseline's F1, and the world encoder's and the scratch model's F1 per seed."""
    train, test = load_wnut17("train")[:limit], load_wnut17("test")[:limit]
    labels = LabelVocab(WNUT17_LABELS)
    gold = [list(s.tags) for s in test]
    tag = most_frequent_tag_baseline(train)
    baseline = f1_score(gold, [tag(s.tokens) for s in test])
    weights = class_weights_from_tags(train, labels)
    wordpiece = WordPieceTokenizer.train([s.text for s in train], vocab_size=4000)
    config = dataclasses.replace(world["encoder"].bert.config, vocab_size=wordpiece.vocab_size,
                                 max_position_embeddings=64)  # fmt: skip
    rows = []
    for seed in seeds:
        set_seed(seed)
        tagger = BertForTokenClassification.from_encoder(
            world["encoder"], len(labels), id2label=labels, classifier_dropout=0.1,
            class_weights=weights,
        )  # fmt: skip
        recipe = dataclasses.replace(TAGGER_RECIPE, steps=steps)
        fine_tune_tagger(tagger, train, world["tokenizer"], labels,
                         recipe=dataclasses.replace(recipe, unk_rate=UNK_RATE), seed=seed)  # fmt: skip
        world_f1 = evaluate_ner(tagger, world["tokenizer"], test)["f1"]
        set_seed(seed)
        scratch = BertForTokenClassification(config, len(labels), id2label=labels,
                                             classifier_dropout=0.1, class_weights=weights)  # fmt: skip
        fine_tune_tagger(scratch, train, wordpiece, labels, recipe=recipe, seed=seed)
        scratch_f1 = evaluate_ner(scratch, wordpiece, test)["f1"]
        rows.append({"seed": seed, "world_f1": world_f1, "scratch_f1": scratch_f1})
        print(json.dumps(rows[-1]), flush=True)
    return baseline, rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=STEPS, help="fine-tuning steps per run")
    parser.add_argument("--limit", type=int, default=None, help="first N WNUT-17 sentences")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    checkpoint = load_checkpoint(shipped_checkpoint("world"))
    world = {"encoder": checkpoint.model, "tokenizer": checkpoint.tokenizer,
             "labels": LabelVocab(WORLD_LABELS), "train": load_world("train"),
             "unseen": load_world("unseen")}  # fmt: skip
    viterbi = viterbi_rows(world, args.seeds, args.steps)
    baseline, wnut17 = wnut17_rows(world, args.seeds, args.steps, args.limit)
    results = {
        **provenance(argv, args.seeds, start),
        "what": f"the NER chapters' recipe ({args.steps} steps, word dropout {UNK_RATE} where "
        f"they use it): the {SMALL}-sentence world taggers' entity F1 on the first {EVAL_SIZE} "
        "unseen sentences, argmax and Viterbi; WNUT-17 test F1 of the world encoder and of a "
        "model of its size from scratch (WordPiece on the tweets), and the baseline",
        "viterbi": viterbi,
        "wnut17": {"baseline_f1": baseline, "runs": wnut17},
    }
    save_results(args.json, results)


if __name__ == "__main__":
    main()
