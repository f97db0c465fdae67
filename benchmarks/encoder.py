"""Forward+backward throughput of our encoder vs ``transformers.BertModel``, same config, one run.

Both models get identical weights and identical batches; their steps alternate (ours, theirs,
theirs, ours, ...) so that a noisy neighbour on a shared CPU slows both alike. Each step is
timed twice: wall-clock time, and the CPU time this process used (``time.process_time``),
which other processes on a busy machine disturb much less. A speed-up is the median over
rounds of each round's own ratio (the two steps of a round ran side by side, under the same
load), printed with its quartiles. Two batches are measured: one without padding (no mask at
all) and one padded like a real MLM batch (lengths spread between half and full length).

    .venv/bin/python benchmarks/encoder.py             # the MLM chapter's size, CPU, fp32
    .venv/bin/python benchmarks/encoder.py --rounds 5  # quicker, noisier
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from mlmcourse.model import BertModel, EncoderConfig


def make_models(config: EncoderConfig):
    import transformers

    torch.manual_seed(0)
    ours = BertModel(config).train()
    hf_config = transformers.BertConfig(
        **{k: v for k, v in config.to_dict().items() if k not in ("pre_layer_norm", "is_causal")}
    )
    theirs = transformers.BertModel(hf_config, add_pooling_layer=False).train()
    theirs.load_state_dict(ours.state_dict(), strict=True)
    return ours, theirs


def make_batch(config: EncoderConfig, batch: int, seq_len: int, padded: bool):
    g = torch.Generator().manual_seed(1)
    input_ids = torch.randint(1, config.vocab_size, (batch, seq_len), generator=g)
    attention_mask = torch.ones(batch, seq_len, dtype=torch.long)
    if padded:  # lengths spread between half and full length, as a collator padding to the longest
        lengths = torch.randint(seq_len // 2, seq_len + 1, (batch,), generator=g)
        lengths[0] = seq_len
        attention_mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).long()
        input_ids = input_ids * attention_mask
    return input_ids, attention_mask


def step_seconds(model, input_ids, attention_mask) -> tuple[float, float]:
    """One forward+backward pass; returns (wall seconds, CPU seconds of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = model(input_ids=input_ids, attention_mask=attention_mask)
    out.last_hidden_state.float().pow(2).mean().backward()  # every output gets a gradient
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    model.zero_grad(set_to_none=True)
    return wall, cpu


def _median_ratio(ours: list[float], theirs: list[float]) -> tuple[float, float, float]:
    """Median and quartiles of the per-round speed-up ``theirs / ours``."""
    ratios = [t / o for o, t in zip(ours, theirs, strict=True)]
    q1, median, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return statistics.median(ratios), q1, q3


def compare(ours, theirs, input_ids, attention_mask, *, warmup: int, rounds: int) -> dict:
    """Step times of both models in alternating rounds, and the per-round speed-ups."""
    for _ in range(warmup):
        step_seconds(ours, input_ids, attention_mask)
        step_seconds(theirs, input_ids, attention_mask)
    times = {"ours": [], "transformers": []}
    for i in range(rounds):
        order = [("ours", ours), ("transformers", theirs)]
        if i % 2:  # alternate who goes first, so neither always runs on a warmer cache
            order.reverse()
        for name, model in order:
            times[name].append(step_seconds(model, input_ids, attention_mask))
    wall = {name: [w for w, _ in t] for name, t in times.items()}
    cpu = {name: [c for _, c in t] for name, t in times.items()}
    return {
        "ours_wall": statistics.median(wall["ours"]),
        "transformers_wall": statistics.median(wall["transformers"]),
        "wall": _median_ratio(wall["ours"], wall["transformers"]),
        "cpu": _median_ratio(cpu["ours"], cpu["transformers"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()

    config = EncoderConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.hidden,
        max_position_embeddings=max(512, args.seq_len),
    )
    ours, theirs = make_models(config)
    print(
        f"encoder fwd+bwd, CPU fp32, {torch.get_num_threads()} threads: {args.layers} layers, "
        f"hidden {args.hidden}, {args.heads} heads, vocab {args.vocab}, "
        f"batch {args.batch}x{args.seq_len}, median of {args.rounds} alternating rounds"
    )
    for padded in (False, True):
        input_ids, attention_mask = make_batch(config, args.batch, args.seq_len, padded)
        result = compare(
            ours, theirs, input_ids, attention_mask, warmup=args.warmup, rounds=args.rounds
        )
        tokens = input_ids.numel()
        label = "padded batch" if padded else "no padding  "
        print(
            f"{label}  ours {tokens / result['ours_wall']:6.0f} tok/s, transformers "
            f"{tokens / result['transformers_wall']:6.0f} tok/s (wall-clock medians)"
        )
        for kind in ("wall", "cpu"):
            median, q1, q3 = result[kind]
            print(
                f"              ours/transformers speed by {kind:4} time: {median:.2f}x "
                f"(quartiles {q1:.2f}-{q3:.2f})"
            )


if __name__ == "__main__":
    main()
