"""Views for a page without a kernel: controls, packed states, the live twin, the explorer."""

from __future__ import annotations

import re

import ipywidgets as widgets
import pytest

from mlmcourse.viz import static
from mlmcourse.viz.static import Control, Explorer, View, pack_states
from tests.packed_states import unpack_states


def render(word: str, size: int, bold: bool = False, draw: int = 0) -> str:
    return f"<p data-size='{size}'>{'<b>' if bold else ''}{word} {draw}{'</b>' if bold else ''}</p>"


def toy_view() -> View:
    return View(
        render,
        [
            Control.of("word", "word", ["cat", "dog"]),
            Control.of("size", "size", [1, 2, 3], kind="slider", initial=3),
            Control("bold", "bold", [("off", False), ("on", True)], "toggle"),
            Control("draw", "again", [("first", 0), ("second", 1)], "cycle"),
        ],
        title="toy",
    )


def test_controls_refuse_what_they_cannot_draw():
    with pytest.raises(ValueError, match="kind must be one of"):
        Control("a", "a", [("x", 1)], "knob")
    with pytest.raises(ValueError, match="at least one option"):
        Control("a", "a", [])
    with pytest.raises(ValueError, match="exactly two options"):
        Control("a", "a", [("x", 1), ("y", 2), ("z", 3)], "toggle")
    with pytest.raises(ValueError, match=r"initial must be in \[0, 1\), got 1"):
        Control("a", "a", [("x", 1)], initial=1)
    with pytest.raises(ValueError, match="initial value 4 is not among"):
        Control.of("a", "a", [1, 2], initial=4)
    assert Control.of("rate", "rate", [0.1, 0.25]).options == [("0.1", 0.1), ("0.25", 0.25)]


def test_pack_and_unpack_give_back_every_state_exactly():
    states = [
        "<div style='a'><b>x</b></div>",
        "<td style='c'></td><td style='c'></td>",
        "a < b and </script> in text, ünïcödé 🙂",
        "",
        "<div style='a'><b>x</b></div>",  # a repeat is stored once
    ]
    packed = pack_states(states)
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", packed)  # plain base64: safe inside a script tag
    assert unpack_states(packed) == states
    many = pack_states(["<div style='long style here'>same</div>"] * 500)
    assert len(many) < 400  # shared pieces and repeated states cost almost nothing


def test_states_follow_the_controls_last_fastest():
    view = toy_view()
    states = view.states()
    assert len(states) == 2 * 3 * 2 * 2
    assert states[0] == render("cat", 1, False, 0)
    assert states[1] == render("cat", 1, False, 1)  # the last control changes fastest
    assert states[-1] == render("dog", 3, True, 1)
    assert view.state([1, 2, 1, 1]) == states[-1]


def test_the_page_block_has_labels_the_first_state_and_the_data():
    view = toy_view()
    page = view.to_html()
    uid = re.search(r'id="(mlmview-[0-9a-f]{10})"', page).group(1)
    assert page == toy_view().to_html()  # deterministic: the same book builds the same page
    for k in range(4):
        assert f'id="{uid}-c{k}"' in page
    assert f'<label for="{uid}-c0">word</label>' in page
    assert f'<label for="{uid}-c1">size</label>' in page and 'aria-valuetext="3"' in page
    assert f'<label for="{uid}-c2">bold</label>' in page
    assert f'<button type="button" id="{uid}-c3"' in page and ">again</button>" in page
    assert f'<div class="mlm-view-out" aria-live="polite">{render("cat", 3)}</div>' in page
    assert 'data-state="0|2|0|0"' in page and 'role="group" aria-label="toy"' in page
    packed = re.search(r'class="mlm-view-data">([^<]*)</script>', page).group(1)
    assert unpack_states(packed) == view.states()
    assert "http" not in page  # self-contained: nothing fetched


def test_too_many_states_or_bytes_are_refused_with_a_way_out(monkeypatch):
    big = Control.of("n", "n", list(range(50)))
    with pytest.raises(ValueError, match="2500 states.*fewer options"):
        View(lambda n, m: "", [big, Control.of("m", "m", list(range(50)))], title="big")
    with pytest.raises(ValueError, match="control names must differ"):
        View(lambda n: "", [big, big], title="twice")
    monkeypatch.setattr(static, "MAX_BYTES", 10)
    with pytest.raises(ValueError, match="bytes packed, over 10"):
        toy_view().to_html()


def test_the_live_widget_draws_the_same_states():
    view = toy_view()
    box = view.widget()
    (word, size, bold, again), out = box.children[0].children, box.children[1]
    assert isinstance(word, widgets.Dropdown) and isinstance(size, widgets.SelectionSlider)
    assert isinstance(bold, widgets.Checkbox) and isinstance(again, widgets.Button)
    assert out.value == view.state([0, 2, 0, 0])
    word.value = 1
    size.value = 0
    bold.value = True
    assert out.value == view.state([1, 0, 1, 0])
    again.click()
    assert out.value == view.state([1, 0, 1, 1])
    again.click()  # steps round to the first option
    assert out.value == view.state([1, 0, 1, 0])


def test_an_explorer_offers_the_widget_and_the_page_view():
    view = toy_view()
    out = widgets.HTML("live")
    explorer = Explorer([out], view)
    assert explorer.children == (out,)
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"] == view.to_html()
    assert "text/html" in view._repr_mimebundle_()  # a bare view displays both ways too


def test_a_table_escapes_its_cells_and_refuses_a_ragged_row():
    from mlmcourse.viz.html import table_html

    markup = table_html(["text", "n"], [["a <b> & c", 1], ["[MASK]", 2.5]])
    assert markup == (
        "<table><tr><th>text</th><th>n</th></tr><tr><td>a &lt;b&gt; &amp; c</td><td>1</td></tr>"
        "<tr><td>[MASK]</td><td>2.5</td></tr></table>"
    )
    with pytest.raises(
        ValueError, match=r"every row needs 2 cells \(one per column\), got \[1, 2\]"
    ):
        table_html(["text", "n"], [["a"], ["b", 1]])


def test_show_table_displays_the_table_html(monkeypatch):
    import IPython.display

    from mlmcourse.viz.html import show_table, table_html

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    show_table(["seed", "F1"], [[0, "0.41"], [1, "0.45"]])
    (html,) = shown
    assert html.data == table_html(["seed", "F1"], [[0, "0.41"], [1, "0.45"]])
