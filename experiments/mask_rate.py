"""Mask rate on the world corpus: BERT's 15% against the world config's 40%, over seeds.

The world config (``mlmcourse/assets/configs/world.yaml``) masks 40% of the tokens. This script
trains that config to the end (2,000 steps) at each mask rate and seed, and measures what the
pretraining chapter compares:

- fact-probe accuracy (top-1 ``fill_mask`` on the 1-mask fact probes);
- masked-token accuracy and perplexity on the validation split at the model's *own* mask
  rate (what the training log reports; it depends on the rate, so it cannot compare rates);
- the same at one *common* rate, 15%, for every model (a fair comparison of the two).

Writes a JSON file with the command, seeds, versions, minutes and one row per run, plus the
mean and sample standard deviation per rate::

    OMP_NUM_THREADS=1 python experiments/mask_rate.py --json mlmcourse/course/results/mask_rate.json
    python experiments/mask_rate.py --max-steps 50 --seeds 0 --json /tmp/smoke.json  # a smoke run
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from mlmcourse.course.results import provenance, save_results
from mlmcourse.data import load_probes
from mlmcourse.pretraining import build_collator, load_config, load_texts, pretrain
from mlmcourse.tasks.fill_mask import fill_mask_accuracy
from mlmcourse.training import evaluate, fixed_eval_batches

COMMON_RATE = 0.15


def measure(rate: float, seed: int, max_steps: int | None) -> dict:
    """Train the world config at ``rate`` with ``seed``; return its scores."""
    overrides = {"mlm_probability": rate, "seed": seed, "eval_steps": 0, "output_dir": ""}
    if max_steps is not None:
        overrides["max_steps"] = max_steps
    start = time.perf_counter()
    run = pretrain(load_config("world", overrides), progress=False, log=None)
    own = evaluate(run.model, run.eval_batches)
    common_config = load_config("world", {**overrides, "mlm_probability": COMMON_RATE})
    collator = build_collator(
        common_config, run.tokenizer, run.model.config.max_position_embeddings
    )
    _, validation = load_texts(run.config.dataset)
    common = evaluate(
        run.model,
        fixed_eval_batches(
            validation, collator, batch_size=run.config.eval_batch_size, seed=run.config.eval_seed
        ),
    )
    facts, _ = fill_mask_accuracy(run.model, run.tokenizer, load_probes("fact"))
    return {
        "mlm_probability": rate,
        "seed": seed,
        "steps": run.config.max_steps,
        "fact_probe_accuracy": facts,
        "own_rate_accuracy": own["accuracy"],
        "own_rate_perplexity": own["perplexity"],
        "common_rate_accuracy": common["accuracy"],
        "common_rate_perplexity": common["perplexity"],
        "minutes": (time.perf_counter() - start) / 60,
    }


def summarise(rows: list[dict]) -> dict:
    """Mean and sample standard deviation of every score, per mask rate."""
    keys = [k for k in rows[0] if k.endswith(("accuracy", "perplexity"))]
    summary = {}
    for rate in sorted({r["mlm_probability"] for r in rows}):
        group = [r for r in rows if r["mlm_probability"] == rate]
        summary[str(rate)] = {
            key: {
                "mean": statistics.fmean(r[key] for r in group),
                "sd": statistics.stdev(r[key] for r in group) if len(group) > 1 else 0.0,
            }
            for key in keys
        }
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[0.15, 0.4])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-steps", type=int, default=None, help="default: the config's")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    rows = []
    for seed in args.seeds:
        for rate in args.rates:
            rows.append(measure(rate, seed, args.max_steps))
            print(json.dumps(rows[-1]), flush=True)
    results = {
        **provenance(argv, args.seeds, start),
        "what": "world config trained to the end at each mask rate and seed; fact probes "
        "(top-1 fill-mask), validation masked accuracy/perplexity at the model's own rate and "
        f"at a common {COMMON_RATE:.0%}",
        "runs": rows,
        "summary": summarise(rows),
    }
    save_results(args.json, results)
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
