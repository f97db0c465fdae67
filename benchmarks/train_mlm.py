"""MLM training throughput of our ``BertForMaskedLM`` vs ``transformers.BertForMaskedLM``, one run.

Both models get identical weights and identical masked batches (15% of tokens labelled), and a
full training step each: forward, loss, backward, gradient clipping, AdamW step. Steps
alternate (ours, theirs, theirs, ours, ...) so a noisy neighbour on a shared CPU slows both
alike, and medians are compared. A 1024 x 1024 fp32 matmul measured in the same run gives the
peak for model-FLOP utilisation (MFU).

Where the speed-up comes from: transformers scores all B x T positions against the whole
vocabulary (a (B*T, H) x (H, V) matmul, forward and backward) and then ignores 85% of them;
ours scores only the labelled positions.

    .venv/bin/python benchmarks/train_mlm.py              # 4 layers, hidden 256, vocab 8000, 32 x 128
    .venv/bin/python benchmarks/train_mlm.py --rounds 4   # quicker, noisier
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from mlmcourse.mlm import BertForMaskedLM
from mlmcourse.model import EncoderConfig
from mlmcourse.training import TrainingConfig, build_optimizer


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


def train_step_seconds(model, optimizer, batch) -> float:
    start = time.perf_counter()
    loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return time.perf_counter() - start


def matmul_peak_flops(n: int = 1024, reps: int = 20) -> float:
    """fp32 FLOP/s of an n x n matmul on this machine now (median of ``reps``)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times)


def step_flops(config: EncoderConfig, batch: int, seq_len: int, scored: int, *, full_head: bool):
    """Matmul FLOPs of one training step (forward x 3 for forward + backward).

    Per token and layer: Q, K, V, output projections 8H^2, feed-forward 4HI, attention scores
    and weighted sum 4TH. The head adds 2H^2 + 2HV per scored position.
    """
    h, i, t, v = config.hidden_size, config.intermediate_size, seq_len, config.vocab_size
    tokens = batch * seq_len
    encoder = tokens * config.num_hidden_layers * (8 * h * h + 4 * h * i + 4 * t * h)
    head_positions = tokens if full_head else scored
    head = head_positions * (2 * h * h + 2 * h * v)
    return 3 * (encoder + head)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--mlm-probability", type=float, default=0.15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()

    config = EncoderConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=args.intermediate,
        max_position_embeddings=max(512, args.seq_len),
    )
    ours, theirs = make_models(config)
    batch = make_batch(config, args.batch, args.seq_len, args.mlm_probability)
    scored = int((batch["labels"] != -100).sum())
    opt_config = TrainingConfig(learning_rate=1e-4)
    optimizers = {"ours": build_optimizer(ours, opt_config), "transformers": None}
    optimizers["transformers"] = build_optimizer(theirs, opt_config)
    models = {"ours": ours, "transformers": theirs}

    peak_before = matmul_peak_flops()
    for _ in range(args.warmup):
        for name in models:
            train_step_seconds(models[name], optimizers[name], batch)
    times: dict[str, list[float]] = {name: [] for name in models}
    for r in range(args.rounds):
        order = ["ours", "transformers"] if r % 2 == 0 else ["transformers", "ours"]
        for name in order:
            times[name].append(train_step_seconds(models[name], optimizers[name], batch))
    peak = statistics.median([peak_before, matmul_peak_flops()])

    tokens = args.batch * args.seq_len
    median = {name: statistics.median(t) for name, t in times.items()}
    useful = step_flops(config, args.batch, args.seq_len, scored, full_head=False)
    executed = {
        "ours": useful,
        "transformers": step_flops(config, args.batch, args.seq_len, scored, full_head=True),
    }
    print(
        f"config: {args.layers} layers, hidden {args.hidden}, {args.heads} heads, intermediate "
        f"{args.intermediate}, vocab {args.vocab}, batch {args.batch} x {args.seq_len}, "
        f"{scored} scored positions ({scored / tokens:.1%}); torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.2f}"
    )
    print(f"fp32 matmul peak (1024^2): {peak / 1e9:.1f} GFLOP/s")
    for name in models:
        flops = executed[name] / median[name]
        print(
            f"{name:>12}: {median[name] * 1e3:7.1f} ms/step  {tokens / median[name]:8.0f} tokens/s  "
            f"{flops / 1e9:6.1f} GFLOP/s executed ({flops / peak:.0%} of peak), "
            f"MFU on the MLM's needed FLOPs {useful / median[name] / peak:.0%}"
        )
    ratio = median["transformers"] / median["ours"]
    print(f"speed-up (ours vs transformers, training tokens/s): {ratio:.2f}x (target >= 1.3x)")


if __name__ == "__main__":
    main()
