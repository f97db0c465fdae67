"""The chapters' teaching versions, run from the chapter's own source.

A chapter writes an idea in its plainest form in a code cell tagged ``teaching``; a unit test
pins that cell equal to the package. :func:`teaching_namespace` executes the tagged cells of
``book/<chapter>.md`` (not a copy of them) with what the chapters import for them (``torch``,
``torch.nn.functional as F``, ``math``), and returns what they define.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from count_checks import cells  # noqa: E402 - the one reader of a chapter's code cells


def teaching_cells(chapter: str, tag: str = "teaching") -> list[str]:
    """The source of each code cell of ``book/<chapter>.md`` tagged ``tag``."""
    text = (ROOT / "book" / f"{chapter}.md").read_text(encoding="utf-8")
    return [
        "\n".join(line for line in body.split("\n") if not line.startswith(":tags:"))
        for tags, body in cells(text)
        if tag in tags
    ]


def teaching_namespace(chapter: str) -> dict[str, Any]:
    """What the chapter's teaching cells define, executed in order."""
    import math

    import torch
    import torch.nn.functional as F

    cells = teaching_cells(chapter)
    if not cells:
        raise LookupError(f"book/{chapter}.md has no code cell tagged teaching")
    namespace: dict[str, Any] = {"torch": torch, "F": F, "math": math}
    for source in cells:
        exec(compile(source, f"book/{chapter}.md (teaching cell)", "exec"), namespace)
    return namespace


def assert_same_training(make_model, plain, package) -> None:
    """``plain(model)`` and ``package(model)``, each on a fresh ``make_model()`` built after
    ``set_seed(0)`` (the same weights and dropout draws), train the same weights, and train."""
    import torch

    from mlmcourse.utils.runtime import set_seed

    states = []
    for train in (plain, package):
        set_seed(0)
        model = make_model()
        initial = {k: v.clone() for k, v in model.state_dict().items()}
        train(model)
        states.append(model.state_dict())
    for name, value in states[1].items():
        torch.testing.assert_close(states[0][name], value, atol=1e-6, rtol=1e-5, msg=name)
    assert any(not torch.equal(v, initial[k]) for k, v in states[0].items())  # it trained
