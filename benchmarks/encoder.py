"""Forward+backward throughput of our encoder vs ``transformers.BertModel``, same config, one run.

Both models get identical weights and identical batches; their steps alternate (ours, theirs,
theirs, ours, ...) so that a noisy neighbour on a shared CPU slows both alike. The speed-up is
the median over rounds of each round's own ratio (the two steps of a round ran side by side,
under the same load), printed with its quartiles; throughputs are medians of step times. Two batches are measured: one without padding (no mask at all) and one padded like
a real MLM batch (sequence lengths spread over the batch).

    .venv/bin/python benchmarks/encoder.py            # the MLM chapter's size, CPU, fp32
    .venv/bin/python benchmarks/encoder.py --rounds 5 # quicker, noisier
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


def step_seconds(model, input_ids, attention_mask) -> float:
    """One forward+backward pass; the loss touches every output so every gradient is computed."""
    start = time.perf_counter()
    out = model(input_ids=input_ids, attention_mask=attention_mask)
    out.last_hidden_state.float().pow(2).mean().backward()
    seconds = time.perf_counter() - start
    model.zero_grad(set_to_none=True)
    return seconds


def compare(ours, theirs, input_ids, attention_mask, *, warmup: int, rounds: int) -> dict:
    """Step times of both models in alternating rounds, and each round's speed-up."""
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
    speedups = [t / o for o, t in zip(times["ours"], times["transformers"], strict=True)]
    quartiles = statistics.quantiles(speedups, n=4) if len(speedups) > 1 else speedups * 3
    return {
        "ours": statistics.median(times["ours"]),
        "transformers": statistics.median(times["transformers"]),
        "speedup": statistics.median(speedups),
        "q1": quartiles[0],
        "q3": quartiles[-1],
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
        label = "padded batch " if padded else "no padding   "
        print(
            f"{label} ours {tokens / result['ours']:6.0f} tok/s   transformers "
            f"{tokens / result['transformers']:6.0f} tok/s   ours/transformers speed "
            f"{result['speedup']:.2f}x (quartiles {result['q1']:.2f}-{result['q3']:.2f})"
        )


if __name__ == "__main__":
    main()
