"""The suite's own scheduling: long tests shared evenly by pytest-xdist's two workers, by the
durations the last full run recorded (``tests/durations.json``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import DURATIONS, LONG, balanced_order, merged_durations, recorded_seconds

ROOT = Path(__file__).resolve().parent.parent.parent


class FakeItem:
    """What ``balanced_order`` reads of a test: its id and fixtures."""

    def __init__(self, name: str, fixtures=()):
        self.name = self.nodeid = name
        self.fixturenames = list(fixtures)

    def __repr__(self):
        return self.name


def test_the_long_tests_start_each_workers_share_and_are_spread_evenly():
    items = [FakeItem(f"short{i}") for i in range(6)] + [FakeItem(n) for n in "abcd"]
    seconds = {"a": 150, "b": 140, "c": 130, "d": 20, "short0": LONG / 2}
    order = balanced_order(items, 2, seconds)
    first, second = order[:5], order[5:]  # xdist's worksteal: 10 // 2 to the first worker
    assert [i.name for i in first[:2]] == ["a", "d"]  # 150 + 20 against 140 + 130
    assert [i.name for i in second[:2]] == ["b", "c"]
    # the rest keeps its collection order, so a file's tests stay together
    rest = [i.name for i in order if i.name.startswith("short")]
    assert rest == [f"short{i}" for i in range(6)]
    assert sorted(i.name for i in order) == sorted(i.name for i in items)


def test_one_worker_runs_the_long_tests_first_and_no_record_keeps_the_order():
    items = [FakeItem("x"), FakeItem("y"), FakeItem("z")]
    assert [i.name for i in balanced_order(items, 1, {"y": 6, "z": 50})] == ["z", "y", "x"]
    assert balanced_order(items, 2, {}) == items


def test_the_long_tests_sharing_a_costly_session_fixture_go_to_one_worker():
    items = [FakeItem(f"short{i}") for i in range(8)]
    items += [
        FakeItem("qa"),
        FakeItem("retrain"),
        FakeItem("install", fixtures=["colab", "wheel"]),
        FakeItem("hub-using", fixtures=["colab"]),
        FakeItem("other", fixtures=["tmp_path"]),
        FakeItem("hub-intro", fixtures=["tmp_path", "colab"]),
    ]
    seconds = {"qa": 500, "retrain": 300, "install": 250, "hub-using": 80, "other": 60,
               "hub-intro": 20}  # fmt: skip
    order = balanced_order(items, 2, seconds)
    first, second = order[:7], order[7:]  # 14 // 2 to the first worker
    # dealt by load alone, hub-using (80) and hub-intro would join qa (500) on the first worker,
    # away from install (250 + 300): now they follow install, and "other" takes their place
    assert [i.name for i in first[:2]] == ["qa", "other"]
    assert [i.name for i in second[:4]] == ["retrain", "install", "hub-using", "hub-intro"]
    assert sorted(i.name for i in order) == sorted(i.name for i in items)


def test_a_run_updates_the_times_it_measured_and_a_failure_keeps_the_old_one():
    recorded = {"a": 10.0, "b": 20.0, "gone": 3.0}
    merged = merged_durations(recorded, {"b": 5.04, "a": 1.0, "new": 7.0}, failed={"a", "new"})
    assert merged == {"a": 10.0, "b": 5.0, "gone": 3.0, "new": 7.0}
    assert list(merged) == sorted(merged)  # a stable file: small diffs


def test_the_committed_durations_name_the_long_tests_of_the_suite():
    seconds = recorded_seconds()
    assert DURATIONS.is_file() and seconds, "tests/durations.json: run `make test` to record it"
    assert all(isinstance(v, float | int) and v >= 0 for v in seconds.values())
    long = [nodeid for nodeid, s in seconds.items() if s >= 60]
    assert long, "no test over a minute: the durations file is not a full run's"
    for nodeid in long:  # each names a test file that exists
        assert (ROOT / nodeid.split("::")[0]).is_file(), f"{nodeid}: no such test file"


def test_a_recording_run_writes_its_durations(tmp_path):
    """The hooks, in a pytest run of their own on a copy of the file."""
    copy = tmp_path / "durations.json"
    copy.write_text(json.dumps({"tests/project/test_conftest.py::gone": 1.0}), encoding="utf-8")
    test = "tests/project/test_conftest.py::test_one_worker_runs_the_long_tests_first_and_no_record_keeps_the_order"
    env = {**os.environ, "MLMCOURSE_RECORD_DURATIONS": str(copy)}
    env.pop("PYTEST_XDIST_WORKER", None)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                   cwd=ROOT, env=env, check=True, capture_output=True)  # fmt: skip
    written = json.loads(copy.read_text(encoding="utf-8"))
    assert set(written) == {"tests/project/test_conftest.py::gone", test}
    assert written[test] < 60
