"""Which of the modern encoder's changes pay at small scale? An equal-time ablation, 3 seeds.

Rows: BERT as shipped, each change of :mod:`mlmcourse.model.modern` alone (rotary positions, GeGLU
with 2/3 of the feed-forward width so that its parameters stay BERT's, pre-LN, RMSNorm, no
biases, local attention), and all of them together. Every run gets the
same budget of time on one torch thread: two timing runs, one variant after another with
nothing else running, measure the variant's seconds per step, and each of its seeds is given
as many steps as fit (the schedule, warmup 10% then cosine or linear decay, fitted to them), so
a slower change pays for its cost, as in the cramming study. The runs themselves then go two
at a time; sharing the machine slows every variant alike. Held-out masked accuracy and perplexity on fixed masks, tokens per second.

- **world**: the shipped ``world`` config (2 layers, hidden 128, 32 tokens, 40% masking),
  scored on the world's test split; local attention: a window of 8, every second layer global.
- **WikiText-2**: the ``wikitext2`` config narrowed to hidden 128 (4 layers, 128 tokens, 15%
  masking) so that a short budget still trains it; trained on pieces of the validation split
  (the train split is not reachable here), scored on the test split; local attention: a
  window of 32, every second layer global.

::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/modern_ablation.py \\
        --json mlmcourse/course/results/modern_ablation.json
    python experiments/modern_ablation.py --world-seconds 3 --wikitext-seconds 3 --seeds 0 \\
        --variants bert all --limit 40 --json /tmp/smoke.json       # a smoke run
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
from wikitext2_pretrain import EVAL_SEED, texts

from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data import world_texts
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.training import evaluate, fixed_eval_batches

# Each variant's switches (PretrainConfig keys); "local" gets its window per corpus.
VARIANTS: dict[str, dict] = {
    "bert": {},
    "rotary": {"position_embedding_type": "rotary"},
    "geglu": {"ffn_type": "geglu", "intermediate_size": "two_thirds"},
    "pre_ln": {"pre_layer_norm": True},
    "rmsnorm": {"norm_type": "rmsnorm"},
    "no_bias": {"bias": False},
    "local": {"local_attention": "window", "global_attn_every_n_layers": 2},
    "all": {"position_embedding_type": "rotary", "ffn_type": "geglu",
            "intermediate_size": "two_thirds", "pre_layer_norm": True,
            "norm_type": "rmsnorm", "bias": False, "local_attention": "window",
            "global_attn_every_n_layers": 2},
}  # fmt: skip
CORPORA = {  # config name, overrides, local window
    "world": ("world", {}, 8),
    "wikitext2": ("wikitext2", {"hidden_size": 128, "intermediate_size": 512}, 32),
}
SUMMARY_KEYS = ("heldout_accuracy", "heldout_perplexity", "steps", "tokens_per_second",
                "cpu_minutes")  # fmt: skip
CALIBRATION_STEPS = (4, 28)  # a short and a longer timing run: their difference is per-step


def overrides(corpus: str, variant: str, seed: int, steps: int, dataset: str) -> dict:
    """The config keys of one run: the corpus's, the variant's switches, the schedule."""
    name, base, window = CORPORA[corpus]
    width = base.get("intermediate_size") or load_config(name).intermediate_size
    # a gated block has two up-projections: 2/3 of the width keeps its parameters (Shazeer 2020)
    resolve = {"window": window, "two_thirds": 8 * round(width * 2 / 3 / 8)}
    switches = {k: resolve.get(v, v) if isinstance(v, str) else v
                for k, v in VARIANTS[variant].items()}  # fmt: skip
    keys = {**base, **switches, "max_steps": steps, "seed": seed,
            "warmup_steps": max(1, steps // 10), "logging_steps": max(1, steps // 10),
            "eval_steps": 0, "save_steps": 0, "final_evaluation": False}  # fmt: skip
    if corpus == "wikitext2":
        keys["dataset"] = dataset
    return keys


def seconds_per_step(
    corpus: str, variant: str, dataset: str, calibration: tuple[int, int] = CALIBRATION_STEPS
) -> float:
    """Seconds of one training step of this variant (seed 0), on a machine with nothing else
    running: the difference of two timing runs, so that setting up (data, tokenizer, model)
    cancels out."""

    def seconds(steps: int) -> float:
        tic = time.perf_counter()
        config = load_config(CORPORA[corpus][0], overrides(corpus, variant, 0, steps, dataset))
        pretrain(config, progress=False, log=None)
        return time.perf_counter() - tic

    short, long = calibration
    return (seconds(long) - seconds(short)) / (long - short)


def run(corpus: str, variant: str, seed: int, steps: int, dataset: str, test: list[str]):
    """One run of ``steps`` (the budget's); accuracy and perplexity on the fixed held-out masks."""
    config = load_config(CORPORA[corpus][0], overrides(corpus, variant, seed, steps, dataset))
    tic, cpu = time.perf_counter(), time.process_time()
    trained = pretrain(config, progress=False, log=None)
    minutes, cpu_minutes = (time.perf_counter() - tic) / 60, (time.process_time() - cpu) / 60
    held_out = fixed_eval_batches(test, trained.collator, batch_size=64, seed=EVAL_SEED)
    scores = evaluate(trained.model, held_out)
    row = {"corpus": corpus, "variant": variant, "seed": seed, "steps": steps,
           "train_seconds": trained.result.train_seconds,
           "tokens_per_second": trained.result.tokens_per_second,
           "heldout_accuracy": scores["accuracy"], "heldout_perplexity": scores["perplexity"],
           "parameters": trained.model.num_parameters(), "minutes": minutes,
           "cpu_minutes": cpu_minutes}  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--world-seconds", type=float, default=40.0, help="budget of a run")
    parser.add_argument("--wikitext-seconds", type=float, default=60.0, help="budget of a run")
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--limit", type=int, default=None, help="first N WikiText-2 paragraphs")
    parser.add_argument("--calibration-steps", type=int, nargs=2, default=CALIBRATION_STEPS,
                        metavar=("SHORT", "LONG"), help="the two timing runs' steps")  # fmt: skip
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    dataset = Path(tempfile.mkdtemp(prefix="wikitext2_")) / "wikitext2_validation.txt"
    dataset.write_text("\n".join(texts("validation", args.limit)) + "\n", encoding="utf-8")
    held_out = {"world": world_texts("test"), "wikitext2": texts("test", args.limit)}
    budgets = {"world": args.world_seconds, "wikitext2": args.wikitext_seconds}
    # One budget in steps per (corpus, variant), the same for its seeds, timed here one
    # variant after another (so no run shares the machine with another while it is timed).
    torch.set_num_threads(args.threads)
    calibration = tuple(args.calibration_steps)
    if not 0 < calibration[0] < calibration[1]:
        parser.error(f"--calibration-steps needs 0 < SHORT < LONG, got {calibration}")
    for corpus in CORPORA:  # a throwaway first timing: a fresh process's first runs are slower
        seconds_per_step(corpus, "bert", str(dataset), calibration)
    per_step = {
        (c, v): seconds_per_step(c, v, str(dataset), calibration)
        for c in CORPORA
        for v in args.variants
    }
    steps = {(c, v): max(calibration[0], int(budgets[c] / s)) for (c, v), s in per_step.items()}
    print(json.dumps({f"{c}/{v}": n for (c, v), n in steps.items()}), flush=True)
    spawn = get_context("spawn")
    with ProcessPoolExecutor(
        args.workers, spawn, initializer=torch.set_num_threads, initargs=(args.threads,)
    ) as pool:
        jobs = [(c, v, seed, steps[c, v], str(dataset), held_out[c])
                for c in CORPORA for seed in args.seeds for v in args.variants]  # fmt: skip
        rows = [future.result() for future in [pool.submit(run, *job) for job in jobs]]
    for row in rows:
        row["seconds_per_step_alone"] = per_step[row["corpus"], row["variant"]]
    summary = {
        corpus: {
            variant: mean_sd([r for r in rows if (r["corpus"], r["variant"]) == (corpus, variant)],
                             SUMMARY_KEYS)
            for variant in args.variants
        }
        for corpus in CORPORA
    }  # fmt: skip
    results = {
        **provenance(argv, args.seeds, start),
        "what": "equal-time ablation of the modern encoder's switches: BERT, each change alone, "
        f"all together; {args.world_seconds:g} s a run on the world (scored on its test split), "
        f"{args.wikitext_seconds:g} s on WikiText-2 (validation pieces; scored on the test "
        f"split); each variant's steps fitted to the budget by two timing runs alone on the "
        f"machine ({calibration[0]} and {calibration[1]} steps), the same for its "
        f"seeds; "
        f"{args.threads} torch thread(s) per run, {args.workers} run(s) at once",
        "variants": VARIANTS,
        "corpora": {
            name: {"config": c, "overrides": o, "local_window": w}
            for name, (c, o, w) in CORPORA.items()
        },  # fmt: skip
        "runs": rows,
        "summary": summary,
    }
    save_results(args.json, results)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
