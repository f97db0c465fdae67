"""Adapting the course's English model to a domain: tweets and movie reviews, 3 seeds.

For each domain and seed, the shipped English model (``mlmcourse/assets/checkpoints/english``)
continues masked-language-model pretraining with its own recipe (the ``english`` config with
``init_from``) for ``--steps`` steps on the domain's training text: WNUT-17's training tweets
(their tags unused) or SST-2's training sentences (their labels unused). Alone, or with replay:
one of the English model's own training pieces after every ``REPLAY_EVERY`` domain texts.
Each model is scored before and after, with :func:`~mlmcourse.tasks.fill_mask.held_out_scores`
(the unigram baseline beside it, on the same masks), on the domain's held-out text (WNUT-17's
dev tweets, SST-2's dev sentences) and on the English model's held-out articles (forgetting).
Fills of the English experiment's sentences, before and after (seed 0, no replay).

Then what it buys. WNUT-17 entity F1 on the test split, once per seed, fine-tuned from the
world encoder, from the English model and from the English model adapted to tweets (no replay,
same seed), with the NER recipe of real text and a learning rate chosen on WNUT-17's dev split
for the English model (seed 0). SST-2's dev sentences prompted (``"{text} it was [MASK] ."``,
``great``, ``good`` / ``bad``, ``poor``, contextual calibration): accuracy and AUC before and after adapting to
reviews. Two runs at a time, one torch thread each::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/english_adaptation.py \\
        --json mlmcourse/course/results/english_adaptation.json
    python experiments/english_adaptation.py --steps 2 --seeds 0 --limit 64 --json /tmp/a.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

import torch

from mlmcourse.checkpoint import shipped_checkpoint
from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data import load_sst2, load_wnut17
from mlmcourse.data.english import english_texts
from mlmcourse.data.real import WNUT17_LABELS
from mlmcourse.heads import load_checkpoint
from mlmcourse.interop.bert import load_bert
from mlmcourse.pretraining import load_config, pretrain
from mlmcourse.tasks.fill_mask import fill_mask, held_out_scores
from mlmcourse.tasks.ner import (
    REAL_TEXT_RECIPE,
    LabelVocab,
    evaluate_ner,
    fine_tune_tagger,
    new_tagger,
)
from mlmcourse.tasks.zero_shot import prompt_classify

ADAPTATION = {"learning_rate": 3e-4, "lr_scheduler_type": "linear"}  # 30% of the first peak
REPLAY_EVERY = 3
NER_RATES = (2e-4, 5e-4, 1e-3)  # chosen among on WNUT-17's dev split, English model, seed 0
TEMPLATE = "{text} it was [MASK] ."
# Label words that are one piece of the English model's vocabulary ("terrible" is two):
# chosen from the vocabulary, before any prompt was scored.
VERBALIZERS = {"negative": ("bad", "poor"), "positive": ("great", "good")}
SCORE_KEYS = ("accuracy", "perplexity", "unigram_accuracy", "unigram_perplexity", "times_unigram")


def _fills() -> list:
    """The English experiment's sentences (experiments/english_mlm.py, written before any
    model was trained)."""
    path = Path(__file__).with_name("english_mlm.py")
    spec = importlib.util.spec_from_file_location("english_mlm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FILLS


def domain_texts(domain: str, split: str, limit: int | None) -> list[str]:
    """The text of a domain's split: tweets (WNUT-17 train or dev), reviews (SST-2)."""
    if domain == "tweets":
        return [" ".join(s.tokens) for s in load_wnut17(split)[:limit]]
    return [text for text, _ in load_sst2(split)[:limit]]


def corpus(domain: str, replay: bool, seed: int, work: Path, limit: int | None) -> Path:
    """The domain's training texts as a file, one per line; with replay, an English training
    piece (in a seeded order) after every ``REPLAY_EVERY`` of them."""
    lines, old = [], english_texts("train")
    random.Random(seed).shuffle(old)
    for i, text in enumerate(domain_texts(domain, "train", limit)):
        lines.append(text)
        if replay and i % REPLAY_EVERY == REPLAY_EVERY - 1:
            lines.append(old[(i // REPLAY_EVERY) % len(old)])
    path = work / f"{domain}-{'replay' if replay else 'alone'}-{seed}.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def scores(model, tokenizer, domain: str, limit: int | None) -> dict:
    """Held-out scores on the domain's text and on the English articles (forgetting)."""
    target = held_out_scores(
        model, tokenizer, domain_texts(domain, "dev", limit),
        train_texts=domain_texts(domain, "train", limit),
    )  # fmt: skip
    english = held_out_scores(
        model, tokenizer, english_texts("test")[:limit], train_texts=english_texts("train")
    )
    hidden = held_out_scores(
        model, tokenizer, domain_texts(domain, "dev", limit), mask_replace_prob=1.0,
        random_replace_prob=0.0, train_texts=domain_texts(domain, "train", limit),
    )  # fmt: skip
    return {
        **{f"target_{k}": target[k] for k in SCORE_KEYS},
        **{f"target_all_masked_{k}": hidden[k] for k in SCORE_KEYS},
        **{f"english_{k}": english[k] for k in SCORE_KEYS},
    }


def fills(model, tokenizer) -> list[list[str]]:
    return [[c["token_str"] for c in fill_mask(model, tokenizer, text)] for _, text, _ in _fills()]


def sst2_prompting(model, tokenizer, limit: int | None) -> dict:
    """SST-2 dev prompted with calibration: accuracy and AUC of P(positive)."""
    dev = load_sst2("dev")[:limit]
    texts = [t for t, _ in dev]
    results = prompt_classify(
        model, tokenizer, texts, template=TEMPLATE, verbalizers=VERBALIZERS, calibrate=True
    )
    positive = [r["scores"][r["labels"].index("positive")] for r in results]
    labels = [label for _, label in dev]
    accuracy = sum((p > 0.5) == bool(y) for p, y in zip(positive, labels, strict=True)) / len(dev)
    return {"sst2_accuracy": accuracy, "sst2_auc": auc(positive, labels)}


def auc(scores: list[float], labels: list[int]) -> float:
    """The probability that a positive example scores above a negative one (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def adapt(domain: str, replay: bool, seed: int, steps: int, work: Path, limit) -> dict:
    """One adaptation run: continued pretraining, then every score of the adapted model."""
    tic = time.perf_counter()
    output = work / f"{domain}-{'replay' if replay else 'alone'}-{seed}"
    config = load_config("english", {
        "init_from": str(shipped_checkpoint("english")), "seed": seed, "max_steps": steps,
        "dataset": str(corpus(domain, replay, seed, work, limit)), "output_dir": str(output),
        "warmup_steps": max(1, steps // 10), "logging_steps": 10, "eval_steps": 0,
        "save_steps": 0, **ADAPTATION,
    })  # fmt: skip
    run = pretrain(config, progress=False, log=None)
    row = {"domain": domain, "replay": replay, "seed": seed, "checkpoint": str(output)}
    row.update(scores(run.model, run.tokenizer, domain, limit))
    if domain == "reviews":
        row.update(sst2_prompting(run.model, run.tokenizer, limit))
    if seed == 0 and not replay:
        row["fills"] = fills(run.model, run.tokenizer)
    row["minutes"] = (time.perf_counter() - tic) / 60
    return row


def ner(start: str, encoder_dir: str, seed: int, rate: float, limit, splits=("test",)) -> dict:
    """Fine-tune a WNUT-17 tagger from the encoder in ``encoder_dir``; entity scores."""
    encoder, tokenizer = load_bert(encoder_dir)
    labels = LabelVocab(WNUT17_LABELS)
    model = new_tagger(encoder, labels, pretrained=True, seed=seed)
    recipe = replace(REAL_TEXT_RECIPE, learning_rate=rate)
    fine_tune_tagger(
        model, load_wnut17("train")[:limit], tokenizer, labels, recipe=recipe, seed=seed
    )
    row = {"start": start, "seed": seed, "learning_rate": rate}
    for split in splits:
        result = evaluate_ner(model, tokenizer, load_wnut17(split)[:limit])
        row.update({f"{split}_{k}": result[k] for k in ("precision", "recall", "f1")})
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=300, help="steps of continued pretraining")
    parser.add_argument("--workers", type=int, default=2, help="runs at once")
    parser.add_argument("--limit", type=int, default=None, help="first N texts of each split")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="english_adapt_"))
    english = load_checkpoint(shipped_checkpoint("english"))
    before = {
        d: scores(english.model, english.tokenizer, d, args.limit) for d in ("tweets", "reviews")
    }
    before["sst2"] = sst2_prompting(english.model, english.tokenizer, args.limit)
    before["fills"] = fills(english.model, english.tokenizer)
    spawn = get_context("spawn")
    with ProcessPoolExecutor(
        args.workers, spawn, initializer=torch.set_num_threads, initargs=(1,)
    ) as pool:
        jobs = [pool.submit(adapt, d, r, s, args.steps, work, args.limit)
                for d in ("tweets", "reviews") for r in (False, True) for s in args.seeds]  # fmt: skip
        runs = [job.result() for job in jobs]
        english_dir = str(shipped_checkpoint("english"))
        choice = [pool.submit(ner, "english", english_dir, 0, rate, args.limit, ("dev",))
                  for rate in NER_RATES]  # fmt: skip
        choice = [job.result() for job in choice]
        rate = max(choice, key=lambda row: row["dev_f1"])["learning_rate"]
        tweets = {
            r["seed"]: r["checkpoint"] for r in runs if r["domain"] == "tweets" and not r["replay"]
        }
        starts = [
            ("world", lambda s: str(shipped_checkpoint("world"))),
            ("english", lambda s: english_dir),
            ("english+tweets", tweets.__getitem__),
        ]
        jobs = [pool.submit(ner, name, where(s), s, rate, args.limit)
                for name, where in starts for s in args.seeds]  # fmt: skip
        ner_runs = [job.result() for job in jobs]
    for row in runs + ner_runs:
        print(json.dumps({k: v for k, v in row.items() if k != "fills"}), flush=True)
    summary = {
        f"{d}{'+replay' if r else ''}": mean_sd(
            [x for x in runs if (x["domain"], x["replay"]) == (d, r)],
            [f"{p}_{k}" for p in ("target", "target_all_masked", "english") for k in SCORE_KEYS]
            + (["sst2_accuracy", "sst2_auc"] if d == "reviews" else []),
        )
        for d in ("tweets", "reviews") for r in (False, True)
    }  # fmt: skip
    results = {
        **provenance(argv, args.seeds, start),
        "what": f"the shipped English model, MLM pretraining continued for {args.steps} steps "
        f"(the english config, {ADAPTATION}) on WNUT-17's training tweets or SST-2's training "
        f"sentences, alone or with an English training piece after every {REPLAY_EVERY}; held-out "
        "masked accuracy and perplexity (beside the unigram baseline, same masks) on the domain's "
        "dev text and on the English test articles, before and after; WNUT-17 test F1 from three "
        f"starting points (NER learning rate {rate}, chosen on dev among {list(NER_RATES)}); "
        f"SST-2 dev prompted with '{TEMPLATE}', {VERBALIZERS}, calibrated",
        "steps": args.steps,
        "adaptation": ADAPTATION,
        "replay_every": REPLAY_EVERY,
        "before": before,
        "runs": runs,
        "summary": summary,
        "ner_choice": choice,
        "ner_learning_rate": rate,
        "ner_runs": ner_runs,
        "ner_summary": {
            name: mean_sd([r for r in ner_runs if r["start"] == name], ["test_f1"])
            for name, _ in starts
        },
    }
    save_results(args.json, results)
    print(json.dumps({"summary": summary, "ner": results["ner_summary"]}, indent=2))


if __name__ == "__main__":
    main()
