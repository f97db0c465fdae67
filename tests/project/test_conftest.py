"""The suite's own scheduling: long tests shared evenly by pytest-xdist's two workers."""

from __future__ import annotations

import pytest

from tests.conftest import balanced_order


class FakeItem:
    """What ``balanced_order`` reads of a test: its name, ``slow`` marker and fixtures."""

    def __init__(self, name: str, seconds: float | None = None, slow: bool = False, fixtures=()):
        self.name = name
        self.fixturenames = list(fixtures)
        kwargs = {} if seconds is None else {"seconds": seconds}
        self.marker = pytest.mark.slow(**kwargs).mark if (slow or seconds) else None

    def get_closest_marker(self, name):
        return self.marker if name == "slow" else None

    def __repr__(self):
        return self.name


def test_the_long_tests_start_each_workers_share_and_are_spread_evenly():
    items = [FakeItem(f"short{i}", slow=i % 2 == 0) for i in range(6)]
    items += [FakeItem("a", 150), FakeItem("b", 140), FakeItem("c", 130), FakeItem("d", 20)]
    order = balanced_order(items, workers=2)
    first, second = order[:5], order[5:]  # xdist's worksteal: 10 // 2 to the first worker
    assert [i.name for i in first[:2]] == ["a", "d"]  # 150 + 20 against 140 + 130
    assert [i.name for i in second[:2]] == ["b", "c"]
    # the rest keeps its collection order, so a file's tests stay together
    rest = [i.name for i in order if i.name.startswith("short")]
    assert rest == [f"short{i}" for i in range(6)]
    assert sorted(i.name for i in order) == sorted(i.name for i in items)


def test_one_worker_runs_the_long_tests_first_and_no_hint_keeps_the_order():
    items = [FakeItem("x"), FakeItem("y", 5), FakeItem("z", 50)]
    assert [i.name for i in balanced_order(items, workers=1)] == ["z", "y", "x"]
    plain = [FakeItem("p"), FakeItem("q", slow=True)]
    assert balanced_order(plain, workers=2) == plain


def test_the_long_tests_sharing_a_costly_session_fixture_go_to_one_worker():
    items = [FakeItem(f"short{i}") for i in range(8)]
    items += [
        FakeItem("qa", 500),
        FakeItem("retrain", 300),
        FakeItem("install", 250, fixtures=["colab", "wheel"]),
        FakeItem("hub-using", 80, fixtures=["colab"]),
        FakeItem("other", 60, fixtures=["tmp_path"]),
        FakeItem("hub-intro", 20, fixtures=["tmp_path", "colab"]),
    ]
    order = balanced_order(items, workers=2)
    first, second = order[:7], order[7:]  # 14 // 2 to the first worker
    # dealt by load alone, hub-using (80) and hub-intro would join qa (500) on the first worker,
    # away from install (250 + 300): now they follow install, and "other" takes their place
    assert [i.name for i in first[:2]] == ["qa", "other"]
    assert [i.name for i in second[:4]] == ["retrain", "install", "hub-using", "hub-intro"]
    assert sorted(i.name for i in order) == sorted(i.name for i in items)
