"""Where a training step's time goes: torch.profiler on our speed path, grouped by what the op does.

Two steps that learners wait on: an MLM pretraining step on packed WikiText-2 paragraphs
(``PackedMLMCollator``, the speed path) and a fine-tuning step on WNUT-17 tweets
(``BertForTokenClassification`` with ``unpad=True``), both with the benchmarks' model (4 layers,
hidden 256). Each step is cut into phases (the collator, forward, backward, clipping, AdamW,
``zero_grad``) timed with ``perf_counter``; the profiler's self CPU time of every op is summed
by phase and, in forward and backward, by kind (matmul, attention, softmax, dropout, LayerNorm,
GELU, the loss, embeddings, indexing and copies, element-wise, other). What a phase spends
outside any op is Python and dispatch overhead. Without the data (``MLMCOURSE_DATA_DIR``) the
texts are generated, as in the other benchmarks.

    .venv/bin/python benchmarks/profile_step.py               # both steps, 8 profiled each
    .venv/bin/python benchmarks/profile_step.py --which mlm --steps 4
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections import defaultdict

import torch
from fine_tuning import make_models as token_classifiers
from fine_tuning import sentences
from packing import corpus
from torch.profiler import ProfilerActivity, profile, record_function
from train_mlm import model_arguments, model_config

from mlmcourse.heads import BertForMaskedLM
from mlmcourse.masking import MLMCollator
from mlmcourse.model.speed import speed_path
from mlmcourse.tasks.ner import LabelVocab, tokenize_and_align_labels
from mlmcourse.tokenization import WordPieceTokenizer
from mlmcourse.training import TrainingConfig, build_optimizer
from mlmcourse.training.evaluation import ask_logits_at_labels
from mlmcourse.training.packing import PackedMLMBatches, PackedMLMCollator

PHASES = ("collator", "forward", "backward", "clip", "optimizer", "zero_grad")
KINDS = {  # op name fragments -> kind, first match wins (forward and backward alike)
    "matmul": ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"),
    "attention": ("scaled_dot_product", "flash_attention"),
    "softmax": ("softmax",),  # log_softmax is the loss's, matched first
    "GELU": ("gelu",),  # before dropout's "aten::ge"
    # torch's dropout, and the speed path's: its random_ draws (matched by "aten::rand") and its
    # threshold ("aten::ge"); its multiply counts as element-wise
    "dropout": ("dropout", "bernoulli", "aten::rand", "uniform_", "aten::ge"),
    "LayerNorm": ("layer_norm",),
    "embedding": ("embedding",),
    "indexing, copies": (
        "index", "gather", "scatter", "masked", "nonzero", "copy_", "clone", "cat", "contiguous",
        "_to_copy", "where", "cumsum", "repeat",
    ),
    "element-wise": ("aten::add", "aten::mul", "aten::sub", "aten::div", "aten::sum", "fill_",
                     "zero_", "aten::tanh", "aten::threshold"),
}  # fmt: skip
LOSS = ("log_softmax", "nll_loss", "cross_entropy")


def kind_of(name: str) -> str:
    if any(part in name for part in LOSS):
        return "loss"
    for kind, parts in KINDS.items():
        if any(part in name for part in parts):
            return kind
    return "other"


def phase_of(event) -> str | None:
    """The phase (a ``record_function`` of :data:`PHASES`) an op ran under, if any."""
    parent = event.cpu_parent
    while parent is not None:
        if parent.name in PHASES:
            return parent.name
        parent = parent.cpu_parent
    return None


def profiled_steps(model, optimizer, next_batch, steps: int, warmup: int, **forward_kwargs):
    """Wall seconds per phase (summed over ``steps``) and the profiler's events."""
    wall: dict[str, float] = defaultdict(float)
    forward_kwargs = {**ask_logits_at_labels(model), **forward_kwargs}  # as training asks

    def phase(name: str, on: bool):
        @contextlib.contextmanager
        def timed():
            start = time.perf_counter()
            with record_function(name):
                yield
            if on:
                wall[name] += time.perf_counter() - start

        return timed()

    def step(on: bool) -> None:
        with phase("collator", on):
            batch = next_batch()
        with phase("forward", on):
            loss = model(**batch, **forward_kwargs).loss
        with phase("backward", on):
            loss.backward()
        with phase("clip", on):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        with phase("optimizer", on):
            optimizer.step()
        with phase("zero_grad", on):
            optimizer.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step(False)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step(True)
    return wall, prof.events()


def report(title: str, wall: dict[str, float], events, steps: int) -> None:
    """Per phase: wall ms a step, ms inside ops, and the overhead; forward and backward by kind."""
    in_ops: dict[str, float] = defaultdict(float)
    by_kind: dict[str, float] = defaultdict(float)
    for event in events:
        where = phase_of(event)
        if where is None or event.name in PHASES:
            continue
        seconds = event.self_cpu_time_total / 1e6
        in_ops[where] += seconds
        if where in ("forward", "backward"):
            by_kind[kind_of(event.name)] += seconds
    total = sum(wall.values())
    print(f"\n{title}: {total / steps * 1e3:.1f} ms a step ({steps} profiled steps)")
    print(f"{'phase':>12} {'ms/step':>9} {'share':>7} {'in ops':>9} {'overhead':>9}")
    for name in PHASES:
        ms, ops = wall[name] / steps * 1e3, in_ops[name] / steps * 1e3
        print(f"{name:>12} {ms:9.2f} {wall[name] / total:7.1%} {ops:9.2f} {ms - ops:9.2f}")
    compute = sum(by_kind.values())
    print(f"forward and backward by kind ({compute / steps * 1e3:.1f} ms a step inside ops):")
    for kind, seconds in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"{kind:>18} {seconds / steps * 1e3:8.2f} ms {seconds / total:7.1%} of the step")


def mlm_step(args) -> None:
    texts, source = corpus("wikitext", use_generated=args.generated)
    random.Random(0).shuffle(texts)
    tokenizer = WordPieceTokenizer.train(texts, vocab_size=args.vocab)
    config = model_config(args, tokenizer.vocab_size)
    torch.manual_seed(0)
    model = BertForMaskedLM(config).train()
    collator = PackedMLMCollator(MLMCollator(tokenizer, max_length=args.seq_len))
    batches = PackedMLMBatches(texts, collator, batch_size=args.batch, seed=0)
    counter = iter(range(10**9))
    optimizer = build_optimizer(model, TrainingConfig(learning_rate=1e-4))
    with speed_path(model):  # packed rows: the speed path keeps their texts apart
        wall, events = profiled_steps(
            model, optimizer, lambda: batches(next(counter)), args.steps, args.warmup
        )
    report(f"MLM step, packed rows of {source}", wall, events, args.steps)


def fine_tuning_step(args) -> None:
    data, source = sentences(use_generated=args.generated)
    random.Random(0).shuffle(data)
    labels = LabelVocab.from_sentences(data)
    tokenizer = WordPieceTokenizer.train([" ".join(s.tokens) for s in data], vocab_size=args.vocab)
    ours, _ = token_classifiers(model_config(args, tokenizer.vocab_size), len(labels))
    optimizer = build_optimizer(ours, TrainingConfig(learning_rate=1e-4))
    starts = iter(range(0, 10**9, args.batch))

    def next_batch():
        start = next(starts) % (len(data) - args.batch)
        rows = data[start : start + args.batch]
        return tokenize_and_align_labels(rows, tokenizer, labels, max_length=args.seq_len)

    with speed_path(ours):
        wall, events = profiled_steps(
            ours, optimizer, next_batch, args.steps, args.warmup, unpad=True
        )
    report(f"fine-tuning step, {source}, unpadded", wall, events, args.steps)


def main() -> None:
    parser = model_arguments(__doc__.splitlines()[0])
    parser.add_argument("--which", choices=["mlm", "fine-tuning", "both"], default="both")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--generated", action="store_true", help="generated lengths, no data")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, load average "
          f"{os.getloadavg()[0]:.2f}")  # fmt: skip
    if args.which in ("mlm", "both"):
        mlm_step(args)
    if args.which in ("fine-tuning", "both"):
        fine_tuning_step(args)


if __name__ == "__main__":
    main()
