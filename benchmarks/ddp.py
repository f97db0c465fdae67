"""The same pretraining run on 1 and on N processes (torchrun, DDP), same global batch.

    python benchmarks/ddp.py                 # 1 vs 2 CPU processes, world config, 60 steps, 3 times
    python benchmarks/ddp.py --json mlmcourse/course/results/ddp_cpu.json   # what book/scaling.md shows
    python benchmarks/ddp.py --nproc 4 --steps 200 --set device=cuda   # on a 4-GPU machine

Each run is launched with ``torchrun`` on 127.0.0.1 (free port) and rank 0 reports the
throughput of its training loop (tokens of the *global* batch per second, start-up excluded),
the wall time of the whole launch, and the losses. The 1-process runs (1 thread, and N threads:
the same cores as the DDP run) use ``batch_size = N x`` the per-process batch, so all runs
take the same optimiser steps on the same global batches. The three settings are run in turn,
``--repeats`` times (so a change of load during the benchmark touches all three alike), with
the load average recorded before each launch. It prints a Markdown table per repeat and the
throughput ratios (N processes / 1) as mean and spread over the repeats. On a CPU machine
shared with other jobs, the ratio says more about the scheduler than about DDP (see
book/scaling.md).
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
    from mlmcourse.pretraining import load_config, pretrain
    from mlmcourse.training.distributed import barrier, destroy_distributed

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
    load = os.getloadavg()[0]  # what else the machine was doing, as the launch began
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"torchrun failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    line = next(s for s in done.stdout.splitlines() if s.startswith(MARK))
    report = json.loads(line[len(MARK) :])
    return {**report, "wall_seconds": wall, "threads": threads, "load_average_before": load}


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


def ratios(reports: list[dict]) -> dict[str, float]:
    """Throughput of the N-process run over each 1-process run of the same repeat."""
    ddp = reports[-1]
    return {
        f"{ddp['world_size']} processes / 1 process with {r['threads']} thread(s)": (
            ddp["tokens_per_second"] / r["tokens_per_second"]
        )
        for r in reports[:-1]
    }


def summary(repeats: list[list[dict]]) -> dict[str, dict[str, float]]:
    """Mean, sample sd, min and max of each throughput ratio over the repeats."""
    import statistics

    out = {}
    for name in ratios(repeats[0]):
        values = [ratios(r)[name] for r in repeats]
        out[name] = {
            "mean": statistics.fmean(values),
            "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values),
            "max": max(values),
        }
    return out


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
    parser.add_argument("--repeats", type=int, default=3, help="runs of each setting")
    parser.add_argument("--json", default="", help="also write the reports to this file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--overrides", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.config, json.loads(args.overrides))
        return

    from mlmcourse.cli.pretrain import parse_overrides

    repeats = []
    start = time.perf_counter()
    for repeat in range(args.repeats):
        reports = compare(
            args.nproc,
            config=args.config,
            steps=args.steps,
            batch_size=args.batch_size,
            overrides=parse_overrides(args.sets),
        )
        repeats.append(reports)
        print(f"repeat {repeat + 1} of {args.repeats}")
        print(table(reports, args.batch_size))
    for name, s in summary(repeats).items():
        print(
            f"throughput ratio, {name}: {s['mean']:.2f}x ± {s['sd']:.2f} (sd over "
            f"{args.repeats} repeats; min {s['min']:.2f}, max {s['max']:.2f})"
        )
    print(f"cores visible: {os.cpu_count()}; load average: {os.getloadavg()[0]:.1f}")
    if args.json:
        import platform

        import torch

        import mlmcourse

        results = {
            "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
            "what": f"world config, {args.steps} steps, global batch {args.batch_size * args.nproc}: "
            f"1 process x 1 thread, 1 process x {args.nproc} threads, {args.nproc} processes x 1 "
            "thread, run in turn",
            "repeats": repeats,
            "summary": summary(repeats),
            "versions": {
                "mlmcourse": mlmcourse.__version__,
                "torch": torch.__version__,
                "python": platform.python_version(),
            },
            "machine": f"{platform.machine()}, {os.cpu_count()} cores visible",
            "minutes": (time.perf_counter() - start) / 60,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
