"""Shipped results: chapters read measured tables from the package, not from the repository."""

import pytest

from mlmcourse.course.results import available_results, load_results


def test_the_ddp_table_is_shipped_and_complete():
    assert "ddp_cpu" in available_results()
    results = load_results("ddp_cpu")
    assert {"command", "repeats", "summary", "versions", "minutes"} <= set(results)
    assert len(results["repeats"]) >= 3
    for reports in results["repeats"]:
        assert [(r["world_size"], r["threads"]) for r in reports] == [(1, 1), (1, 2), (2, 1)]
        assert all(
            {"tokens_per_second", "train_loss", "eval_loss", "load_average_before"} <= set(r)
            for r in reports
        )
    assert set(results["summary"]) == {
        "2 processes / 1 process with 1 thread(s)",
        "2 processes / 1 process with 2 thread(s)",
    }


def test_an_unknown_name_lists_what_is_shipped():
    with pytest.raises(FileNotFoundError, match="ddp_cpu"):
        load_results("no_such_results")


def test_provenance_records_the_command_seeds_versions_and_minutes(tmp_path, monkeypatch):
    import json
    import time

    from mlmcourse.course.results import provenance, save_results

    monkeypatch.setattr("sys.argv", ["experiments/x.py", "--json", "out.json"])
    record = provenance(None, [0, 1, 2], time.perf_counter() - 120)
    assert record["command"] == "python experiments/x.py --json out.json"
    assert record["seeds"] == [0, 1, 2] and 1.99 < record["minutes"] < 2.5
    assert {"mlmcourse", "torch", "tokenizers", "python"} <= set(record["versions"])
    assert provenance(["--seeds", "0"], [0], time.perf_counter())["command"].endswith(
        "x.py --seeds 0"
    )
    path = save_results(tmp_path / "deep" / "r.json", {**record, "runs": []})
    assert json.loads(path.read_text()) == {**record, "runs": []}


def test_mean_sd_is_the_mean_and_sample_sd_over_rows():
    from mlmcourse.course.results import mean_sd

    rows = [{"f1": 0.4, "minutes": 7}, {"f1": 0.5, "minutes": 8}, {"f1": 0.6, "minutes": 9}]
    summary = mean_sd(rows, ("f1", "minutes"))
    assert summary["f1"]["mean"] == pytest.approx(0.5) and summary["f1"]["sd"] == pytest.approx(0.1)
    assert summary["minutes"] == {"mean": 8.0, "sd": 1.0}
    assert mean_sd(rows[:1], ("f1",)) == {"f1": {"mean": 0.4, "sd": 0.0}}  # one seed: no spread


def test_describe_run_gives_the_command_and_what_the_file_records_of_its_run():
    from mlmcourse.course.results import describe_run, load_results

    full = {
        "command": "python experiments/x.py --json x.json",
        "seeds": [0, 1, 2],
        "minutes": 10.54,
        "machine": "x86_64, 1 torch thread",
        "versions": {"mlmcourse": "0.3.0", "torch": "2.13.0"},
    }
    assert describe_run(full) == (
        "python experiments/x.py --json x.json; seeds 0, 1, 2; 10.5 minutes; "
        "x86_64, 1 torch thread; mlmcourse 0.3.0"
    )
    assert describe_run({"command": "python b.py"}) == "python b.py"  # a benchmark: no seeds
    assert describe_run(load_results("ddp_cpu")).startswith("python benchmarks/ddp.py")
