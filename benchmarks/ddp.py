"""The same pretraining run on 1 and on N processes (torchrun, DDP), same global batch.

    python benchmarks/ddp.py                 # 1 vs 2 CPU processes, world config, 60 steps
    python benchmarks/ddp.py --json mlmcourse/results/ddp_cpu.json   # what book/scaling.md shows
    python benchmarks/ddp.py --nproc 4 --steps 200 --set device=cuda   # on a 4-GPU machine

Each run is launched with ``torchrun`` on 127.0.0.1 (free port) and rank 0 reports the
throughput of its training loop (tokens of the *global* batch per second, start-up excluded),
the wall time of the whole launch, and the losses. The 1-process runs (1 thread, and N threads:
the same cores as the DDP run) use ``batch_size = N x`` the per-process batch, so all runs
take the same optimiser steps on the same global batches. It prints a Markdown table and the
throughput ratios (N processes / 1). On a CPU machine shared with other jobs, the ratio says
more about the scheduler than about DDP (see book/scaling.md).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

MARK = "DDP_BENCHMARK_RESULT "


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(config: str, overrides: dict) -> None:
    """Runs inside torchrun: pretrain, then rank 0 prints one JSON line."""
    from mlmcourse.distributed import barrier, destroy_distributed
    from mlmcourse.pretraining import load_config, pretrain

    run = pretrain(load_config(config, overrides), progress=False, log=None)
    train = run.result.history["train"]
    if run.result.final_eval is not None:  # rank 0
        report = {
            "world_size": int(os.environ.get("WORLD_SIZE", "1")),
            "tokens_per_second": run.result.tokens_per_second,
            "train_seconds": run.result.train_seconds,
            "tokens": run.result.tokens_seen,
            "train_loss": sum(r["loss"] for r in train[-5:]) / len(train[-5:]),
            "eval_loss": run.result.final_eval["loss"],
            "eval_accuracy": run.result.final_eval["accuracy"],
        }
        print(MARK + json.dumps(report), flush=True)
    barrier()
    destroy_distributed()


def launch(nproc: int, config: str, overrides: dict, threads: int = 1) -> dict:
    """One torchrun launch on 127.0.0.1 with ``threads`` intra-op threads per process; returns
    rank 0's report plus the launch's wall time."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc_per_node={nproc}",
        "--master_addr=127.0.0.1",
        f"--master_port={free_port()}",
        __file__,
        "--worker",
        "--config",
        config,
        "--overrides",
        json.dumps(overrides),
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["OMP_NUM_THREADS"] = str(threads)
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"torchrun failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    line = next(s for s in done.stdout.splitlines() if s.startswith(MARK))
    return {**json.loads(line[len(MARK) :]), "wall_seconds": wall, "threads": threads}


def compare(
    nproc: int = 2,
    *,
    config: str = "world",
    steps: int = 60,
    batch_size: int = 32,
    overrides: dict | None = None,
) -> list[dict]:
    """Reports of 1 process with 1 thread, 1 process with ``nproc`` threads (the same cores as
    the DDP run) and ``nproc`` processes with 1 thread each, all with the same global batch."""
    common = {"max_steps": steps, "eval_steps": 0, "logging_steps": 1, **(overrides or {})}
    single = {**common, "batch_size": batch_size * nproc}
    return [
        launch(1, config, single, threads=1),
        launch(1, config, single, threads=nproc),
        launch(nproc, config, {**common, "batch_size": batch_size}, threads=1),
    ]


def table(reports: list[dict], batch_size: int) -> str:
    rows = [
        "| processes | threads each | batch per process | tokens/s | train s | launch s | "
        "train loss (last 5) | eval loss | eval accuracy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        per_process = batch_size * reports[-1]["world_size"] // r["world_size"]
        rows.append(
            f"| {r['world_size']} | {r['threads']} | {per_process} | "
            f"{r['tokens_per_second']:,.0f} | "
            f"{r['train_seconds']:.1f} | {r['wall_seconds']:.1f} | {r['train_loss']:.3f} | "
            f"{r['eval_loss']:.3f} | {r['eval_accuracy']:.3f} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32, help="per process")
    parser.add_argument("--config", default="world")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json", default="", help="also write the reports to this file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--overrides", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.config, json.loads(args.overrides))
        return
    from mlmcourse.__main__ import _parse_overrides

    reports = compare(
        args.nproc,
        config=args.config,
        steps=args.steps,
        batch_size=args.batch_size,
        overrides=_parse_overrides(args.sets),
    )
    print(table(reports, args.batch_size))
    for base in reports[:2]:
        ratio = reports[-1]["tokens_per_second"] / base["tokens_per_second"]
        print(
            f"throughput ratio, {args.nproc} processes / 1 process with {base['threads']} "
            f"thread(s): {ratio:.2f}x"
        )
    print(f"cores visible: {os.cpu_count()}; load average: {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(reports, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
