"""Turn a chapter's MyST markdown into plain notebook markdown (CommonMark, as Colab shows it).

The book is built by Jupyter Book, which understands MyST: directives such as
``literalinclude`` and ``admonition``, roles such as ``{doc}``, and links between chapters'
``.md`` files. Colab, JupyterLab and VS Code render notebook markdown as CommonMark, where
all of these show up as raw text. :func:`to_commonmark` rewrites one markdown cell:

- ``literalinclude``: the listing itself, read exactly as Sphinx reads it, in a fenced Python
  block, with the file and the object named (and linked) above it;
- ``figure``: the picture embedded in the cell (an ``<img>`` with a ``data:`` URI and the
  figure's ``:alt:`` text), its caption in italics below: a learner's notebook has no
  ``figures/`` folder beside it;
- admonitions: a block quote with the title in bold;
- ``{doc}`` / ``{ref}`` / ``{math}`` roles and links to other chapters: links to the published
  book's pages;
- ``(label)=`` targets: dropped.

Anything else in MyST syntax is an error that names the chapter and line, so a new directive
in a chapter cannot reach a learner's notebook unconverted.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from pathlib import Path

FENCE_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[A-Za-z0-9_-]+)\}\s*(?P<arg>.*)$")
PLAIN_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})")
LABEL = re.compile(r"^\([A-Za-z0-9_.:-]+\)=\s*$")
OPTION = re.compile(r"^:(?P<key>[A-Za-z0-9_-]+):\s*(?P<value>.*)$")
ROLE = re.compile(r"\{(?P<name>[A-Za-z0-9_-]+)\}$")
CHAPTER_LINK = re.compile(
    r"\]\((?P<target>(?!https?:|mailto:|#)[^)\s]+?\.md)(?P<anchor>#[^)\s]*)?\)"
)
ADMONITIONS = {
    "admonition", "note", "tip", "hint", "important", "warning", "caution",
    "attention", "danger", "error", "seealso",
}  # fmt: skip

# What no notebook markdown may hold after conversion (the tests scan every generated cell).
RAW_MYST = re.compile(r"^\s*(`{3,}|:{3,})\{|\{[A-Za-z0-9_-]+\}`|^\([A-Za-z0-9_.:-]+\)=\s*$", re.M)


class MystConversionError(ValueError):
    """A chapter uses MyST syntax that has no notebook rendering yet."""


@dataclass(frozen=True)
class Context:
    """Where a markdown cell comes from and where its links should point."""

    chapter: Path  # the chapter's .md file; included paths are relative to its folder
    repo_root: Path  # paths shown above listings are relative to this
    book_url: str  # the published book, e.g. https://mlmcourse.github.io/mlmcourse/
    source_url: str  # where listings link to, e.g. https://github.com/o/r/blob/v0.1.0/

    def page_url(self, target: str, anchor: str = "") -> str:
        """The published page of a chapter path such as ``masking.md`` (relative to this one)."""
        page = (self.chapter.parent / target).resolve().relative_to(self.repo_root.resolve())
        return f"{self.book_url.rstrip('/')}/{page.with_suffix('.html').as_posix()}{anchor}"

    def where(self, line: int) -> str:
        return f"{self.chapter.name}, markdown line {line}"


def to_commonmark(text: str, context: Context) -> str:
    """One markdown cell's MyST text as CommonMark that a notebook shows as the book does."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        plain = PLAIN_FENCE.match(line)
        directive = FENCE_OPEN.match(line)
        if directive:
            end = _closing_fence(lines, i, directive["fence"], context)
            out.extend(_directive(directive, lines[i + 1 : end], context, i + 1))
            i = end + 1
        elif plain:  # an ordinary code block: copied as it is, roles inside are code
            end = _closing_fence(lines, i, plain["fence"], context)
            out.extend(lines[i : end + 1])
            i = end + 1
        elif LABEL.match(line):
            i += 1
        else:
            out.append(_inline(line, context, i + 1))
            i += 1
    return "\n".join(out)


def _closing_fence(lines: list[str], start: int, fence: str, context: Context) -> int:
    closing = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for j in range(start + 1, len(lines)):
        if closing.match(lines[j]):
            return j
    raise MystConversionError(f"{context.where(start + 1)}: the fence {fence} is never closed")


def _split_options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    k = 0
    while k < len(body) and (match := OPTION.match(body[k])):
        options[match["key"]] = match["value"].strip()
        k += 1
    if k < len(body) and not body[k].strip():
        k += 1
    return options, body[k:]


def _directive(match: re.Match, body: list[str], context: Context, line: int) -> list[str]:
    name, arg = match["name"], match["arg"].strip()
    options, content = _split_options(body)
    if name == "literalinclude":
        return _literalinclude(arg, options, context, line)
    if name == "figure":
        return _figure(arg, options, content, context, line)
    if name in ADMONITIONS:
        title = arg if name == "admonition" else name.capitalize() + (f": {arg}" if arg else "")
        inner = to_commonmark("\n".join(content), context).split("\n")
        return [f"> **{title}**", ">"] + [f"> {x}".rstrip() for x in inner]
    if name in {"code-block", "code", "sourcecode"}:
        return [f"```{arg}", *content, "```"]
    if name == "math":
        return ["$$", *content, "$$"]
    raise MystConversionError(
        f"{context.where(line)}: the directive {{{name}}} has no notebook rendering; add one to "
        "scripts/myst_markdown.py or use plain Markdown"
    )


def _figure(
    arg: str, options: dict[str, str], content: list[str], context: Context, line: int
) -> list[str]:
    """An embedded image: ``data:`` URIs render in Colab, JupyterLab and VS Code alike."""
    path = context.chapter.parent / arg
    if not path.is_file():
        raise MystConversionError(f"{context.where(line)}: the figure {arg} does not exist")
    alt = options.get("alt", "").strip()
    if not alt:
        raise MystConversionError(f"{context.where(line)}: the figure {arg} has no :alt: text")
    kind = {".svg": "image/svg+xml", ".png": "image/png"}.get(path.suffix)
    if kind is None:
        raise MystConversionError(f"{context.where(line)}: {arg} is not an .svg or .png figure")
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    image = f'<img src="data:{kind};base64,{data}" alt="{html.escape(alt)}" style="max-width:100%">'
    caption = to_commonmark("\n".join(content), context).strip()
    return [image, "", f"*{caption}*"] if caption else [image]


def _literalinclude(arg: str, options: dict[str, str], context: Context, line: int) -> list[str]:
    from sphinx.config import Config
    from sphinx.directives.code import LiteralIncludeReader

    path = (context.chapter.parent / arg).resolve()
    if not path.is_file():
        raise MystConversionError(f"{context.where(line)}: literalinclude of a missing file {arg}")
    unknown = set(options) - {
        "pyobject",
        "lines",
        "start-after",
        "end-before",
        "dedent",
        "language",
    }
    if unknown:
        raise MystConversionError(
            f"{context.where(line)}: literalinclude options {sorted(unknown)}"
        )
    reader_options: dict[str, object] = dict(options)
    if "dedent" in options:
        reader_options["dedent"] = int(options["dedent"] or 0)
    config = Config({}, {})
    try:
        code, _ = LiteralIncludeReader(str(path), reader_options, config).read()
    except ValueError as error:  # e.g. an object that is not in the file any more
        raise MystConversionError(f"{context.where(line)}: {error}") from error
    relative = path.relative_to(context.repo_root.resolve()).as_posix()
    what = f", `{options['pyobject']}`" if "pyobject" in options else ""
    language = options.get("language") or ("python" if path.suffix == ".py" else "")
    return [
        f"From [`{relative}`]({context.source_url}{relative}){what}:",
        "",
        f"```{language}",
        *code.rstrip("\n").split("\n"),
        "```",
    ]


def _inline(line: str, context: Context, number: int) -> str:
    """Rewrite roles and chapter links outside code spans; code spans are copied verbatim."""
    pieces: list[str] = []
    i = 0
    while i < len(line):
        tick = line.find("`", i)
        if tick < 0:
            pieces.append(_links(line[i:], context))
            break
        run = len(line[tick:]) - len(line[tick:].lstrip("`"))
        close = line.find("`" * run, tick + run)
        if close < 0:  # an unmatched backtick is literal text
            pieces.append(_links(line[i:], context))
            break
        before = line[i:tick]
        span = line[tick + run : close]
        role = ROLE.search(before)
        if role:
            pieces.append(_links(before[: role.start()], context))
            pieces.append(_role(role["name"], span, context, number))
        else:
            pieces.append(_links(before, context))
            pieces.append(line[tick : close + run])
        i = close + run
    return "".join(pieces)


def _links(text: str, context: Context) -> str:
    return CHAPTER_LINK.sub(
        lambda m: f"]({context.page_url(m['target'], m['anchor'] or '')})", text
    )


def _role(name: str, content: str, context: Context, line: int) -> str:
    explicit = re.fullmatch(r"(?P<text>.+?)\s*<(?P<target>[^>]+)>", content, re.S)
    text, target = (explicit["text"], explicit["target"]) if explicit else (None, content)
    if name == "doc":
        page = target if target.endswith(".md") else f"{target}.md"
        return f"[{text or Path(target).stem}]({context.page_url(page)})"
    if name == "math":
        return f"${content}$"
    if name in {"ref", "numref", "term"} and text:
        return text
    raise MystConversionError(
        f"{context.where(line)}: the role {{{name}}}`{content}` has no notebook rendering; use a "
        "Markdown link, or add one to scripts/myst_markdown.py"
    )
