"""The book's execution cache: each chapter's outputs, kept where the book build finds them.

``make chapters`` executes every chapter once, as learners get it (the Colab notebook, the
built wheel, a fresh environment, an empty folder), and :func:`store` puts its outputs into
the cache that myst-nb reads when the book is built with ``execute_notebooks: cache``
(``_build/.jupyter_cache``). The build then renders those outputs and executes nothing.

A cached chapter is current when both of its keys match:

- **the chapter's source**: jupyter-cache's own key, a hash of the chapter's code cells (and
  their metadata) as myst-nb reads them, so an edit to any code cell makes the entry stale;
  an edit to the prose does not (it does not change an output);
- **the package**: :func:`package_key`, a hash of every file the wheel is built from. The
  cache cannot see it, so this module keeps a stamp beside the cache (``mlmcourse.json``:
  cache hash -> package key) and removes entries whose stamp is missing or old.

    python scripts/book_cache.py check    # fail, naming them, if any chapter is stale
    python scripts/book_cache.py prune    # drop stale entries: the next build executes those
    python scripts/book_cache.py stamp    # after a build: entries it executed get today's key
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "_build" / ".jupyter_cache"
STAMPS = "mlmcourse.json"
# What the wheel is built from (pyproject.toml's package-data takes every data file we ship).
PACKAGE_FILES = ("pyproject.toml",)
PACKAGE_DIR = "mlmcourse"


def package_key(root: Path = ROOT) -> str:
    """A hash of the files the wheel is built from: the same sources give the same key."""
    digest = hashlib.sha256()
    files = [root / name for name in PACKAGE_FILES]
    files += sorted(
        p
        for p in (root / PACKAGE_DIR).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def book_notebook(chapter: Path, root: Path = ROOT) -> nbformat.NotebookNode:
    """The chapter as myst-nb reads it for the build (the cache matches on exactly this)."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    extensions = config.get("parse", {}).get("myst_enable_extensions", [])
    md_config = MdParserConfig(enable_extensions=set(extensions))
    text = chapter.read_text(encoding="utf-8")
    return read_myst_markdown_notebook(text, md_config, add_source_map=True, path=chapter)


def code_cells(nb: nbformat.NotebookNode) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def with_outputs(
    chapter: Path, executed: nbformat.NotebookNode, skip: int = 1, root: Path = ROOT
) -> nbformat.NotebookNode:
    """The book's notebook of ``chapter`` holding the outputs of ``executed``.

    ``executed`` is a learner's notebook of the chapter: the same code cells in the same order
    after ``skip`` cells of its own (the install cell).
    """
    nb = book_notebook(chapter, root)
    ours, theirs = code_cells(nb), code_cells(executed)[skip:]
    if len(ours) != len(theirs):
        raise ValueError(
            f"{chapter.name}: the executed notebook has {len(theirs)} code cells after its "
            f"first {skip}, the chapter {len(ours)}; regenerate it from the chapter"
        )
    for count, (cell, done) in enumerate(zip(ours, theirs, strict=True), start=1):
        cell.outputs = copy.deepcopy(done.get("outputs", []))
        cell.execution_count = count
    for key in ("language_info", "widgets"):  # what myst-nb takes from an executed notebook
        if key in executed.metadata:
            nb.metadata[key] = copy.deepcopy(executed.metadata[key])
    return nb


def _cache(cache_dir: Path):
    from jupyter_cache import get_cache

    return get_cache(str(cache_dir))


def _read_stamps(cache_dir: Path) -> dict[str, dict]:
    path = cache_dir / STAMPS
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _current(stamps: dict[str, dict], hashkey: str, package: str) -> bool:
    """Whether the cached entry ``hashkey`` was executed with ``package``."""
    return stamps.get(hashkey, {}).get("package") == package


def _write_stamps(cache_dir: Path, stamps: dict[str, dict]) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / STAMPS
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(stamps, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def store(
    chapter: Path,
    executed: nbformat.NotebookNode,
    package: str,
    *,
    seconds: float | None = None,
    cache_dir: Path = CACHE,
    root: Path = ROOT,
) -> str:
    """Cache the outputs of ``executed`` (a learner's run of ``chapter``); the cache's key."""
    from jupyter_cache.base import CacheBundleIn

    cache = _cache(cache_dir)
    nb = with_outputs(chapter, executed, root=root)
    data = {"execution_seconds": seconds} if seconds is not None else {}
    record = cache.cache_notebook_bundle(
        CacheBundleIn(nb, str(chapter), data=data), check_validity=True, overwrite=True
    )
    stamps = _read_stamps(cache_dir)
    stamps[record.hashkey] = {"chapter": chapter.stem, "package": package, "by": "learner run"}
    _write_stamps(cache_dir, stamps)
    return record.hashkey


def chapter_sources(root: Path = ROOT) -> list[Path]:
    """Every jupytext chapter in ``book/`` (the ones the build executes)."""
    return sorted(
        p for p in (root / "book").glob("*.md") if "jupytext" in p.read_text(encoding="utf-8")[:500]
    )


def stale(package: str, cache_dir: Path = CACHE, root: Path = ROOT) -> list[Path]:
    """The chapters the next build would execute: no cached entry, or one from another package."""
    cache = _cache(cache_dir)
    stamps = _read_stamps(cache_dir)
    out = []
    for chapter in chapter_sources(root):
        try:
            record = cache.match_cache_notebook(book_notebook(chapter, root))
        except KeyError:
            out.append(chapter)
            continue
        if not _current(stamps, record.hashkey, package):
            out.append(chapter)
    return out


def prune(package: str, cache_dir: Path = CACHE) -> int:
    """Remove every entry not stamped with ``package``; how many went."""
    if not cache_dir.exists():
        return 0
    cache = _cache(cache_dir)
    stamps = _read_stamps(cache_dir)
    old = [r for r in cache.list_cache_records() if not _current(stamps, r.hashkey, package)]
    for record in old:
        cache.remove_cache(record.pk)
    _write_stamps(cache_dir, {k: v for k, v in stamps.items() if _current(stamps, k, package)})
    return len(old)


def stamp(package: str, cache_dir: Path = CACHE) -> int:
    """Stamp the entries the build just executed (those without a stamp) with ``package``."""
    if not cache_dir.exists():
        return 0
    cache = _cache(cache_dir)
    stamps = _read_stamps(cache_dir)
    new = [r for r in cache.list_cache_records() if r.hashkey not in stamps]
    for record in new:
        name = Path(record.uri).stem if record.uri else "?"
        stamps[record.hashkey] = {"chapter": name, "package": package, "by": "book build"}
    _write_stamps(cache_dir, stamps)
    return len(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["check", "prune", "stamp"])
    parser.add_argument("--cache", type=Path, default=CACHE, help="the cache folder")
    args = parser.parse_args(argv)
    package = package_key()
    if args.action == "prune":
        print(f"book cache: {prune(package, args.cache)} stale entries removed (package {package})")
    elif args.action == "stamp":
        print(f"book cache: {stamp(package, args.cache)} new entries (package {package})")
    else:
        todo = stale(package, args.cache)
        if todo:
            names = ", ".join(p.stem for p in todo)
            print(
                f"book cache: stale or missing for {names} (package {package}); run "
                "`make chapters` (or `make chapter NAME=...`) first",
                file=sys.stderr,
            )
            return 1
        print(f"book cache: every chapter is current (package {package}); the build executes none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
