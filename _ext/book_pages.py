"""A local Sphinx extension for the book's pages: each inline script once.

sphinx-thebe adds its inline configuration script (``const THEBE_JS_URL = ...``) each time
Sphinx reads documents, and Sphinx keeps every body-only script, so a page could carry it
twice and the browser reported "Identifier 'THEBE_JS_URL' has already been declared". The
browser test (tests/book/test_browser.py) fails on any console error; this keeps one copy of each.
"""

from __future__ import annotations

from typing import Any


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


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", unique_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
