"""Every chapter with a Hub cell, top to bottom as Colab runs it, against a Hub on 127.0.0.1.

The chapters' real-model cells download from the Hugging Face Hub, which no machine of ours
reaches: the book and CI take their offline path. Here each chapter that loads a Hub model
(found by scanning the chapters' code for ``pretrained_or_skip`` and ``from_pretrained`` of a
Hub name, so a cell added later is covered) runs as a learner's Colab runs it: its generated
notebook, every cell in order, from the installed wheel, in an empty folder, with
``HF_ENDPOINT`` pointing at a local Hub (``tests/local_hub.py``), an empty cache and no offline
variable. The Hub serves stand-ins (``tests/stand_ins.py``) under the names and revisions the
chapters ask for, next to decoys a loader must never fetch. The data sets' hosts are out of
reach, so the chapters' data cells take their no-data branch here (``make chapters`` runs the
same notebooks with the data).

A chapter passes when every Hub cell loaded its model through the real download path (no
"Skipped" line), the server saw the info, tree and file requests of each model and no request
for a decoy, and the chapter's checks passed. The chapter that once set ``HF_HUB_OFFLINE`` for
the whole kernel fails this test with that line put back.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from mlmcourse.interop.hub import CHECKPOINTS, HUB_FILES
from tests.book.test_chapter_settings import code_cells
from tests.colab import ROOT, Colab, colab_cells, install_from_index, run_cells
from tests.colab import kernel_env as pip_env
from tests.local_hub import DECOYS, LocalHub, Repo, folder_files
from tests.stand_ins import stand_in_checkpoints

HUB_CALLS = {"pretrained_or_skip", "from_pretrained"}
HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _call_name(node: ast.Call) -> str:
    return getattr(node.func, "attr", None) or getattr(node.func, "id", "")


def hub_names(text: str) -> set[str]:
    """The Hub names a chapter loads: the first argument of each ``pretrained_or_skip`` or
    ``from_pretrained`` call when it is a Hub name, and when it is a variable, the Hub names
    written in that cell (``for name in ["org/a", "org/b"]``). A call that says
    ``local_files_only=True`` reads a folder."""
    names = set()
    for _, code in code_cells(text):
        tree = ast.parse(
            "\n".join(re.sub(r"^(\s*)[%!]", r"\1pass  #", line) for line in code.splitlines())
        )
        strings = {
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            if _call_name(call) not in HUB_CALLS or not call.args:
                continue
            if any(k.arg == "local_files_only" for k in call.keywords):
                continue
            first = call.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names |= {first.value} & {s for s in strings if HUB_NAME.match(s)}
            elif isinstance(first, ast.Name):
                names |= {s for s in strings if HUB_NAME.match(s)}
    return names


HUB_CHAPTERS = {
    path: names
    for path in sorted((ROOT / "book").glob("*.md"))
    if "jupytext" in path.read_text(encoding="utf-8")[:500]
    and (names := hub_names(path.read_text(encoding="utf-8")))
}


def test_the_chapters_with_a_hub_cell_are_found_and_each_name_has_a_stand_in():
    found = {path.stem: names for path, names in HUB_CHAPTERS.items()}
    assert set(found) >= {"intro", "pretraining_practice", "ner_real", "using"}, found
    assert set().union(*found.values()) <= set(CHECKPOINTS), found


@pytest.mark.parametrize(
    "code, names",
    [
        ('m = pretrained_or_skip("org/new-model", "x")', {"org/new-model"}),
        ('for n in ["a/b", "c/d"]:\n    f.from_pretrained(n)', {"a/b", "c/d"}),
        ('f.from_pretrained("runs/world", local_files_only=True)', set()),
        ('m = pretrained_or_skip("o/m", "x", revision="refs/pr/2")', {"o/m"}),
        ('path = "runs/world"\nf.from_pretrained(str(path))', set()),
    ],
)
def test_a_hub_cell_added_later_is_found(code, names):
    assert hub_names(f"Some prose.\n\n```{{code-cell}} ipython3\n{code}\n```\n") == names


def repositories(folders: dict[str, Path]) -> dict[str, Repo]:
    """The stand-ins as Hub repositories, each with decoys; a checkpoint read at a pinned ref
    (SST-2's ``refs/pr/2``) has only a pickle on ``main``, as the real one does."""
    repos = {}
    for name, folder in folders.items():
        files = {**folder_files(folder), **DECOYS}
        repo = repos[name] = Repo()
        revision = CHECKPOINTS[name].revision
        if revision is None:
            repo.add(files, "main")
        else:
            repo.add({k: v for k, v in files.items() if not k.endswith(".safetensors")}, "main")
            repo.add(files, revision)
    return repos


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    folders = stand_in_checkpoints(tmp_path_factory.mktemp("stand_ins"), real_shapes=True)
    with LocalHub(repositories(folders)) as server:
        yield server


def hub_env(colab: Colab, hub: LocalHub, cache: Path) -> dict[str, str]:
    """Colab's kernel with the Hub at ``hub``, an empty cache and no offline variable.

    The data sets are not given (no ``MLMCOURSE_DATA_DIR``, an empty download cache, their
    hosts out of reach): each data cell takes the branch a learner without them meets, which
    no other run covers; ``make chapters`` runs the same notebooks with the data."""
    env = pip_env(colab, index=None)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_TOKEN"):
        env.pop(name, None)
    env.pop("MLMCOURSE_DATA_DIR", None)
    env.update(
        HF_ENDPOINT=hub.url,
        HF_HOME=str(cache / "home"),
        HF_HUB_CACHE=str(cache / "hub"),
        MLMCOURSE_CACHE=str(cache / "data"),
    )
    return env


def problems(result, hub: LocalHub, names: set[str], since: int) -> list[str]:
    """Why a chapter's run against the Hub fails (empty: it passed)."""
    found = [] if result.ok else [f"a cell failed: {result.report.get('error', '')[-3000:]}"]
    for k, cell in enumerate(result.notebook.cells):
        for output in cell.get("outputs", []):
            text = output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
            if "Skipped" in text:
                found.append(f"code cell {k} skipped a Hub model: {text.strip()[:300]}")
    log = hub.log[since:]
    for name in sorted(names):
        kinds = {r.kind for r in log if r.repo_id == name}
        fetched = {
            r.path for r in log if r.repo_id == name and r.kind == "file" and r.method == "GET"
        }
        if (
            not {"info", "tree", "file"} <= kinds
            or not {"config.json", "model.safetensors"} <= fetched
        ):
            found.append(f"{name}: the Hub saw {sorted(kinds)} and sent {sorted(fetched)}")
    decoys = [r for r in log if r.kind == "file" and r.path in DECOYS]
    if decoys:
        found.append(f"decoys were requested: {decoys}")
    unexpected = [r for r in log if r.kind == "file" and not _allowed(r.path)]
    if unexpected:
        found.append(f"files outside HUB_FILES were requested: {unexpected}")
    return found


def _allowed(path: str) -> bool:
    from fnmatch import fnmatch

    return any(fnmatch(path, pattern) for pattern in HUB_FILES)


@pytest.mark.parametrize(
    "chapter",
    [pytest.param(p, marks=pytest.mark.slow) for p in HUB_CHAPTERS],
    ids=lambda p: p.stem,
)
def test_a_hub_chapter_runs_top_to_bottom_against_a_local_hub(chapter, colab, wheel, hub, tmp_path):
    install_from_index(colab, wheel)
    since = len(hub.log)
    result = run_cells(colab, colab_cells(chapter), hub_env(colab, hub, tmp_path), chapter)
    found = problems(result, hub, HUB_CHAPTERS[chapter], since)
    assert not found, "\n".join(found)


OFFLINE_LINE = 'os.environ["HF_HUB_OFFLINE"] = "1"'


@pytest.mark.slow
def test_the_old_offline_line_put_back_fails_the_run(colab, wheel, hub, tmp_path):
    chapter = ROOT / "book" / "pretraining_practice.md"
    cells = colab_cells(chapter)
    # the line where it was: the cell that reads the export back in transformers
    export = next(k for k, c in enumerate(cells) if "BertForMaskedLM.from_pretrained" in c.source)
    cells[export].source = f"import os\n\n{OFFLINE_LINE}\n" + cells[export].source
    hub_cell = next(k for k, c in enumerate(cells) if "pretrained_or_skip(" in c.source)
    install_from_index(colab, wheel)
    since = len(hub.log)
    result = run_cells(colab, cells[: hub_cell + 1], hub_env(colab, hub, tmp_path), chapter)
    found = problems(result, hub, HUB_CHAPTERS[chapter], since)
    assert any("skipped a Hub model" in f and "HF_HUB_OFFLINE is set" in f for f in found), found
