"""LeanAdamW: torch's AdamW bit for bit, without a parameter-sized tensor per step."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from mlmcourse.training import TrainingConfig, build_optimizer
from mlmcourse.training.optim import LeanAdamW, lean_step_supported, param_groups


def _model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Embedding(300, 24), nn.LayerNorm(24), nn.Linear(24, 7))


def _loss(model: nn.Module, step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(step)
    ids = torch.randint(0, 300, (4, 9), generator=generator)
    return model(ids).pow(2).mean() * (1 + step % 3)


def _train(model: nn.Module, optimizer: torch.optim.Optimizer, steps: range, schedule=None):
    for step in steps:
        _loss(model, step).backward()
        if step % 4 == 3:  # a parameter without a gradient this step is left alone
            model[1].weight.grad = None
        optimizer.step()
        if schedule is not None:
            schedule.step()
        optimizer.zero_grad(set_to_none=True)


def _options(model: nn.Module, **kw) -> dict:
    return dict(params=param_groups(model, 0.01), lr=3e-3, betas=(0.9, 0.98), eps=1e-6, **kw)


def _assert_same(ours: nn.Module, theirs: nn.Module, ours_opt, theirs_opt) -> None:
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(a, b)
    ours_state, theirs_state = ours_opt.state_dict(), theirs_opt.state_dict()
    assert ours_state["param_groups"] == theirs_state["param_groups"]
    for key, state in theirs_state["state"].items():
        for name, value in state.items():
            assert torch.equal(ours_state["state"][key][name], value), (key, name)


def test_forty_steps_equal_torchs_adamw_bit_for_bit_with_decay_groups_and_a_schedule():
    ours, theirs = _model(), _model()
    ours_opt = LeanAdamW(**_options(ours))
    theirs_opt = torch.optim.AdamW(**_options(theirs))
    warmup = [
        torch.optim.lr_scheduler.LambdaLR(o, lambda s: min(1.0, (s + 1) / 10))
        for o in (ours_opt, theirs_opt)
    ]
    _train(ours, ours_opt, range(40), warmup[0])
    _train(theirs, theirs_opt, range(40), warmup[1])
    _assert_same(ours, theirs, ours_opt, theirs_opt)
    assert not torch.equal(ours[2].weight, _model()[2].weight)  # it trained


def test_a_state_dict_moves_between_leanadamw_and_torchs_adamw():
    ours, theirs = _model(), _model()
    ours_opt = LeanAdamW(**_options(ours))
    _train(ours, ours_opt, range(10))
    theirs.load_state_dict(ours.state_dict())
    theirs_opt = torch.optim.AdamW(**_options(theirs))
    theirs_opt.load_state_dict(copy.deepcopy(ours_opt.state_dict()))  # resumed by torch's
    _train(ours, ours_opt, range(10, 20))
    _train(theirs, theirs_opt, range(10, 20))
    _assert_same(ours, theirs, ours_opt, theirs_opt)


@pytest.mark.parametrize(
    "options", [{"amsgrad": True}, {"maximize": True}, {"foreach": True}], ids=str
)
def test_torchs_other_options_take_torchs_step(options):
    ours, theirs = _model(), _model()
    ours_opt = LeanAdamW(**_options(ours, **options))
    theirs_opt = torch.optim.AdamW(**_options(theirs, **options))
    _train(ours, ours_opt, range(8))
    _train(theirs, theirs_opt, range(8))
    _assert_same(ours, theirs, ours_opt, theirs_opt)


def test_a_torch_whose_init_group_differs_gets_torchs_own_step(monkeypatch):
    original = torch.optim.AdamW._init_group

    def renamed(self, group, params, grads, *rest):  # another torch's names: positions kept
        return original(self, group, params, grads, *rest)

    monkeypatch.setattr(torch.optim.AdamW, "_init_group", renamed)
    assert not lean_step_supported()

    def refuse(self, group):
        raise AssertionError("the lean step ran on an _init_group it was not written for")

    monkeypatch.setattr(LeanAdamW, "_lean_step", refuse)
    ours, theirs = _model(), _model()
    ours_opt, theirs_opt = LeanAdamW(**_options(ours)), torch.optim.AdamW(**_options(theirs))
    _train(ours, ours_opt, range(8))
    _train(theirs, theirs_opt, range(8))
    _assert_same(ours, theirs, ours_opt, theirs_opt)


def test_this_torch_takes_the_lean_step():
    assert lean_step_supported()


def test_the_denominator_buffer_is_one_storage_reused_by_every_parameter():
    model = _model()
    optimizer = LeanAdamW(**_options(model))
    _train(model, optimizer, range(2))
    (scratch,) = optimizer._scratch.values()
    largest = max(p.numel() for p in model.parameters())
    assert scratch.numel() == largest  # one parameter's size, not one per parameter
    pointer = scratch.data_ptr()
    _train(model, optimizer, range(2, 4))
    assert optimizer._scratch[(scratch.device, scratch.dtype)].data_ptr() == pointer
    assert "_scratch" not in str(optimizer.state_dict())  # not part of a checkpoint


def test_build_optimizer_gives_a_leanadamw_with_the_configs_values():
    model = _model()
    config = TrainingConfig(learning_rate=2e-4, weight_decay=0.1)
    optimizer = build_optimizer(model, config)
    assert isinstance(optimizer, LeanAdamW) and isinstance(optimizer, torch.optim.AdamW)
    decay, no_decay = optimizer.param_groups
    assert (decay["weight_decay"], no_decay["weight_decay"]) == (0.1, 0.0)
    assert decay["lr"] == 2e-4 and decay["betas"] == (config.adam_beta1, config.adam_beta2)
    assert decay["eps"] == config.adam_epsilon


FRESH_PROCESS = """
import sys, torch
from mlmcourse.training.optim import LeanAdamW
model = torch.nn.Linear(3, 2)
optimizer = LeanAdamW(model.parameters(), lr=0.1)
model(torch.ones(1, 3)).sum().backward()
optimizer.step()
optimizer.zero_grad()
optimizer.load_state_dict(optimizer.state_dict())
print("torch._dynamo" in sys.modules)
torch.optim.AdamW(model.parameters(), lr=0.1)  # torch's: its first wrapped call imports it
print("torch._dynamo" in sys.modules)
"""


def test_a_new_process_trains_and_saves_it_without_importing_dynamo():
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert done.stdout.split() == ["False", "True"], done.stdout


@pytest.mark.parametrize("name", ["add_param_group", "zero_grad", "state_dict", "load_state_dict"])
def test_once_dynamo_is_imported_the_methods_go_through_torchs_wrapper(name):
    import torch._dynamo  # noqa: F401  (what torch.compile imports)

    optimizer = LeanAdamW(_model().parameters(), lr=0.1)
    plain = getattr(torch.optim.Optimizer, name).__wrapped__
    vars(plain).pop("__dynamo_disable", None)  # the wrapper caches its disabled twin here
    args = {"add_param_group": [{"params": [nn.Parameter(torch.ones(2))]}],
            "load_state_dict": [optimizer.state_dict()]}.get(name, [])  # fmt: skip
    getattr(optimizer, name)(*args)
    assert "__dynamo_disable" in vars(plain)  # the call went through torch's wrapper
