"""The wheel carries the package data and imports in a fresh virtual environment."""

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds a wheel and a virtual environment

ROOT = Path(__file__).resolve().parents[2]


def _package_data_files() -> set[str]:
    suffixes = {".txt", ".json", ".jsonl", ".yaml", ".safetensors", ".js"}
    return {
        str(p.relative_to(ROOT)).replace(os.sep, "/")
        for p in (ROOT / "mlmcourse").rglob("*")
        if p.is_file() and p.suffix in suffixes
    }


def test_wheel_holds_every_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {
        str(p.relative_to(ROOT)).replace(os.sep, "/") for p in (ROOT / "mlmcourse").rglob("*.py")
    }
    assert modules <= names
    assert _package_data_files() <= names


def test_wheel_imports_in_a_fresh_venv(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
    )
    # Without its dependencies the package still imports (torch is loaded lazily) and finds
    # its data files through importlib.resources.
    code = (
        "import mlmcourse, importlib.resources as r;"
        "print(mlmcourse.__version__);"
        "print(sum(1 for _ in r.files('mlmcourse').iterdir()))"
    )
    out = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True)
    version = out.stdout.split()[0]
    sys.path.insert(0, str(ROOT))
    import mlmcourse

    assert version == mlmcourse.__version__
