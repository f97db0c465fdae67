"""SST-2 sentiment with real pretrained weights: the MiniLM encoder fine-tuned as a classifier.

GLUE's SST-2 test split has no public labels, so dev is the split papers report; settings are
therefore **not** chosen on dev but on 2,000 sentences held out of the training split (a seeded
draw; the rest is the training data of every run). A small sweep over the learning rate with
seed 0 scores the held-out part; the best setting is then trained with every seed, and **dev**
is scored once per seed (seed 0's model is the one the sweep trained, kept on disk).

The budget is a number of steps, not epochs: ``--max-steps`` batches of 32 in the order of one
length-grouped epoch (800 batches: about 40% of the 65k training phrases), chosen so that a
run takes at most 10 minutes on a 2-core CPU with two runs at once, one torch thread each (the
minutes reported are those of a run sharing the machine). MiniLM's word embeddings (half of its 22.7M
weights) stay frozen: the optimiser then updates half as many numbers per step.

    MLMCOURSE_DATA_DIR=../shared/data python experiments/sst2_minilm.py \\
        --json mlmcourse/course/results/sst2_minilm.json
    python experiments/sst2_minilm.py --learning-rates 1e-4 --seeds 0 --max-steps 2 \\
        --limit 200 --json /tmp/smoke.json          # a smoke run on 200 sentences
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

import torch

from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data import load_sst2
from mlmcourse.data.real import SST2_LABELS
from mlmcourse.heads import BertForSequenceClassification
from mlmcourse.interop.bert import load_bert, minilm_directory
from mlmcourse.tasks.classification import (
    CLASSIFIER_RECIPE,
    evaluate_classifier,
    fine_tune_classifier,
)
from mlmcourse.utils.runtime import set_seed

BATCH_SIZE = 32
HELD_OUT = 2000
SPLIT_SEED = 1234


def splits(limit: int | None) -> dict[str, list[tuple[str, int]]]:
    """Training data, the held-out part of the training split, and dev (the first ``limit``)."""
    train = load_sst2("train")[:limit]
    random.Random(SPLIT_SEED).shuffle(train)
    held = min(HELD_OUT, len(train) // 10)
    return {"train": train[held:], "heldout": train[:held], "dev": load_sst2("dev")[:limit]}


def new_classifier(seed: int) -> tuple[BertForSequenceClassification, object]:
    encoder, tokenizer = load_bert(minilm_directory())
    set_seed(seed)
    return BertForSequenceClassification.from_encoder(encoder, 2, id2label=SST2_LABELS), tokenizer


def run(lr: float, seed: int, scored: list[str], steps: int, limit: int | None,
        save: str | None = None) -> dict:  # fmt: skip
    data = splits(limit)
    model, tokenizer = new_classifier(seed)
    tic = time.perf_counter()
    recipe = replace(CLASSIFIER_RECIPE, steps=steps, batch_size=BATCH_SIZE, learning_rate=lr,
                     freeze_word_embeddings=True)  # fmt: skip
    fine_tune_classifier(model, data["train"], tokenizer, recipe=recipe, seed=seed)
    row = {"learning_rate": lr, "seed": seed, "minutes": (time.perf_counter() - tic) / 60}
    for split in scored:
        row[f"{split}_accuracy"] = evaluate_classifier(model, tokenizer, data[split])["accuracy"]
    if save:
        torch.save(model.state_dict(), save)
    print(json.dumps(row), flush=True)
    return row


def score_saved(path: str, lr: float, seed: int, limit: int | None) -> dict:
    model, tokenizer = new_classifier(seed)
    model.load_state_dict(torch.load(path))
    return {"dev_accuracy": evaluate_classifier(model, tokenizer, splits(limit)["dev"])["accuracy"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[1e-4, 2e-4, 4e-4])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-steps", type=int, default=800, help="the budget, in batches")
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--limit", type=int, default=None, help="the first N sentences only")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    first, rest = args.seeds[0], args.seeds[1:]
    work = Path(tempfile.mkdtemp(prefix="sst2_"))
    common = (args.max_steps, args.limit)
    spawn = get_context("spawn")
    with ProcessPoolExecutor(
        args.workers, spawn, initializer=torch.set_num_threads, initargs=(args.threads,)
    ) as pool:
        jobs = [
            pool.submit(run, lr, first, ["heldout"], *common, str(work / f"{i}.pt"))
            for i, lr in enumerate(args.learning_rates)
        ]
        sweep = [job.result() for job in jobs]
        best = max(range(len(sweep)), key=lambda i: sweep[i]["heldout_accuracy"])
        lr = args.learning_rates[best]
        jobs = [pool.submit(run, lr, seed, ["heldout", "dev"], *common) for seed in rest]
        seed0 = pool.submit(score_saved, str(work / f"{best}.pt"), lr, first, args.limit)
        rows = [{**sweep[best], **seed0.result()}] + [job.result() for job in jobs]
    data = splits(args.limit)
    majority = max(sum(y for _, y in data["dev"]), sum(1 - y for _, y in data["dev"]))
    results = {
        **provenance(argv, args.seeds, start),
        "what": "SST-2 dev accuracy of the all-MiniLM-L6-v2 encoder fine-tuned as a sentence "
        f"classifier (pooler, dropout, linear): {args.max_steps} batches of {BATCH_SIZE} grouped "
        "by length, AdamW, linear decay after 10% warmup, word embeddings frozen, "
        f"{args.threads} torch thread(s) per run and {args.workers} run(s) at once; the "
        f"learning rate chosen on {len(data['heldout'])} sentences held out of the training "
        f"split with seed {first}, dev scored once per seed",
        "sizes": {split: len(rows_) for split, rows_ in data.items()},
        "max_steps": args.max_steps,
        "batch_size": BATCH_SIZE,
        "majority_dev_accuracy": majority / len(data["dev"]),
        "sweep": sweep,
        "chosen": {"learning_rate": lr},
        "runs": rows,
        "summary": mean_sd(rows, ("heldout_accuracy", "dev_accuracy", "minutes")),
    }
    save_results(args.json, results)
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
