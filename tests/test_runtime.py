import random
import sys

import numpy as np
import pytest
import torch

from mlmcourse import get_device, set_seed


def test_get_device_returns_an_available_device():
    device = get_device()
    assert isinstance(device, torch.device)
    torch.zeros(1, device=device)  # usable


def test_get_device_honours_an_explicit_cpu_request(monkeypatch):
    monkeypatch.setenv("MLMCOURSE_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_get_device_refuses_unavailable_cuda():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        get_device("cuda")


def test_set_seed_makes_every_generator_repeat():
    set_seed(123)
    first = (random.random(), np.random.rand(), torch.rand(3))
    set_seed(123)
    second = (random.random(), np.random.rand(), torch.rand(3))
    assert first[0] == second[0] and first[1] == second[1]
    assert torch.equal(first[2], second[2])


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True, None])
def test_set_seed_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        set_seed(bad)


def test_optional_import_returns_the_module_or_says_what_is_skipped(capsys, monkeypatch):
    from mlmcourse.runtime import optional_import

    assert optional_import("json", "anything").__name__ == "json"
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if it were not installed
    assert optional_import("transformers", "the parity check") is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one line, no traceback
    assert "Skipped the parity check" in out and "mlmcourse[course]" in out
