"""Replacing a directory atomically, so that a process killed at any instant loses nothing.

A checkpoint is a directory of several files; writing them in place and being killed half-way
would leave a mix of the new and the old. So :func:`atomic_directory` has the caller write a
complete temporary sibling, then swaps it in with two renames; :func:`recover_checkpoint_dir`
finishes, on the next save or load, whatever a killed save left. ``tests/checkpoint/test_crash.py`` kills
a real training run at every file operation of a save to hold this to its promise.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_directory", "recover_checkpoint_dir"]

# A save writes `.<name>.tmp-<pid>-<hex>` beside the checkpoint, renames the old checkpoint to
# `.<name>.old-<pid>-<hex>`, renames the temporary directory into place and deletes the old
# copy. A process killed at any instant leaves the checkpoint, or (between the two renames)
# only the `.old-*` copy, plus leftovers; :func:`recover_checkpoint_dir` finishes the job. The
# pid in the names tells a leftover of a dead process from the work of a live one.
_LEFTOVER_KINDS = ("tmp", "old")
WAIT_SECONDS = 5.0  # how long a load waits for another process's save between its renames


def _sibling(directory: Path, kind: str) -> Path:
    return directory.parent / f".{directory.name}.{kind}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _owner_alive(leftover: Path) -> bool:
    """Whether the process that made ``leftover`` still runs (names without a pid: no)."""
    pid = leftover.name.rsplit("-", 2)[-2] if leftover.name.count("-") >= 2 else ""
    if not pid.isdigit() or int(pid) == os.getpid():
        return False  # our own leftovers are from an earlier, finished or failed, save
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True


def _leftovers(directory: Path) -> list[Path]:
    if not directory.parent.is_dir():
        return []
    return [
        p
        for kind in _LEFTOVER_KINDS
        for p in directory.parent.glob(f".{glob.escape(directory.name)}.{kind}-*")
        if p.is_dir()
    ]


def recover_checkpoint_dir(directory: str | Path) -> Path:
    """Finish what an interrupted save left beside ``directory``, and return ``directory``.

    If the checkpoint itself is missing but a save was killed between its two renames, the
    previous checkpoint (its ``.old-*`` copy, complete by construction) is put back. Then the
    leftover ``.tmp-*`` and ``.old-*`` directories of dead processes are deleted. A live
    process's save in progress is left alone; if it is between its renames, this waits up to
    :data:`WAIT_SECONDS` for the new checkpoint to appear.
    """
    directory = Path(directory)
    deadline = time.monotonic() + WAIT_SECONDS
    while not directory.exists() and any(
        ".old-" in p.name and _owner_alive(p) for p in _leftovers(directory)
    ):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    stale = [p for p in _leftovers(directory) if not _owner_alive(p)]
    if not directory.exists():
        olds = sorted((p for p in stale if ".old-" in p.name), key=lambda p: p.stat().st_mtime)
        if olds:
            with contextlib.suppress(OSError):  # another process may have recovered it first
                olds[-1].rename(directory)
                warnings.warn(
                    f"{directory}: a save was interrupted; restored the previous checkpoint "
                    f"from {olds[-1].name}",
                    stacklevel=2,
                )
    for leftover in stale:
        shutil.rmtree(leftover, ignore_errors=True)
    return directory


@contextlib.contextmanager
def atomic_directory(directory: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``directory``; on success it replaces ``directory``."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    recover_checkpoint_dir(directory)
    tmp = _sibling(directory, "tmp")
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if directory.exists():
        old = _sibling(directory, "old")
        directory.rename(old)
    tmp.rename(directory)  # from here on the new checkpoint is in place
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
