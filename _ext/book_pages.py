"""A local Sphinx extension for the book's pages: each inline script once, and accessible names
that say what a button shows.

sphinx-thebe adds its inline configuration script (``const THEBE_JS_URL = ...``) each time
Sphinx reads documents, and Sphinx keeps every body-only script, so a page could carry it
twice and the browser reported "Identifier 'THEBE_JS_URL' has already been declared". The
browser test (tests/book/test_browser.py) fails on any console error; this keeps one copy of each.

axe-core (tests/book/test_accessibility.py) found the theme's and myst-nb's markup naming three
kinds of control with words other than those they show (WCAG 2.5.3, "label in name": a reader
who says what they see, to voice control, must reach the control). Once the site is written,
each page is rewritten (:data:`FIXES`, each fix idempotent, so a rebuild that rewrites only some
pages leaves the others as they were).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

# (what, pattern, replacement)
FIXES = [
    (  # myst-nb's hidden cell: the summary shows "Show code cell content" (or "Hide ..."),
        # while aria-label named it "Toggle hidden content"; without it, the name is what it shows
        "a hidden cell's show/hide summary",
        re.compile(r'<summary aria-label="Toggle hidden content">'),
        "<summary>",
    ),
    (  # the theme's search field shows "Search Ctrl+K"; aria-label="Search" hid the shortcut
        # (title="Search" stays, as its tooltip)
        "the search field's button",
        re.compile(r'(<button class="btn search-button-field [^"]*"[^>]*?) aria-label="Search"'),
        r"\1",
    ),
    (  # the colour-mode button (named "Color mode") shows one of three icons whose title
        # ("Light", "Dark", "System Settings") Font Awesome turned into the icon's text: the
        # icons are decoration, the button's name and tooltip say what it does
        "the colour-mode button's icons",
        re.compile(r'(<i class="theme-switch [^"]*"\s+data-mode="\w+")\s+title="[^"]*">'),
        r'\1 aria-hidden="true">',
    ),
    (  # the left sidebar (the book's title, the search field, the chapters) was no landmark, so
        # its title link was outside every one (axe's "region"): it is the book's navigation
        "the left sidebar",
        re.compile(r'(<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar")>'),
        r'\1 role="complementary" aria-label="Chapters and search">',
    ),
]


def accessible(markup: str) -> str:
    """A written page with :data:`FIXES` applied."""
    for _, pattern, replacement in FIXES:
        markup = pattern.sub(replacement, markup)
    return markup


def unique_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    seen: set[tuple[str, str]] = set()
    unique = []
    for script in context.get("script_files", []):
        # a body-only script's filename is None or "" depending on how it was added
        name = getattr(script, "filename", None) or ""
        key = (name, getattr(script, "attributes", {}).get("body", ""))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def rewrite_pages(app: Any, exception: Exception | None) -> None:
    """Every HTML page of the site, with :func:`accessible` applied."""
    if exception is not None or app.builder.format != "html":
        return
    for path in Path(app.outdir).rglob("*.html"):
        markup = path.read_text(encoding="utf-8")
        fixed = accessible(markup)
        if fixed != markup:
            path.write_text(fixed, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", unique_scripts)
    app.connect("build-finished", rewrite_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
