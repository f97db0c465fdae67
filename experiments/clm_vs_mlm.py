"""CLM vs MLM on one budget, over seeds: every comparison book/clm_vs_mlm.md draws.

For each seed this trains a masked LM and a causal LM on the shipped ``clm_vs_mlm`` config
(``mlmcourse/assets/configs/clm_vs_mlm.yaml``, the budget ``book/clm_vs_mlm.md`` trains; only
``training_mode`` and ``seed`` change) and measures what the chapter compares:

- held-out loss and accuracy on each model's own task (reported, not comparable);
- right-context probes, overall and per relation (top-1 ``fill_mask`` / next word);
- fact probes: all, answer at the end, answer inside (``by_blank_position``);
- generation from 100 validation prompts of two words: the share of well-formed sentences and
  of sentences with a repeated word, for CLM greedy, CLM top-10 sampling and MLM
  mask-predict (``continue_prompts``, ``generation_quality``);
- the linear probe's entity F1 on each frozen encoder, overall and per type
  (``unseen_name_probe``).

Writes a JSON file with the command, the config, seeds, versions, minutes, one row per seed
and the mean and sample standard deviation of every score, nested like a row::

    OMP_NUM_THREADS=1 python experiments/clm_vs_mlm.py --json mlmcourse/course/results/clm_vs_mlm.json
    python experiments/clm_vs_mlm.py --max-steps 5 --seeds 0 1 --prompts 3 --probe-epochs 1 \\
        --json /tmp/smoke.json  # a smoke run
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from mlmcourse.course.results import provenance, save_results
from mlmcourse.data import load_probes, world_texts
from mlmcourse.data.probes import by_blank_position, by_relation
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.tasks.fill_mask import fill_mask_accuracy
from mlmcourse.tasks.generation import (
    continue_prompts,
    corpus_trigrams,
    generation_quality,
    next_word_accuracy,
)
from mlmcourse.tasks.probing import unseen_name_probe

CONFIG = "clm_vs_mlm"
MODES = ("mlm", "clm")
RUN_INFO = ("seed", "steps", "minutes")  # a row's keys that are not scores
GENERATION_PROMPTS = 100  # the first validation sentences


def scores(mode: str, run: Any, context: dict) -> dict[str, dict[str, float]]:
    """One trained model's probe scores: own task, right-context, fact probes, linear probe."""
    accuracy = fill_mask_accuracy if mode == "mlm" else next_word_accuracy
    model, tokenizer = run.model.eval(), run.tokenizer
    right, rows = accuracy(model, tokenizer, context["right_context"])
    per_relation = by_relation(rows, context["right_context"])
    facts = by_blank_position(context["facts"])
    probe = unseen_name_probe(model, tokenizer, epochs=context["probe_epochs"]).metrics
    return {
        "own_task": {key: run.result.final_eval[key] for key in ("loss", "accuracy")},
        "right_context": {"all": right} | {r: acc for r, (acc, _) in per_relation.items()},
        "fact_probes": {name: accuracy(model, tokenizer, sub)[0] for name, sub in facts.items()},
        "linear_probe_f1": {"all": probe["f1"]}
        | {t: probe["report"][t]["f1-score"] for t in ("PER", "ORG", "LOC")},
    }


def measure(seed: int, max_steps: int | None, context: dict) -> dict:
    """Train both objectives on the budget with ``seed``; return every score of the chapter."""
    tic = time.perf_counter()
    overrides = {"seed": seed} | ({} if max_steps is None else {"max_steps": max_steps})
    runs = {
        mode: pretrain(load_config(CONFIG, {**overrides, "training_mode": mode}), progress=False, log=None)
        for mode in MODES
    }  # fmt: skip
    per_mode = {mode: scores(mode, run, context) for mode, run in runs.items()}
    _, outputs = continue_prompts(
        runs["clm"].model, runs["mlm"].model, runs["mlm"].tokenizer, context["references"]
    )
    row: dict[str, Any] = {"seed": seed, "steps": runs["mlm"].config.max_steps}
    for what in per_mode["mlm"]:
        row[what] = {mode: per_mode[mode][what] for mode in MODES}
    row["generation"] = {
        name: generation_quality(sentences, context["known"]) for name, sentences in outputs.items()
    }
    row["minutes"] = (time.perf_counter() - tic) / 60
    return row


def summarise(rows: list[dict]) -> dict:
    """Mean and sample standard deviation over the rows of every score, nested like a row."""

    def walk(values: list[Any]) -> dict:  # the same node of every row
        if isinstance(values[0], dict):
            return {key: walk([v[key] for v in values]) for key in values[0]}
        return {
            "mean": statistics.fmean(values),
            "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
        }

    return walk([{k: v for k, v in r.items() if k not in RUN_INFO} for r in rows])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-steps", type=int, default=None, help="default: the config's")
    parser.add_argument("--prompts", type=int, default=GENERATION_PROMPTS, help="for generation")
    parser.add_argument("--probe-epochs", type=int, default=20, help="of the linear probe")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    context = {
        "right_context": load_probes("right_context"),
        "facts": load_probes("fact"),
        "references": world_texts("validation")[: args.prompts],
        "probe_epochs": args.probe_epochs,
        "known": corpus_trigrams(world_texts("train")),
    }
    rows = []
    for seed in args.seeds:
        rows.append(measure(seed, args.max_steps, context))
        print(json.dumps(rows[-1]), flush=True)
    overrides = {} if args.max_steps is None else {"max_steps": args.max_steps}
    results = {
        **provenance(argv, args.seeds, start),
        "what": f"an MLM and a CLM trained on the shipped {CONFIG} config for each seed "
        "(training_mode and seed changed); right-context and fact probes (top-1), generation "
        f"from {args.prompts} validation prompts (well-formed share), linear-probe entity "
        f"F1 on the unseen-entity split ({args.probe_epochs} epochs)",
        "config": dataclasses.asdict(load_config(CONFIG, overrides)),
        "runs": rows,
        "summary": summarise(rows),
    }
    save_results(args.json, results)
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
