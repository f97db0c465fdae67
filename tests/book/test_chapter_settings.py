"""No chapter changes a process-wide setting that later cells (or a learner's own) depend on.

A learner runs a chapter top to bottom in one kernel, in Colab or Jupyter. A cell that sets
``HF_HUB_OFFLINE`` there keeps the next cells from downloading anything, for good: libraries
read the variable once, when imported, so deleting it later does not help (a chapter's real-model
cell then said "Skipped" in Colab, online or not). The same holds for the default dtype, thread
counts, warnings filters, the working directory and ``sys.path``. Such a line is allowed only
inside a context manager that restores the setting (``warnings.catch_warnings()``,
``mock.patch.dict(os.environ, ...)``); a file read from disk says so per call
(``local_files_only=True``). Seeds, print options, figure styles and progress bars are fine.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p for p in (ROOT / "book").glob("*.md") if "jupytext" in p.read_text()[:500])
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.S | re.M)

# Calls that change a setting of the whole process (dotted names, import aliases resolved).
GLOBAL_CALLS = {
    *(f"torch.{name}" for name in (
        "set_default_dtype", "set_default_device", "set_default_tensor_type", "set_num_threads",
        "set_num_interop_threads", "use_deterministic_algorithms", "set_grad_enabled",
        "set_float32_matmul_precision", "set_flush_denormal",
    )),
    *(f"os.environ.{name}" for name in ("setdefault", "update", "pop", "popitem", "clear")),
    "os.putenv", "os.unsetenv", "os.chdir", "sys.path.insert", "sys.path.append",
    "sys.path.extend", "warnings.filterwarnings", "warnings.simplefilter",
    "warnings.resetwarnings", "logging.disable", "logging.basicConfig",
}  # fmt: skip
# Modules whose attributes hold such settings (``huggingface_hub.constants.HF_HUB_OFFLINE``).
SETTING_ROOTS = {"os", "sys", "torch", "warnings", "logging", "transformers", "huggingface_hub"}
ALLOWED_TARGETS = {"matplotlib.rcParams", "plt.rcParams", "mpl.rcParams"}  # figure style
RESTORING = ("catch_warnings", "patch", "patch.dict")  # context managers that restore
MAGIC = re.compile(r"^(\s*)[%!]")


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


class Leaks(ast.NodeVisitor):
    """The lines of a cell that change a process-wide setting outside a restoring ``with``."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases, self.lines, self.restoring = aliases, [], 0

    def resolve(self, name: str | None) -> str | None:
        if name is None:
            return None
        root, _, rest = name.partition(".")
        return ".".join(filter(None, [self.aliases.get(root, root), rest]))

    def visit_With(self, node: ast.With) -> None:
        calls = [i.context_expr for i in node.items if isinstance(i.context_expr, ast.Call)]
        restores = any((self.resolve(dotted(c.func)) or "").endswith(RESTORING) for c in calls)
        self.restoring += restores
        self.generic_visit(node)
        self.restoring -= restores

    def visit_Call(self, node: ast.Call) -> None:
        if not self.restoring and self.resolve(dotted(node.func)) in GLOBAL_CALLS:
            self.lines.append(node.lineno)
        self.generic_visit(node)

    def _targets(self, targets: list[ast.AST], lineno: int) -> None:
        for target in targets:
            while isinstance(target, ast.Subscript):
                target = target.value
            name = self.resolve(dotted(target))
            root = (name or "").partition(".")[0]
            if not self.restoring and "." in (name or "") and root in SETTING_ROOTS:
                if name not in ALLOWED_TARGETS:
                    self.lines.append(lineno)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node.targets, node.lineno)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets([node.target], node.lineno)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._targets(node.targets, node.lineno)
        self.generic_visit(node)


def code_cells(text: str) -> list[tuple[int, str]]:
    """(line of the cell's first line of code in the chapter, its code) of every code cell,
    its options (``:tags: [...]`` lines or a ``---`` block) left out."""
    cells = []
    for match in CELL.finditer(text):
        lines = match.group(1).splitlines()
        skip = 0
        if lines and lines[0] == "---":
            skip = lines.index("---", 1) + 1
        while skip < len(lines) and lines[skip].startswith(":"):
            skip += 1
        first = text.count("\n", 0, match.start(1)) + 1 + skip
        cells.append((first, "\n".join(lines[skip:])))
    return cells


def aliases_of(tree: ast.AST) -> dict[str, str]:
    """What each imported name stands for: ``np`` for ``numpy``, ``environ`` for
    ``os.environ``, ``constants`` for ``huggingface_hub.constants``."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for name in node.names:
                aliases[name.asname or name.name.partition(".")[0]] = (
                    name.name if name.asname else name.name.partition(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for name in node.names:
                aliases[name.asname or name.name] = f"{node.module}.{name.name}"
    return aliases


def leaks(text: str) -> list[tuple[int, str]]:
    """(line, code) of every line of a chapter that changes a process-wide setting."""
    found, parsed = [], []
    for first, code in code_cells(text):
        lines = code.splitlines()
        for k, line in enumerate(lines):
            if re.match(r"\s*%(env|set_env)\b", line):  # IPython's own way to set a variable
                found.append((first + k, line.strip()))
        source = "\n".join(MAGIC.sub(r"\1pass  #", line) for line in lines)
        parsed.append((first, lines, ast.parse(source)))
    aliases = {}
    for _, _, tree in parsed:
        aliases.update(aliases_of(tree))
    for first, lines, tree in parsed:
        visitor = Leaks(aliases)
        visitor.visit(tree)
        found += [(first + n - 1, lines[n - 1].strip()) for n in sorted(set(visitor.lines))]
    return sorted(found)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_chapter_changes_a_process_wide_setting(chapter):
    found = leaks(chapter.read_text(encoding="utf-8"))
    assert not found, "\n".join(
        f"book/{chapter.name}:{line}: {code}  <- changes a setting for the whole kernel: use a "
        f"per-call argument (local_files_only=True) or a context manager that restores it"
        for line, code in found
    )


def chapter(*cells: str) -> str:
    return "".join(f"```{{code-cell}} ipython3\n{cell}\n```\n\nSome prose.\n\n" for cell in cells)


@pytest.mark.parametrize(
    "line",
    [
        'os.environ["HF_HUB_OFFLINE"] = "1"',
        'os.environ.setdefault("HF_HUB_OFFLINE", "1")',
        'environ["TRANSFORMERS_OFFLINE"] = "1"',
        "huggingface_hub.constants.HF_HUB_OFFLINE = True",
        "constants.HF_HUB_OFFLINE = True",
        "torch.set_default_dtype(torch.float64)",
        "th.set_num_threads(1)",
        'warnings.filterwarnings("ignore")',
        'os.chdir("/tmp")',
        "%env HF_HUB_OFFLINE=1",
        "torch.backends.cudnn.benchmark = True",
    ],
)
def test_each_kind_of_leak_is_found_with_its_line(line):
    imports = (
        "import os\nimport warnings\nfrom os import environ\nimport torch\nimport torch as th\n"
        "import huggingface_hub\nfrom huggingface_hub import constants"
    )
    text = chapter(imports, f":tags: [hide-cell]\n\nx = 1\nif x:\n    {line}")
    assert leaks(text) == [(text.splitlines().index(f"    {line}") + 1, line)]


def test_restored_and_harmless_settings_are_allowed():
    text = chapter(
        "import os\nimport warnings\nfrom unittest import mock\nimport torch\n"
        "import matplotlib.pyplot as plt\n"
        "with warnings.catch_warnings():\n"
        '    warnings.simplefilter("ignore")\n'
        'with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):\n'
        '    os.environ["X"] = "1"\n'
        "torch.manual_seed(0)\n"
        "torch.set_printoptions(precision=3)\n"
        'plt.rcParams["figure.dpi"] = 100\n'
        'env = {**os.environ, "PYTHONHASHSEED": "0"}\n'
        "%pip install -q mlmcourse"
    )
    assert leaks(text) == []
