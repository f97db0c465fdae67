"""The shipped ``wikitext2`` config, trained for real on a stated CPU budget, 3 seeds.

The config's sizes (4 layers, hidden 256, a WordPiece vocabulary of 8,000 trained on the text,
15% masking with 80/10/10, batch 32 x 128, AdamW at 5e-4 with linear decay) are kept; only the
number of steps (and the warmup, 10% of them) is cut to the budget. WikiText-2's *train* split
cannot be fetched on the machine these results come from, so the model trains on the
**validation** split (about 217k words of the tokenized release, ``<unk>`` read as ``[UNK]``)
and is scored on the **test** split it never saw: masked-token perplexity and accuracy (15%
masking, masks fixed by seed 1234) against the unigram baseline counted on the training text.
Paragraphs are cut at sentence ends into pieces of at most 80 words, so that little text is
lost to the 128-token limit. With the raw release in ``MLMCOURSE_DATA_DIR`` (or online),
``python -m mlmcourse pretrain --config wikitext2`` trains on the real train split instead::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/wikitext2_pretrain.py \\
        --json mlmcourse/course/results/wikitext2_pretrain.json
    python experiments/wikitext2_pretrain.py --steps 3 --seeds 0 --limit 200 --json /tmp/s.json
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import torch

from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data import load_wikitext2
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.tasks.fill_mask import unigram_baseline
from mlmcourse.training import evaluate, fixed_eval_batches

EVAL_SEED = 1234
SUMMARY_KEYS = ("test_perplexity", "test_accuracy", "unigram_perplexity", "unigram_accuracy",
                "train_minutes", "train_tokens_per_second")  # fmt: skip
MAX_WORDS = 80
_SENTENCE_END = re.compile(r"(?<= [.!?]) ")


def pieces(paragraph: str, max_words: int = MAX_WORDS) -> list[str]:
    """``paragraph`` cut after sentence ends into pieces of at most ``max_words`` words (a
    longer sentence is cut where the limit falls)."""
    out: list[list[str]] = [[]]
    for sentence in _SENTENCE_END.split(paragraph):
        words = sentence.split()
        while words:
            if len(out[-1]) + len(words) > max_words and out[-1]:
                out.append([])
            room = max_words - len(out[-1])
            out[-1] += words[:room]
            words = words[room:]
    return [" ".join(p) for p in out if p]


def texts(split: str, limit: int | None) -> list[str]:
    """The split's paragraphs (the first ``limit``), ``<unk>`` as ``[UNK]``, cut in pieces."""
    paragraphs = load_wikitext2(split)[:limit]
    return [p for line in paragraphs for p in pieces(line.replace("<unk>", "[UNK]"))]


def run_seed(seed: int, steps: int, corpus: str, test: list[str]) -> dict:
    """Train the config for ``steps`` on ``corpus`` with ``seed``; score the test split."""
    tic = time.perf_counter()
    config = load_config("wikitext2", {
        "dataset": corpus, "max_steps": steps, "seed": seed,
        "warmup_steps": max(1, steps // 10), "logging_steps": max(1, steps // 10),
        "eval_steps": 0, "save_steps": 0,
    })  # fmt: skip
    run = pretrain(config, progress=False, log=None)
    minutes = (time.perf_counter() - tic) / 60
    batches = fixed_eval_batches(test, run.collator, batch_size=64, seed=EVAL_SEED)
    scores = evaluate(run.model, batches)
    ids = [run.tokenizer.encode(t).ids for t in run.train_texts]
    unigram = unigram_baseline(
        ids, batches, vocab_size=run.tokenizer.vocab_size, ignore_ids=run.tokenizer.all_special_ids
    )
    real = sum(int(b["attention_mask"].sum()) for b in batches)
    return {
        "seed": seed,
        "test_perplexity": scores["perplexity"],
        "test_accuracy": scores["accuracy"],
        "unigram_perplexity": unigram["perplexity"],
        "unigram_accuracy": unigram["accuracy"],
        "train_minutes": minutes,
        "train_tokens_per_second": run.result.tokens_per_second,
        "test_tokens": real,
        "train_pieces": len(run.train_texts),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=100, help="the CPU budget, in steps")
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--limit", type=int, default=None, help="first N paragraphs only")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    corpus = Path(tempfile.mkdtemp(prefix="wikitext2_")) / "wikitext2_validation.txt"
    corpus.write_text("\n".join(texts("validation", args.limit)) + "\n", encoding="utf-8")
    test = texts("test", args.limit)
    spawn = get_context("spawn")
    with ProcessPoolExecutor(
        args.workers, spawn, initializer=torch.set_num_threads, initargs=(args.threads,)
    ) as pool:
        jobs = [pool.submit(run_seed, s, args.steps, str(corpus), test) for s in args.seeds]
        rows = [job.result() for job in jobs]
    for row in rows:
        print(json.dumps(row), flush=True)
    results = {
        **provenance(argv, args.seeds, start),
        "what": f"the wikitext2 config trained for {args.steps} steps (batch 32 x 128, "
        f"{args.threads} torch thread(s) per run, {args.workers} run(s) at once) on the "
        "WikiText-2 validation split, scored on the test split: masked-token perplexity and "
        f"accuracy (mask seed {EVAL_SEED}) against the unigram baseline of the training text",
        "steps": args.steps,
        "runs": rows,
        "summary": mean_sd(rows, SUMMARY_KEYS),
    }
    save_results(args.json, results)
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
