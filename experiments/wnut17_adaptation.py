"""Domain adaptation: continue MLM pretraining of MiniLM on tweets, then fine-tune NER on WNUT-17.

For each seed: MiniLM with the course's fitted MLM head (:func:`mlmcourse.interop.minilm.minilm_checkpoint`)
continues masked-language-model pretraining, every weight trained, on the text of WNUT-17's
**training** tweets (their tags are not used) with the pretraining recipe
(:func:`mlmcourse.pretraining.pretrain`, ``init_from``). Masked-token perplexity is measured on
the text of the **dev** tweets before and after (the same masks, fixed seed). The adapted
encoder is then fine-tuned for NER with the settings chosen on dev for the unadapted encoder
(:data:`mlmcourse.tasks.ner.REAL_TEXT_RECIPE`, the same seed) and the **test** split is scored once.
The runs without adaptation are those of ``experiments/wnut17_minilm.py``
(``results/wnut17_minilm.json``, same seeds and recipe). Two seeds at a time, one torch thread
each, as there::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/wnut17_adaptation.py \\
        --json mlmcourse/course/results/wnut17_adaptation.json
    python experiments/wnut17_adaptation.py --steps 2 --seeds 0 --limit 64 --json /tmp/smoke.json

The unigram baseline's perplexity at the same masks was added to the committed file later, by
``--unigram-only`` (no training; its command is recorded as ``unigram_command``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from multiprocessing import get_context
from pathlib import Path

import torch

from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data import load_wnut17
from mlmcourse.data.real import WNUT17_LABELS
from mlmcourse.heads import load_checkpoint
from mlmcourse.interop.bert import load_bert
from mlmcourse.interop.minilm import minilm_checkpoint
from mlmcourse.masking import MLMCollator
from mlmcourse.pretraining import pretrain
from mlmcourse.tasks.fill_mask import unigram_baseline
from mlmcourse.tasks.ner import (
    REAL_TEXT_RECIPE,
    LabelVocab,
    evaluate_ner,
    fine_tune_tagger,
    new_tagger,
)
from mlmcourse.training import evaluate, fixed_eval_batches

ADAPTATION = {"learning_rate": 5e-5, "batch_size": 32, "mlm_probability": 0.15}
EVAL_SEED = 1234


def tweets(split: str, limit: int | None) -> list[str]:
    return [" ".join(s.tokens) for s in load_wnut17(split)[:limit]]


def held_out_batches(tokenizer, texts: list[str]) -> list[dict]:
    """The held-out texts masked once (15%, 80/10/10, masks fixed by ``EVAL_SEED``)."""
    collator = MLMCollator(tokenizer, max_length=128, seed=EVAL_SEED)
    return fixed_eval_batches(texts, collator, batch_size=64, seed=EVAL_SEED)


def perplexity(model, tokenizer, texts: list[str]) -> float:
    """Masked-token perplexity of ``texts`` at the fixed masks."""
    return evaluate(model, held_out_batches(tokenizer, texts))["perplexity"]


def unigram_perplexity(tokenizer, train_texts: list[str], texts: list[str]) -> float:
    """The context-free baseline at the same masks: the add-one-smoothed piece frequencies of
    the training tweets (what a model that ignores the sentence can do)."""
    train_ids = [tokenizer.encode(t).ids for t in train_texts]
    return unigram_baseline(
        train_ids, held_out_batches(tokenizer, texts), vocab_size=tokenizer.vocab_size,
        ignore_ids=tokenizer.all_special_ids,
    )["perplexity"]  # fmt: skip


def adapt(seed: int, steps: int, corpus: Path, work: Path) -> Path:
    """Continue MLM pretraining from MiniLM + head on ``corpus``; the checkpoint's folder."""
    output = work / f"adapted-{seed}"
    pretrain(
        {
            "init_from": str(minilm_checkpoint(work / "minilm-mlm")),
            "dataset": str(corpus),
            "max_steps": steps,
            "warmup_steps": max(1, steps // 10),
            "lr_scheduler_type": "linear",
            "logging_steps": max(1, steps // 5),
            "output_dir": str(output),
            "seed": seed,
            **ADAPTATION,
        },
        progress=False,
        log=None,
    )
    return output


def ner_test_f1(encoder_dir: Path, seed: int, limit: int | None) -> dict:
    """Fine-tune a tagger from the encoder in ``encoder_dir``; entity scores on test."""
    encoder, tokenizer = load_bert(encoder_dir)
    labels = LabelVocab(WNUT17_LABELS)
    model = new_tagger(encoder, labels, pretrained=True, seed=seed)
    fine_tune_tagger(
        model, load_wnut17("train")[:limit], tokenizer, labels, recipe=REAL_TEXT_RECIPE, seed=seed
    )
    result = evaluate_ner(model, tokenizer, load_wnut17("test")[:limit])
    return {f"test_{k}": result[k] for k in ("precision", "recall", "f1")}


def run_seed(seed: int, steps: int, corpus: Path, work: Path, held_out: list[str],
             limit: int | None) -> dict:  # fmt: skip
    """Adapt with ``seed``, measure the perplexity after, fine-tune and score NER."""
    tic = time.perf_counter()
    adapted = adapt(seed, steps, corpus, work)
    after = load_checkpoint(adapted)
    row = {"seed": seed, "perplexity_after": perplexity(after.model, after.tokenizer, held_out)}
    row["adapt_minutes"] = (time.perf_counter() - tic) / 60
    row.update(ner_test_f1(adapted, seed, limit))
    row["minutes"] = (time.perf_counter() - tic) / 60
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=200, help="MLM steps of adaptation")
    parser.add_argument("--workers", type=int, default=2, help="seeds at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per seed")
    parser.add_argument("--limit", type=int, default=None, help="first N tweets of each split")
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument(
        "--unigram-only", action="store_true",
        help="add the unigram baseline's perplexity to an existing --json (no training)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    if args.unigram_only:
        add_unigram_baseline(args, argv, start)
        return
    work = Path(tempfile.mkdtemp(prefix="wnut17_adapt_"))
    corpus = work / "wnut17_train_tweets.txt"
    corpus.write_text("\n".join(tweets("train", args.limit)) + "\n", encoding="utf-8")
    held_out = tweets("dev", args.limit)
    base = load_checkpoint(minilm_checkpoint(work / "minilm-mlm"))
    before = perplexity(base.model, base.tokenizer, held_out)
    unigram = unigram_perplexity(base.tokenizer, tweets("train", args.limit), held_out)
    spawn, init = get_context("spawn"), (torch.set_num_threads, (args.threads,))
    with ProcessPoolExecutor(args.workers, spawn, initializer=init[0], initargs=init[1]) as pool:
        common = (args.steps, corpus, work, held_out, args.limit)
        rows = [job.result() for job in [pool.submit(run_seed, s, *common) for s in args.seeds]]
    for row in rows:
        print(json.dumps(row), flush=True)
    results = {
        **provenance(argv, args.seeds, start),
        "what": f"MiniLM + fitted MLM head, MLM pretraining continued for {args.steps} steps on "
        f"the text of WNUT-17's {len(tweets('train', args.limit))} training tweets "
        f"({ADAPTATION}, linear decay, all weights trained); masked-token perplexity on the "
        f"text of the {len(held_out)} dev sentences (mask seed {EVAL_SEED}); then NER fine-tuning "
        f"with {REAL_TEXT_RECIPE} and test entity F1, once per seed",
        "adaptation": {**ADAPTATION, "steps": args.steps},
        "ner_recipe": asdict(REAL_TEXT_RECIPE),
        "perplexity_before": before,
        "perplexity_unigram": unigram,
        "runs": rows,
        "summary": mean_sd(rows, ("perplexity_after", "test_f1", "adapt_minutes", "minutes")),
    }
    save_results(args.json, results)
    print(json.dumps({"perplexity_before": before, **results["summary"]}, indent=2))


def add_unigram_baseline(args: argparse.Namespace, argv: list[str] | None, start: float) -> None:
    """``perplexity_unigram`` added to a results file written before it was computed, with the
    command that computed it (``unigram_command``); the rest of the file is left as it was."""
    results = json.loads(args.json.read_text(encoding="utf-8"))
    work = Path(tempfile.mkdtemp(prefix="wnut17_unigram_"))
    tokenizer = load_checkpoint(minilm_checkpoint(work / "minilm-mlm")).tokenizer  # as main's
    unigram = unigram_perplexity(tokenizer, tweets("train", args.limit), tweets("dev", args.limit))
    results["perplexity_unigram"] = unigram
    results["unigram_command"] = provenance(argv, [], start)
    save_results(args.json, results)
    print(json.dumps({"perplexity_unigram": unigram}))


if __name__ == "__main__":
    main()
