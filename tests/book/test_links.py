"""Every link of the built site and of the notebooks resolves (``scripts/check_links.py``).

The site's tests (marker ``book``) walk the built book (``make book``, then ``make browser``):
every ``href`` and ``src`` to a page, an anchor or a file of the site exists, the site's public
address counted as internal, and every link into the repository (Colab, GitHub, Binder) names
a path this checkout tracks. A copy of the site with broken links planted must fail. The
walker itself is tested on a small site of its own, without a build.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import check_links as cl  # noqa: E402

BUILT = Path(os.environ.get("MLMCOURSE_BOOK_HTML", ROOT / "_build" / "html"))
WHERE = cl.addresses()
REPO = WHERE.repository
BLOB = f"{REPO}/blob/main"
COLAB = f"https://colab.research.google.com/github/{WHERE.owner_repo}/blob/main"


def page(body: str) -> str:
    return f"<!DOCTYPE html><html><body>{body}</body></html>"


@pytest.fixture
def small_site(tmp_path) -> Path:
    site = tmp_path / "html"
    (site / "book").mkdir(parents=True)
    (site / "_static").mkdir()
    (site / "_static" / "app.js").write_text("")
    (site / "book" / "b.html").write_text(page('<h2 id="part">Part</h2><a name="old"></a>'))
    links = [
        "b.html", "b.html#part", "b.html#old", "#top", "../_static/app.js", "./",
        f"{WHERE.site}book/b.html#part", "mailto:x@y.z", "data:image/png;base64,AA==",
        f"{BLOB}/README.md", f"{COLAB}/book/intro.ipynb", f"{REPO}/issues/new", f"{REPO}",
        "https://example.org/elsewhere",
    ]  # fmt: skip
    body = '<span id="top"></span>' + "".join(f'<a href="{link}">x</a>' for link in links)
    (site / "book" / "index.html").write_text(page(body + '<img src="../_static/app.js">'))
    return site


def test_a_good_small_site_passes_and_lists_its_external_links(small_site):
    broken, external = cl.check_site(small_site, WHERE)
    assert broken == [] and external == {"https://example.org/elsewhere"}


@pytest.mark.parametrize(
    "link, why",
    [
        ("missing.html", "no file book/missing.html"),
        ("b.html#nowhere", "no anchor #nowhere in book/b.html"),
        ("#nowhere", "no anchor #nowhere in book/index.html"),
        ("../_static/gone.js", "no file _static/gone.js"),
        ("../../outside.html", "points outside the site"),
        (f"{cl.addresses().site}book/gone.html", "no file book/gone.html"),
        (f"{BLOB}/no/such/file.py", "this checkout has no no/such/file.py"),
        (f"{COLAB}/book/gone.ipynb", "this checkout has no book/gone.ipynb"),
        (f"{REPO}/tree/v9.9.9/gone", "this checkout has no gone"),
        (f"https://mybinder.org/v2/gh/{WHERE.owner_repo}/main?urlpath=tree/gone.ipynb",
         "this checkout has no gone.ipynb"),
    ],
)  # fmt: skip
def test_each_kind_of_broken_link_is_named(small_site, link, why):
    index = small_site / "book" / "index.html"
    index.write_text(index.read_text().replace("</body>", f'<a href="{link}">x</a></body>'))
    broken, _ = cl.check_site(small_site, WHERE)
    assert [str(b) for b in broken] == [f"book/index.html: {link} ({why})"]


def test_links_in_notebook_text_are_found_and_checked(small_site):
    text = (
        f"[Open in Colab]({COLAB}/book/intro.ipynb) and the source "
        f'<a href="{BLOB}/mlmcourse/gone.py">here</a>, the book: {WHERE.site}book/b.html#part.'
    )
    broken = list(cl.check_text_links("intro (colab), cell 3", text, WHERE, small_site))
    assert [str(b) for b in broken] == [
        f"intro (colab), cell 3: {BLOB}/mlmcourse/gone.py (this checkout has no mlmcourse/gone.py)"
    ]


def test_every_link_of_the_notebooks_and_the_readme_into_the_repository_resolves():
    assert cl.check_notebooks(site=None) == []


def _built() -> Path:
    if not (BUILT / "book" / "intro.html").is_file():
        if os.environ.get("MLMCOURSE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"the book is not built at {BUILT} (make book)")
        pytest.skip(f"the book is not built at {BUILT} (make book)")
    return BUILT


@pytest.mark.book
def test_every_link_of_the_built_site_and_the_notebooks_resolves():
    site = _built()
    broken, external = cl.check_site(site, WHERE)
    broken += cl.check_notebooks(site, WHERE)
    assert not broken, "\n".join(map(str, broken))
    print(f"{len(external)} external links, not fetched:", *sorted(external), sep="\n  ")


@pytest.mark.book
def test_broken_links_planted_in_a_copy_of_the_site_are_found(tmp_path):
    site = shutil.copytree(_built(), tmp_path / "html")
    planted = [
        "masking.html#no-such-section",
        "no-such-chapter.html",
        f"{WHERE.site}_static/no-such-file.js",
        f"{COLAB}/book/no-such-chapter.ipynb",
    ]
    intro = site / "book" / "intro.html"
    links = "".join(f'<a href="{link}">x</a>' for link in planted)
    intro.write_text(intro.read_text(encoding="utf-8").replace("</body>", links + "</body>"))
    cl._read.cache_clear()
    broken, _ = cl.check_site(site, WHERE)
    assert sorted(b.link for b in broken) == sorted(planted), broken
    assert all(b.where == "book/intro.html" for b in broken)
