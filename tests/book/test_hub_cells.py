"""The chapters' cells that need the Hugging Face Hub, run against stand-in checkpoints.

No machine of ours reaches the Hub, so the book and CI only ever take these cells' offline
path (one "Skipped ..." line each). Here every checkpoint the chapters name is a tiny random
model of the right kind, put in a Hub cache under the chapter's name (and revision), so
``pretrained_or_skip`` loads it offline through the real code path, and the cells that use it
run: the chapter's first code cell (its imports), then each cell that loads or uses a Hub model,
its collapsed checks included, in order. The stand-ins (``tests/stand_ins.py``) have the
model cards' facts that the checks assert built in. Explorers are drawn as the book draws them.
The cells' other inputs (data the offline machine lacks, models trained earlier in the chapter)
are given as ``None`` or small stand-ins, as each chapter's guards allow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mlmcourse.interop.hub import CHECKPOINTS
from mlmcourse.tasks.qa import world_questions
from tests.hub_cache import put_in_cache
from tests.stand_ins import stand_in_checkpoints

jupytext = pytest.importorskip("jupytext")

ROOT = Path(__file__).resolve().parents[2]
# the names the Hub cells bind, and what else each chapter's cells need from earlier cells
LOADED = {"real", "modern", "real_ner", "real_sst2", "real_qa", "real_mlm"}
STAND_INS = {
    "intro": {},
    "pretraining_practice": {
        "REAL_SENTENCES": ["paris is the [MASK] of france .", "the war ended in [MASK] ."],
        "minilm_files": None,
    },
    "ner_real": {
        "wnut_train": None, "wnut_test": None, "wnut_dev": None, "scratch_predictions": None,
    },
    "using": {
        "classifier": None, "tokenizer": None, "sst2_dev": None, "encoder": None,
        "minilm_package": None, "reader": None, "qa_unseen": world_questions("unseen")[:20],
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory) -> Path:
    """Every checkpoint the chapters name, as tiny random models in one offline Hub cache."""
    root = tmp_path_factory.mktemp("hub_cells")
    cache = root / "hub"
    for name, files in stand_in_checkpoints(root).items():
        snapshot = put_in_cache(cache, name, files)
        revision = CHECKPOINTS[name].revision
        if revision is not None:  # the cache names a pinned ref's commit under refs/<ref>
            ref = snapshot.parents[1] / "refs" / revision
            ref.parent.mkdir(parents=True, exist_ok=True)
            ref.write_text(snapshot.name)
    return cache


def names(source: str) -> set[str]:
    """The variables a cell's code reads or binds (not module paths, strings or comments)."""
    return {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}


def hub_cells(chapter: str) -> list[str]:
    """The chapter's first code cell, then, from its first Hub cell on, every cell that calls
    ``pretrained_or_skip`` or uses a model such a cell loaded."""
    notebook = jupytext.read(ROOT / "book" / f"{chapter}.md")
    code = [c.source for c in notebook.cells if c.cell_type == "code" and "%pip" not in c.source]
    hub = [k for k, source in enumerate(code) if "pretrained_or_skip" in names(source)]
    loaded = set().union(*(names(code[k]) for k in hub)) & LOADED
    return [
        code[0],
        *(source for source in code[hub[0] :] if names(source) & (loaded | {"pretrained_or_skip"})),
    ]


def drawn(obj: object) -> None:
    """``display`` as the book does it: the HTML an explorer puts in the page."""
    bundle = getattr(obj, "_repr_mimebundle_", None)
    if bundle is not None:
        assert "text/html" in bundle()


@pytest.mark.parametrize("chapter", list(STAND_INS))
def test_the_hub_cells_run_with_the_checkpoints_loaded(chapter, hub_cache, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setattr(
        "IPython.display.display", lambda *objects, **_: [drawn(o) for o in objects]
    )
    monkeypatch.chdir(ROOT / "book")  # where the chapter runs
    cells = hub_cells(chapter)
    assert len(cells) >= 2, f"{chapter} has no Hub cell left: update STAND_INS"
    namespace = {"__name__": "__main__", **STAND_INS[chapter]}
    exec(compile(cells[0], f"{chapter}: first cell", "exec"), namespace)
    namespace.update(STAND_INS[chapter])  # over what the first cell set to its real value
    for k, source in enumerate(cells[1:], 1):
        exec(compile(source, f"{chapter}: Hub cell {k}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "Skipped" not in out, out  # every checkpoint loaded
    loaded = [name for name in sorted(LOADED) if name in namespace]
    assert loaded and all(namespace[name] is not None for name in loaded), loaded
