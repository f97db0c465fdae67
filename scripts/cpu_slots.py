"""At most one CPU-heavy job per core, across processes that do not know each other.

``make test`` runs the slow tests (two pytest workers) beside the chapters (two notebooks at a
time): four busy processes on two cores. Switching between them costs each its caches: four
MiniLM training loops at once took 1.61 s a step each, two at once 0.70 s, so four do 13% less
work in the same time than two. A job (a slow test's call, a chapter's execution) holds one of
the slots, a lock file, while it runs; what waits for a slot sleeps. The folder of the lock
files is ``$MLMCOURSE_CPU_SLOTS`` (``make test`` sets it); where it is not set, nothing waits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

SLOTS_ENV = "MLMCOURSE_CPU_SLOTS"
POLL_SECONDS = 0.2


def slot_count() -> int:
    """One slot per core this process may run on."""
    return len(os.sched_getaffinity(0))


@contextlib.contextmanager
def cpu_slot() -> Iterator[int | None]:
    """Hold a free slot while the block runs (its number; None when there are no slots)."""
    folder = os.environ.get(SLOTS_ENV)
    if not folder:
        yield None
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    while True:
        for number in range(slot_count()):
            handle = open(Path(folder) / f"slot-{number}", "a")  # held until the job ends
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            try:
                yield number
            finally:
                handle.close()  # closing the file releases its lock
            return
        time.sleep(POLL_SECONDS)
