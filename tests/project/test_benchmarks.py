"""The benchmark scripts still run (tiny sizes; the figures themselves come from full runs)."""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs the benchmark scripts

ROOT = Path(__file__).resolve().parents[2]


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
    assert "speed-up (ours, speed path vs transformers, training tokens/s):" in done.stdout
    assert "MFU of the speed path:" in done.stdout and "(goal >= 65%)" in done.stdout


def test_train_mlm_benchmark_refuses_a_missing_device_in_one_line():
    done = subprocess.run(
        [sys.executable, "benchmarks/train_mlm.py", "--device", "nonsense"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


def _fake_compare(nproc, **_):
    """Three launches' reports without launching: throughputs 100, 150, 120 (+ noise)."""
    _fake_compare.calls += 1
    base = {
        "tokens": 1,
        "train_seconds": 1.0,
        "train_loss": 4.0,
        "eval_loss": 4.1,
        "eval_accuracy": 0.1,
    }
    tps = [100.0, 150.0, 120.0 + _fake_compare.calls]
    return [
        {
            **base,
            "world_size": ws,
            "threads": th,
            "tokens_per_second": t,
            "wall_seconds": 2.0,
            "load_average_before": 0.5,
        }
        for (ws, th), t in zip([(1, 1), (1, nproc), (nproc, 1)], tps, strict=True)
    ]


def test_ddp_benchmark_repeats_and_summarises_its_ratios(tmp_path, monkeypatch, capsys):
    """The launches themselves run in the scaling chapter; here, what is done with them."""
    spec = importlib.util.spec_from_file_location("ddp_benchmark", ROOT / "benchmarks" / "ddp.py")
    ddp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ddp)
    _fake_compare.calls = 0
    monkeypatch.setattr(ddp, "compare", _fake_compare)
    out = tmp_path / "ddp.json"
    monkeypatch.setattr(sys, "argv", ["benchmarks/ddp.py", "--repeats", "3", "--json", str(out)])
    ddp.main()
    printed = capsys.readouterr().out
    assert printed.count("repeat ") == 3 and "sd over 3 repeats" in printed
    results = json.loads(out.read_text())
    assert len(results["repeats"]) == 3 and {"command", "versions", "minutes"} <= set(results)
    one_thread = results["summary"]["2 processes / 1 process with 1 thread(s)"]
    values = [121 / 100, 122 / 100, 123 / 100]
    assert one_thread["mean"] == pytest.approx(statistics.fmean(values))
    assert one_thread["sd"] == pytest.approx(statistics.stdev(values))
    assert (one_thread["min"], one_thread["max"]) == (min(values), max(values))
    assert results["summary"]["2 processes / 1 process with 2 thread(s)"]["max"] == pytest.approx(
        123 / 150
    )


def test_step_flops_count_the_lm_head_only_where_it_scores():
    from mlmcourse.model import EncoderConfig
    from mlmcourse.training.hardware import step_matmul_flops

    c = EncoderConfig(vocab_size=100, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=16, max_position_embeddings=16)  # fmt: skip
    encoder = 2 * 4 * 2 * (8 * 64 + 4 * 8 * 16 + 4 * 4 * 8)  # batch 2, 4 tokens, 2 layers
    head = 2 * 64 + 2 * 8 * 100  # per scored position
    assert step_matmul_flops(c, 2, 4, scored=0) == 3 * encoder
    assert (
        step_matmul_flops(c, 2, 4, scored=8) - step_matmul_flops(c, 2, 4, scored=1) == 3 * 7 * head
    )


def test_packing_benchmark_runs_on_generated_lengths_and_reports_ratio_padding_and_mfu():
    pytest.importorskip("transformers")
    done = run_tiny_benchmark("packing.py", batch=2)
    assert done.stdout.count("speed-up in real tokens/s:") == 2
    assert "generated (log-normal)" in done.stdout
    assert "padding" in done.stdout and "full 2 x 32 rows, no padding: ours MFU" in done.stdout
    assert "(plain core)" in done.stdout and "(speed path)" in done.stdout


def test_fine_tuning_benchmark_runs_and_reports_unpadded_ratio_and_mfu():
    pytest.importorskip("transformers")
    done = run_tiny_benchmark("fine_tuning.py", batch=4)
    assert done.stdout.count("ours unpadded / transformers:") == 2  # training and inference
    assert "training step" in done.stdout and "inference" in done.stdout
    assert done.stdout.count("MFU") == 6 and "generated (log-normal)" in done.stdout


def test_the_step_profile_accounts_for_every_phase_and_kind_of_op():
    done = run_tiny_benchmark("profile_step.py", batch=4)
    for title in ("MLM step, packed rows of generated", "fine-tuning step, generated"):
        (report,) = [part for part in done.stdout.split("\n\n") if part.startswith(title)]
        rows = {line.split()[0]: line.split() for line in report.splitlines()[2:8]}
        assert list(rows) == ["collator", "forward", "backward", "clip", "optimizer", "zero_grad"]
        shares = [float(row[2].rstrip("%")) for row in rows.values()]
        assert abs(sum(shares) - 100) < 0.5  # the phases are the whole step
        assert all(float(row[3]) <= float(row[1]) + 0.05 for row in rows.values())  # ops within
        assert "matmul" in report and "dropout" in report  # forward and backward by kind


def run_tiny_benchmark(script: str, *, batch: int) -> subprocess.CompletedProcess:
    """Run ``benchmarks/<script>`` on generated lengths with a one-layer model, one step."""
    tiny = f"--layers 1 --hidden 32 --heads 2 --intermediate 64 --vocab 300 --batch {batch}"
    command = [sys.executable, f"benchmarks/{script}", *tiny.split(), "--seq-len", "32"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [*command, "--generated", "--steps", "1", "--warmup", "1"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done
