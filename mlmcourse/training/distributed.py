"""Several processes, one training run: ``torch.distributed`` set up from ``torchrun``'s variables.

``torchrun --nproc_per_node=N -m mlmcourse pretrain --config world`` starts N copies of the same
program and tells each one who it is through environment variables: ``RANK`` (0 .. N-1 over
all machines), ``LOCAL_RANK`` (the GPU index on this machine), ``WORLD_SIZE``, and
``MASTER_ADDR``/``MASTER_PORT`` (where rank 0 listens). :func:`init_distributed` reads them and
joins the process group: ``nccl`` between GPUs, ``gloo`` between CPU processes. Without those
variables it does nothing and the program is an ordinary single process, so the same code runs
both ways.

The rest is the small vocabulary the training loop needs: who am I (:func:`get_rank`,
:func:`get_world_size`), wait for the others (:func:`barrier`), add a number up over all
processes (:func:`all_reduce_sum`), and a dropout seed per process and step
(:func:`rank_step_seed`) so runs are reproducible and resumable.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from dataclasses import dataclass

import torch

__all__ = [
    "DistributedInfo",
    "init_distributed",
    "destroy_distributed",
    "is_distributed",
    "get_rank",
    "get_world_size",
    "barrier",
    "all_reduce_sum",
    "rank_step_seed",
    "TORCHRUN_VARIABLES",
]

# What torchrun sets for each process (see `torchrun --help`); MASTER_* are needed to connect.
TIMEOUT = datetime.timedelta(minutes=30)  # torch's default for a collective
TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class DistributedInfo:
    """Who this process is: ``rank`` of ``world_size``, its ``local_rank`` and its ``device``.

    ``device`` is ``cuda:LOCAL_RANK`` on GPUs (one process per GPU), else the device given.
    ``initialized_here`` is True when :func:`init_distributed` created the process group.
    """

    rank: int
    world_size: int
    local_rank: int
    device: torch.device
    backend: str | None
    initialized_here: bool = False

    @property
    def is_main_process(self) -> bool:
        return self.rank == 0


def is_distributed() -> bool:
    """True inside an initialised ``torch.distributed`` process group."""
    dist = torch.distributed
    return dist.is_available() and dist.is_initialized()


def get_rank() -> int:
    """This process's rank (0 without a process group)."""
    return torch.distributed.get_rank() if is_distributed() else 0


def get_world_size() -> int:
    """The number of processes (1 without a process group)."""
    return torch.distributed.get_world_size() if is_distributed() else 1


def _env_int(env: Mapping[str, str], name: str) -> int:
    value = env.get(name, "")
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"environment variable {name} must be an integer (torchrun sets it), got {value!r}"
        ) from None


def init_distributed(
    device: torch.device | str = "cpu",
    *,
    backend: str | None = None,
    env: Mapping[str, str] | None = None,
) -> DistributedInfo:
    """Join the process group described by torchrun's environment variables, if there is one.

    With ``WORLD_SIZE`` unset or 1 nothing happens (a single process). Otherwise the backend is
    ``nccl`` for a CUDA ``device`` and ``gloo`` for CPU (``backend`` overrides), and on CUDA
    this process takes GPU ``LOCAL_RANK``. Calling it again in an initialised group only
    returns the information. A collective waits at most :data:`TIMEOUT` for a missing process
    before failing (instead of hanging a job forever).
    """
    env = os.environ if env is None else env
    device = torch.device(device)
    if is_distributed():
        rank, world_size = get_rank(), get_world_size()
        local_rank = _env_int(env, "LOCAL_RANK") if "LOCAL_RANK" in env else rank
        return DistributedInfo(
            rank, world_size, local_rank, _process_device(device, local_rank), _backend_name()
        )
    world_size = _env_int(env, "WORLD_SIZE") if env.get("WORLD_SIZE") else 1
    if world_size <= 1:
        return DistributedInfo(0, 1, 0, device, None)
    missing = [name for name in TORCHRUN_VARIABLES if not env.get(name)]
    if missing:
        raise RuntimeError(
            f"WORLD_SIZE={world_size} asks for a distributed run, but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not set; start the program with torchrun "
            f"(e.g. torchrun --nproc_per_node={world_size} -m mlmcourse pretrain --config world)"
        )
    rank, local_rank = _env_int(env, "RANK"), _env_int(env, "LOCAL_RANK")
    if not 0 <= rank < world_size:
        raise ValueError(f"RANK must be in [0, WORLD_SIZE={world_size}), got {rank}")
    backend = backend or ("nccl" if device.type == "cuda" else "gloo")
    if backend == "nccl" and not torch.cuda.is_available():
        raise RuntimeError("backend 'nccl' needs CUDA GPUs; use 'gloo' for CPU processes")
    device = _process_device(device, local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    torch.distributed.init_process_group(
        backend=backend,
        init_method="env://",
        rank=rank,
        world_size=world_size,
        timeout=TIMEOUT,
    )
    return DistributedInfo(rank, world_size, local_rank, device, backend, initialized_here=True)


def _process_device(device: torch.device, local_rank: int) -> torch.device:
    """One GPU per process: ``cuda`` becomes ``cuda:LOCAL_RANK``; other devices are kept."""
    if device.type != "cuda":
        return device
    if local_rank >= torch.cuda.device_count():
        raise RuntimeError(
            f"LOCAL_RANK={local_rank} but this machine has {torch.cuda.device_count()} GPU(s); "
            f"use --nproc_per_node <= the number of GPUs"
        )
    return torch.device("cuda", local_rank)


def _backend_name() -> str | None:
    return str(torch.distributed.get_backend()) if is_distributed() else None


def destroy_distributed() -> None:
    """Leave the process group (a no-op without one); call it once at the end of the program."""
    if is_distributed():
        torch.distributed.destroy_process_group()


def barrier() -> None:
    """Wait until every process gets here (a no-op in a single process).

    Rank 0 evaluates and writes checkpoints alone; the others wait here so that no process
    runs ahead, exits, or reads a checkpoint that is still being written.
    """
    if is_distributed():
        torch.distributed.barrier()


def all_reduce_sum(value: torch.Tensor) -> torch.Tensor:
    """``value`` summed over all processes (in place, and returned); unchanged in one process."""
    if is_distributed():
        torch.distributed.all_reduce(value, op=torch.distributed.ReduceOp.SUM)
    return value


def rank_step_seed(seed: int, rank: int, step: int) -> int:
    """The dropout seed of process ``rank`` at optimiser step ``step``.

    Ranks must not share a dropout stream (they would drop the same units of different
    examples, a needless correlation), and a stream that depends only on ``(seed, rank, step)``
    makes a resumed run draw the same dropout masks as an uninterrupted one.
    """
    return ((seed * 1_000_003 + step) * 65_537 + rank) % (2**63 - 1)
