"""The static book in a real browser: headless Chromium, no kernel, no network.

Two kinds of tests. The first builds a page from :class:`~mlmcourse.viz.static.View`\\ s of every
control kind and drives it from the keyboard; it needs only Chromium. The second (marker
``book``) opens every chapter of the built book (``make book``, then ``make browser``): no
console errors, every image with alt text, every interactive view's controls labelled and
each control, reached with TAB from the element before the view and moved with keys, shows the
state the page carries for it; each in-page model box's text is reached with TAB and answers
what is typed. A screenshot of each chapter and each view, and a ``<chapter>.json`` (page size,
views, moves checked, console errors) go to ``_build/screenshots/``. (axe-core's check of every
page is in ``test_accessibility.py``; both use the ``browser`` and ``server`` fixtures of
``conftest.py``.)

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
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mlmcourse.viz.static import Control, View
from tests.packed_states import unpack_states

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


def open_chromium() -> object:
    """Headless Chromium that can reach 127.0.0.1 only, with its console log kept (the
    ``browser`` fixture of ``tests/book/conftest.py``)."""
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
    return driver


def serve_book() -> http.server.ThreadingHTTPServer:
    """The built book served from 127.0.0.1, as a reader's browser gets it, on a thread of its
    own (the ``server`` fixture of ``tests/book/conftest.py``); ``shutdown()`` ends it."""
    handler = functools.partial(_QuietHandler, directory=str(BUILT))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


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


def wait_live(driver: object) -> list[str]:
    """Until every in-page model box has answered (or given up); their states."""
    from selenium.webdriver.support.ui import WebDriverWait

    script = "return Array.from(document.querySelectorAll('.mlm-live')).map(b => b.dataset.state)"
    WebDriverWait(driver, 60).until(
        lambda d: all(s not in ("loading", "busy") for s in d.execute_script(script))
    )
    return driver.execute_script(script)


def check_view(driver: object, view: object) -> int:
    """Drive one view from the keyboard alone: from the element just before it, TAB reaches
    each of its controls in turn, in the page's order, and the keys a reader uses move the
    focused control; each time, the view must show the state the page carries for the new
    setting. Returns the number of moves checked."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

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
    start_before(driver, view)
    for k, control in enumerate(controls):
        _check_label(view, control)
        press_keys(driver, Keys.TAB)
        assert focused(driver, control), f"{uid}: TAB does not reach control {k} next"
        if sizes[k] < 2:
            continue
        before = [int(i) for i in view.get_attribute("data-state").split("|")]
        _press(driver, control, before[k], sizes[k])
        assert focused(driver, control), f"{uid}: control {k} lost the focus to its own keys"
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
    end_before(driver)
    return moves


def _check_label(view: object, control: object) -> None:
    from selenium.webdriver.common.by import By

    cid = control.get_attribute("id")
    if control.tag_name == "button":
        assert control.text.strip(), f"button {cid} has no text"
    else:
        assert view.find_elements(By.CSS_SELECTOR, f'label[for="{cid}"]'), f"{cid} has no label"


def start_before(driver: object, element: object) -> None:
    """Focus a link put just before ``element``, where a reader tabbing down the page is one
    TAB before it (:func:`end_before` takes it away)."""
    driver.execute_script(
        "var a = document.getElementById('mlm-tab-start') || document.createElement('a');"
        "a.id = 'mlm-tab-start'; a.href = '#'; a.textContent = 'before';"
        "arguments[0].parentNode.insertBefore(a, arguments[0]); a.focus();",
        element,
    )
    assert driver.execute_script("return document.activeElement.id") == "mlm-tab-start"


def end_before(driver: object) -> None:
    driver.execute_script("var a = document.getElementById('mlm-tab-start'); if (a) a.remove();")


def press_keys(driver: object, *keys: str) -> None:
    """Keys pressed on whatever has the focus, as a reader presses them."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(*keys).perform()


def focused(driver: object, element: object) -> bool:
    return driver.execute_script("return document.activeElement === arguments[0]", element)


def _press(driver: object, control: object, index: int, size: int) -> None:
    """The keys a reader would use on the focused control: arrows on sliders and menus, space
    on a box, enter on a button."""
    from selenium.webdriver.common.keys import Keys

    kind = control.tag_name if control.tag_name != "input" else control.get_attribute("type")
    if kind in ("range", "select"):  # a closed menu changes (and says so) on an arrow key
        press_keys(driver, Keys.ARROW_LEFT if index == size - 1 else Keys.ARROW_RIGHT)
    elif kind == "checkbox":
        press_keys(driver, Keys.SPACE)
    else:
        press_keys(driver, Keys.ENTER)


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
    live = wait_live(browser)
    assert all(state == "ready" for state in live), f"{page}: in-page model boxes {live}"
    for box in browser.find_elements(By.CSS_SELECTOR, ".mlm-live"):
        check_live_box(browser, box)
    found = errors(browser)
    report = {
        "page": page, "bytes": size, "views": len(views), "moves": moves, "live": live,
        "errors": found,
    }  # fmt: skip
    (SHOTS / f"{name}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    assert found == [], f"{page}: console errors"


# --- the world model in the page -------------------------------------------------------------
# The in-page boxes (mlmcourse/viz/in_page.py) run the exported world model and tagger with
# ONNX Runtime Web. Sentences generated here, on no page, are typed into them; what the page
# shows must be what the Python models say (fill_mask, predict_entities). The seed is drawn
# afresh each run and printed; MLMCOURSE_BROWSER_SEED=<seed> repeats a run.


def live_pages(task: str) -> list[str]:
    """The chapters whose built page has an in-page box for ``task``."""
    return [
        page
        for page in chapter_pages()
        if (BUILT / f"{page}.html").exists()
        and f'class="mlm-live" id="mlmlive-{task}-' in (BUILT / f"{page}.html").read_text("utf-8")
    ]


@pytest.fixture(scope="module")
def shipped():
    from mlmcourse.checkpoint import shipped_checkpoint
    from mlmcourse.heads import load_checkpoint

    world = load_checkpoint(shipped_checkpoint("world"))
    tagger = load_checkpoint(shipped_checkpoint("world_ner"))
    return world, tagger


@pytest.fixture(scope="module")
def rng():
    import random

    seed = int(os.environ.get("MLMCOURSE_BROWSER_SEED") or int.from_bytes(os.urandom(4), "big"))
    print(f"sentences drawn with MLMCOURSE_BROWSER_SEED={seed}")
    return random.Random(seed)


def generated_sentences(rng, tokenizer, count: int, *, masks: bool) -> list[str]:
    """Sentences of 3-14 words of ``tokenizer``'s vocabulary, with one or two [MASK]s for
    fill-mask and, sometimes, an invented word the model reads as [UNK]; the longest fit the
    model's 32 ids."""
    vocab = tokenizer.get_vocab()
    words = [w for w in sorted(vocab, key=vocab.get) if not w.startswith("[")]
    sentences = []
    for _ in range(count):
        chosen = rng.choices(words, k=rng.randint(3, 14))
        if rng.random() < 0.5:
            name = rng.choice("ZKVQ") + "".join(rng.choices("aeiouxzrnlt", k=rng.randint(3, 7)))
            chosen.insert(rng.randrange(len(chosen) + 1), name)
        for _ in range(rng.randint(1, 2) if masks else 0):
            chosen.insert(rng.randrange(len(chosen) + 1), "[MASK]")
        sentences.append(" ".join(chosen))
    return sentences


def type_into(driver: object, box: object, text: str) -> None:
    """Type ``text`` into the box as a reader does, and wait for the page's answer to it."""
    from selenium.webdriver.common.by import By

    driver.execute_script("arguments[0].dataset.text = ''", box)
    field = box.find_element(By.CSS_SELECTOR, "input.mlm-live-text")
    field.clear()
    field.send_keys(text)
    wait_answer(driver, box, text)


def wait_answer(driver: object, box: object, text: str) -> None:
    """Until the box has answered ``text``; it must have answered it, not failed."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 30).until(
        lambda d: (
            d.execute_script(
                "return arguments[0].dataset.text === arguments[1] && arguments[0].dataset.state",
                box,
                text,
            )
            in ("ready", "error")
        )
    )
    assert box.get_attribute("data-state") == "ready", box.text


def check_live_box(driver: object, box: object) -> None:
    """An in-page model box from the keyboard alone: from the element just before it, TAB
    reaches its text field; the box answers what is typed there, key by key (a letter taken
    away, then typed again: the first answer again); Enter submits and reloads nothing."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    field = box.find_element(By.CSS_SELECTOR, "input.mlm-live-text")
    out = box.find_element(By.CSS_SELECTOR, ".mlm-live-out")
    first = out.get_attribute("innerHTML")
    text = field.get_attribute("value")
    driver.execute_script("window.mlmNotReloaded = true")
    start_before(driver, box)
    press_keys(driver, Keys.TAB)
    assert focused(driver, field), f"{box.get_attribute('id')}: TAB does not reach its text"
    press_keys(driver, Keys.END, Keys.BACKSPACE)
    wait_answer(driver, box, text[:-1])
    press_keys(driver, text[-1])
    wait_answer(driver, box, text)
    assert out.get_attribute("innerHTML") == first, f"{box.get_attribute('id')}: a new answer"
    press_keys(driver, Keys.ENTER)
    assert driver.execute_script("return window.mlmNotReloaded === true") and focused(driver, field)
    assert box.get_attribute("data-state") == "ready"
    end_before(driver)


def open_live_box(browser: object, server: str, task: str) -> object:
    from selenium.webdriver.common.by import By

    pages = live_pages(task)
    if not pages:
        _unavailable(f"no built chapter page has an in-page {task} box: run `make book` first")
    browser.get(f"{server}/{pages[0]}.html")
    assert set(wait_live(browser)) == {"ready"}
    return browser.find_element(By.CSS_SELECTOR, f'.mlm-live[data-task="{task}"]')


@pytest.mark.book
def test_typed_sentences_get_the_python_world_models_top_5_in_the_page(
    browser, server, shipped, rng
):
    from mlmcourse.tasks.fill_mask import fill_mask

    world, _ = shipped
    box = open_live_box(browser, server, "fill-mask")
    everything = world.tokenizer.vocab_size - 4  # fill_mask never proposes four specials
    for text in generated_sentences(rng, world.tokenizer, 10, masks=True):
        type_into(browser, box, text)
        expected = fill_mask(world.model, world.tokenizer, text, top_k=everything)
        assert_same_top_5(shown_top_5(browser, box), expected, text)
    assert errors(browser) == []


def shown_top_5(driver: object, box: object) -> list[list[tuple[str, float]]]:
    """Each mask's candidates as the box shows them: (token, probability)."""
    return driver.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.mlm-live-mask')).map(m => "
        "Array.from(m.querySelectorAll('.mlm-live-candidate')).map(c => "
        "[c.dataset.token, parseFloat(c.dataset.score)]))",
        box,
    )


def assert_same_top_5(shown: list, expected: list, text: str) -> None:
    """The page's top 5 at each mask is fill_mask's ranking (all candidates, ``expected``)."""
    expected = [expected] if isinstance(expected[0], dict) else expected
    assert len(shown) == len(expected), text
    for page_top, ranked in zip(shown, expected, strict=True):
        probability = {c["token_str"]: c["score"] for c in ranked}
        assert len(page_top) == 5, text
        for rank, (token, score) in enumerate(page_top):
            ours = ranked[rank]
            # the same probability at each rank, the page's word scored as Python scores it,
            # and the same word unless two probabilities are within 1e-4 (a tie to float32)
            assert abs(score - ours["score"]) < 1e-4, (text, rank, token, ours)
            assert abs(score - probability[token]) < 1e-4, (text, rank, token)
            assert token == ours["token_str"] or abs(ours["score"] - probability[token]) < 1e-4


@pytest.mark.book
def test_typed_sentences_get_the_python_taggers_entities_in_the_page(browser, server, shipped, rng):
    from mlmcourse.tasks.ner import predict_entities, predict_tags

    world, tagger = shipped
    box = open_live_box(browser, server, "ner")
    for text in generated_sentences(rng, world.tokenizer, 8, masks=False):
        type_into(browser, box, text)
        tags = browser.execute_script(
            "var seen = {}; return Array.from(arguments[0].querySelectorAll('.mlm-live-tag'))"
            ".filter(t => !(t.dataset.word in seen) && (seen[t.dataset.word] = 1))"
            ".map(t => t.dataset.tag)",
            box,
        )  # each word's first piece
        spans = browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('.mlm-live-entity')).map(e => "
            "[e.dataset.group, e.dataset.word, parseFloat(e.dataset.score)])",
            box,
        )
        assert tags == predict_tags(tagger.model, world.tokenizer, [text.split()])[0], text
        expected = predict_entities(tagger.model, world.tokenizer, text)
        assert [(g, w) for g, w, _ in spans] == [(e["entity_group"], e["word"]) for e in expected]
        for (_, _, score), entity in zip(spans, expected, strict=True):
            assert abs(score - entity["score"]) < 1e-4, (text, entity)
    assert errors(browser) == []


# --- the English model in the page ------------------------------------------------------------
# Its box runs the corpus's normalisation and BERT's WordPiece tokenizer in JavaScript
# (mlmcourse/viz/in_page.js); they must give the ids the Rust `tokenizers` library gives.

ENGLISH_TYPED = [
    "The film received positive [MASK] from critics.",
    "She moved to London in 1990, and [MASK] there for ten years.",
    "During the war the [MASK] was sunk near the coast; its crew of 1,200 men [MASK] ashore.",
]
AWKWARD_TEXTS = [
    "Café MÜLLER, naïve façade and İstanbul's ΟΔΟΣ",
    "東京 and 北京 are cities\tin Asia\nwith \u200bzero\u0000width and \ufffd marks",
    "x" * 120 + " is too long a word, " + "y" * 99 + " is not",
    "glued[MASK]words and [MASK]. [mask] [UNK] <unk> [CLS]",
    "“Smart quotes” — dashes – and… ellipses; 1,000.5% of $3 @-@ 4 ( a ) 'd",
    "emoji 🙂 and Ω, ß, ﬁ ligature, ① and ½",
]


@pytest.fixture(scope="module")
def shipped_english():
    from mlmcourse.checkpoint import shipped_checkpoint
    from mlmcourse.heads import load_checkpoint

    return load_checkpoint(shipped_checkpoint("english"))


@pytest.mark.book
def test_typed_english_gets_the_python_english_models_top_5_in_the_page(
    browser, server, shipped_english
):
    from mlmcourse.data.english import plain_text
    from mlmcourse.tasks.fill_mask import fill_mask

    model, tokenizer = shipped_english.model, shipped_english.tokenizer
    box = open_live_box(browser, server, "english")
    everything = tokenizer.vocab_size - 4  # fill_mask never proposes four specials
    for text in ENGLISH_TYPED:
        type_into(browser, box, text)
        expected = fill_mask(model, tokenizer, plain_text(text), top_k=everything)
        assert_same_top_5(shown_top_5(browser, box), expected, text)
    assert errors(browser) == []


def english_held_out_texts() -> list[str]:
    """The held-out test articles as the model reads them, and as the release writes them (with
    @-@, <unk> and spaced punctuation); none where the data cannot be had."""
    from mlmcourse.data.english import _lines, english_texts
    from mlmcourse.data.real import DownloadError

    try:
        raw = [line for line in _lines("wikitext2/tokenized-test")[:400] if line.strip()]
        return english_texts("test") + raw
    except DownloadError as error:
        if REQUIRED:
            raise
        print(f"the held-out articles are not available here ({str(error)[:120]}...)")
        return []


@pytest.mark.book
def test_the_pages_wordpiece_tokenizer_gives_the_librarys_ids(browser, server, shipped_english):
    from mlmcourse.data.english import plain_text

    tokenizer = shipped_english.tokenizer
    open_live_box(browser, server, "english")
    texts = english_held_out_texts() + AWKWARD_TEXTS
    page_ids = browser.execute_async_script(
        "var texts = arguments[0], done = arguments[arguments.length - 1];"
        "window.mlmLiveModels['english.json'].then(meta => "
        "done(texts.map(t => window.mlmLive.tokenize(meta, t))), e => done(String(e)));",
        texts,
    )
    assert isinstance(page_ids, list), page_ids
    for text, ids in zip(texts, page_ids, strict=True):
        assert ids == tokenizer.encode(plain_text(text)).ids[1:-1], text
    assert len(texts) > 1000 or not REQUIRED  # the held-out articles, not only the awkward ones


@pytest.mark.book
def test_a_page_opened_from_disk_says_how_to_serve_the_in_page_model(browser):
    from selenium.webdriver.common.by import By

    from mlmcourse.viz.in_page import FILE_MESSAGE

    pages = live_pages("fill-mask")
    if not pages:
        _unavailable("no built chapter page has an in-page box: run `make book` first")
    browser.get((BUILT / f"{pages[0]}.html").as_uri())
    box = browser.find_element(By.CSS_SELECTOR, ".mlm-live")
    assert box.get_attribute("data-state") == "unavailable"
    assert box.find_element(By.CSS_SELECTOR, ".mlm-live-status").text == FILE_MESSAGE
    assert not [e for e in errors(browser) if "/live/" in e or "/ort/" in e]
