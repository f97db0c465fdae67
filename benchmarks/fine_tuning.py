"""Token classification on real tweets: our unpadded ``BertForTokenClassification`` vs ``transformers``.

The reference pads each batch to its longest row, as ``DataCollatorForTokenClassification``
does (``transformers``' ``DataCollatorWithFlattening`` can pack token-classification batches
instead, with a model that reads their ``position_ids``); tweets are short and uneven, so much
of each batch is padding. Ours computes on the real tokens only (``unpad=True``,
:mod:`mlmcourse.model.speed`); ``transformers.BertForTokenClassification`` computes on every
position. Both get the same weights and the same padded batches of
``--batch`` WNUT-17 training tweets (shuffled; a generated length distribution when the data
is not reachable): a training step (forward, loss, backward, clipping, AdamW) and an inference
forward (``torch.inference_mode``). Ours padded (``unpad=False``) is timed too, to show what
unpadding alone brings. Throughput counts real tokens; the runs alternate, so a noisy
neighbour slows all alike. MFU divides the FLOPs the real tokens need (each tweet on its own)
by time and by a matmul peak measured in the same run.

    .venv/bin/python benchmarks/fine_tuning.py                # 4 layers, hidden 256, batch 32
    .venv/bin/python benchmarks/fine_tuning.py --steps 6 --generated
"""

from __future__ import annotations

import os
import random
import statistics
import time

import torch
from packing import generated
from train_mlm import matmul_peak_flops, model_arguments, model_config, train_step_seconds

from mlmcourse.data.real import DownloadError
from mlmcourse.data.sentence import Sentence
from mlmcourse.heads import BertForTokenClassification
from mlmcourse.model import EncoderConfig
from mlmcourse.model.speed import speed_path
from mlmcourse.tasks.ner import LabelVocab, tokenize_and_align_labels
from mlmcourse.tokenization import WordPieceTokenizer
from mlmcourse.training import TrainingConfig, build_optimizer
from mlmcourse.training.hardware import step_matmul_flops
from mlmcourse.training.packing import padding_share


def sentences(use_generated: bool) -> tuple[list[Sentence], str]:
    """WNUT-17's training tweets, or generated ones of tweet-like lengths."""
    if not use_generated:
        try:
            from mlmcourse.data import load_wnut17

            return load_wnut17("train"), "WNUT-17 training tweets"
        except (DownloadError, OSError) as exc:
            print(f"WNUT-17 not reachable ({str(exc).splitlines()[0]}); using generated lengths")
    texts = generated()
    rng = random.Random(1)
    tagged = [
        Sentence(tuple(words), tuple(rng.choice(["O", "O", "B-x", "I-x"]) for _ in words))
        for words in (t.split() for t in texts)
    ]
    return tagged, "generated (log-normal)"


def make_models(config: EncoderConfig, num_labels: int):
    """Ours and ``transformers``' token classifiers, with the same weights."""
    import transformers

    torch.manual_seed(0)
    ours = BertForTokenClassification(config, num_labels=num_labels).train()
    hf_config = transformers.BertConfig(
        **{k: v for k, v in config.to_dict().items() if k not in ("pre_layer_norm", "is_causal")},
        num_labels=num_labels,
    )
    theirs = transformers.BertForTokenClassification(hf_config).train()
    missing, unexpected = theirs.load_state_dict(ours.state_dict(), strict=False)
    assert not missing and not unexpected, (missing, unexpected)
    return ours, theirs


def needed_flops(config: EncoderConfig, batch: dict, *, backward: bool) -> int:
    """The matmul FLOPs the real tokens need, each tweet on its own (step_matmul_flops counts
    forward and backward; a forward alone is a third)."""
    flops = sum(step_matmul_flops(config, 1, int(n), 0) for n in batch["attention_mask"].sum(1))
    return flops if backward else flops // 3


def forward_seconds(model, batch, **kwargs) -> float:
    start = time.perf_counter()
    with torch.inference_mode():
        model(**{k: v for k, v in batch.items() if k != "labels"}, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = model_arguments(__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--generated", action="store_true", help="generated lengths, no data")
    args = parser.parse_args()
    data, source = sentences(args.generated)
    random.Random(0).shuffle(data)
    labels = LabelVocab.from_sentences(data)
    tokenizer = WordPieceTokenizer.train([" ".join(s.tokens) for s in data], vocab_size=args.vocab)
    config = model_config(args, tokenizer.vocab_size)
    ours, theirs = make_models(config, len(labels))
    peak = matmul_peak_flops(torch.device("cpu"))
    print(f"{source}: {len(data):,}; {args.layers} layers, hidden {args.hidden}, batches of "
          f"{args.batch} padded to their longest (at most {args.seq_len}); torch "
          f"{torch.__version__}, {torch.get_num_threads()} threads, load average "
          f"{os.getloadavg()[0]:.2f}; fp32 matmul peak {peak / 1e9:.1f} GFLOP/s")  # fmt: skip
    runs = {  # label: (model, keyword arguments of its forward)
        "ours, unpadded": (ours, {"unpad": True}),
        "ours, padded": (ours, {}),
        "transformers": (theirs, {}),
    }
    optimizers = {
        id(m): build_optimizer(m, TrainingConfig(learning_rate=1e-4)) for m in (ours, theirs)
    }
    with speed_path(ours):  # unpad=True needs it, for the whole benchmark
        cpu = torch.device("cpu")
        for mode in ("training step", "inference"):
            totals = {label: [0.0, 0, 0] for label in runs}  # seconds, real tokens, FLOPs
            shares = []
            for i in range(args.warmup + args.steps):
                start = (i * args.batch) % (len(data) - args.batch)
                rows = data[start : start + args.batch]
                batch = tokenize_and_align_labels(rows, tokenizer, labels, max_length=args.seq_len)
                order = list(runs) if i % 2 == 0 else list(runs)[::-1]
                for label in order:
                    model, kwargs = runs[label]
                    if mode == "training step":
                        optimizer = optimizers[id(model)]
                        seconds = train_step_seconds(
                            model, optimizer, batch, device=cpu, precision="fp32", **kwargs
                        )
                    else:
                        seconds = forward_seconds(model.eval(), batch, **kwargs)
                        model.train()
                    if i >= args.warmup:
                        t = totals[label]
                        t[0] += seconds
                        t[1] += int(batch["attention_mask"].sum())
                        t[2] += needed_flops(config, batch, backward=mode == "training step")
                if i >= args.warmup:
                    shares.append(padding_share(batch["attention_mask"]))
            print(f"\n{mode}, {args.steps} batches after {args.warmup} warm-up; padding "
                  f"{statistics.fmean(shares):.1%} of each batch")  # fmt: skip
            rate = {}
            for label, (seconds, tokens, flops) in totals.items():
                rate[label] = tokens / seconds
                mfu = flops / seconds / peak
                print(f"{label:>15}: {rate[label]:8.0f} real tokens/s, MFU {mfu:5.1%}")
            ratio = rate["ours, unpadded"] / rate["transformers"]
            print(f"{'':>15}  ours unpadded / transformers: {ratio:.2f}x; unpadding alone: "
                  f"{rate['ours, unpadded'] / rate['ours, padded']:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
