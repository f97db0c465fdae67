"""MLM training throughput of our ``BertForMaskedLM`` vs ``transformers.BertForMaskedLM``, one run.

Both models get identical weights and identical masked batches (15% of tokens labelled), and a
full training step each: forward, loss, backward, gradient clipping, AdamW step. Steps
alternate (ours, theirs, theirs, ours, ...) so a noisy neighbour on a shared CPU slows both
alike, and medians are compared. A 1024 x 1024 fp32 matmul measured in the same run gives the
peak for model-FLOP utilisation (MFU).

Where the speed-up comes from: transformers scores all B x T positions against the whole
vocabulary (a (B*T, H) x (H, V) matmul, forward and backward) and then ignores 85% of them;
ours scores only the labelled positions. "ours" is the plain core the chapters train; "ours,
speed path" is the same model and weights inside ``with speed_path(model):``
(:func:`~mlmcourse.model.speed.speed_path`, what ``unpad: true`` trains), whose dropout draws
16 random bits an element instead of a float.

    .venv/bin/python benchmarks/train_mlm.py              # 4 layers, hidden 256, vocab 8000, 32 x 128
    .venv/bin/python benchmarks/train_mlm.py --rounds 4   # quicker, noisier
    python benchmarks/train_mlm.py --device cuda --batch 256   # on a GPU: bf16 autocast, bf16 peak
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time

import torch

from mlmcourse.heads import BertForMaskedLM
from mlmcourse.model import EncoderConfig
from mlmcourse.model.speed import speed_path
from mlmcourse.training import TrainingConfig, autocast_context, build_optimizer
from mlmcourse.training.evaluation import ask_logits_at_labels
from mlmcourse.training.hardware import step_matmul_flops
from mlmcourse.utils.runtime import get_device


def make_models(config: EncoderConfig):
    import transformers

    torch.manual_seed(0)
    ours = BertForMaskedLM(config).train()
    hf_config = transformers.BertConfig(
        **{k: v for k, v in config.to_dict().items() if k not in ("pre_layer_norm", "is_causal")}
    )
    theirs = transformers.BertForMaskedLM(hf_config).train()
    missing, unexpected = theirs.load_state_dict(ours.state_dict(), strict=False)
    assert not unexpected and set(missing) <= {"cls.predictions.decoder.bias"}, (
        missing,
        unexpected,
    )
    return ours, theirs


def make_batch(config: EncoderConfig, batch: int, seq_len: int, mlm_probability: float):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(5, config.vocab_size, (batch, seq_len), generator=g)
    selected = torch.rand(batch, seq_len, generator=g) < mlm_probability
    labels = torch.where(selected, ids, torch.full_like(ids, -100))
    input_ids = torch.where(selected, torch.full_like(ids, 4), ids)
    return {
        "input_ids": input_ids,
        "attention_mask": torch.ones_like(ids),
        "labels": labels,
    }


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so a timer measures the work and not its launch."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_step_seconds(
    model, optimizer, batch, *, device: torch.device, precision: str, **forward_kwargs
) -> float:
    """Seconds of one training step; ``forward_kwargs`` go to the model (``unpad=True``), and
    as in training, our LMs score the labelled positions only (``logits_at_labels=True``)."""
    forward_kwargs = {**ask_logits_at_labels(model), **forward_kwargs}
    synchronize(device)
    start = time.perf_counter()
    with autocast_context(device, precision):
        loss = model(**batch, **forward_kwargs).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    synchronize(device)
    return time.perf_counter() - start


def matmul_peak_flops(
    device: torch.device, dtype: torch.dtype = torch.float32, n: int = 1024, reps: int = 20
) -> float:
    """FLOP/s of an n x n matmul in ``dtype`` on ``device``, now (median of ``reps``)."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(reps):
        synchronize(device)
        start = time.perf_counter()
        a @ b
        synchronize(device)
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times)


def model_arguments(description: str) -> argparse.ArgumentParser:
    """The arguments every MLM benchmark shares: the model's size, the batch, the warm-up."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=2)
    return parser


def model_config(args: argparse.Namespace, vocab_size: int | None = None) -> EncoderConfig:
    """The encoder :func:`model_arguments` describe (``vocab_size`` from a trained tokenizer)."""
    return EncoderConfig(
        vocab_size=args.vocab if vocab_size is None else vocab_size,
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=args.intermediate,
        max_position_embeddings=max(512, args.seq_len),
    )


def main() -> None:
    parser = model_arguments(__doc__.splitlines()[0])
    parser.add_argument("--mlm-probability", type=float, default=0.15)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, mps, or auto (the best one)")
    args = parser.parse_args()
    try:
        device = get_device(None if args.device == "auto" else args.device)
    except RuntimeError as exc:
        parser.error(str(exc))
    precision = "bf16" if device.type == "cuda" else "fp32"  # what training's "auto" picks
    peak_dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    peak_n = 8192 if device.type == "cuda" else 1024

    config = model_config(args)
    ours, theirs = (model.to(device) for model in make_models(config))
    batch = make_batch(config, args.batch, args.seq_len, args.mlm_probability)
    batch = {key: value.to(device) for key, value in batch.items()}
    scored = int((batch["labels"] != -100).sum())
    opt_config = TrainingConfig(learning_rate=1e-4)
    fast = copy.deepcopy(ours)
    models = {"ours": ours, "ours, speed path": fast, "transformers": theirs}
    optimizers = {name: build_optimizer(model, opt_config) for name, model in models.items()}

    def step(name: str) -> float:
        return train_step_seconds(
            models[name], optimizers[name], batch, device=device, precision=precision
        )

    peak_before = matmul_peak_flops(device, peak_dtype, peak_n)
    times: dict[str, list[float]] = {name: [] for name in models}
    with speed_path(fast):
        for _ in range(args.warmup):
            for name in models:
                step(name)
        for r in range(args.rounds):
            order = list(models) if r % 2 == 0 else list(models)[::-1]
            for name in order:
                times[name].append(step(name))
    peak = statistics.median([peak_before, matmul_peak_flops(device, peak_dtype, peak_n)])

    tokens = args.batch * args.seq_len
    median = {name: statistics.median(t) for name, t in times.items()}
    useful = step_matmul_flops(config, args.batch, args.seq_len, scored)
    executed = {
        "ours": useful,
        "ours, speed path": useful,
        "transformers": step_matmul_flops(
            config, args.batch, args.seq_len, args.batch * args.seq_len
        ),
    }
    print(
        f"config: {args.layers} layers, hidden {args.hidden}, {args.heads} heads, intermediate "
        f"{args.intermediate}, vocab {args.vocab}, batch {args.batch} x {args.seq_len}, "
        f"{scored} scored positions ({scored / tokens:.1%}); torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.2f}"
    )
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    print(f"device: {where}, precision {precision}")
    print(f"{precision} matmul peak ({peak_n}^2): {peak / 1e9:.1f} GFLOP/s")
    for name in models:
        flops = executed[name] / median[name]
        print(
            f"{name:>16}: {median[name] * 1e3:7.1f} ms/step  {tokens / median[name]:8.0f} tokens/s  "
            f"{flops / 1e9:6.1f} GFLOP/s executed ({flops / peak:.0%} of peak), "
            f"MFU on the MLM's needed FLOPs {useful / median[name] / peak:.0%}"
        )
    for name in ("ours", "ours, speed path"):
        ratio = median["transformers"] / median[name]
        print(f"speed-up ({name} vs transformers, training tokens/s): {ratio:.2f}x")
    mfu = useful / median["ours, speed path"] / peak
    print(f"MFU of the speed path: {mfu:.1%} (goal >= 65%)")


if __name__ == "__main__":
    main()
