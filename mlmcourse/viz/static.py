"""Views that react in a page without a kernel: every state drawn ahead by the same render code.

A published book has no Python behind it, so a widget there could only show its first state.
A :class:`View` is a render function (plain choices in, HTML out) and its :class:`Control`\\ s,
each with a short list of options. :meth:`View.to_html` calls the render function once for every
combination of options and writes one self-contained block: labelled native controls (a
``<select>``, a range slider, a checkbox or a button, all usable from the keyboard), the
precomputed states, and a few lines of script that show the state the controls point at. No
library, no network. :meth:`View.widget` wires the same render function to ipywidgets for a
notebook, so the book and the notebook cannot disagree.

States share most of their markup (the same chips, the same styles), so they are stored as
lists of indices into one table of distinct tags and texts: a few hundred states of a sentence
cost tens of kilobytes, not megabytes. :class:`Explorer` is what the chapters display: a live
widget in Jupyter or Colab, the precomputed view in the book.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import itertools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

__all__ = [
    "Control",
    "Explorer",
    "View",
    "model_controls",
    "named_models",
    "pack_states",
]

KINDS = ("menu", "slider", "toggle", "cycle")
# A state's HTML is cut into tags, empty elements (``<td ...></td>``, one piece) and texts.
_PIECES = re.compile(r"<(\w+)[^>]*></\1>|<[^>]+>|[^<]+|<")
MAX_STATES = 2000
MAX_BYTES = 900_000  # per view; a chapter page must stay under 2 MB


@dataclass(frozen=True)
class Control:
    """One control of a :class:`View`: the render function's keyword ``name``, the visible
    ``label``, the ``options`` as ``(shown text, value)`` pairs, how it is drawn (``kind``:
    ``menu``, ``slider``, ``toggle`` for two options, ``cycle`` for a button that steps through
    them, like "resample") and the index of the option shown first."""

    name: str
    label: str
    options: Sequence[tuple[str, Any]]
    kind: str = "menu"
    initial: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"control {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}"
            )
        if not self.options:
            raise ValueError(f"control {self.name!r} needs at least one option")
        if self.kind == "toggle" and len(self.options) != 2:
            raise ValueError(f"toggle {self.name!r} needs exactly two options (off, on)")
        if not 0 <= self.initial < len(self.options):
            raise ValueError(
                f"control {self.name!r}: initial must be in [0, {len(self.options)}), "
                f"got {self.initial}"
            )

    @classmethod
    def of(
        cls,
        name: str,
        label: str,
        values: Sequence[Any],
        *,
        kind: str = "menu",
        initial: Any = None,
    ) -> Control:
        """Options shown as their values' text; ``initial`` is a value (default: the first)."""
        values = list(values)
        index = 0 if initial is None else _index_of(values, initial, name)
        return cls(name, label, [(_shown(v), v) for v in values], kind, index)


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _index_of(values: Sequence[Any], value: Any, name: str) -> int:
    if value not in values:
        raise ValueError(f"control {name!r}: initial value {value!r} is not among {values}")
    return values.index(value)


def _key(indices: Sequence[int]) -> str:
    """The ``data-state`` attribute: the controls' option indices, joined by ``|``."""
    return "|".join(str(i) for i in indices)


def pack_states(states: Sequence[str]) -> str:
    """States in, one compact ASCII string out: distinct pieces once, each distinct state once
    as indices into them, ``order`` naming the state of each combination; gzip, then base64.
    The page's script unpacks it (the tests do the same in Python: ``tests/packed_states.py``)."""
    table: dict[str, int] = {}
    distinct: dict[tuple[int, ...], int] = {}
    order = []
    for markup in states:
        ids = tuple(table.setdefault(m.group(0), len(table)) for m in _PIECES.finditer(markup))
        order.append(distinct.setdefault(ids, len(distinct)))
    payload = {"pieces": list(table), "states": [list(ids) for ids in distinct], "order": order}
    raw = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.b64encode(gzip.compress(raw, mtime=0)).decode("ascii")


class View:
    """A render function and its controls, drawable live (ipywidgets) or static (all states)."""

    def __init__(
        self, render: Callable[..., str], controls: Sequence[Control], *, title: str
    ) -> None:
        names = [c.name for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must differ, got {names}")
        count = 1
        for control in controls:
            count *= len(control.options)
        if count > MAX_STATES:
            raise ValueError(
                f"{title!r} has {count} states (the product of its controls' option counts); "
                f"keep it under {MAX_STATES} by offering fewer options"
            )
        self.render, self.controls, self.title = render, list(controls), title
        self._cache: dict[tuple[int, ...], str] = {}

    def state(self, indices: Sequence[int]) -> str:
        """The HTML for one option index per control (computed once, then remembered)."""
        indices = tuple(indices)
        if indices not in self._cache:
            choice = {c.name: c.options[i][1] for c, i in zip(self.controls, indices, strict=True)}
            self._cache[indices] = self.render(**choice)
        return self._cache[indices]

    def states(self) -> list[str]:
        """Every state, the last control's options changing fastest (as the page indexes them)."""
        ranges = [range(len(c.options)) for c in self.controls]
        return [self.state(ix) for ix in itertools.product(*ranges)]

    def to_html(self) -> str:
        """The self-contained block for a page without a kernel (see the module doc)."""
        packed = pack_states(self.states())
        if len(packed) > MAX_BYTES:
            raise ValueError(
                f"{self.title!r}: its states take {len(packed):,} bytes packed, over "
                f"{MAX_BYTES:,}; offer fewer options or a smaller rendering"
            )
        labels = json.dumps([[text for text, _ in c.options] for c in self.controls])
        labels = labels.replace("</", "<\\/")  # cannot end the script element early
        uid = "mlmview-" + hashlib.sha1(packed.encode()).hexdigest()[:10]
        initial = [c.initial for c in self.controls]
        controls = "".join(_control_html(uid, k, c) for k, c in enumerate(self.controls))
        return (
            f'<div class="mlm-view" id="{uid}" role="group" '
            f'aria-label="{html.escape(self.title, quote=True)}" data-state="{_key(initial)}" '
            f'style="border:1px solid #ccc;border-radius:6px;padding:8px;margin:6px 0">'
            f'<div style="font-size:13px;margin-bottom:6px"><b>{html.escape(self.title)}</b></div>'
            f'<div class="mlm-view-controls" style="display:flex;flex-wrap:wrap;gap:6px 18px;'
            f'align-items:center;margin-bottom:8px;font-size:13px">{controls}</div>'
            f'<div class="mlm-view-out" aria-live="polite">{self.state(initial)}</div>'
            f'<script type="application/json" class="mlm-view-labels">'
            f"{labels}</script>"
            f'<script type="text/plain" class="mlm-view-data">{packed}</script>'
            f"<script>{_SCRIPT.replace('UID', uid)}</script></div>"
        )

    def widget(self) -> widgets.VBox:
        """The same render function behind ipywidgets, for a notebook with a kernel."""
        inputs = [_live_control(c) for c in self.controls]
        out = widgets.HTML(self.state([c.initial for c in self.controls]))

        def redraw(*_: Any) -> None:
            out.value = self.state([_live_index(w) for w in inputs])

        for control in inputs:
            if isinstance(control, widgets.Button):
                control.on_click(lambda button: (_step(button), redraw()))
            else:
                control.observe(redraw, names="value")
        return widgets.VBox(
            [widgets.HBox(inputs, layout=widgets.Layout(flex_flow="row wrap")), out]
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return Explorer([self.widget()], self)._repr_mimebundle_(**kwargs)


def _control_html(uid: str, k: int, control: Control) -> str:
    cid = f"{uid}-c{k}"
    label = html.escape(control.label)
    shown = html.escape(control.options[control.initial][0])
    if control.kind == "menu":
        options = "".join(
            f'<option value="{i}"{" selected" if i == control.initial else ""}>{html.escape(text)}</option>'
            for i, (text, _) in enumerate(control.options)
        )
        return f'<span><label for="{cid}">{label}</label> <select id="{cid}" data-control="{k}">{options}</select></span>'
    if control.kind == "slider":
        return (
            f'<span><label for="{cid}">{label}</label> <input type="range" id="{cid}" data-control="{k}" '
            f'min="0" max="{len(control.options) - 1}" step="1" value="{control.initial}" '
            f'aria-valuetext="{shown}"> <output id="{cid}-value" for="{cid}">{shown}</output></span>'
        )
    if control.kind == "toggle":
        checked = " checked" if control.initial == 1 else ""
        return f'<span><input type="checkbox" id="{cid}" data-control="{k}"{checked}> <label for="{cid}">{label}</label></span>'
    return (  # cycle: a button that steps to the next option
        f'<span><button type="button" id="{cid}" data-control="{k}" data-index="{control.initial}" '
        f'aria-describedby="{cid}-value">{label}</button> <output id="{cid}-value" for="{cid}">{shown}</output></span>'
    )


def _live_control(control: Control) -> widgets.Widget:
    style = {"description_width": "initial"}
    if control.kind == "toggle":
        return widgets.Checkbox(value=control.initial == 1, description=control.label, style=style)
    if control.kind == "cycle":
        button = widgets.Button(description=control.label, tooltip=control.label)
        button.index, button.size = control.initial, len(control.options)
        return button
    options = [(text, i) for i, (text, _) in enumerate(control.options)]
    kind = widgets.Dropdown if control.kind == "menu" else widgets.SelectionSlider
    return kind(options=options, value=control.initial, description=control.label, style=style)


def _live_index(control: widgets.Widget) -> int:
    if isinstance(control, widgets.Button):
        return control.index
    return int(control.value)


def _step(button: widgets.Button) -> None:
    button.index = (button.index + 1) % button.size


class Explorer(widgets.VBox):
    """A live widget in a notebook; the precomputed :class:`View` where there is no kernel.

    Displaying it offers both: Jupyter and Colab draw the widget, and the book (which ranks
    ``text/html`` first, see ``_config.yml``) draws the static view. ``children`` are the live
    widget's, so code that reaches into a widget keeps working.
    """

    def __init__(self, children: Sequence[widgets.Widget], static: View, **kwargs: Any) -> None:
        super().__init__(list(children), **kwargs)
        self.static = static

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.static.to_html()
        return bundle


# The page's script: read the controls, show the state they point at. Written once per view
# (each view is self-contained), a few hundred bytes.
_SCRIPT = """(function(){var r=document.getElementById("UID");if(!r||r.dataset.bound)return;r.dataset.bound="1";
var d=null,L=JSON.parse(r.querySelector("script.mlm-view-labels").textContent),
cs=r.querySelectorAll("[data-control]"),o=r.querySelector(".mlm-view-out");
function ix(c){return c.type==="checkbox"?(c.checked?1:0):parseInt(c.tagName==="BUTTON"?c.dataset.index:c.value,10);}
function show(){var n=0,k=[];Array.prototype.forEach.call(cs,function(c){var i=ix(c),t=L[c.dataset.control][i],
v=document.getElementById(c.id+"-value");n=n*L[c.dataset.control].length+i;k.push(i);
if(v)v.textContent=t;if(c.type==="range")c.setAttribute("aria-valuetext",t);});
if(!d)return;o.innerHTML=d.states[d.order[n]].map(function(i){return d.pieces[i];}).join("");
r.setAttribute("data-state",k.join("|"));}
Array.prototype.forEach.call(cs,function(c){if(c.tagName==="BUTTON"){c.addEventListener("click",function(){
c.dataset.index=(ix(c)+1)%L[c.dataset.control].length;show();});}
else{c.addEventListener("input",show);c.addEventListener("change",show);}});
var b=atob(r.querySelector("script.mlm-view-data").textContent),u=new Uint8Array(b.length);
for(var i=0;i<b.length;i++)u[i]=b.charCodeAt(i);
new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream("gzip"))).text()
.then(function(t){d=JSON.parse(t);r.setAttribute("data-ready","1");show();});})();"""


def named_models(models: Any, owner: str) -> dict[str, tuple[Any, Any]]:
    """``(model, tokenizer)`` or ``{name: (model, tokenizer)}`` as a dict (one pair: ``"model"``)."""
    named = dict(models) if isinstance(models, Mapping) else {"model": models}
    if not named:
        raise ValueError(f"{owner} needs at least one (model, tokenizer) pair")
    for name, pair in named.items():
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise TypeError(
                f"{owner}: models must be a (model, tokenizer) pair or a mapping name -> "
                f"(model, tokenizer); {name!r} is {type(pair).__name__}"
            )
    return {str(name): tuple(pair) for name, pair in named.items()}


def model_controls(named: Mapping[str, Any], *, label: str = "model") -> list[Any]:
    """The book's menu of models (its value: the render function's ``model``) when there are
    several to compare; none for one."""
    return [Control.of("model", label, list(named))] if len(named) > 1 else []
