"""The book's structure: the table of contents, the Colab notebooks and the configuration agree."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _toc_files(node) -> list[str]:
    files = []
    if isinstance(node, dict):
        if "file" in node:
            files.append(node["file"])
        if "root" in node:
            files.append(node["root"])
        for value in node.values():
            files.extend(_toc_files(value))
    elif isinstance(node, list):
        for item in node:
            files.extend(_toc_files(item))
    return files


def test_every_chapter_is_in_the_toc_and_every_toc_entry_exists():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    listed = {str(Path(f).with_suffix("")) for f in _toc_files(toc)}
    on_disk = {str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "book").glob("*.md")}
    assert on_disk - listed == set(), "chapters missing from _toc.yml"
    assert listed - on_disk == set(), "_toc.yml lists files that do not exist"


def test_colab_notebooks_are_up_to_date():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_notebooks.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_config_sets_the_repository_once_and_never_allows_errors():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["repository"]["url"].startswith("https://github.com/")
    assert config["html"]["baseurl"].startswith("https://")  # the notebooks link to its pages
    assert config["execute"]["allow_errors"] is False
    assert config["execute"]["execute_notebooks"] in {"force", "cache"}
    assert "book/*.ipynb" in config["exclude_patterns"]


def test_readme_and_intro_open_every_chapter_in_colab():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = config["repository"]["url"].removeprefix("https://github.com/")
    colab = f"https://colab.research.google.com/github/{repo}/blob/{config['repository']['branch']}"
    readme = (ROOT / "README.md").read_text()
    intro = (ROOT / "book" / "intro.md").read_text()
    for chapter in (ROOT / "book").glob("*.md"):
        if "jupytext:" not in chapter.read_text()[:500]:
            continue  # a plain page (howto, teachers) is no notebook
        link = f"{colab}/book/{chapter.stem}.ipynb"
        assert link in readme, f"README has no Colab badge for {chapter.stem}"
        assert link in intro, f"the intro has no Colab badge for {chapter.stem}"
    assert "## For teachers" in readme


def test_diagrams_are_up_to_date():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_diagrams.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_book_shows_every_diagram_with_its_description_as_alt_text():
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_diagrams

    shown = {}
    for chapter in sorted((ROOT / "book").glob("*.md")):
        for src, alt in make_diagrams.chapter_figures(chapter):
            name = Path(src).stem
            assert src == f"figures/{name}.svg", f"{chapter.name}: {src} is not in book/figures"
            assert alt == make_diagrams.DIAGRAMS[name]().desc, (
                f"{chapter.name}: the alt text of {src} differs from the SVG's description; "
                "copy it from scripts/make_diagrams.py"
            )
            # MyST reads a # in a directive's options as the start of a comment
            assert "#" not in alt, f"{chapter.name}: the alt text of {src} holds a #"
            shown[name] = chapter.name
    assert sorted(shown) == sorted(make_diagrams.DIAGRAMS), "a diagram is drawn but not shown"
    assert len(shown) >= 16


def test_the_reading_path_holds_few_checks_and_no_chapter_is_overlong():
    """Proof stays out of the reading path, and chapters stay readable in one sitting.

    Before the textbook pass, 388 asserts stood in the book's visible code cells; at most a
    fifth of that may be in view now, counting every form of check (the exercises' ``check``
    calls included). A chapter holds at most 3,500 words of prose, admonitions, notes and
    captions included.
    """
    sys.path.insert(0, str(ROOT / "scripts"))
    import count_checks

    chapters = sorted((ROOT / "book").glob("*.md"))
    visible = sum(count_checks.count(path)[0] for path in chapters)
    assert visible <= 388 // 5, f"{visible} checks in visible cells: collapse them (checks cells)"
    long = {p.name: count_checks.prose_words(p) for p in chapters}
    assert max(long.values()) <= 3_500, {name: n for name, n in long.items() if n > 3_500}


def test_a_diagram_with_a_label_off_its_canvas_or_on_another_is_refused():
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_diagrams

    svg = make_diagrams.Svg(200, 60, "t", "d")
    svg.text(100, 20, "a label of a sensible width", size=12)
    assert svg.layout_problems() == []
    svg.text(100, 24, "another one, on top of it", size=12)
    svg.text(190, 50, "off the edge", size=12)
    svg.text(20, 50, "x", size=9)
    found = " | ".join(svg.layout_problems())
    assert "'a label of a sensible width' overlaps 'another one, on top of it'" in found
    assert "'off the edge' leaves the 200 x 60 canvas" in found and "set at 9, under 10" in found
    with pytest.raises(ValueError, match="overlaps"):
        svg.render()
    # the measure is DejaVu Sans's own advance widths, whatever fonts the machine has
    assert round(make_diagrams.text_width("mmmmmmmmmm", 100)) == 974
