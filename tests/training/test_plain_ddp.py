"""The scaling chapter's plain DDP script, run with torchrun as the chapter runs it: two Gloo
processes train the weights one process trains (to float rounding)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.teaching import ROOT, cells


def _script() -> str:
    """The chapter's cell tagged ``ddp-script``, without its ``%%writefile`` line."""
    text = (ROOT / "book" / "scaling.md").read_text(encoding="utf-8")
    (body,) = [body for tags, body in cells(text) if "ddp-script" in tags]
    lines = [line for line in body.split("\n") if not line.startswith(":tags:")]
    start = next(i for i, line in enumerate(lines) if line.startswith("%%writefile"))
    return "\n".join(lines[start + 1 :])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(script: Path, nproc: int, out: Path) -> dict[str, torch.Tensor]:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={nproc}",
         "--master_addr=127.0.0.1", f"--master_port={_free_port()}", str(script), str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return torch.load(out)


@pytest.mark.slow
def test_the_plain_ddp_script_trains_the_one_process_weights(tmp_path):
    script = tmp_path / "ddp_plainly.py"
    script.write_text(_script(), encoding="utf-8")
    one, two = (_run(script, n, tmp_path / f"w{n}.pt") for n in (1, 2))
    initial = _initial_weights()
    assert set(one) == set(two) == set(initial)
    for name in one:
        torch.testing.assert_close(two[name], one[name], atol=1e-5, rtol=1e-4, msg=name)
    assert any(not torch.equal(one[k], initial[k]) for k in one)  # it trained


def _initial_weights() -> dict[str, torch.Tensor]:
    """The script's model before training: its seed and config, read from the script itself."""
    namespace: dict = {}
    source = _script()
    head = source.split("dist.init_process_group", 1)[0]  # the imports
    config = source.split("config = ", 1)[1].split("model = ", 1)[0]
    exec(head + "torch.manual_seed(0)\nconfig = " + config, namespace)
    return namespace["BertForMaskedLM"](namespace["config"]).state_dict()
