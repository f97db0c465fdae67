"""CPU slots (scripts/cpu_slots.py): no more slow tests and chapters at once than cores."""

from __future__ import annotations

import contextlib
import fcntl
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import cpu_slots  # on sys.path from tests/conftest.py
import pytest
from cpu_slots import SLOTS_ENV, cpu_slot

from tests.conftest import pytest_runtest_call

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture
def two_slots(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(SLOTS_ENV, str(tmp_path / "slots"))
    monkeypatch.setattr(cpu_slots, "slot_count", lambda: 2)
    monkeypatch.setattr(cpu_slots, "POLL_SECONDS", 0.02)
    (tmp_path / "slots").mkdir()
    return tmp_path / "slots"


def _locked(folder: Path, number: int) -> bool:
    with open(folder / f"slot-{number}", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False


def test_without_a_slots_folder_nothing_waits(monkeypatch):
    monkeypatch.delenv(SLOTS_ENV, raising=False)
    with cpu_slot() as first, cpu_slot() as second, cpu_slot() as third:
        assert first is second is third is None


def test_a_job_waits_while_every_slot_is_held_and_takes_the_one_freed(two_slots):
    got = []

    def wait_for_a_slot():
        with cpu_slot() as number:
            got.append(number)

    with contextlib.ExitStack() as held:
        assert [held.enter_context(cpu_slot()) for _ in range(2)] == [0, 1]
        waiting = threading.Thread(target=wait_for_a_slot)
        waiting.start()
        time.sleep(0.3)
        assert got == []  # both slots are held
        held.pop_all().close()  # releases slot 1, then slot 0
    waiting.join(timeout=5)
    assert got and got[0] in (0, 1)


def test_a_slot_is_free_again_when_its_holder_is_killed(two_slots):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; sys.path.insert(0, sys.argv[1]);"
         "import cpu_slots; s = cpu_slots.cpu_slot(); print(s.__enter__(), flush=True);"
         "time.sleep(60)", str(SCRIPTS)],
        stdout=subprocess.PIPE, text=True,
        env={SLOTS_ENV: str(two_slots), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    number = int(holder.stdout.readline())
    assert _locked(two_slots, number)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=10)
    assert not _locked(two_slots, number)


def _item(slow: bool):
    return SimpleNamespace(get_closest_marker=lambda name: object() if slow else None)


@pytest.mark.parametrize("slow", [True, False])
def test_a_slow_test_holds_a_slot_while_it_runs_and_others_none(two_slots, slow):
    call = pytest_runtest_call(_item(slow))
    next(call)  # the test's call runs here
    assert _locked(two_slots, 0) == slow
    with pytest.raises(StopIteration):
        call.send(None)
    assert not _locked(two_slots, 0)
