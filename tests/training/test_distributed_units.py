"""The single-process side of mlmcourse.training.distributed and the GPU-path switches, in milliseconds.

The multi-process behaviour (2 gloo ranks against 1 process) is in ``test_distributed.py``.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.utils.data import DistributedSampler

from mlmcourse.pretraining import load_config
from mlmcourse.training import CompileFallback, MLMBatches, TrainingConfig, train
from mlmcourse.training.distributed import (
    all_reduce_sum,
    barrier,
    get_rank,
    get_world_size,
    init_distributed,
    rank_step_seed,
)
from tests.tiny_mlm import TinyConfig, TinyMLM, tiny_batch


def test_without_torchrun_everything_is_a_single_process():
    info = init_distributed("cpu", env={})
    assert (info.rank, info.world_size, info.backend, info.initialized_here) == (0, 1, None, False)
    assert info.is_main_process and info.device == torch.device("cpu")
    assert (get_rank(), get_world_size()) == (0, 1)
    barrier()  # a no-op, must not block
    assert all_reduce_sum(torch.tensor(3.0)).item() == 3.0
    assert init_distributed("cpu", env={"WORLD_SIZE": "1"}).world_size == 1


def test_a_half_configured_launch_says_what_is_missing():
    env = {"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0"}
    with pytest.raises(RuntimeError, match="MASTER_ADDR, MASTER_PORT are not set.*torchrun"):
        init_distributed("cpu", env=env)
    env = {**env, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1", "RANK": "2"}
    with pytest.raises(ValueError, match=r"RANK must be in \[0, WORLD_SIZE=2\), got 2"):
        init_distributed("cpu", env=env)
    with pytest.raises(ValueError, match="WORLD_SIZE must be an integer"):
        init_distributed("cpu", env={"WORLD_SIZE": "two"})


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
def test_nccl_without_gpus_is_a_clear_error():
    env = {
        "WORLD_SIZE": "2",
        "RANK": "0",
        "LOCAL_RANK": "0",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "1",
    }
    with pytest.raises(RuntimeError, match="'nccl' needs CUDA"):
        init_distributed("cpu", backend="nccl", env=env)


def test_dropout_seeds_differ_by_rank_and_step_and_repeat():
    seeds = {rank_step_seed(0, rank, step) for rank in range(8) for step in range(1000)}
    assert len(seeds) == 8000
    assert rank_step_seed(5, 1, 17) == rank_step_seed(5, 1, 17)


class _Collator:
    """Pads word ids and masks them with the generator it is given (like MLMCollator)."""

    def __call__(self, texts, generator=None):
        ids = [[len(w) for w in t.split()] for t in texts]
        width = max(map(len, ids))
        input_ids = torch.tensor([row + [0] * (width - len(row)) for row in ids])  # (B, T)
        masked = torch.rand(input_ids.shape, generator=generator) < 0.5
        return {"input_ids": input_ids, "labels": torch.where(masked, input_ids, -100)}


def test_ranks_split_the_global_batch_and_see_the_one_process_tensors():
    texts = [" ".join(["w" * (1 + (i * j) % 5) for j in range(1 + i % 7)]) for i in range(51)]
    one = MLMBatches(texts, _Collator(), batch_size=12, seed=4)
    ranks = [
        MLMBatches(texts, _Collator(), batch_size=4, seed=4, rank=r, world_size=3)
        for r in (0, 1, 2)
    ]
    for index in (0, 3, 9):  # 9 crosses into the third epoch
        shards = [r.indices(index) for r in ranks]
        assert not set(shards[0]) & set(shards[1]) and not set(shards[1]) & set(shards[2])
        assert one.indices(index) == ranks[0].global_indices(index)
        for r, rank in enumerate(ranks):
            assert shards[r] == one.indices(index)[r::3]
            for key, value in one(index).items():
                assert torch.equal(rank(index)[key], value[r::3]), key


def test_shards_are_the_distributed_samplers():
    texts = [f"text {i}" for i in range(10)]  # 10 does not divide by 3: the sampler pads
    ranks = [
        MLMBatches(texts, _Collator(), batch_size=2, seed=1, rank=r, world_size=3)
        for r in (0, 1, 2)
    ]
    for epoch in (0, 1):
        for r, rank in enumerate(ranks):
            sampler = DistributedSampler(
                range(10), num_replicas=3, rank=r, shuffle=True, seed=1_000_003
            )
            sampler.set_epoch(epoch)
            assert rank.shards(epoch)[r] == list(sampler)
        covered = sum(ranks[0].shards(epoch), [])
        assert sorted(set(covered)) == list(range(10)) and len(covered) == 12
    assert ranks[0].shards(0) != ranks[0].shards(1)  # reshuffled each epoch
    with pytest.raises(ValueError, match="world_size"):
        MLMBatches(texts, _Collator(), batch_size=2, world_size=0)


def test_compile_fallback_warns_and_runs_eagerly(monkeypatch):
    model = TinyMLM(TinyConfig(hidden_dropout_prob=0.0))
    batch = tiny_batch(0)
    expected = model(**batch).loss

    def failing_at_call(module):
        def compiled(*args, **kwargs):
            raise RuntimeError("no C++ compiler found")

        return compiled

    monkeypatch.setattr(torch, "compile", failing_at_call)
    forward = CompileFallback(model, enabled=True)
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler found.*eager mode"):
        assert torch.equal(forward(**batch).loss, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, then plainly eager
        assert torch.equal(forward(**batch).loss, expected)

    def failing_at_creation(module):
        raise RuntimeError("Python 3.99 is not supported by torch.compile")

    monkeypatch.setattr(torch, "compile", failing_at_creation)
    with pytest.warns(RuntimeWarning, match="3.99"):
        forward = CompileFallback(model, enabled=True)
    assert forward.module is model
    assert CompileFallback(model, enabled=False).module is model  # off: compile never called


def test_training_with_a_failing_compile_equals_eager_training(monkeypatch):
    def run(compile_flag: bool):
        torch.manual_seed(0)
        model = TinyMLM(TinyConfig(hidden_dropout_prob=0.0))
        config = TrainingConfig(
            max_steps=6, warmup_steps=1, logging_steps=1, torch_compile=compile_flag
        )
        history = train(model, tiny_batch, config, progress=False, log=None).history["train"]
        return [{k: v for k, v in row.items() if k != "seconds"} for row in history]  # a clock

    def broken(module):
        def compiled(*args, **kwargs):
            raise RuntimeError("inductor backend failed")

        return compiled

    eager = run(False)
    monkeypatch.setattr(torch, "compile", broken)
    with pytest.warns(RuntimeWarning, match="inductor backend failed"):
        fallback = run(True)
    assert fallback == eager


def test_scaling_keys_are_config_keys():
    config = load_config("world", {"torch_compile": True, "scale_lr_with_world_size": True})
    assert config.training_config().torch_compile is True
    assert config.scale_lr_with_world_size is True
    with pytest.raises(ValueError, match="torch_compile.*true or false"):
        load_config("world", {"torch_compile": "yes"})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="pinned memory needs CUDA")
def test_batches_reach_the_gpu_through_pinned_memory():
    from mlmcourse.training import to_device

    moved = to_device({"input_ids": torch.arange(6).view(2, 3)}, torch.device("cuda"))
    assert moved["input_ids"].is_cuda and moved["input_ids"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_scale_lr_with_world_size_multiplies_the_rate_by_the_processes(monkeypatch):
    import mlmcourse.training.distributed as distributed
    from mlmcourse.pretraining import pretrain
    from mlmcourse.training.distributed import DistributedInfo

    # Pretend torchrun said "rank 0 of 2" (no process group: the loop itself runs alone).
    monkeypatch.setattr(
        distributed,
        "init_distributed",
        lambda device, **_: DistributedInfo(0, 2, 0, torch.device("cpu"), "gloo"),
    )
    tiny = {
        "max_steps": 2,
        "batch_size": 4,
        "hidden_size": 16,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "learning_rate": 1e-3,
        "lr_scheduler_type": "constant",
        "warmup_steps": 0,
        "logging_steps": 1,
        "final_evaluation": False,
    }
    lines: list[str] = []
    for scale, expected in ((False, 1e-3), (True, 2e-3)):
        run = pretrain(
            {**tiny, "scale_lr_with_world_size": scale}, progress=False, log=lines.append
        )
        assert [row["lr"] for row in run.result.history["train"]] == pytest.approx([expected] * 2)
    assert any("learning rate x 2 processes = 0.002" in line for line in lines)
    assert any("effective batch 2 x 4 x 1 = 8 sequences" in line for line in lines)
