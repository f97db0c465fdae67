"""The course's English MLM: the ``english`` config's long run, three shorter seeds, and fills.

The long run is the package's own command on 2 torch threads (about 100 minutes on a 2-core
CPU). Stopped, it continues from its last checkpoint (one every 250 steps) when this script
starts it again::

    OMP_NUM_THREADS=2 MLMCOURSE_DATA_DIR=../shared/data python -m mlmcourse pretrain \\
        --config english --set output_dir=runs/english

This script runs it (or resumes it) unless it is complete, then scores it on the held-out test
articles beside the unigram baseline on the same masks, reads its dev curve, trains the
config three times more for ``--steps`` (seeds 0-2, one thread each) for the curve's spread,
fills the sentences of :data:`FILLS` (written before any model was trained) with it, with
MiniLM's fitted head and with the unigram guess, and ships the model in 16-bit weights::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/english_mlm.py --long runs/english \\
        --ship mlmcourse/assets/checkpoints/english --json mlmcourse/course/results/english_mlm.json
    python experiments/english_mlm.py --long /tmp/e --long-steps 3 --steps 3 --limit 64 --json /tmp/e.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import torch

from mlmcourse.checkpoint import TrainingState, save_checkpoint
from mlmcourse.checkpoint.files import read_trainer_state
from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data.english import english_texts
from mlmcourse.heads import load_checkpoint
from mlmcourse.interop.minilm import load_minilm_mlm
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.tasks.fill_mask import fill_mask, held_out_scores

LONG_THREADS = 2
LONG_COMMAND = (
    f"OMP_NUM_THREADS={LONG_THREADS} python -m mlmcourse pretrain --config english "
    "--set output_dir=runs/english"
)
SCORE_KEYS = ("accuracy", "perplexity", "unigram_accuracy", "unigram_perplexity", "times_unigram")
KEEP_EVERY_STEP = 200  # the shipped history: every step up to here, then every 10th

# Written before any English model was trained (and never changed after): grammar, common
# collocations, and facts that the training articles state in other words. `answers` are the
# fills we expected; a model's top-5 is what it is.
FILLS = [
    ("grammar", "he was born in london and [MASK] in paris in 1890.", ["died", "lived"]),
    ("grammar", "the two ships [MASK] sunk during the battle.", ["were"]),
    ("grammar", "she [MASK] the award three times.", ["won", "received"]),
    ("grammar", "the band released [MASK] second album in 2004.", ["their", "its"]),
    ("collocation", "the film received positive [MASK] from critics.", ["reviews"]),
    ("collocation", "during world war [MASK], the ship served in the pacific.", ["ii"]),
    ("collocation", "the song debuted at number 70 on the billboard hot [MASK].", ["100"]),
    ("collocation", "the storm caused heavy [MASK] across the island.", ["damage", "rain"]),
    ("fact", "du fu was a prominent chinese [MASK] of the tang dynasty.", ["poet"]),
    ("fact", "manila is the capital of the [MASK].", ["philippines"]),
    ("fact", "the film follows the fictional mi6 agent james [MASK].", ["bond"]),
    ("fact", "meridian is the sixth largest city in the state of [MASK].", ["mississippi"]),
    ("fact", "kiss you is a song by the boy band one [MASK].", ["direction"]),
]


def run_long(directory: Path, steps: int | None, limit: int | None = None) -> None:
    """Run the long command into ``directory``, resuming from its checkpoint if it has one."""
    state = read_trainer_state(directory) if (directory / "config.json").is_file() else None
    max_steps = steps or load_config("english").max_steps
    if state is not None and state["step"] >= max_steps:
        return
    command = [sys.executable, "-m", "mlmcourse", "pretrain", "--config", "english"]
    command += ["--set", f"output_dir={directory}"]
    if steps:
        command += ["--set", f"max_steps={steps}", "--set", "eval_steps=1", "--set", "save_steps=1"]
    if limit:
        command += ["--set", f"eval_texts={limit}"]
    if state is not None:
        command += ["--set", f"resume_from_checkpoint={directory}"]
    env = {**os.environ, "OMP_NUM_THREADS": str(LONG_THREADS)}
    subprocess.run(command, env=env, check=True)


def curve(history: dict, dev_unigram: dict) -> list[dict]:
    """The dev curve: masked accuracy and perplexity against steps, tokens and minutes."""
    rows = {row["step"]: row for row in history["eval"]}  # the final evaluation repeats a step
    return [
        {
            "step": r["step"],
            "tokens": r["tokens"],
            "minutes": r["seconds"] / 60,
            "dev_accuracy": r["eval_accuracy"],
            "dev_perplexity": r["eval_perplexity"],
            "dev_unigram_accuracy": dev_unigram["unigram_accuracy"],
            "dev_unigram_perplexity": dev_unigram["unigram_perplexity"],
        }
        for r in rows.values()
    ]


def scores(model, tokenizer, split: str, train: list[str], limit: int | None = None) -> dict:
    """:func:`held_out_scores` on a split of the English corpus (its first ``limit`` texts): on
    BERT's 80/10/10 masks (the curve's), and with every target behind ``[MASK]``
    (``all_masked_*``: no kept token to copy)."""
    texts = english_texts(split)[:limit]
    result = held_out_scores(model, tokenizer, texts, train_texts=train)
    hidden = held_out_scores(
        model, tokenizer, texts, train_texts=train, mask_replace_prob=1.0, random_replace_prob=0.0
    )
    return {
        **{k: result[k] for k in (*SCORE_KEYS, "tokens")},
        **{f"all_masked_{k}": hidden[k] for k in SCORE_KEYS},
    }


def long_results(directory: Path, train: list[str], limit: int | None = None) -> dict:
    """The long run: its test and dev scores, curve, first losses, time and speed."""
    loaded = load_checkpoint(directory)
    state = read_trainer_state(directory)
    history = state["history"]
    dev = scores(loaded.model, loaded.tokenizer, "dev", train, limit)
    final = history["eval"][-1]
    assert abs(dev["accuracy"] - final["eval_accuracy"]) < 1e-9, "dev masks differ from the run's"
    last = history["train"][-1]
    return {
        "command": LONG_COMMAND,
        "threads": LONG_THREADS,
        "steps": state["step"],
        "tokens": state["tokens_seen"],
        "train_minutes": last["seconds"] / 60,
        "tokens_per_second": state["tokens_seen"] / last["seconds"],
        "test": scores(loaded.model, loaded.tokenizer, "test", train, limit),
        "dev": dev,
        "curve": curve(history, dev),
        "first_losses": [row["loss"] for row in history["train"][:20]],
        "losses": [[r["step"], r["loss"]] for r in history["train"] if r["step"] % 10 == 0],
    }


def short_run(seed: int, steps: int, limit: int | None = None) -> dict:
    """The config for ``steps`` (5% warmup) with ``seed``: its dev curve and test scores."""
    config = load_config("english", {
        "max_steps": steps, "warmup_steps": max(1, steps // 20), "seed": seed,
        "eval_steps": max(1, steps // 5), "save_steps": 0, "logging_steps": 10,
        "eval_texts": limit or 0,
    })  # fmt: skip
    run = pretrain(config, progress=False, log=None)
    dev = scores(run.model, run.tokenizer, "dev", run.train_texts, limit)
    return {
        "seed": seed,
        **{f"test_{k}": v for k, v in scores(run.model, run.tokenizer, "test", run.train_texts, limit).items()},
        "train_minutes": run.result.train_seconds / 60,
        "curve": curve(run.result.history, dev),
    }  # fmt: skip


def fills(model, tokenizer, train: list[str]) -> dict:
    """Each sentence of :data:`FILLS` filled by the English model, by MiniLM's fitted head, and
    the unigram guess (the most frequent training pieces, the same for every sentence)."""
    minilm, minilm_tokenizer = load_minilm_mlm()
    counts = torch.zeros(tokenizer.vocab_size, dtype=torch.long)
    for text in train:
        counts += torch.bincount(torch.tensor(tokenizer.encode(text).ids), minlength=len(counts))
    counts[list(tokenizer.all_special_ids)] = 0
    unigram = [tokenizer.convert_ids_to_tokens(int(i)) for i in counts.topk(5).indices]

    def top5(m, t, text: str) -> list[list]:
        return [[c["token_str"], round(c["score"], 4)] for c in fill_mask(m, t, text, top_k=5)]

    rows = [
        {"kind": kind, "text": text, "answers": answers,
         "english": top5(model, tokenizer, text), "minilm": top5(minilm, minilm_tokenizer, text)}
        for kind, text, answers in FILLS
    ]  # fmt: skip
    return {"unigram_top5": unigram, "sentences": rows}


def ship(directory: Path, target: Path) -> Path:
    """The long run's model in 16-bit weights, with its tokenizer (and fingerprint) and history
    (every step up to :data:`KEEP_EVERY_STEP`, then every 10th); no optimiser state."""
    loaded = load_checkpoint(directory)
    state = read_trainer_state(directory)
    history = dict(state["history"])
    history["train"] = [
        r for r in history["train"] if r["step"] <= KEEP_EVERY_STEP or r["step"] % 10 == 0
    ]
    if target.exists():
        shutil.rmtree(target)
    run = TrainingState(
        step=state["step"], training_config=state["training_config"], history=history,
        tokens_seen=state["tokens_seen"],
    )  # fmt: skip
    save_checkpoint(target, loaded.model.half(), tokenizer=loaded.tokenizer, state=run)
    (target / "training_state.pt").unlink()
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", type=Path, required=True, help="the long run's directory")
    parser.add_argument("--long-steps", type=int, default=None, help="a shorter 'long' run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=1000, help="steps of the shorter runs")
    parser.add_argument("--workers", type=int, default=2, help="shorter runs at once")
    parser.add_argument("--ship", type=Path, default=None, help="where to write the model")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="score the first N dev and test texts only (a check)",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    run_long(args.long, args.long_steps, args.limit)
    train = english_texts("train")
    long = long_results(args.long, train, args.limit)
    print(json.dumps({k: long[k] for k in ("steps", "train_minutes", "test", "dev")}), flush=True)
    spawn = get_context("spawn")
    with ProcessPoolExecutor(
        args.workers, spawn, initializer=torch.set_num_threads, initargs=(1,)
    ) as pool:
        jobs = [pool.submit(short_run, seed, args.steps, args.limit) for seed in args.seeds]
        runs = [job.result() for job in jobs]
    loaded = load_checkpoint(args.long)
    results = {
        **provenance(argv, args.seeds, start),
        "what": "the english config (4 layers, hidden 256, WordPiece 8,000 uncased, packed rows "
        "of 128, 15% masking) trained from scratch on WikiText-2's train articles: the long run "
        f"and {len(args.seeds)} runs of {args.steps} steps, scored on the held-out test articles "
        "(masks seeded 1234) beside the unigram baseline on the same masks; the curves on the "
        "dev articles",
        "long": long,
        "short": {
            "steps": args.steps,
            "runs": runs,
            "summary": mean_sd(
                runs,
                [f"test_{p}{k}" for p in ("", "all_masked_") for k in SCORE_KEYS]
                + ["train_minutes"],
            ),
        },
        "fills": fills(loaded.model, loaded.tokenizer, train),
    }
    if args.ship:
        shipped = load_checkpoint(ship(args.long, args.ship))
        results["shipped"] = {
            "bytes": sum(f.stat().st_size for f in args.ship.iterdir()),
            "test": scores(shipped.model, shipped.tokenizer, "test", train, args.limit),
        }
    save_results(args.json, results)
    print(json.dumps(results["short"]["summary"], indent=2))


if __name__ == "__main__":
    main()
