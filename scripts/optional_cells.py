"""Which cells of a chapter a plain ``pip install mlmcourse`` must be able to run.

A chapter reaches the packages of the ``course`` extra only through
``x = optional_import("package", "what needs it")``, which returns ``None`` (and says what is
skipped) when the package is missing; the cells then guard what needs it with
``if x is not None:``. The plain-install check runs just these cells, and the set-up cells they
need, in an environment without the extra: the rest of the chapter never meets the difference.

"Need" is read from the code: the names a cell uses on the path it takes when every optional
package is missing (an ``if`` whose test names an optional package runs only its ``else``),
each found in the last earlier cell that binds it, and that cell's needs in turn.
"""

from __future__ import annotations

import ast


def _parse(source: str) -> ast.Module:
    """A code cell as Python: IPython's ``%magic`` and ``!shell`` lines left out."""
    lines = source.split("\n")
    return ast.parse("\n".join(x for x in lines if not x.lstrip().startswith(("%", "!"))))


def optional_names(trees: list[ast.Module]) -> set[str]:
    """The names bound to ``optional_import(...)`` anywhere in the chapter."""
    names = set()
    for tree in trees:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "optional_import"
            ):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


class _PlainPath(ast.NodeVisitor):
    """Names a cell binds and uses when every optional package is missing."""

    def __init__(self, optional: set[str]):
        self.optional = optional
        self.binds: set[str] = set()
        self.uses: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        tested = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
        if tested & self.optional:  # the guarded branch does not run without the package
            for statement in node.orelse:
                self.visit(statement)
        else:
            self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        (self.uses if isinstance(node.ctx, ast.Load) else self.binds).add(node.id)

    def visit_FunctionDef(self, node) -> None:
        self.binds.add(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Import(self, node) -> None:
        for alias in node.names:
            self.binds.add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import


def plain_install_cells(sources: list[str]) -> list[int]:
    """Indices of the code cells (in order) that the plain-install check runs.

    The cells that call ``optional_import`` or use a name it bound, and, transitively, the
    last earlier cell binding each name they use on their plain path. Empty when the chapter
    has no optional part.
    """
    trees = [_parse(source) for source in sources]
    optional = optional_names(trees)
    paths = []
    for tree in trees:
        path = _PlainPath(optional)
        path.visit(tree)
        paths.append(path)
    touches = [
        i
        for i, (source, tree) in enumerate(zip(sources, trees, strict=True))
        if "optional_import(" in source
        or {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & optional
    ]
    needed, todo = set(touches), list(touches)
    while todo:
        i = todo.pop()
        for name in paths[i].uses:
            binder = next((j for j in range(i - 1, -1, -1) if name in paths[j].binds), None)
            if binder is not None and binder not in needed:
                needed.add(binder)
                todo.append(binder)
    return sorted(needed)
