"""Every figure, as a Linux reader's browser draws it: Debian's Chromium opens each SVG of
``book/figures`` (a figure shown as ``<img>`` cannot be measured from the page) twice, once
with DejaVu Sans and once with Liberation Sans as the sans-serif and system font, and reads each
text element's box:

- every box lies inside the viewBox;
- no two labels overlap;
- no font is smaller than 10 in the figure's own units;
- the text's contrast with the fill behind it is at least 4.5:1 (WCAG AA).

The two fonts are those of a reader without Apple's or Microsoft's (``.ci/run`` installs
fonts-dejavu-core and fonts-liberation2); a fontconfig file given to Chromium puts one of them
first for ``sans-serif`` and ``system-ui``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.book.test_browser import CHROMIUM, DRIVER, _unavailable

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from make_diagrams import MIN_TEXT, overlap  # noqa: E402 - the layout's own rules

FIGURES = sorted((ROOT / "book" / "figures").glob("*.svg"))
FONTS = ("DejaVu Sans", "Liberation Sans")
TOLERANCE = 0.5  # figure units: anti-aliasing and rounding of a box's edge
MIN_CONTRAST = 4.5

pytestmark = pytest.mark.book

# Each <text>'s box in the root's user units, its font size and colour, and the fill of the
# last shape drawn under its centre (white, the canvas, when there is none).
MEASURE = """
const svg = document.documentElement;
const view = svg.viewBox.baseVal;
const toUser = svg.getScreenCTM().inverse();
const shapes = [...svg.querySelectorAll('rect, circle, ellipse, polygon, path')]
  .filter(s => !s.closest('defs, marker'));
function userBox(el) {
  const r = el.getBoundingClientRect();
  const a = new DOMPoint(r.left, r.top).matrixTransform(toUser);
  const b = new DOMPoint(r.right, r.bottom).matrixTransform(toUser);
  return [a.x, a.y, b.x, b.y];
}
function behind(text, cx, cy) {
  let fill = 'rgb(255, 255, 255)';
  for (const s of shapes) {
    if (s.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_PRECEDING) continue;
    const [x0, y0, x1, y1] = userBox(s);
    const f = getComputedStyle(s).fill;
    if (cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1 && f && f !== 'none') fill = f;
  }
  return fill;
}
return {
  view: [view.x, view.y, view.width, view.height],
  texts: [...svg.querySelectorAll('text')].map((t, i) => {
    const box = userBox(t);
    const style = getComputedStyle(t);
    return {i, text: t.textContent, box, size: parseFloat(style.fontSize),
            color: style.fill, background: behind(t, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2),
            family: style.fontFamily};
  }),
};
"""


def fontconfig(folder: Path, family: str) -> Path:
    """A fontconfig file that puts ``family`` first for the generic and system families."""
    rules = "".join(
        f'<match target="pattern"><test name="family"><string>{generic}</string></test>'
        f'<edit name="family" mode="prepend" binding="strong"><string>{family}</string></edit>'
        "</match>"
        for generic in ("sans-serif", "sans", "system-ui", "Helvetica", "Arial")
    )
    path = folder / f"{family.replace(' ', '-')}.conf"
    path.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        '<include ignore_missing="yes">/etc/fonts/fonts.conf</include>'
        f"{rules}</fontconfig>"
    )
    return path


@pytest.fixture(scope="module", params=FONTS)
def figure_browser(request, tmp_path_factory) -> Iterator[tuple[str, object]]:
    """Headless Chromium whose sans-serif is one of :data:`FONTS`."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed: pip install selenium")
    if not (CHROMIUM and DRIVER):
        _unavailable("Chromium is absent (apt-get install chromium chromium-driver)")
    if shutil.which("fc-list") is None:
        _unavailable("fontconfig's fc-list is absent (apt-get install fontconfig)")
    family = request.param
    import subprocess

    listed = subprocess.run(["fc-list", ":family=" + family], capture_output=True, text=True)
    if not listed.stdout.strip():
        _unavailable(f"{family} is not installed (apt-get install fonts-dejavu-core "
                     "fonts-liberation2)")  # fmt: skip
    config = fontconfig(tmp_path_factory.mktemp("fonts"), family)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1600,1200",
                     "--force-device-scale-factor=1"):  # fmt: skip
        options.add_argument(argument)
    service = Service(executable_path=DRIVER, env={**os.environ, "FONTCONFIG_FILE": str(config)})
    driver = webdriver.Chrome(service=service, options=options)
    yield family, driver
    driver.quit()


def luminance(color: str) -> float:
    """WCAG relative luminance of a CSS ``rgb(...)`` colour."""
    channels = [float(c) / 255 for c in color[color.index("(") + 1 : -1].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def problems(measured: dict) -> list[str]:
    """What is wrong with one figure's text, as measured in the browser."""
    x, y, w, h = measured["view"]
    texts, found = measured["texts"], []
    for t in texts:
        x0, y0, x1, y1 = t["box"]
        if (
            x0 < x - TOLERANCE
            or y0 < y - TOLERANCE
            or x1 > x + w + TOLERANCE
            or (y1 > y + h + TOLERANCE)
        ):
            found.append(f"{t['text']!r} leaves the viewBox: box {[round(v) for v in t['box']]}, "
                         f"viewBox {measured['view']}")  # fmt: skip
        if t["size"] < MIN_TEXT:
            found.append(f"{t['text']!r} is {t['size']:g} units high, under {MIN_TEXT}")
        ratio = contrast(t["color"], t["background"])
        if ratio < MIN_CONTRAST:
            found.append(f"{t['text']!r}: contrast {ratio:.2f}:1 ({t['color']} on "
                         f"{t['background']}), under {MIN_CONTRAST}:1")  # fmt: skip
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            shared = overlap(a["box"], b["box"])
            if shared > 1.0:  # more than a unit square: a touch of the anti-aliased edge is not
                found.append(f"{a['text']!r} and {b['text']!r} overlap ({shared:.0f} units²)")
    return found


@pytest.mark.parametrize("figure", FIGURES, ids=lambda p: p.stem)
def test_every_figure_fits_its_text_with_either_linux_font(figure_browser, figure):
    family, driver = figure_browser
    driver.get(figure.as_uri())
    measured = driver.execute_script(MEASURE)
    assert measured["texts"], f"{figure.name} has no text"
    found = problems(measured)
    assert not found, f"{figure.name} with {family}: " + "; ".join(found)


def test_the_two_fonts_are_the_ones_drawn(figure_browser):
    """The fontconfig file works: the same label is as wide as the font it names makes it."""
    family, driver = figure_browser
    driver.get((ROOT / "book" / "figures" / "mlm_step.svg").as_uri())
    width = driver.execute_script(
        "const t = document.createElementNS('http://www.w3.org/2000/svg', 'text');"
        "t.setAttribute('font-family', 'system-ui, sans-serif'); t.setAttribute('font-size', 100);"
        "t.textContent = 'mmmmmmmmmm'; document.documentElement.appendChild(t);"
        "return t.getComputedTextLength();"
    )
    expected = {"DejaVu Sans": 974, "Liberation Sans": 833}[family]  # the fonts' advance widths
    assert abs(width - expected) < 15, (family, width)


def test_the_check_finds_overlap_overflow_small_text_and_low_contrast():
    view = [0, 0, 100, 50]
    text = {"size": 12, "color": "rgb(17, 24, 39)", "background": "rgb(255, 255, 255)"}
    fine = {"view": view, "texts": [{**text, "text": "a", "box": [10, 10, 30, 20]},
                                    {**text, "text": "b", "box": [40, 10, 60, 20]}]}  # fmt: skip
    assert problems(fine) == []
    bad = {"view": view, "texts": [
        {**text, "text": "wide", "box": [-5, 10, 30, 20]},
        {**text, "text": "over", "box": [20, 12, 50, 22]},
        {**text, "text": "tiny", "size": 8, "box": [60, 30, 70, 35]},
        {**text, "text": "pale", "color": "rgb(200, 200, 200)", "box": [75, 30, 90, 35]},
    ]}  # fmt: skip
    found = " | ".join(problems(bad))
    for part in ("'wide' leaves the viewBox", "'tiny' is 8 units high", "'pale': contrast",
                 "'wide' and 'over' overlap"):  # fmt: skip
        assert part in found, found
