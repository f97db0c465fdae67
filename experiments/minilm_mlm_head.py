"""Fit the MLM head of the real MiniLM encoder on WikiText-2, and measure it against a unigram.

The encoder is frozen; the head (:mod:`mlmcourse.interop.minilm`) is trained on the encoder's vectors
at masked positions of the WikiText-2 **validation** split and scored once on the **test**
split. The learning rate is chosen first on the validation split alone: the head is fitted on
its first ``--sweep-size`` paragraphs and scored on its last 10%. The results: top-1 and top-5 accuracy and perplexity of the masked
pieces, against the unigram baseline (the most frequent pieces of the validation split). The
shared copy is the *tokenized* release, whose rare words are ``<unk>``: those become ``[UNK]``,
a special token that is never masked; paragraphs are cut at 128 pieces. The encoder's vectors
are computed once; the seeds (head initialisation and example order) share them. Seed 0's head
is the one shipped. Writes the results JSON and the head::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/minilm_mlm_head.py \\
        --json mlmcourse/course/results/minilm_mlm_head.json \\
        --head mlmcourse/assets/checkpoints/minilm_mlm_head.safetensors
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from mlmcourse.course.results import mean_sd, provenance, save_results
from mlmcourse.data import load_wikitext2
from mlmcourse.interop.minilm import (
    fit_mlm_head,
    load_minilm_mlm,
    masked_features,
    save_head,
    topk_accuracy,
)

EVAL_SEED = 1234


def wikitext(split: str, limit: int | None) -> list[str]:
    return [line.replace("<unk>", "[UNK]") for line in load_wikitext2(split)][:limit]


def unigram_logits(tokenizer, texts: list[str], vocab_size: int) -> torch.Tensor:
    """Log-probabilities of the add-one-smoothed piece frequencies of ``texts`` (specials 0)."""
    counts = torch.ones(vocab_size, dtype=torch.float64)
    for text in texts:
        ids = torch.tensor(tokenizer.encode(text).ids)
        counts += torch.bincount(ids, minlength=vocab_size).double()
    counts[list(tokenizer.all_special_ids)] = 0.0
    return (counts / counts.sum()).log().float()


def reset_head(model, seed: int) -> None:
    """A fresh head: BERT's initialisation of the transform (seeded), a zero output bias."""
    torch.manual_seed(seed)
    model.cls.predictions.transform.apply(model.bert._init_weights)
    with torch.no_grad():
        model.cls.predictions.bias.zero_()


def dev_sweep(model, tokenizer, train: list[str], args) -> list[dict]:
    """Top-k on the last 10% of the training split for each learning rate, fitted on its start."""
    cut = len(train) - len(train) // 10
    x, y = masked_features(model, tokenizer, train[: min(args.sweep_size, cut)], seed=0)
    dev_x, dev_y = masked_features(model, tokenizer, train[cut:], seed=EVAL_SEED)
    rows = []
    for lr in args.learning_rates:
        reset_head(model, 0)
        fit_mlm_head(model, x, y, epochs=args.epochs, learning_rate=lr)
        with torch.no_grad():
            rows.append({"learning_rate": lr, **topk_accuracy(model.cls(dev_x), dev_y)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--passes", type=int, default=1, help="maskings of the training text")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[3e-3, 1e-2, 3e-2])
    parser.add_argument("--sweep-size", type=int, default=600, help="paragraphs for the sweep")
    parser.add_argument("--limit", type=int, default=None, help="first N paragraphs only")
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--head", type=Path, required=True, help="where to write seed 0's head")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    model, tokenizer = load_minilm_mlm(head="none")
    train, test = wikitext("validation", args.limit), wikitext("test", args.limit)
    sweep = dev_sweep(model, tokenizer, train, args)
    learning_rate = max(sweep, key=lambda row: row["top1"])["learning_rate"]
    test_x, test_y = masked_features(model, tokenizer, test, seed=EVAL_SEED)
    baseline = topk_accuracy(unigram_logits(tokenizer, train, model.config.vocab_size), test_y)
    parts = [masked_features(model, tokenizer, train, seed=p) for p in range(args.passes)]
    x, y = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    runs = []
    for seed in args.seeds:
        tic = time.perf_counter()
        reset_head(model, seed)
        losses = fit_mlm_head(
            model, x, y, epochs=args.epochs, learning_rate=learning_rate, seed=seed
        )
        with torch.no_grad():
            scores = topk_accuracy(model.cls(test_x), test_y)
        runs.append({"seed": seed, "train_tokens": len(y), "epoch_losses": losses, **scores,
                     "minutes_head": (time.perf_counter() - tic) / 60})  # fmt: skip
        print(json.dumps(runs[-1]), flush=True)
        if seed == args.seeds[0]:  # the shipped head
            save_head(model, args.head)
    results = {
        **provenance(argv, args.seeds, start),
        "what": "MLM head fitted on the frozen all-MiniLM-L6-v2 encoder over WikiText-2 "
        f"validation ({args.passes} masking(s), 15% of pieces, all [MASK]), {args.epochs} epochs, "
        f"learning rate chosen on the validation split's last 10% (dev_sweep); "
        f"top-k accuracy and perplexity of the {len(test_y)} masked pieces of WikiText-2 test "
        f"(mask seed {EVAL_SEED}); the unigram baseline always ranks the most frequent pieces",
        "dev_sweep": sweep,
        "learning_rate": learning_rate,
        "test_masked_pieces": len(test_y),
        "unigram": baseline,
        "runs": runs,
        "summary": mean_sd(runs, ("top1", "top5", "perplexity", "minutes_head")),
    }
    save_results(args.json, results)
    print(json.dumps({"unigram": baseline, "summary": results["summary"]}, indent=2))


if __name__ == "__main__":
    main()
