"""Which of the modern encoder's changes pay at small scale? An equal-time ablation, 3 seeds.

Rows: BERT as shipped, each change of :mod:`mlmcourse.model.modern` alone (rotary positions, GeGLU
with 2/3 of the feed-forward width so that its parameters stay BERT's, pre-LN, RMSNorm, no
biases, local attention), and all of them together, on the shipped ``world`` config (2 layers,
hidden 128, 32 tokens, 40% masking), scored on the world's test split; local attention: a
window of 8, every second layer global.

Every run gets the same budget of time on one torch thread, and every run is made alone on the
machine, one after another. Two timing runs per variant (seed 0) measure its seconds per step,
and its seeds get as many steps as fit (the schedule, warmup 10% then cosine decay, fitted to
them), so a slower change pays for its cost, as in the cramming study. Then each run's own
training time is checked against its seed's BERT run: a run more than ``--tolerance`` (5%)
away is given the steps that would have fitted and made again (at most ``--retries`` times).
Held-out masked accuracy and perplexity on fixed masks, tokens per second.

(A WikiText-2 arm, a minute a run on the tokenized validation split, left every model at the
unigram baseline's accuracy, so it ranked nothing; it was dropped. The course's English model,
trained for two hours, is in the pretraining-in-practice chapter.)

::

    python experiments/modern_ablation.py --json mlmcourse/course/results/modern_ablation.json
    python experiments/modern_ablation.py --world-seconds 3 --seeds 0 --variants bert all \\
        --json /tmp/smoke.json       # a smoke run
    python experiments/modern_ablation.py --redo all 0 --retries 8 \\
        --json mlmcourse/course/results/modern_ablation.json   # one row again, in its file

``--redo VARIANT SEED`` makes one row of a results file again (a run whose time was still off
its budget when the retries ran out, on a machine that was busy). A machine's speed drifts
between sessions, so its seed's BERT run is first made again for its recorded steps (its scores
must come out as recorded: only the time is new), and the row is fitted to that run's time,
which it keeps as ``bert_seconds``; the row replaced, the summary recomputed, and the re-run
recorded under ``redone`` with its command, tries and minutes.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data import world_texts
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.tasks.fill_mask import unigram_baseline
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
CORPORA = {"world": ("world", {}, 8)}  # config name, overrides, local window
EVAL_SEED = 1234
SUMMARY_KEYS = ("heldout_accuracy", "heldout_perplexity", "steps", "tokens_per_second",
                "cpu_minutes")  # fmt: skip
CALIBRATION_STEPS = (4, 28)  # a short and a longer timing run: their difference is per-step


def overrides(corpus: str, variant: str, seed: int, steps: int) -> dict:
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
    return keys


def seconds_per_step(
    corpus: str, variant: str, calibration: tuple[int, int] = CALIBRATION_STEPS
) -> float:
    """Seconds of one training step of this variant (seed 0), on a machine with nothing else
    running: the difference of two timing runs, so that setting up (data, tokenizer, model)
    cancels out."""

    def seconds(steps: int) -> float:
        tic = time.perf_counter()
        config = load_config(CORPORA[corpus][0], overrides(corpus, variant, 0, steps))
        pretrain(config, progress=False, log=None)
        return time.perf_counter() - tic

    short, long = calibration
    return (seconds(long) - seconds(short)) / (long - short)


def run(corpus: str, variant: str, seed: int, steps: int, test: list[str]) -> dict:
    """One run of ``steps`` (the budget's); accuracy and perplexity on the fixed held-out masks."""
    config = load_config(CORPORA[corpus][0], overrides(corpus, variant, seed, steps))
    tic, cpu = time.perf_counter(), time.process_time()
    trained = pretrain(config, progress=False, log=None)
    minutes, cpu_minutes = (time.perf_counter() - tic) / 60, (time.process_time() - cpu) / 60
    held_out = fixed_eval_batches(test, trained.collator, batch_size=64, seed=EVAL_SEED)
    scores = evaluate(trained.model, held_out)
    tokenizer = trained.tokenizer
    unigram = unigram_baseline(
        [tokenizer.encode(t).ids for t in trained.train_texts], held_out,
        vocab_size=tokenizer.vocab_size, ignore_ids=tokenizer.all_special_ids,
    )  # fmt: skip
    row = {"corpus": corpus, "variant": variant, "seed": seed, "steps": steps,
           "train_seconds": trained.result.train_seconds,
           "tokens_per_second": trained.result.tokens_per_second,
           "heldout_accuracy": scores["accuracy"], "heldout_perplexity": scores["perplexity"],
           "unigram_accuracy": unigram["accuracy"], "unigram_perplexity": unigram["perplexity"],
           "parameters": trained.model.num_parameters(), "minutes": minutes,
           "cpu_minutes": cpu_minutes}  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


def fitted_run(
    corpus: str, variant: str, seed: int, steps: int, bert_seconds: float, tolerance: float,
    retries: int, test: list[str],
) -> dict:  # fmt: skip
    """One run whose training time is within ``tolerance`` of ``bert_seconds``: while it is
    not, it is given the steps that would have fitted and made again (``retries`` times)."""
    tries = 0
    while True:
        row, tries = run(corpus, variant, seed, steps, test), tries + 1
        ratio = row["train_seconds"] / bert_seconds
        if abs(ratio - 1) <= tolerance or tries > retries:
            return {**row, "tries": tries, "seconds_vs_bert": ratio}
        steps = max(1, round(steps / ratio))


def equal_time_rows(
    corpus: str, seed: int, steps: dict, variants: list[str], tolerance: float, retries: int
) -> list[dict]:
    """One seed's rows, BERT first, every other run fitted to BERT's training time."""
    test = world_texts("test")
    bert = run(corpus, "bert", seed, steps[corpus, "bert"], test)
    rows = [{**bert, "tries": 1, "seconds_vs_bert": 1.0}]
    for variant in [v for v in variants if v != "bert"]:
        n = steps[corpus, variant]
        rows.append(fitted_run(corpus, variant, seed, n, bert["train_seconds"], tolerance,
                               retries, test))  # fmt: skip
    return rows


def summarise(rows: list[dict], variants: list[str]) -> dict:
    """Mean and spread over seeds of each corpus's variants."""
    return {
        corpus: {
            variant: mean_sd([r for r in rows if (r["corpus"], r["variant"]) == (corpus, variant)],
                             SUMMARY_KEYS)
            for variant in variants
        }
        for corpus in CORPORA
    }  # fmt: skip


def redo(path: Path, variant: str, seed: int, tolerance: float, retries: int, argv) -> dict:
    """Make one row of the results file at ``path`` again, fitted to its seed's recorded BERT
    run, and write the file back with the row replaced and the summary recomputed."""
    results = json.loads(path.read_text())
    start = time.perf_counter()
    rows = results["runs"]
    index = next((i for i, r in enumerate(rows) if (r["variant"], r["seed"]) == (variant, seed)),
                 None)  # fmt: skip
    if variant == "bert" or index is None:
        raise SystemExit(f"--redo: {path} has no non-BERT row ({variant!r}, seed {seed})")
    old, test = rows[index], world_texts("test")
    bert = next(r for r in rows if (r["corpus"], r["variant"], r["seed"]) ==
                (old["corpus"], "bert", seed))  # fmt: skip
    now = run(old["corpus"], "bert", seed, bert["steps"], test)  # this machine's speed today
    if abs(now["heldout_accuracy"] - bert["heldout_accuracy"]) > 1e-6:
        raise SystemExit(
            f"--redo: BERT seed {seed} scores {now['heldout_accuracy']:.6f}, the "
            f"file {bert['heldout_accuracy']:.6f}: not the run that was recorded"
        )
    steps = max(1, round(old["steps"] / old["seconds_vs_bert"]))
    row = fitted_run(old["corpus"], variant, seed, steps, now["train_seconds"], tolerance,
                     retries, test)  # fmt: skip
    rows[index] = {**row, "bert_seconds": now["train_seconds"],
                   "seconds_per_step_alone": old["seconds_per_step_alone"]}  # fmt: skip
    results["summary"] = summarise(rows, list(dict.fromkeys(r["variant"] for r in rows)))
    redone = provenance(argv, [seed], start)
    results.setdefault("redone", []).append(
        {"command": redone["command"], "variant": variant, "seed": seed, "retries": retries,
         "tries": row["tries"], "minutes": redone["minutes"],
         "replaced": {k: old[k] for k in ("steps", "train_seconds", "seconds_vs_bert", "tries",
                                         "heldout_accuracy")}}
    )  # fmt: skip
    save_results(path, results)
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--world-seconds", type=float, default=40.0, help="budget of a run")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.05,
        help="a run's time may differ from its seed's BERT run by this share",
    )
    parser.add_argument("--retries", type=int, default=3, help="re-fits of a run off its budget")
    parser.add_argument("--calibration-steps", type=int, nargs=2, default=CALIBRATION_STEPS,
                        metavar=("SHORT", "LONG"), help="the two timing runs' steps")  # fmt: skip
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    parser.add_argument("--redo", nargs=2, metavar=("VARIANT", "SEED"),
                        help="make this row of the --json file again (see above)")  # fmt: skip
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.redo:
        variant, seed = args.redo[0], int(args.redo[1])
        redo(args.json, variant, seed, args.tolerance, args.retries, argv)
        return
    if "bert" not in args.variants:
        parser.error("--variants needs bert: every run's time is checked against BERT's")
    start = time.perf_counter()
    budgets = {"world": args.world_seconds}
    calibration = tuple(args.calibration_steps)
    if not 0 < calibration[0] < calibration[1]:
        parser.error(f"--calibration-steps needs 0 < SHORT < LONG, got {calibration}")
    for corpus in CORPORA:  # a throwaway first timing: a fresh process's first runs are slower
        seconds_per_step(corpus, "bert", calibration)
    per_step = {(c, v): seconds_per_step(c, v, calibration) for c in CORPORA for v in args.variants}
    steps = {(c, v): max(calibration[0], int(budgets[c] / s)) for (c, v), s in per_step.items()}
    print(json.dumps({f"{c}/{v}": n for (c, v), n in steps.items()}), flush=True)
    rows = [
        row
        for corpus in CORPORA
        for seed in args.seeds
        for row in equal_time_rows(corpus, seed, steps, args.variants, args.tolerance, args.retries)
    ]
    for row in rows:
        row["seconds_per_step_alone"] = per_step[row["corpus"], row["variant"]]
    summary = summarise(rows, args.variants)
    results = {
        **provenance(argv, args.seeds, start),
        "what": "equal-time ablation of the modern encoder's switches: BERT, each change alone, "
        f"all together; {args.world_seconds:g} s a run on the world (scored on its test split); "
        f"each variant's steps fitted to the budget by two timing runs ({calibration[0]} and "
        f"{calibration[1]} steps), every run alone on the machine, one after another, and made "
        f"again with re-fitted steps while its training time was more than "
        f"{args.tolerance:.0%} off its seed's BERT run; {args.threads} torch thread(s)",
        "tolerance": args.tolerance,
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
