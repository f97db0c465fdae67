"""Extractive question answering on the world: the MiniLM encoder fine-tuned to find answer spans.

The questions are :func:`mlmcourse.tasks.qa.world_questions`: "Where does <person> live?" and the
like, asked about a short passage that also names other people, so the model must read. The
people are split (train, validation, test; and the second world's people, ``unseen``), so no
test question is about anyone the training questions mention. The learning rate is chosen on
**validation** with seed 0; the chosen setting is trained with every seed and **test** (and
``unseen``) are scored once per seed, with SQuAD v1.1's exact match and F1 (seed 0's model is
the one the sweep trained, kept on disk). Two epochs of the 2,000 training questions, batches
of 16, two runs at once with one torch thread each (the minutes are those of a run sharing the
machine). Two epochs (250 steps): with one, whether a run learns to match the question's name
with the passage's before the learning rate has decayed depends on the seed::

    python experiments/world_qa_minilm.py --json mlmcourse/course/results/world_qa_minilm.json
    python experiments/world_qa_minilm.py --learning-rates 3e-4 --seeds 0 --limit 40 \\
        --json /tmp/smoke.json          # a smoke run on 40 questions per split
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

import torch

from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.heads import BertForQuestionAnswering
from mlmcourse.interop.bert import load_bert, minilm_directory
from mlmcourse.tasks.qa import WORLD_QA_RECIPE, evaluate_qa, fine_tune_qa, world_questions
from mlmcourse.utils.runtime import set_seed

BATCH_SIZE = 16


def new_model(seed: int) -> tuple[BertForQuestionAnswering, object]:
    encoder, tokenizer = load_bert(minilm_directory())
    set_seed(seed)
    return BertForQuestionAnswering.from_encoder(encoder), tokenizer


def scores(model, tokenizer, splits: list[str], limit: int | None) -> dict:
    row = {}
    for split in splits:
        result = evaluate_qa(model, tokenizer, world_questions(split)[:limit])
        row |= {f"{split}_exact_match": result["exact_match"], f"{split}_f1": result["f1"]}
    return row


def run(lr: float, epochs: int, seed: int, splits: list[str], limit: int | None,
        save: str | None = None) -> dict:  # fmt: skip
    model, tokenizer = new_model(seed)
    tic = time.perf_counter()
    recipe = replace(WORLD_QA_RECIPE, epochs=epochs, batch_size=BATCH_SIZE, learning_rate=lr)
    fine_tune_qa(model, world_questions("train")[:limit], tokenizer, recipe=recipe, seed=seed)
    row = {"learning_rate": lr, "epochs": epochs, "seed": seed,
           "minutes": (time.perf_counter() - tic) / 60}  # fmt: skip
    row |= scores(model, tokenizer, splits, limit)
    if save:
        torch.save(model.state_dict(), save)
    print(json.dumps(row), flush=True)
    return row


def score_saved(path: str, seed: int, splits: list[str], limit: int | None) -> dict:
    model, tokenizer = new_model(seed)
    model.load_state_dict(torch.load(path))
    return scores(model, tokenizer, splits, limit)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[1e-4, 3e-4])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--limit", type=int, default=None, help="N questions per split only")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    first, rest = args.seeds[0], args.seeds[1:]
    work = Path(tempfile.mkdtemp(prefix="world_qa_"))
    scored = ["test", "unseen"]
    spawn = get_context("spawn")
    with ProcessPoolExecutor(
        args.workers, spawn, initializer=torch.set_num_threads, initargs=(args.threads,)
    ) as pool:
        jobs = [
            pool.submit(
                run, lr, args.epochs, first, ["validation"], args.limit, str(work / f"{i}.pt")
            )
            for i, lr in enumerate(args.learning_rates)
        ]
        sweep = [job.result() for job in jobs]
        best = max(range(len(sweep)), key=lambda i: sweep[i]["validation_f1"])
        lr = args.learning_rates[best]
        jobs = [
            pool.submit(run, lr, args.epochs, s, ["validation", *scored], args.limit) for s in rest
        ]
        seed0 = pool.submit(score_saved, str(work / f"{best}.pt"), first, scored, args.limit)
        rows = [{**sweep[best], **seed0.result()}] + [job.result() for job in jobs]
    untrained = scores(*new_model(first), ["test"], args.limit)  # the head at random
    keys = [f"{s}_{m}" for s in ("validation", *scored) for m in ("exact_match", "f1")]
    results = {
        **provenance(argv, args.seeds, start),
        "what": "exact match and F1 (SQuAD v1.1's definitions, percent) of the all-MiniLM-L6-v2 "
        f"encoder fine-tuned for extractive QA on the world's questions: {args.epochs} epoch(s), batches "
        f"of {BATCH_SIZE} grouped by length, AdamW, linear decay after 10% warmup, "
        f"{args.threads} torch thread(s) per run and {args.workers} run(s) at once; the "
        f"learning rate chosen on validation with seed {first}, test and unseen scored once "
        "per seed",
        "untrained_test": untrained,
        "sweep": sweep,
        "chosen": {"learning_rate": lr},
        "runs": rows,
        "summary": mean_sd(rows, [*keys, "minutes"]),
    }
    save_results(args.json, results)
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
