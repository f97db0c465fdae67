"""Check that ``mlmcourse``'s imports point only down its layers and never go round in a circle.

The package is layered; a module may import from its own layer or a lower one, never a higher:

    utils < core (data, tokenization, masking, model) < files, heads and interop (checkpoint,
    heads, interop) < training, recipes and tasks (training, pretraining, tasks)
    < views and course (viz, course) < cli < the root

(the root is ``mlmcourse/__init__.py`` and ``__main__.py``; a layer is a group of folders of
``mlmcourse/``, :data:`TIERS`).
Every import counts, wherever it is written: at the top, inside a function, under
``if TYPE_CHECKING:``, or as a string given to ``importlib.import_module``. Importing a module
also runs its package's ``__init__``, which Python always finishes first; those implicit edges
are not counted.

Circles are found between modules: a strongly connected component of more than one module (or
a module importing itself) is one. Run ``python scripts/check_layers.py``: it prints every
circle and every upward import, and exits 1 if there is any (``tests/project/test_layers.py`` runs it).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "mlmcourse"
# Five layers, each a group of folders, as few as the imports really need: within a layer a
# module may import any other (circles are still refused), across layers only downwards.
TIERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("utils", ("utils",)),
    ("core", ("data", "tokenization", "masking", "model")),
    ("files, heads and interop", ("checkpoint", "heads", "interop")),
    ("training, recipes and tasks", ("training", "pretraining", "tasks")),
    ("views and course", ("viz", "course")),
    ("cli", ("cli",)),
)
LAYERS = tuple(folder for _, folders in TIERS for folder in folders)
TOP = len(TIERS)  # the root package: __init__ and __main__


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The absolute module of a (possibly relative) ``from ... import``."""
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """``(module, line)`` for each package module that ``name`` imports, however it is written."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, name, path.name == "__init__.py")
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        elif isinstance(node, ast.Call) and _is_import_call(node.func):
            if node.args and isinstance(node.args[0], ast.Constant):
                targets = [str(node.args[0].value)]
        for target in targets:
            while target and target not in known:  # `import a.b.c` where c is a name
                target = target.rpartition(".")[0]
            if target.startswith("mlmcourse"):
                yield target, node.lineno


def _is_import_call(func: ast.expr) -> bool:
    """``importlib.import_module(...)``, ``import_module(...)`` or ``__import__(...)``."""
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return TOP
    if parts[1] not in LAYERS:
        raise ValueError(f"{module} is in no layer: add its folder to TIERS in {__file__}")
    return next(i for i, (_, folders) in enumerate(TIERS) if parts[1] in folders)


def graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    """``{module: {imported module: first line}}`` over the whole package."""
    known = modules(root)
    edges: dict[str, dict[str, int]] = {name: {} for name in known}
    for name, path in known.items():
        for target, line in imported(name, path, known):
            edges[name].setdefault(target, line)
    return edges


def circles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or a module importing itself
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    found.append(sorted(component))
    return found


def upward(edges: dict[str, dict[str, int]]) -> list[str]:
    """Each import from a lower layer to a higher one, as ``module:line -> module``."""
    return [
        f"{source}:{line} -> {target}"
        for source, targets in edges.items()
        for target, line in targets.items()
        if layer(target) > layer(source)
    ]


def main() -> int:
    edges = graph()
    problems = [f"circle: {' <-> '.join(c)}" for c in circles(edges)]
    problems += [f"upward import: {u}" for u in upward(edges)]
    for problem in problems:
        print(problem)
    n_edges = sum(len(t) for t in edges.values())
    print(
        f"{len(edges)} modules, {n_edges} imports, {len(TIERS) + 1} layers: {len(problems)} problems"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
