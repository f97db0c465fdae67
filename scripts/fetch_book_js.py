"""Fetch the JavaScript the static book serves itself, from the npm registry, checked by sha256.

The book draws its formulas with MathJax (the script and its fonts) and runs the world model
in its "type your own sentence" boxes with ONNX Runtime Web (the WebAssembly build: its script,
its module and its ``.wasm``; see ``mlmcourse/viz/in_page.py``), all served from
``_widgets_js/`` (copied into the site's ``_static/``) instead of a CDN, so pages work offline
and show no loading errors. (The book used to load the ipywidgets scripts from here too; its
explorers now carry precomputed views instead, see ``mlmcourse/viz/static.py``.) Third-party code is not
committed: this script downloads the pinned tarballs (plain HTTPS, no ``npm`` needed), checks
their sha256 and extracts what the book uses.
Usage: ``python scripts/fetch_book_js.py [folder]`` (default ``_widgets_js``).

The browser tests check every page with axe-core (tests/book/test_accessibility.py). The book
does not ship it: ``--tests`` fetches ``TEST_FILES`` instead, the same way, into a folder the
site never copies (default ``_build/test_js``).
"""

from __future__ import annotations

import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

REGISTRY = "https://registry.npmjs.org"
# (tarball, its sha256, {path inside it (a file, or a folder ending in "/"): where it goes})
FILES = [
    (  # _config.yml's mathjax_path points at it; the fonts load from beside the script
        "mathjax/-/mathjax-3.2.2.tgz",
        "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09",
        {
            "package/es5/tex-mml-chtml.js": "mathjax/tex-mml-chtml.js",
            "package/es5/output/chtml/fonts/woff-v2/": "mathjax/output/chtml/fonts/woff-v2/",
        },
    ),
    (  # mlmcourse/viz/in_page.py's PAGE_FILES["runtime"]; the module and .wasm load from beside it
        "onnxruntime-web/-/onnxruntime-web-1.30.0.tgz",
        "d2228df7e4616bc3348bf504ee888f3bec43789a273f0a63f3e68d203ce3bf71",
        {
            "package/dist/ort.wasm.min.js": "ort/ort.wasm.min.js",
            "package/dist/ort-wasm-simd-threaded.mjs": "ort/ort-wasm-simd-threaded.mjs",
            "package/dist/ort-wasm-simd-threaded.wasm": "ort/ort-wasm-simd-threaded.wasm",
        },
    ),
]


# What only the tests use, never copied into the site.
TEST_FILES = [
    (  # tests/book/test_accessibility.py injects it into each served page
        "axe-core/-/axe-core-4.14.1.tgz",
        "e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745",
        {"package/axe.min.js": "axe/axe.min.js", "package/LICENSE": "axe/LICENSE"},
    ),
]
TEST_FOLDER = "_build/test_js"


def fetch(folder: Path, files: list = FILES) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for tarball, sha256, wanted in files:
        url = f"{REGISTRY}/{tarball}"
        with urllib.request.urlopen(url, timeout=60) as response:
            data = response.read()
        digest = hashlib.sha256(data).hexdigest()
        if digest != sha256:
            raise SystemExit(f"{url}: sha256 {digest}, expected {sha256}; not using it")
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            count = _extract(archive, wanted, folder)
        print(f"{count} file(s) from {url} ({len(data):,} bytes, sha256 checked)")


def _extract(archive: tarfile.TarFile, wanted: dict[str, str], folder: Path) -> int:
    """Write each wanted member (or every file under a wanted folder) to its place."""
    count = 0
    for member in archive.getmembers():
        for source, target in wanted.items():
            inside = source.endswith("/") and member.name.startswith(source)
            if member.isfile() and (member.name == source or inside):
                path = folder / (target + member.name[len(source) :] if inside else target)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(archive.extractfile(member).read())
                count += 1
    missing = [s for s in wanted if not any(m.name.startswith(s) for m in archive.getmembers())]
    if missing:
        raise SystemExit(f"the tarball has nothing at {missing}")
    return count


if __name__ == "__main__":
    tests = "--tests" in sys.argv[1:]
    folders = [a for a in sys.argv[1:] if a != "--tests"]
    default = TEST_FOLDER if tests else "_widgets_js"
    fetch(Path(folders[0] if folders else default), TEST_FILES if tests else FILES)
