"""MLM training on real-length text: our packed ``BertForMaskedLM`` vs ``transformers``, padded.

The reference is what a Hugging Face user runs: ``transformers.BertForMaskedLM`` with
``DataCollatorForLanguageModeling``, each batch of ``--batch`` texts padded to its longest
row. Ours packs the same texts (in the same shuffled order) into rows of ``--seq-len``
tokens (:mod:`mlmcourse.training.packing`), ``--batch`` rows a step. Same model config, same weights
at the start, the same 15% masking and a full training step each (forward, loss, backward,
clipping, AdamW). Throughput counts **real tokens** only (not padding); the two runs alternate
(ours, theirs, theirs, ours, ...) so a noisy neighbour slows both alike. Text: WikiText-2
paragraphs and WNUT-17 tweets from ``MLMCOURSE_DATA_DIR`` (or their downloads), or, when
neither is reachable, a generated length distribution (log-normal, median 25 words).

MFU divides the FLOPs the MLM needs for the real tokens (each document on its own, only the
masked positions through the vocabulary) by time and by a matmul peak measured in the same
run. A second MFU line measures ours on full 128-token rows of random ids (no padding at all), the
plain core and the speed path.

    .venv/bin/python benchmarks/packing.py                  # both corpora, 4 layers, hidden 256
    .venv/bin/python benchmarks/packing.py --corpus tweets --steps 6
"""

from __future__ import annotations

import copy
import os
import random
import statistics
from contextlib import nullcontext

import torch
from train_mlm import (
    make_batch,
    make_models,
    matmul_peak_flops,
    model_arguments,
    model_config,
    train_step_seconds,
)

from mlmcourse.data.real import DownloadError
from mlmcourse.masking import MLMCollator
from mlmcourse.model import EncoderConfig
from mlmcourse.model.speed import speed_path
from mlmcourse.tokenization import WordPieceTokenizer
from mlmcourse.training import TrainingConfig, build_optimizer
from mlmcourse.training.hardware import step_matmul_flops
from mlmcourse.training.packing import PackedMLMBatches, PackedMLMCollator, padding_share


def generated(seed: int = 0) -> list[str]:
    """Texts of random words whose lengths follow a log-normal (median 25 words), like tweets."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(3000)]
    lengths = [max(1, int(rng.lognormvariate(3.2, 0.8))) for _ in range(4000)]
    return [" ".join(rng.choices(words, k=n)) for n in lengths]


def corpus(name: str, *, use_generated: bool = False) -> tuple[list[str], str]:
    """The texts of ``name`` (``wikitext`` or ``tweets``) and where they came from."""
    if use_generated:
        return generated(), "generated (log-normal)"
    try:
        if name == "wikitext":
            from mlmcourse.data import load_wikitext2

            texts = [t for t in load_wikitext2("validation") if t.strip()]
            return texts, "WikiText-2 validation paragraphs"
        from mlmcourse.data import load_wnut17

        return [s.text for s in load_wnut17("train")], "WNUT-17 training tweets"
    except (DownloadError, OSError) as exc:
        print(f"{name}: not reachable ({str(exc).splitlines()[0]}); using generated lengths")
        return generated(), "generated (log-normal)"


def reference_batches(texts, tokenizer, batch: int, seq_len: int):
    """``transformers``' way: batches of ``batch`` texts, padded to their longest row."""
    import transformers

    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer.backend_tokenizer,
        unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]",
    )  # fmt: skip
    collate = transformers.DataCollatorForLanguageModeling(fast, mlm_probability=0.15)
    for start in range(0, len(texts) - batch + 1, batch):
        rows = fast(texts[start : start + batch], truncation=True, max_length=seq_len)
        examples = [{"input_ids": ids} for ids in rows["input_ids"]]
        out = collate(examples)
        yield {k: out[k] for k in ("input_ids", "attention_mask", "labels")}


def needed_flops(config: EncoderConfig, batch: dict) -> int:
    """The MLM's FLOPs for the real tokens: each document on its own, masked positions only."""
    scored = int((batch["labels"] != -100).sum())
    if "position_ids" in batch:
        starts = (batch["position_ids"] == 0) & batch["attention_mask"].bool()
        lengths = []
        for row, mask in zip(starts, batch["attention_mask"], strict=True):
            where = row.nonzero().flatten().tolist() + [int(mask.sum())]
            lengths += [b - a for a, b in zip(where, where[1:], strict=False)]
    else:
        lengths = batch["attention_mask"].sum(1).tolist()
    encoder = sum(step_matmul_flops(config, 1, int(n), 0) for n in lengths)
    return encoder + step_matmul_flops(config, 0, 0, scored)


def run_corpus(name, args, config, peak) -> float:
    texts, source = corpus(name, use_generated=args.generated)
    random.Random(0).shuffle(texts)
    tokenizer = WordPieceTokenizer.train(texts, vocab_size=args.vocab)
    config.vocab_size = tokenizer.vocab_size
    ours, theirs = make_models(config)
    collator = PackedMLMCollator(MLMCollator(tokenizer, max_length=args.seq_len))
    packed = PackedMLMBatches(texts, collator, batch_size=args.batch, seed=0)
    reference = reference_batches(texts, tokenizer, args.batch, args.seq_len)
    optimizers = {m: build_optimizer(m, TrainingConfig(learning_rate=1e-4)) for m in (ours, theirs)}
    stats = {"ours": [0.0, 0, 0, []], "transformers": [0.0, 0, 0, []]}  # s, tokens, FLOPs, pad

    def step(label, model, batch):
        seconds = train_step_seconds(model, optimizers[model], batch, device=torch.device("cpu"),
                                     precision="fp32")  # fmt: skip
        s = stats[label]
        s[0] += seconds
        s[1] += int(batch["attention_mask"].sum())
        s[2] += needed_flops(config, batch)
        s[3].append(padding_share(batch["attention_mask"]))

    with speed_path(ours):  # packed rows: the speed path keeps their texts apart
        for i in range(args.warmup + args.steps):
            ours_batch, their_batch = packed(i), next(reference)
            if i == args.warmup:
                stats = {k: [0.0, 0, 0, []] for k in stats}
            order = [("ours", ours, ours_batch), ("transformers", theirs, their_batch)]
            for label, model, batch in order if i % 2 == 0 else order[::-1]:
                step(label, model, batch)
    lengths = collator.lengths(texts[:2000])
    print(f"\n{source}: {len(texts):,} texts, median {statistics.median(lengths):.0f} tokens "
          f"(at most {args.seq_len}); {args.steps} steps each after {args.warmup} warm-up")  # fmt: skip
    rate = {}
    for label, (seconds, tokens, flops, pad) in stats.items():
        rate[label] = tokens / seconds
        print(f"{label:>13}: {rate[label]:8.0f} real tokens/s, padding {statistics.fmean(pad):5.1%} "
              f"of each batch, MFU {flops / seconds / peak:5.1%}")  # fmt: skip
    ratio = rate["ours"] / rate["transformers"]
    print(f"{'':>13}  speed-up in real tokens/s: {ratio:.2f}x (goal >= 2.3x)")
    return ratio


def full_rows_mfu(args, config, peak) -> None:
    config.vocab_size = args.vocab
    ours, _ = make_models(config)
    batch = make_batch(config, args.batch, args.seq_len, 0.15)
    scored = int((batch["labels"] != -100).sum())
    flops = step_matmul_flops(config, args.batch, args.seq_len, scored)
    cpu = torch.device("cpu")
    mfu = []
    fast = copy.deepcopy(ours)
    for model, path in ((ours, nullcontext()), (fast, speed_path(fast))):  # plain, then speed
        optimizer = build_optimizer(model, TrainingConfig(learning_rate=1e-4))
        with path:
            for _ in range(args.warmup):
                train_step_seconds(model, optimizer, batch, device=cpu, precision="fp32")
            seconds = statistics.median(
                train_step_seconds(model, optimizer, batch, device=cpu, precision="fp32")
                for _ in range(args.steps)
            )
        mfu.append(flops / seconds / peak)
    print(f"\nfull {args.batch} x {args.seq_len} rows, no padding: ours MFU {mfu[0]:.1%} (plain "
          f"core), {mfu[1]:.1%} (speed path)")  # fmt: skip


def main() -> None:
    parser = model_arguments(__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=["wikitext", "tweets", "both"], default="both")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--generated", action="store_true", help="generated lengths, no data")
    args = parser.parse_args()
    config = model_config(args)
    peak = matmul_peak_flops(torch.device("cpu"))
    print(f"{args.layers} layers, hidden {args.hidden}, batch {args.batch} rows of at most "
          f"{args.seq_len}; torch {torch.__version__}, {torch.get_num_threads()} threads, load "
          f"average {os.getloadavg()[0]:.2f}; fp32 matmul peak {peak / 1e9:.1f} GFLOP/s")  # fmt: skip
    for name in ["wikitext", "tweets"] if args.corpus == "both" else [args.corpus]:
        run_corpus(name, args, config, peak)
    full_rows_mfu(args, config, peak)


if __name__ == "__main__":
    main()
