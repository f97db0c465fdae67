"""NER on the world corpus: what pretraining adds, by training-set size, over seeds.

For each seed, training-set size and starting point (the shipped pretrained world encoder, or
the same architecture from random weights) this fine-tunes a tagger with the NER chapter's
recipe (:func:`mlmcourse.tasks.ner.fine_tune_tagger`: 300 steps, batches of 16, 30% word dropout) and
scores entity F1 on two evaluation sets of 500 sentences each:

- ``unseen``: the first 500 sentences of the unseen split, names never seen in training;
- ``new_roles``: the same sentences with every name replaced by a training name of another
  type (:func:`mlmcourse.data.new_roles.names_in_new_roles`), where memorised names mislead.

It also runs the chapter's ablation, the pretrained model on 1,000 sentences without word
dropout, and the most-frequent-tag baseline on both sets. Writes a JSON file with the command,
seeds, versions, minutes, one row per run and the mean and sample standard deviation::

    OMP_NUM_THREADS=1 python experiments/ner_curve.py --json mlmcourse/course/results/ner_curve.json
    python experiments/ner_curve.py --steps 5 --sizes 50 --seeds 0 --json /tmp/smoke.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import torch

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.course.results import provenance, save_results
from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.data.new_roles import names_in_new_roles
from mlmcourse.heads import load_checkpoint
from mlmcourse.tasks.ner import (
    TAGGER_RECIPE,
    LabelVocab,
    evaluate_ner,
    fine_tune_tagger,
    most_frequent_tag_baseline,
    new_tagger,
)
from mlmcourse.tasks.ner.metrics import f1_score

EVAL_SIZE = 500
UNK_RATE = 0.3
ABLATION_SIZE = 1000


def most_frequent_tag_f1(train, evaluation_sets) -> dict[str, float]:
    """The baseline every tagger must beat: each word's most frequent training tag, else O."""
    tag = most_frequent_tag_baseline(train)
    return {
        name: f1_score([list(s.tags) for s in sents], [tag(s.tokens) for s in sents])
        for name, sents in evaluation_sets.items()
    }


def run(start: str, size: int, seed: int, unk_rate: float, steps: int, context: dict) -> dict:
    tic = time.perf_counter()
    model = new_tagger(
        context["encoder"], context["labels"], pretrained=start == "pretrained", seed=seed
    )
    fine_tune_tagger(
        model,
        context["train"][:size],
        context["tokenizer"],
        context["labels"],
        recipe=replace(TAGGER_RECIPE, steps=steps, unk_rate=unk_rate),
        seed=seed,
    )
    row = {"start": start, "sentences": size, "seed": seed, "unk_rate": unk_rate, "steps": steps}
    for name, sentences in context["evaluation"].items():
        row[f"{name}_f1"] = evaluate_ner(model, context["tokenizer"], sentences)["f1"]
    row["minutes"] = (time.perf_counter() - tic) / 60
    return row


def summarise(rows: list[dict]) -> list[dict]:
    """Mean and sample sd of each F1, per (start, sentences, unk_rate) group."""
    groups = defaultdict(list)
    for r in rows:
        groups[r["start"], r["sentences"], r["unk_rate"]].append(r)
    out = []
    for (start, size, unk_rate), group in groups.items():
        entry = {"start": start, "sentences": size, "unk_rate": unk_rate, "n": len(group)}
        for key in (k for k in group[0] if k.endswith("_f1")):
            values = [r[key] for r in group]
            entry[key] = {
                "mean": statistics.fmean(values),
                "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            }
        out.append(entry)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 1000, 4000])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    checkpoint = load_checkpoint(shipped_checkpoint("world"))
    train, unseen = load_world("train"), load_world("unseen")[:EVAL_SIZE]
    evaluation = {"unseen": unseen, "new_roles": names_in_new_roles(unseen, train, seed=0)}
    context = {
        "encoder": checkpoint.model,
        "tokenizer": checkpoint.tokenizer,
        "labels": LabelVocab(WORLD_LABELS),
        "train": train,
        "evaluation": evaluation,
    }
    rows = []
    for seed in args.seeds:
        for size in args.sizes:
            for start_from in ("pretrained", "from scratch"):
                rows.append(run(start_from, size, seed, UNK_RATE, args.steps, context))
                print(json.dumps(rows[-1]), flush=True)
        if ABLATION_SIZE in args.sizes:
            rows.append(run("pretrained", ABLATION_SIZE, seed, 0.0, args.steps, context))
            print(json.dumps(rows[-1]), flush=True)
    results = {
        **provenance(argv, args.seeds, start),
        "what": f"NER taggers fine-tuned from the shipped world encoder or from scratch, "
        f"{args.steps} steps, word dropout {UNK_RATE} (and 0.0 for the ablation at "
        f"{ABLATION_SIZE} sentences); entity F1 on the first {EVAL_SIZE} sentences of the "
        "unseen split and on the same sentences with names in new roles",
        "baseline_f1": most_frequent_tag_f1(train, evaluation),
        "runs": rows,
        "summary": summarise(rows),
    }
    save_results(args.json, results)
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
