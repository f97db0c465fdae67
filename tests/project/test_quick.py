"""``make quick`` (scripts/quick.py) picks the checks a change touches."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import quick  # noqa: E402


def test_modules_are_named_from_their_paths():
    assert quick.module_name("mlmcourse/masking/core.py") == "mlmcourse.masking.core"
    assert quick.module_name("mlmcourse/masking/__init__.py") == "mlmcourse.masking"
    assert quick.module_name("tests/tiny.py") == "tests.tiny"
    assert quick.module_name("scripts/make_notebooks.py") == "scripts.make_notebooks"
    assert quick.module_name("book/masking.md") is None
    assert quick.module_name("experiments/mask_rate.py") is None


def test_imports_count_modules_named_by_from_imports_and_scripts_by_their_bare_name():
    known = {"mlmcourse.masking", "mlmcourse.masking.core", "scripts.make_notebooks", "tests.tiny"}
    source = (
        "from mlmcourse.masking import core, MLMCollator\nimport make_notebooks\n"
        "def f():\n    from tests.tiny import x\n"
    )
    assert quick.imported_modules(source, known) == known


def test_a_change_reaches_every_module_that_imports_it_through_others():
    graph = {"a": set(), "b": {"a"}, "c": {"b"}, "d": set(), "tests.test_c": {"c"}}
    assert quick.importers(graph, ["a"]) == {"a", "b", "c", "tests.test_c"}
    assert quick.importers(graph, ["d"]) == {"d"}


def test_a_masking_function_selects_the_tests_that_reach_it_and_no_chapter():
    chosen = quick.plan(["mlmcourse/masking/core.py"])
    assert chosen["lint"] == {"mlmcourse/masking/core.py": "changed"}
    assert "tests/masking/test_core.py" in chosen["tests"]
    assert "tests/training/test_packing.py" in chosen["tests"]  # packing imports masking
    assert "tests/data/test_english.py" not in chosen["tests"]
    assert chosen["chapters"] == {}  # more than two chapters use it: left to make test


def test_a_chapters_prose_selects_the_chapter_and_the_books_checks():
    chosen = quick.plan(["book/masking.md"])
    assert chosen["chapters"] == {"masking": "changed"}
    assert set(chosen["tests"]) == set(quick.BOOK_CHECKS) and chosen["lint"] == {}


def test_a_module_two_chapters_import_selects_them_and_a_data_file_its_tests():
    chosen = quick.plan(["mlmcourse/viz/compare.py"])
    assert 0 < len(chosen["chapters"]) <= quick.MAX_CHAPTERS_PER_MODULE
    chosen = quick.plan(["mlmcourse/assets/checkpoints/english/model.safetensors"])
    assert "tests/checkpoint/test_shipped_english.py" in chosen["tests"]
    assert "tests/checkpoint/test_shipped.py" not in chosen["tests"]
