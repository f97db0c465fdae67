import ast
import random
import re
import sys
from pathlib import Path

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
    with pytest.raises(ValueError, match="seed must be an int"):
        set_seed(bad)


def test_optional_import_returns_the_module_or_says_what_is_skipped(capsys, monkeypatch):
    from mlmcourse.utils.runtime import optional_import

    assert optional_import("json", "anything").__name__ == "json"
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if it were not installed
    assert optional_import("transformers", "the parity check") is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one line, no traceback
    assert "Skipped the parity check" in out and "mlmcourse[course]" in out


# The GPU workflow (.github/workflows/gpu.yml) executes the chapters on a CUDA machine; these
# check, without one, that the chapters would then run on the GPU.
BOOK = Path(__file__).resolve().parents[2] / "book"
CUDA = re.compile(r"cuda(:\d+)?")


def test_get_device_picks_cuda_when_there_is_one(monkeypatch):
    monkeypatch.delenv("MLMCOURSE_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device() == torch.device("cuda")
    monkeypatch.setenv("MLMCOURSE_DEVICE", "cuda")  # as the GPU workflow sets it
    assert get_device() == torch.device("cuda")
    monkeypatch.setenv("MLMCOURSE_DEVICE", "cpu")  # a forced CPU still wins over the GPU
    assert get_device() == torch.device("cpu")


def _chapter_code(chapter: Path) -> ast.Module:
    """A chapter's code cells (its ```{code-cell} blocks) as one module, magics made Python."""
    import jupytext
    from IPython.core.inputtransformer2 import TransformerManager

    cells = [c.source for c in jupytext.read(chapter).cells if c.cell_type == "code"]
    return ast.parse("\n\n".join(map(TransformerManager().transform_cell, cells)))


def _mentions_device(tree: ast.Module) -> bool:
    return any(
        (isinstance(node, ast.Name) and node.id == "device")
        or (isinstance(node, ast.keyword) and node.arg == "device")
        for node in ast.walk(tree)
    )


def _is_get_device_call(node: ast.AST) -> bool:
    """``get_device()`` with no argument: the best device here, or ``MLMCOURSE_DEVICE``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "get_device"
        and not node.args
        and not node.keywords
    )


def _device_assignments(tree: ast.Module) -> list[ast.AST]:
    """The values assigned to a variable named ``device``."""
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and any(
            isinstance(target, ast.Name) and target.id == "device"
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]


def _hard_coded_devices(tree: ast.Module) -> list[str]:
    """Calls that name CUDA, or make ``torch.device("cpu")``, instead of asking get_device."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        call = ast.unparse(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda":
            found.append(call)  # model.cuda()
        arguments = [*node.args, *(k.value for k in node.keywords)]
        for argument in arguments:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                if CUDA.fullmatch(argument.value):
                    found.append(call)  # .to("cuda"), device="cuda", torch.device("cuda")
                elif argument.value == "cpu" and ast.unparse(node.func) == "torch.device":
                    found.append(call)
    return found


def test_every_chapter_takes_its_device_from_get_device():
    import mlmcourse
    import mlmcourse.utils.runtime

    assert mlmcourse.get_device is mlmcourse.utils.runtime.get_device
    chapters = sorted(BOOK.glob("*.md"))
    using = []
    for chapter in chapters:
        tree = _chapter_code(chapter)
        if not _mentions_device(tree):
            continue
        using.append(chapter.stem)
        imported = {
            (node.module, alias.name)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        assert imported & {
            ("mlmcourse", "get_device"),
            ("mlmcourse.utils.runtime", "get_device"),
        }, f"{chapter.name} uses a device but does not import get_device from mlmcourse"
        values = _device_assignments(tree)
        assert values, f"{chapter.name} uses `device` without choosing it"
        assert all(map(_is_get_device_call, values)), (
            f"{chapter.name} chooses its device otherwise than `device = get_device()`: "
            f"{[ast.unparse(v) for v in values]}"
        )
        assert not _hard_coded_devices(tree), f"{chapter.name}: {_hard_coded_devices(tree)}"
    assert len(using) >= 10, using  # the scan reads the chapters' code cells
