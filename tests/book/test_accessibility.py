"""Every page of the built book checked by axe-core, with its default rules, in Chromium.

axe-core is pinned and sha256-checked like the book's own JavaScript, but the book does not
ship it: ``python scripts/fetch_book_js.py --tests`` (``make browser`` runs it) puts it in
``_build/test_js/``, beside the site, and this test injects it into each page the test server
serves. A page fails on any serious or critical violation, listed with its rule, impact,
element and help; every violation, whatever its impact, is counted per rule in the test's
output and in ``_build/screenshots/axe.json`` (per page, then over all pages).

Keyboard use of the interactive views and of the in-page model boxes is tested with the pages
themselves in ``tests/book/test_browser.py``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.book.test_browser import BUILT, ROOT, SHOTS, _unavailable, chapter_pages, wait_ready

AXE = ROOT / "_build" / "test_js" / "axe" / "axe.min.js"
FAILING = ("serious", "critical")
# Violations that stay: {(rule id, the element's selector as axe gives it): why}. None today
# (the theme's markup that failed is rewritten by _ext/book_pages.py).
EXCEPTIONS: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def axe_source() -> str:
    """axe-core's script, fetched (pinned, sha256-checked) if it is not here yet."""
    if not AXE.exists():
        import sys

        sys.path.insert(0, str(ROOT / "scripts"))
        from fetch_book_js import TEST_FILES, fetch

        try:
            fetch(AXE.parents[1], TEST_FILES)
        except OSError as error:  # no network: say how to get it
            _unavailable(f"axe-core could not be fetched ({error}): run `make browser`")
        except SystemExit as error:  # not the pinned tarball
            pytest.fail(str(error))
    return AXE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def summary() -> Iterator[dict]:
    """Each page's violations per rule, written to ``_build/screenshots/axe.json`` at the end."""
    pages: dict = {}
    yield pages
    total: Counter = Counter()
    impacts: dict[str, str] = {}
    for rules in pages.values():
        for rule, found in rules.items():
            total[rule] += found["elements"]
            impacts[rule] = found["impact"]
    report = {
        "axe": f"axe-core {_version()}, default rules",
        "pages": pages,
        "total": {r: {"impact": impacts[r], "elements": n} for r, n in sorted(total.items())},
    }
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "axe.json").write_text(json.dumps(report, indent=1), encoding="utf-8")


def _version() -> str:
    head = AXE.read_text(encoding="utf-8")[:200] if AXE.exists() else ""
    return head.split("axe v", 1)[1].split()[0] if "axe v" in head else "?"


def run_axe(driver: object, source: str) -> list[dict]:
    """axe-core's violations on the loaded page, with its default rules."""
    if not driver.execute_script("return !!window.axe"):
        driver.execute_script(source)
    driver.set_script_timeout(120)
    result = driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations.map(v => ({"
        "id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,"
        "nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 200),"
        "impact: n.impact}))}))), e => done(String(e)));"
    )
    assert isinstance(result, list), f"axe.run failed: {result}"
    return result


@pytest.mark.book
@pytest.mark.parametrize("page", chapter_pages())
def test_page_has_no_serious_accessibility_violation(browser, server, axe_source, summary, page):
    path = BUILT / f"{page}.html"
    if not path.exists():
        _unavailable(f"{path} is not built: run `make book` first")
    browser.get(f"{server}/{page}.html")
    wait_ready(browser)
    violations = run_axe(browser, axe_source)
    counts = {
        v["id"]: {"impact": v["impact"], "elements": len(v["nodes"])}
        for v in sorted(violations, key=lambda v: v["id"])
    }
    summary[page] = counts
    found = [f"{rule} ({c['impact']}) {c['elements']}" for rule, c in counts.items()]
    print(f"{page}: {', '.join(found) or 'no violations'}")
    failing = [
        f"{v['id']} ({node['impact'] or v['impact']}): {node['target']}: {v['help']} "
        f"({v['helpUrl']})"
        for v in violations
        for node in v["nodes"]
        if (node["impact"] or v["impact"]) in FAILING
        and (v["id"], node["target"]) not in EXCEPTIONS
    ]
    assert not failing, f"{page}: {len(failing)} serious or critical violation(s):\n" + (
        "\n".join(failing)
    )


@pytest.mark.book
def test_the_book_does_not_ship_axe():
    """axe-core is for the tests: nothing of it is in the folder the site's _static is made of,
    nor in a built page."""
    for folder in (ROOT / "_widgets_js", BUILT / "_static"):
        if folder.exists():
            assert not [p for p in folder.rglob("axe*.js")], f"{folder} carries axe-core"
    for page in chapter_pages():
        path = BUILT / f"{page}.html"
        if path.exists():
            assert "axe.min.js" not in path.read_text(encoding="utf-8"), page
    assert not AXE.is_relative_to(BUILT) and not AXE.is_relative_to(ROOT / "_widgets_js")
