"""WNUT-17 NER with real pretrained weights: the MiniLM encoder fine-tuned on tweets.

Settings are chosen on the **dev** split only: a small sweep (learning rate, epochs) with seed 0
scores dev entity F1. The best setting is then trained with every seed, and the **test** split
is scored once per seed (seed 0's model is the one the sweep trained, kept on disk, so it is not
trained twice). The number of epochs is the budget: two is what fits in 10 minutes per run on a
2-core CPU with two runs at once, one torch thread each (the default), so the minutes reported
are those of a run sharing the machine, an upper bound for a run alone.

Writes a JSON file with the command, seeds, versions, minutes, the sweep, one row per seed and
the mean and sample standard deviation::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/wnut17_minilm.py \\
        --json mlmcourse/course/results/wnut17_minilm.json
    python experiments/wnut17_minilm.py --learning-rates 1e-4 --epochs 1 --seeds 0 \\
        --limit 64 --json /tmp/smoke.json          # a smoke run on 64 tweets
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import torch

from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data import load_wnut17
from mlmcourse.data.real import WNUT17_LABELS
from mlmcourse.interop.bert import load_bert, minilm_directory
from mlmcourse.tasks.ner import LabelVocab, evaluate_ner, fine_tune_tagger, new_tagger
from mlmcourse.training import FineTuneRecipe

BATCH_SIZE = 16
SCHEDULE = "linear"


def load_encoder(init: str, seed: int):
    """The encoder and tokenizer a run starts from: the bundled MiniLM, or a BERT folder
    (``{seed}`` in the path is replaced by the run's seed)."""
    directory = minilm_directory() if init == "minilm" else Path(init.format(seed=seed))
    return load_bert(directory)


def run(settings: dict, seed: int, splits: list[str], init: str, limit: int | None,
        save_to: str | None = None) -> dict:  # fmt: skip
    """Fine-tune one tagger with ``settings`` and ``seed``; entity scores on ``splits``."""
    tic = time.perf_counter()
    encoder, tokenizer = load_encoder(init, seed)
    labels = LabelVocab(WNUT17_LABELS)
    train = load_wnut17("train")[:limit]
    model = new_tagger(encoder, labels, pretrained=True, seed=seed)
    recipe = FineTuneRecipe(batch_size=BATCH_SIZE, lr_scheduler_type=SCHEDULE, **settings)
    fine_tune_tagger(model, train, tokenizer, labels, recipe=recipe, seed=seed)
    row = {**settings, "seed": seed, "train_minutes": (time.perf_counter() - tic) / 60}
    row.update(score(model, tokenizer, splits, limit))
    row["minutes"] = (time.perf_counter() - tic) / 60
    if save_to:
        torch.save(model.state_dict(), save_to)
    return row


def score(model, tokenizer, splits: list[str], limit: int | None) -> dict:
    """Entity precision, recall and F1 (seqeval, micro) on each split."""
    out = {}
    for split in splits:
        result = evaluate_ner(model, tokenizer, load_wnut17(split)[:limit])
        for key in ("precision", "recall", "f1"):
            out[f"{split}_{key}"] = result[key]
    return out


def score_saved(path: str, settings: dict, seed: int, init: str, limit: int | None) -> dict:
    """Test scores of the model the sweep trained and saved (seed 0 of the chosen setting)."""
    encoder, tokenizer = load_encoder(init, seed)
    labels = LabelVocab(WNUT17_LABELS)
    model = new_tagger(encoder, labels, pretrained=True, seed=seed)
    model.load_state_dict(torch.load(path, weights_only=True))
    return score(model.eval(), tokenizer, ["test"], limit)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[1e-4, 2e-4, 4e-4])
    parser.add_argument("--epochs", type=int, nargs="+", default=[2])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--init", default="minilm", help="minilm, or a BERT folder ({seed} ok)")
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--limit", type=int, default=None, help="use the first N tweets only")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    grid = [{"learning_rate": lr, "epochs": e} for e in args.epochs for lr in args.learning_rates]
    first, rest = args.seeds[0], args.seeds[1:]
    work = Path(tempfile.mkdtemp(prefix="wnut17_"))
    common = (args.init, args.limit)
    spawn = get_context("spawn")
    threads = (torch.set_num_threads, (args.threads,))
    with ProcessPoolExecutor(
        args.workers, spawn, initializer=threads[0], initargs=threads[1]
    ) as pool:
        jobs = [
            pool.submit(run, s, first, ["dev"], *common, str(work / f"{i}.pt"))
            for i, s in enumerate(grid)
        ]
        sweep = [job.result() for job in jobs]
        for row in sweep:
            print(json.dumps(row), flush=True)
        best = max(range(len(grid)), key=lambda i: sweep[i]["dev_f1"])
        chosen = grid[best]
        jobs = [pool.submit(run, chosen, seed, ["dev", "test"], *common) for seed in rest]
        seed0 = pool.submit(score_saved, str(work / f"{best}.pt"), chosen, first, *common)
        rows = [{**sweep[best], **seed0.result()}] + [job.result() for job in jobs]
    for row in rows:
        print(json.dumps(row), flush=True)
    results = {
        **provenance(argv, args.seeds, start),
        "what": "WNUT-17 entity F1 (seqeval, micro) of the all-MiniLM-L6-v2 encoder fine-tuned "
        f"for token classification: batches of {BATCH_SIZE} grouped by length, AdamW, "
        f"{SCHEDULE} decay after 10% warmup, {args.threads} torch thread(s) per run and "
        f"{args.workers} run(s) at once; settings chosen on dev "
        f"with seed {first}, test scored once per seed",
        "init": args.init,
        "sweep": sweep,
        "chosen": chosen,
        "runs": rows,
        "summary": mean_sd(rows, ("dev_f1", "test_precision", "test_recall", "test_f1", "minutes")),
    }
    save_results(args.json, results)
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
