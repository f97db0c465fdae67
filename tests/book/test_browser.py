"""The static book in a real browser: headless Chromium, no kernel, no network.

Two kinds of tests. The first builds a page from :class:`~mlmcourse.viz.static.View`\\ s of every
control kind and drives it from the keyboard; it needs only Chromium. The second (marker
``book``) opens every chapter of the built book (``make book``, then ``make browser``): no
console errors, every image with alt text, every interactive view's controls labelled and
each control, moved from the keyboard, shows the state the page carries for it. A screenshot of
each chapter and each view, and a ``<chapter>.json`` (page size, views, moves checked, console
errors) go to ``_build/screenshots/``.

Chromium and its driver come from Debian (``apt-get install chromium chromium-driver``); without
them the tests skip and say so, except where ``MLMCOURSE_REQUIRE_BROWSER=1`` (CI), where a
missing browser or an unbuilt book is a failure.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import re
import shutil
import sys
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mlmcourse.viz.static import Control, View, unpack_states

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from make_diagrams import chapter_figures  # noqa: E402

BUILT = Path(os.environ.get("MLMCOURSE_BOOK_HTML", ROOT / "_build" / "html"))
SHOTS = ROOT / "_build" / "screenshots"
PAGE_LIMIT = 2_000_000  # bytes: a chapter's HTML and the images it shows
REQUIRED = os.environ.get("MLMCOURSE_REQUIRE_BROWSER") == "1"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
)


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"{reason} (MLMCOURSE_REQUIRE_BROWSER=1, so this is not skipped)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium that can reach 127.0.0.1 only, with its console log kept."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed: pip install selenium")
    if not (CHROMIUM and DRIVER):
        _unavailable(
            "Chromium is absent: the browser tests need Debian's chromium and chromium-driver "
            "(apt-get install chromium chromium-driver)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1400",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",  # no network
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The built book served from 127.0.0.1, as a reader's browser gets it."""
    handler = functools.partial(_QuietHandler, directory=str(BUILT))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep pytest's output readable
        pass


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible_text(markup: str) -> str:
    """The text a state's HTML shows, whitespace collapsed (as ``textContent``, normalised)."""
    parser = _Text()
    parser.feed(markup)
    return " ".join("".join(parser.parts).split())


def errors(driver: object) -> list[str]:
    """The console's errors since it was last read. The browser's own request for
    ``/favicon.ico`` is not the page's doing (the site has none at its root), so it is left out."""
    return [
        e["message"]
        for e in driver.get_log("browser")
        if e["level"] == "SEVERE" and "/favicon.ico" not in e["message"]
    ]


def wait_ready(driver: object) -> None:
    """Until every view has unpacked its states."""
    from selenium.webdriver.support.ui import WebDriverWait

    def ready(d: object) -> bool:
        return d.execute_script(
            "return document.readyState === 'complete' && Array.from("
            "document.querySelectorAll('.mlm-view')).every(v => v.dataset.ready === '1')"
        )

    WebDriverWait(driver, 20).until(ready)


def check_view(driver: object, view: object) -> int:
    """Move every control of one view from the keyboard; each time, the view must show the
    state the page carries for the new setting. Returns the number of moves checked."""
    from selenium.webdriver.common.by import By

    uid = view.get_attribute("id")
    states = unpack_states(
        driver.execute_script(
            "return arguments[0].querySelector('script.mlm-view-data').textContent", view
        )
    )
    labels = driver.execute_script(
        "return JSON.parse(arguments[0].querySelector('script.mlm-view-labels').textContent)", view
    )
    sizes = [len(options) for options in labels]
    out = view.find_element(By.CSS_SELECTOR, ".mlm-view-out")
    controls = view.find_elements(By.CSS_SELECTOR, "[data-control]")
    assert len(controls) == len(sizes)
    moves = 0
    for k, control in enumerate(controls):
        _check_label(view, control)
        if sizes[k] < 2:
            continue
        before = [int(i) for i in view.get_attribute("data-state").split("|")]
        _press(control, before[k], sizes[k])
        after = [int(i) for i in view.get_attribute("data-state").split("|")]
        expected = before.copy()
        expected[k] = _next_index(control, before[k], sizes[k])
        assert after == expected, f"{uid}: control {k} went from {before} to {after}"
        flat = 0
        for index, size in zip(after, sizes, strict=True):
            flat = flat * size + index
        shown = " ".join(driver.execute_script("return arguments[0].textContent", out).split())
        assert shown == visible_text(states[flat]), f"{uid}: control {k} shows the wrong state"
        value = view.find_elements(By.ID, f"{control.get_attribute('id')}-value")
        if value:  # the option's text is shown next to a slider or a button
            assert value[0].text == labels[k][after[k]]
        moves += 1
    return moves


def _check_label(view: object, control: object) -> None:
    from selenium.webdriver.common.by import By

    cid = control.get_attribute("id")
    if control.tag_name == "button":
        assert control.text.strip(), f"button {cid} has no text"
    else:
        assert view.find_elements(By.CSS_SELECTOR, f'label[for="{cid}"]'), f"{cid} has no label"


def _press(control: object, index: int, size: int) -> None:
    """The keys a reader would use: arrows on sliders and menus, space on a box, enter on a
    button."""
    from selenium.webdriver.common.keys import Keys

    kind = control.tag_name if control.tag_name != "input" else control.get_attribute("type")
    if kind in ("range", "select"):
        control.send_keys(Keys.ARROW_LEFT if index == size - 1 else Keys.ARROW_RIGHT)
        if kind == "select":  # a closed menu changes on arrow keys; make sure it is committed
            control.send_keys(Keys.TAB)
    elif kind == "checkbox":
        control.send_keys(Keys.SPACE)
    else:
        control.send_keys(Keys.ENTER)


def _next_index(control: object, index: int, size: int) -> int:
    if control.tag_name == "button":
        return (index + 1) % size
    if control.get_attribute("type") == "checkbox":
        return 1 - index
    return index - 1 if index == size - 1 else index + 1


# --- every control kind on a page of its own ------------------------------------------------


def _toy_render(word: str, size: int, bold: bool, draw: int) -> str:
    text = html.escape(f"{word} x{size} draw {draw}")
    return f"<p style='font-size:{10 + size}px'>{'<b>' if bold else ''}{text}{'</b>' if bold else ''}</p>"


def test_every_control_kind_reacts_from_the_keyboard(browser, tmp_path):
    view = View(
        _toy_render,
        [
            Control.of("word", "word", ["cat", "dog & <bird>", "emu"]),
            Control.of("size", "size", [1, 2, 3, 4], kind="slider", initial=4),
            Control("bold", "bold", [("off", False), ("on", True)], "toggle"),
            Control("draw", "new draw", [(f"draw {d}", d) for d in range(3)], "cycle"),
        ],
        title="toy view",
    )
    page = tmp_path / "view.html"
    page.write_text(f"<!doctype html><html><body>{view.to_html()}</body></html>", encoding="utf-8")
    browser.get(page.as_uri())
    wait_ready(browser)
    from selenium.webdriver.common.by import By

    element = browser.find_element(By.CSS_SELECTOR, ".mlm-view")
    assert element.get_attribute("data-state") == "0|3|0|0"
    assert check_view(browser, element) == 4
    assert element.get_attribute("data-state") == "1|2|1|1"
    assert "dog & <bird> x3 draw 1" in element.text  # size 4 -> 3
    assert errors(browser) == []


# --- the built book ---------------------------------------------------------------------------


def chapter_pages() -> list[str]:
    """Every page of the table of contents, as ``book/<name>``."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    return re.findall(r"(?:root|file):\s*(book/\w+)", toc)


def page_bytes(path: Path) -> int:
    """A page's HTML plus the output images it shows (scripts and styles are shared)."""
    markup = path.read_text(encoding="utf-8")
    images = set(re.findall(r'src="\.\./(_images/[^"]+)"', markup))
    return path.stat().st_size + sum((BUILT / i).stat().st_size for i in images)


@pytest.mark.book
@pytest.mark.parametrize("page", chapter_pages())
def test_chapter_page_in_chromium(browser, server, page):
    from selenium.webdriver.common.by import By

    path = BUILT / f"{page}.html"
    if not path.exists():
        _unavailable(f"{path} is not built: run `make book` first")
    size = page_bytes(path)
    print(f"{page}: {size / 1e6:.2f} MB")
    assert size < PAGE_LIMIT, f"{page} weighs {size:,} bytes, over {PAGE_LIMIT:,}"
    browser.get(f"{server}/{page}.html")
    wait_ready(browser)
    for image in browser.find_elements(By.CSS_SELECTOR, "main img, article img"):
        alt = (image.get_attribute("alt") or "").strip()
        assert alt and not alt.endswith((".png", ".svg", ".jpg")), (
            f"{page}: an image has no alt text ({image.get_attribute('src')[:80]})"
        )
    shown = {
        Path(image.get_attribute("src")).name: image
        for image in browser.find_elements(By.CSS_SELECTOR, "main img, article img")
    }
    for src, alt in chapter_figures(ROOT / f"{page}.md"):
        image = shown.get(Path(src).name)
        assert image is not None, f"{page}: the figure {src} is not on the page"
        assert image.get_attribute("alt") == alt, f"{page}: {src} lost its alt text"
        drawn = browser.execute_script("return arguments[0].naturalWidth", image)
        assert drawn > 0, f"{page}: {src} did not render"
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = page.split("/")[-1]
    browser.save_screenshot(str(SHOTS / f"{name}.png"))
    views = browser.find_elements(By.CSS_SELECTOR, ".mlm-view")
    moves = []
    for k, view in enumerate(views):
        browser.execute_script("arguments[0].scrollIntoView()", view)
        moves.append(check_view(browser, view))
        assert moves[-1] > 0
        view.screenshot(str(SHOTS / f"{name}-view{k + 1}.png"))
    found = errors(browser)
    report = {"page": page, "bytes": size, "views": len(views), "moves": moves, "errors": found}
    (SHOTS / f"{name}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    assert found == [], f"{page}: console errors"
