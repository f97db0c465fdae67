"""The experiment scripts still run, and the results they committed are complete and consistent."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from mlmcourse.results import available_results, load_results

ROOT = Path(__file__).resolve().parents[1]


def test_the_mask_rate_results_hold_three_seeds_per_rate_and_their_summary():
    assert "mask_rate" in available_results()
    results = load_results("mask_rate")
    assert {"command", "seeds", "versions", "minutes", "runs", "summary"} <= set(results)
    assert len(results["seeds"]) >= 3
    rates = {run["mlm_probability"] for run in results["runs"]}
    assert rates == {0.15, 0.4}
    for rate in rates:
        runs = [r for r in results["runs"] if r["mlm_probability"] == rate]
        assert sorted(r["seed"] for r in runs) == sorted(results["seeds"])
        for key, stats in results["summary"][str(rate)].items():
            values = [r[key] for r in runs]
            assert abs(stats["mean"] - statistics.fmean(values)) < 1e-12
            assert abs(stats["sd"] - statistics.stdev(values)) < 1e-12
        # at 15% the "common" evaluation is the model's own one
        if rate == 0.15:
            assert all(r["common_rate_accuracy"] == r["own_rate_accuracy"] for r in runs)


def test_the_mask_rate_script_runs_and_writes_its_json(tmp_path):
    out = tmp_path / "mask_rate.json"
    done = subprocess.run(
        [sys.executable, "experiments/mask_rate.py", "--max-steps", "3", "--seeds", "0", "1",
         "--rates", "0.4", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text())
    assert [r["seed"] for r in results["runs"]] == [0, 1]
    assert all(r["steps"] == 3 and 0 <= r["fact_probe_accuracy"] <= 1 for r in results["runs"])
    assert set(results["summary"]) == {"0.4"}


def test_the_ner_curve_results_hold_three_seeds_per_setting_and_their_summary():
    assert "ner_curve" in available_results()
    results = load_results("ner_curve")
    assert {"command", "seeds", "versions", "minutes", "runs", "summary", "baseline_f1"} <= set(
        results
    )
    assert len(results["seeds"]) >= 3
    assert set(results["baseline_f1"]) == {"unseen", "new_roles"}
    for entry in results["summary"]:
        runs = [
            r
            for r in results["runs"]
            if (r["start"], r["sentences"], r["unk_rate"])
            == (entry["start"], entry["sentences"], entry["unk_rate"])
        ]
        assert sorted(r["seed"] for r in runs) == sorted(results["seeds"]) and entry["n"] == len(
            runs
        )
        for key in ("unseen_f1", "new_roles_f1"):
            values = [r[key] for r in runs]
            assert abs(entry[key]["mean"] - statistics.fmean(values)) < 1e-12
            assert abs(entry[key]["sd"] - statistics.stdev(values)) < 1e-12
    sizes = {e["sentences"] for e in results["summary"] if e["unk_rate"] > 0}
    assert sizes == {50, 200, 1000, 4000}
    assert {e["start"] for e in results["summary"]} == {"pretrained", "from scratch"}


def test_the_ner_curve_script_runs_and_writes_its_json(tmp_path):
    out = tmp_path / "ner_curve.json"
    done = subprocess.run(
        [sys.executable, "experiments/ner_curve.py", "--steps", "2", "--sizes", "50",
         "--seeds", "0", "1", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text())
    assert [(r["seed"], r["start"]) for r in results["runs"]] == [
        (0, "pretrained"), (0, "from scratch"), (1, "pretrained"), (1, "from scratch")
    ]  # fmt: skip
    assert all(r["steps"] == 2 and 0 <= r["new_roles_f1"] <= 1 for r in results["runs"])
    assert all(entry["n"] == 2 for entry in results["summary"])
