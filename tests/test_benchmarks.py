"""The benchmark scripts still run (tiny sizes; the figures themselves come from full runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_train_mlm_benchmark_runs_and_reports_ratio_and_mfu():
    pytest.importorskip("transformers")
    tiny = "--layers 1 --hidden 32 --heads 2 --intermediate 64 --vocab 300 --batch 2 --seq-len 16"
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/train_mlm.py",
            *tiny.split(),
            "--rounds",
            "2",
            "--warmup",
            "1",
        ],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "device: cpu, precision fp32" in done.stdout
    assert "MFU on the MLM's needed FLOPs" in done.stdout
    assert "speed-up (ours vs transformers, training tokens/s):" in done.stdout


def test_train_mlm_benchmark_refuses_a_missing_device_in_one_line():
    done = subprocess.run(
        [sys.executable, "benchmarks/train_mlm.py", "--device", "nonsense"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
