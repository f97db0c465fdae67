"""Does packing change what pretraining learns? Padded vs packed runs at equal real tokens, 3 seeds.

For each corpus (the world with the shipped ``world`` config, scored on its validation split;
real English with the ``english`` config, continuing the shipped English model on its training
articles at a tenth of its first peak rate and scored on its held-out test articles, where a
model that learns is far from the unigram floor), each seed trains twice for the same number of
steps:

- **padded**: the config as shipped, ``batch_size`` texts a step, each batch padded to its
  longest row;
- **packed**: ``packing: true`` with fewer rows a step, chosen so that a step holds the same
  number of real tokens on average (measured on the first batches of both).

Same schedule, same number of steps, the same real tokens, so any difference in held-out loss
is packing's. Scored on the same fixed held-out masks (masked-token loss, perplexity and
accuracy, beside the unigram baseline on the same masks), with the real tokens each run
trained on and its minutes (two runs at once, one thread each)::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/packing_equivalence.py \\
        --json mlmcourse/course/results/packing_equivalence.json
    python experiments/packing_equivalence.py --world-steps 3 --english-steps 2 --seeds 0 \\
        --limit 60 --json /tmp/smoke.json           # a smoke run
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import torch

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data.english import english_texts
from mlmcourse.masking import MLMCollator
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.tasks.fill_mask import unigram_baseline
from mlmcourse.training import MLMBatches, evaluate, fixed_eval_batches
from mlmcourse.training.packing import PackedMLMBatches, PackedMLMCollator

MODES = ("padded", "packed")
SUMMARY_KEYS = ("heldout_loss", "heldout_perplexity", "heldout_accuracy", "real_tokens", "minutes")
EVAL_SEED = 1234
CONTINUE_ENGLISH = {"learning_rate": 1e-4, "lr_scheduler_type": "linear"}  # a tenth of 1e-3


def real_tokens_per_row(batches, n: int = 20) -> float:
    """The mean number of real (non-pad) tokens in a row of the first ``n`` batches."""
    rows = [batches(i)["attention_mask"] for i in range(n)]
    return sum(float(m.sum()) for m in rows) / sum(m.shape[0] for m in rows)


def packed_batch_size(config, train_texts: list[str], tokenizer) -> int:
    """Rows per packed step holding as many real tokens as ``config.batch_size`` padded rows."""
    collator = MLMCollator(tokenizer, max_length=config.max_length)
    padded = real_tokens_per_row(MLMBatches(train_texts, collator, batch_size=config.batch_size))
    packed_batches = PackedMLMBatches(
        train_texts, PackedMLMCollator(collator), batch_size=config.batch_size
    )
    packed = real_tokens_per_row(packed_batches)
    return max(1, round(config.batch_size * padded / packed))


def run(corpus: str, mode: str, seed: int, steps: int, limit: int | None) -> dict:
    """One training run; held-out scores on fixed masks (the world's validation split, or the
    English model's held-out articles) beside the unigram baseline on the same masks."""
    overrides = {"max_steps": steps, "seed": seed, "warmup_steps": max(1, steps // 10),
                 "logging_steps": max(1, steps // 10), "eval_steps": 0, "save_steps": 0,
                 "final_evaluation": False, "packing": False}  # fmt: skip
    if corpus == "english":
        overrides.update(init_from=str(shipped_checkpoint("english")), **CONTINUE_ENGLISH)
    config = load_config(corpus, overrides)
    rows = config.batch_size
    if mode == "packed":  # the same real tokens a step: fewer, fuller rows
        probe = pretrain(
            load_config(corpus, {**overrides, "max_steps": 1}), progress=False, log=None
        )
        rows = packed_batch_size(config, probe.train_texts, probe.tokenizer)
        config = load_config(corpus, {**overrides, "packing": True, "batch_size": rows})
    tic = time.perf_counter()
    trained = pretrain(config, progress=False, log=None)
    minutes = (time.perf_counter() - tic) / 60
    held_out = trained.eval_batches
    if corpus == "english":
        test = english_texts("test")[:limit]
        held_out = fixed_eval_batches(test, trained.collator, batch_size=64, seed=EVAL_SEED)
    scores = evaluate(trained.model, held_out)
    tokenizer = trained.tokenizer
    unigram = unigram_baseline(
        [tokenizer.encode(t).ids for t in trained.train_texts], held_out,
        vocab_size=tokenizer.vocab_size, ignore_ids=tokenizer.all_special_ids,
    )  # fmt: skip
    row = {"corpus": corpus, "mode": mode, "seed": seed, "steps": steps, "rows_per_step": rows,
           "real_tokens": trained.result.tokens_seen, "heldout_loss": scores["loss"],
           "heldout_perplexity": scores["perplexity"], "heldout_accuracy": scores["accuracy"],
           "unigram_perplexity": unigram["perplexity"],
           "unigram_accuracy": unigram["accuracy"], "minutes": minutes}  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--world-steps", type=int, default=600)
    parser.add_argument("--english-steps", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--limit", type=int, default=None, help="first N held-out English pieces")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    steps = {"world": args.world_steps, "english": args.english_steps}
    jobs = [(corpus, mode, seed, steps[corpus], args.limit)
            for corpus in steps for seed in args.seeds for mode in MODES]  # fmt: skip
    spawn = get_context("spawn")
    with ProcessPoolExecutor(
        args.workers, spawn, initializer=torch.set_num_threads, initargs=(args.threads,)
    ) as pool:
        rows = [future.result() for future in [pool.submit(run, *job) for job in jobs]]
    summary = {
        corpus: {
            mode: mean_sd([r for r in rows if (r["corpus"], r["mode"]) == (corpus, mode)],
                          SUMMARY_KEYS)
            for mode in MODES
        }
        for corpus in steps
    }  # fmt: skip
    results = {
        **provenance(argv, args.seeds, start),
        "what": "held-out masked-token loss of padded and packed pretraining at the same steps "
        "and the same real tokens a step (packed rows per step chosen to match), the world "
        f"({args.world_steps} steps) and English ({args.english_steps} steps continuing the "
        f"shipped English model, {CONTINUE_ENGLISH}, scored on its held-out test articles), "
        "fixed held-out masks with the unigram baseline on them, "
        f"{args.threads} torch thread(s) per run and {args.workers} run(s) at once",
        "runs": rows,
        "summary": summary,
    }
    save_results(args.json, results)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
