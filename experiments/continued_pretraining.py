"""Continued pretraining on a moved world: old facts forgotten, new facts learned, over seeds.

Every city of the small world is renamed by a fixed shuffle (:mod:`mlmcourse.data.moved_world`).
For each seed this continues pretraining the shipped world checkpoint on the moved training
corpus with the pretraining chapter's recipe (``CONTINUED_PRETRAINING``: 300 steps, warmup 20,
peak rate 1e-3) and scores top-1 ``fill_mask`` accuracy on the fact probes that mention a city,
asked in the old world ("old facts") and in the moved one ("new facts"), before (the shipped
model, the same for every seed) and after. Writes a JSON file with the command, seeds,
versions, minutes, one row per seed and the mean and sample standard deviation::

    OMP_NUM_THREADS=1 python experiments/continued_pretraining.py \
        --json mlmcourse/course/results/continued_pretraining.json
    python experiments/continued_pretraining.py --max-steps 2 --seeds 0 1 --json /tmp/smoke.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.course.results import provenance, save_results
from mlmcourse.data import load_probes, load_world_facts, world_texts
from mlmcourse.data.moved_world import CONTINUED_PRETRAINING, city_move, moved, moved_fact_probes
from mlmcourse.heads import load_checkpoint
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.tasks.fill_mask import fill_mask_accuracy

SCORES = ("old_facts", "new_facts")


def scores(model, tokenizer, probes: dict[str, list]) -> dict[str, float]:
    """Top-1 fill-mask accuracy on the old-world and the moved-world probes."""
    return {name: fill_mask_accuracy(model, tokenizer, probes[name])[0] for name in SCORES}


def measure(seed: int, dataset: Path, before: dict, probes: dict, max_steps: int | None) -> dict:
    """Continue pretraining the shipped world model on ``dataset`` with ``seed``; its scores."""
    overrides = {**CONTINUED_PRETRAINING, "dataset": str(dataset), "init_from": "world"}
    overrides.update(seed=seed, output_dir="")
    if max_steps is not None:
        overrides["max_steps"] = max_steps
    start = time.perf_counter()
    run = pretrain(load_config("world", overrides), progress=False, log=None)
    after = scores(run.model, run.tokenizer, probes)
    row = {"seed": seed, "steps": run.result.step}
    for name in SCORES:
        row[f"{name}_before"] = before[name]
        row[f"{name}_after"] = after[name]
        row[f"{name}_change"] = after[name] - before[name]
    row["minutes"] = (time.perf_counter() - start) / 60
    return row


def summarise(rows: list[dict]) -> dict:
    """Mean and sample standard deviation of every score over the seeds."""
    keys = [k for k in rows[0] if k.startswith(SCORES)]
    return {
        key: {
            "mean": statistics.fmean(r[key] for r in rows),
            "sd": statistics.stdev(r[key] for r in rows) if len(rows) > 1 else 0.0,
        }
        for key in keys
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-steps", type=int, default=None, help="default: the recipe's")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    move = city_move([c["name"] for c in load_world_facts()["world"]["cities"]])
    old, new = moved_fact_probes(load_probes("fact"), move)
    probes = {"old_facts": old, "new_facts": new}
    shipped = load_checkpoint(shipped_checkpoint("world"))
    before = scores(shipped.model, shipped.tokenizer, probes)
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        dataset = Path(workdir) / "moved_world.txt"
        dataset.write_text("\n".join(moved(t, move) for t in world_texts("train")))
        for seed in args.seeds:
            rows.append(measure(seed, dataset, before, probes, args.max_steps))
            print(json.dumps(rows[-1]), flush=True)
    results = {
        **provenance(argv, args.seeds, start),
        "what": "the shipped world model, continued pretraining on the world with every city "
        "renamed (a fixed shuffle, seed 0); top-1 fill-mask accuracy on the fact probes that "
        "mention a city, asked in the old world and in the moved one, before and after",
        "recipe": {
            **CONTINUED_PRETRAINING,
            **({"max_steps": args.max_steps} if args.max_steps else {}),
        },
        "probes": len(old),
        "runs": rows,
        "summary": summarise(rows),
    }
    save_results(args.json, results)
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
