"""The package's imports point only down its layers and never go round in a circle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import check_layers  # noqa: E402


def test_the_package_has_no_circle_and_no_upward_import():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_layers.py")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 problems" in result.stdout


def test_the_root_holds_only_init_and_main():
    files = sorted(p.name for p in (ROOT / "mlmcourse").glob("*.py"))
    assert files == ["__init__.py", "__main__.py"]


def test_every_folder_of_the_package_is_a_layer():
    folders = {p.name for p in (ROOT / "mlmcourse").iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(check_layers.LAYERS)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "mlmcourse" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "mlmcourse"


@pytest.mark.parametrize(
    "how",
    [
        "from mlmcourse.heads.b import x",
        "def f():\n    from mlmcourse.heads import b\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mlmcourse.heads.b\n",
        "import importlib\nimportlib.import_module('mlmcourse.heads.b')\n",
        "from ..heads import b\n",
    ],
)
def test_an_upward_import_is_found_however_it_is_written(tmp_path, how):
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "model/__init__.py": "",
            "model/a.py": how,
            "heads/__init__.py": "",
            "heads/b.py": "x = 1\n",
        },
    )
    edges = check_layers.graph(package)
    assert check_layers.upward(edges) == [f"mlmcourse.model.a:{_line(how)} -> mlmcourse.heads.b"]


def _line(source: str) -> int:
    tree = ast.parse(source)
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom | ast.Call | ast.Import)]
    hits = [n for n in nodes if "heads" in ast.unparse(n)]
    return hits[0].lineno


def test_a_circle_is_found_even_through_a_late_import(tmp_path):
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "model/__init__.py": "",
            "model/a.py": "from mlmcourse.model import b\n",
            "model/b.py": "def f():\n    from mlmcourse.model.c import g\n",
            "model/c.py": "import mlmcourse.model.a\n",
        },
    )
    assert check_layers.circles(check_layers.graph(package)) == [
        ["mlmcourse.model.a", "mlmcourse.model.b", "mlmcourse.model.c"]
    ]
    assert check_layers.upward(check_layers.graph(package)) == []
