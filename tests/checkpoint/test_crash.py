"""Crash tests: kill a real training process while it writes checkpoints; nothing may be lost.

``python -m mlmcourse pretrain`` trains a tiny model and writes a checkpoint after every
step. A save is a short sequence of file operations (make the temporary directory, write the
config, the weights, the training state; rename the old checkpoint away, rename the new one
in, delete the old one). The test runs the trainer in a child that SIGKILLs itself at a chosen
operation of a chosen save, either just before the operation or half-way through it (a torn
file), resumes, and kills again: every operation of a save is hit both ways. Killing at a
file operation rather than after a timer makes the test the same on a fast or a slow machine.

After every kill a copy of the output folder must load (recovering an ``.old-*`` copy if the
kill fell between the two renames of a save) and never go back past a completed save; the run
finally resumed to the end must equal, bit for bit, a run that was never interrupted; and no
temporary directory may remain. A Ctrl-C (SIGINT) must stop cleanly, print the resume
command, and that command must finish the same run.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from safetensors.torch import load_file

from mlmcourse.data import world_texts
from mlmcourse.heads import load_checkpoint

pytestmark = pytest.mark.slow  # kills and resumes real training processes

ROOT = Path(__file__).resolve().parents[2]
MAX_STEPS = 120


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A tiny text corpus and config: startup in ~2 s, ~10 ms per step with its save."""
    work = tmp_path_factory.mktemp("crash")
    (work / "texts.txt").write_text("\n".join(world_texts("train")[:400]) + "\n")
    (work / "tiny.yaml").write_text(
        f"dataset: {work / 'texts.txt'}\n"
        f"max_steps: {MAX_STEPS}\n"
        "warmup_steps: 5\nlogging_steps: 1\nsave_steps: 1\nmax_length: 32\nbatch_size: 8\n"
        "hidden_size: 16\nnum_hidden_layers: 1\nnum_attention_heads: 2\nintermediate_size: 32\n"
        "hidden_dropout_prob: 0.1\neval_batch_size: 64\nfinal_evaluation: false\n"
    )
    return work


def _command(work: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "mlmcourse", "pretrain", "--config", str(work / "tiny.yaml"),
        "--no-progress", "--set", f"output_dir={out}", *extra,
    ]  # fmt: skip


def _env(**extra: str) -> dict[str, str]:
    # One thread: no reduction-order noise, and the two cores stay free for the test.
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **extra}


def _start(work: Path, out: Path, *extra: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        _command(work, out, *extra),
        env=_env(),
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


@pytest.fixture(scope="module")
def reference(workdir) -> Path:
    """The same run, never interrupted."""
    out = workdir / "reference"
    done = subprocess.run(_command(workdir, out), env=_env(), cwd=workdir, capture_output=True)
    assert done.returncode == 0, done.stderr
    return out


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.glob(f".{out.name}.*"))


def _step(out: Path) -> int:
    return json.loads((out / "trainer_state.json").read_text())["step"]


def _assert_same_run(out: Path, reference: Path) -> None:
    assert _step(out) == MAX_STEPS
    ours, theirs = load_file(out / "model.safetensors"), load_file(reference / "model.safetensors")
    assert ours.keys() == theirs.keys()
    for key in ours:
        assert ours[key].equal(theirs[key]), key  # bit for bit
    history = json.loads((out / "trainer_state.json").read_text())["history"]["train"]
    expected = json.loads((reference / "trainer_state.json").read_text())["history"]["train"]
    assert [h["loss"] for h in history] == [h["loss"] for h in expected]


def _loads_after_a_crash(out: Path, scratch: Path) -> int:
    """Load a copy of the folder as it was left (leftovers included); return its step."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(out.parent, scratch, symlinks=True)
    copy = scratch / out.name
    loaded = load_checkpoint(copy)  # recovers an .old-* copy if the kill fell between renames
    assert loaded.step is not None and 1 <= loaded.step <= MAX_STEPS
    return loaded.step


# The trainer, run so that it SIGKILLs itself inside its CRASH_SAVE-th save (counted from its
# start): before that save's CRASH_OP-th file operation, or, with CRASH_TORN=1, half-way
# through it (half the bytes written). An operation number past the end of the save kills it
# just after the save completes. It reports on stderr where it died.
_CRASHING_TRAINER = """
import contextlib, os, runpy, shutil, signal, sys
from pathlib import Path
import safetensors.torch, torch
import mlmcourse.checkpoint.atomic as atomic_module

AT_SAVE, AT_OP = int(os.environ["CRASH_SAVE"]), int(os.environ["CRASH_OP"])
TORN = os.environ["CRASH_TORN"] == "1"
saves, ops, inside = 0, 0, False

def die(where):
    print(f"CRASH {where}", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

def truncate_half(path):
    path = Path(path)
    os.truncate(path, path.stat().st_size // 2)

def operation(name, real, tear):
    def wrapped(*args, **kwargs):
        global ops
        if inside and saves == AT_SAVE:
            if ops == AT_OP:
                if TORN and tear is not None:
                    tear(*args, **kwargs)
                    die(f"op={ops} name={name} torn")
                die(f"op={ops} name={name}")
            ops += 1
        return real(*args, **kwargs)
    return wrapped

def torn_text(self, data, *args, **kwargs):
    write_text(self, data[: len(data) // 2], *args, **kwargs)

def torn_save(real, target):
    def tear(*args, **kwargs):
        real(*args, **kwargs)
        truncate_half(target(args, kwargs))
    return tear

write_text = Path.write_text
Path.write_text = operation("write_text", write_text, torn_text)
Path.mkdir = operation("mkdir", Path.mkdir, None)
Path.rename = operation("rename", Path.rename, None)
shutil.rmtree = operation("rmtree", shutil.rmtree, None)
save_model = safetensors.torch.save_model
safetensors.torch.save_model = operation(
    "save_model", save_model, torn_save(save_model, lambda a, k: a[1]))
torch_save = torch.save
torch.save = operation("torch.save", torch_save, torn_save(torch_save, lambda a, k: a[1]))

atomic = atomic_module.atomic_directory
@contextlib.contextmanager
def counted(directory):
    global saves, inside
    saves += 1
    inside = True
    try:
        with atomic(directory) as tmp:
            yield tmp
    finally:
        inside = False
    if saves == AT_SAVE:
        die(f"op={ops} name=after-the-save")
atomic_module.atomic_directory = counted

sys.argv = ["mlmcourse", *sys.argv[1:]]
runpy.run_module("mlmcourse", run_name="__main__", alter_sys=True)
"""


# The ~30 crashing runs start from a fork server that has imported torch and the trainer once:
# a fresh interpreter spends seconds importing them, longer than the run itself. The reference
# run, the final resumed run and the Ctrl-C test still start `python -m mlmcourse` as a user does.
_PRELOAD = [
    "torch",
    "safetensors.torch",
    "mlmcourse.__main__",
    "mlmcourse.pretraining",
]


def _trainer_child(argv: list[str], env: dict[str, str], cwd: Path, stderr: Path) -> None:
    """In a child of the fork server: ``python -c _CRASHING_TRAINER *argv`` in ``cwd``."""
    import torch

    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    os.dup2(os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    torch.set_num_threads(1)  # OMP_NUM_THREADS=1, as the subprocess runs get it
    sys.argv = ["-c", *argv]
    exec(compile(_CRASHING_TRAINER, "<crashing trainer>", "exec"), {"__name__": "__main__"})


@pytest.fixture(scope="module")
def fork_server():
    """A multiprocessing context whose fork server has imported ``_PRELOAD``."""
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


def _crashing_run(
    fork_server, work: Path, out: Path, save: int, op: int, torn: bool, *extra: str
) -> str:
    """Run the trainer until it kills itself as asked; return where it died."""
    argv = _command(work, out, *extra)[3:]
    env = _env(CRASH_SAVE=str(save), CRASH_OP=str(op), CRASH_TORN=str(int(torn)))
    stderr = out.parent / f"crash-{save}-{op}-{int(torn)}.stderr"
    child = fork_server.Process(target=_trainer_child, args=(argv, env, work, stderr))
    child.start()
    child.join(timeout=120)
    if child.exitcode is None:
        child.kill()
        child.join()
    text = stderr.read_text()
    stderr.unlink()
    assert child.exitcode == -signal.SIGKILL, (
        f"the trainer was to die at save {save}, op {op}; it exited {child.exitcode}:\n"
        f"{text[-3000:]}"
    )
    return text.rsplit("CRASH ", 1)[1].strip()


@pytest.mark.slow  # spawns a training process and kills it
def test_sigkill_at_every_operation_of_a_save_never_loses_the_checkpoint(
    workdir, reference, fork_server, tmp_path
):
    out = tmp_path / "runs" / "run"
    out.parent.mkdir()
    rng = random.Random(21)
    # The first run dies in its second save, so a checkpoint exists to resume from.
    deaths = [_crashing_run(fork_server, workdir, out, 2, 0, False)]
    steps = [_loads_after_a_crash(out, tmp_path / "scratch")]
    resume = ("--set", f"resume_from_checkpoint={out}")
    op, torn = 0, False
    while not deaths[-1].endswith("after-the-save") or not torn:
        # Every operation, first killed before it runs, then half-way through it.
        if deaths[-1].endswith("after-the-save"):
            op, torn = 0, True
        else:
            op += 1
        deaths.append(
            _crashing_run(fork_server, workdir, out, rng.randint(1, 2), op, torn, *resume)
        )
        steps.append(_loads_after_a_crash(out, tmp_path / "scratch"))
        assert len(deaths) < 40, deaths
    assert steps == sorted(steps), steps  # never went back past a completed save
    assert steps[-1] < MAX_STEPS
    names = " ".join(deaths)
    for name in ("mkdir", "write_text", "save_model", "torch.save", "rename", "rmtree"):
        assert f"name={name} " in names + " ", deaths  # each kind of operation was hit
    assert "torn" in names
    print("\n".join(deaths))
    final = _start(workdir, out, *resume)
    assert final.wait(timeout=120) == 0, final.stderr.read()
    _assert_same_run(out, reference)
    assert _leftovers(out) == []  # the resumed runs cleaned up what every kill left


def test_ctrl_c_saves_and_prints_the_command_that_resumes(workdir, reference, tmp_path):
    out = tmp_path / "run"
    process = _start(workdir, out)
    while not (out / "trainer_state.json").exists():
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130
    stderr = process.stderr.read()
    assert "Traceback" not in stderr
    assert f"interrupted after step {_step(out)} of {MAX_STEPS}: saved a checkpoint" in stderr
    command = stderr.split("resume with:\n", 1)[1].strip()
    assert command.startswith("python -m mlmcourse pretrain --config ")
    words = shlex.split(command)
    done = subprocess.run(
        [sys.executable, *words[1:]], env=_env(), cwd=workdir, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    _assert_same_run(out, reference)
    assert _leftovers(out) == []


# A save is killed between its two renames only by luck (the window is microseconds), so this
# child widens it: it renames the old checkpoint away, then sleeps before moving the new one in.
_SLOW_SWAP = """
import sys, time
from pathlib import Path
import torch
from mlmcourse.checkpoint import TrainingState, save_checkpoint
from mlmcourse.heads import BertForMaskedLM
from mlmcourse.model import EncoderConfig

rename = Path.rename
def slow_rename(self, target):
    result = rename(self, target)
    if ".old-" in Path(target).name:
        Path(sys.argv[3]).touch()  # tell the test: only the .old-* copy exists now
        time.sleep(30)  # killed here
    return result

out = Path(sys.argv[1])
model = BertForMaskedLM(EncoderConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1,
    num_attention_heads=2, intermediate_size=16, max_position_embeddings=16))
save_checkpoint(out, model, state=TrainingState(step=int(sys.argv[2])))
Path.rename = slow_rename
save_checkpoint(out, model, state=TrainingState(step=int(sys.argv[2]) + 1))
"""


def test_a_kill_between_the_two_renames_of_a_save_recovers_the_old_copy(tmp_path):
    out = tmp_path / "run"
    for attempt in range(3):
        # The child says when it is in the window: watching the folder instead would also
        # see the same window, for a few microseconds, in the first (unslowed) save.
        in_window = tmp_path / f"in-window-{attempt}"
        child = subprocess.Popen(
            [sys.executable, "-c", _SLOW_SWAP, str(out), str(10 * attempt), str(in_window)],
            env=_env(),
        )
        deadline = time.monotonic() + 60
        while not in_window.exists():
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.005)
        child.kill()
        child.wait()
        assert not out.exists()  # the window: the checkpoint is away, its copy is .old-*
        with pytest.warns(UserWarning, match="restored the previous checkpoint"):
            assert load_checkpoint(out).step == 10 * attempt
        assert _leftovers(out) == []  # the load also removed the dead save's .tmp-*
