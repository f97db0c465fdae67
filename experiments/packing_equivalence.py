"""Does packing change what pretraining learns? Padded vs packed runs at equal real tokens, 3 seeds.

For each corpus (the world with the shipped ``world`` config; WikiText-2 with the ``wikitext2``
config, trained on pieces of the validation split and scored on the test split, as in
``wikitext2_pretrain.py``), each seed trains twice for the same number of steps:

- **padded**: the config as shipped, ``batch_size`` texts a step, each batch padded to its
  longest row;
- **packed**: ``packing: true`` with fewer rows a step, chosen so that a step holds the same
  number of real tokens on average (measured on the first batches of both).

Same schedule, same number of steps, the same real tokens, so any difference in held-out loss
is packing's. Scored on the same fixed held-out masks (masked-token loss and perplexity), with
the real tokens each run trained on and its minutes (two runs at once, one thread each)::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/packing_equivalence.py \\
        --json mlmcourse/course/results/packing_equivalence.json
    python experiments/packing_equivalence.py --world-steps 3 --wikitext-steps 2 --seeds 0 \\
        --limit 60 --json /tmp/smoke.json           # a smoke run
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
from mlmcourse.masking import MLMCollator
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.training import MLMBatches, evaluate, fixed_eval_batches
from mlmcourse.training.packing import PackedMLMBatches, PackedMLMCollator

MODES = ("padded", "packed")
SUMMARY_KEYS = ("heldout_loss", "heldout_perplexity", "real_tokens", "minutes")


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


def run(corpus: str, mode: str, seed: int, steps: int, dataset: str, test: list[str] | None):
    """One training run; held-out scores on fixed masks (the world's validation split, or
    WikiText-2's test pieces)."""
    overrides = {"max_steps": steps, "seed": seed, "warmup_steps": max(1, steps // 10),
                 "logging_steps": max(1, steps // 10), "eval_steps": 0, "save_steps": 0,
                 "final_evaluation": False}  # fmt: skip
    if corpus == "wikitext2":
        overrides["dataset"] = dataset
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
    if test is not None:
        held_out = fixed_eval_batches(test, trained.collator, batch_size=64, seed=EVAL_SEED)
    scores = evaluate(trained.model, held_out)
    row = {"corpus": corpus, "mode": mode, "seed": seed, "steps": steps, "rows_per_step": rows,
           "real_tokens": trained.result.tokens_seen, "heldout_loss": scores["loss"],
           "heldout_perplexity": scores["perplexity"], "minutes": minutes}  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--world-steps", type=int, default=600)
    parser.add_argument("--wikitext-steps", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--limit", type=int, default=None, help="first N WikiText-2 paragraphs")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    dataset = Path(tempfile.mkdtemp(prefix="wikitext2_")) / "wikitext2_validation.txt"
    dataset.write_text("\n".join(texts("validation", args.limit)) + "\n", encoding="utf-8")
    test = texts("test", args.limit)
    jobs = [
        ("world", mode, seed, args.world_steps, "", None) for seed in args.seeds for mode in MODES
    ]
    jobs += [("wikitext2", mode, seed, args.wikitext_steps, str(dataset), test)
             for seed in args.seeds for mode in MODES]  # fmt: skip
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
        for corpus in ("world", "wikitext2")
    }  # fmt: skip
    results = {
        **provenance(argv, args.seeds, start),
        "what": "held-out masked-token loss of padded and packed pretraining at the same steps "
        "and the same real tokens a step (packed rows per step chosen to match), the world "
        f"({args.world_steps} steps) and WikiText-2 ({args.wikitext_steps} steps; trained on "
        "the validation split, scored on the test split), fixed held-out masks, "
        f"{args.threads} torch thread(s) per run and {args.workers} run(s) at once",
        "runs": rows,
        "summary": summary,
    }
    save_results(args.json, results)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
