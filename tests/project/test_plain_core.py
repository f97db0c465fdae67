"""The shape of the code the book teaches: every listing one idea in at most 30 lines, no checks
or device read-backs inside a ``forward``, and chapter 3's encoder with nothing of a later
chapter in it. Later work keeps these because these tests fail, naming the place."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_LISTING_LINES = 30
ENCODER_MODULE = ROOT / "mlmcourse" / "model" / "bert.py"
LATER_CHAPTERS = (
    "rotary", "rope", "local_attention", "window", "unpad", "packed", "document_ids",
    "cu_seqlens", "compile",
)  # fmt: skip
READ_BACKS = {"item", "tolist", "numpy", "cpu"}  # methods that wait for the device
CONVERSIONS = {"int", "float", "bool"}  # on a tensor, these wait for the device too


# --- listings ---------------------------------------------------------------------------------

LITERALINCLUDE = re.compile(r"```\{literalinclude\}\s+(\S+)\s*\n((?::[^\n]*\n)*)```")


def listings(markdown: str, folder: Path) -> list[tuple[int, str, int]]:
    """``(line, what, lines)`` for each ``:pyobject:`` literalinclude of a chapter: the whole
    object, decorators included, however much of it ``start-after``, ``end-before`` or ``lines``
    show (a window into a long function is still a long function to read)."""
    from sphinx.config import Config
    from sphinx.directives.code import LiteralIncludeReader

    found = []
    for match in LITERALINCLUDE.finditer(markdown):
        options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", match[2], re.M))
        if "pyobject" not in options:
            continue
        path = (folder / match[1]).resolve()
        whole = {"pyobject": options["pyobject"]}
        code, _ = LiteralIncludeReader(str(path), whole, Config({}, {})).read()
        line = markdown.count("\n", 0, match.start()) + 1
        found.append((line, options["pyobject"], len(code.rstrip("\n").split("\n"))))
    return found


def book_listings() -> list[tuple[str, int, str, int]]:
    return [
        (md.name, line, what, n)
        for md in sorted((ROOT / "book").glob("*.md"))
        for line, what, n in listings(md.read_text(encoding="utf-8"), md.parent)
    ]


def test_every_listing_of_the_book_is_at_most_30_lines():
    shown = book_listings()
    assert len(shown) > 50  # the chapters' listings were found
    long = [
        f"{md}:{line} {what}: {n} lines" for md, line, what, n in shown if n > MAX_LISTING_LINES
    ]
    assert not long, (
        "listings over 30 lines (show a smaller function, or the lines that matter):\n"
        + "\n".join(long)
    )


def test_a_window_into_a_long_object_counts_the_whole_object(tmp_path):
    source = tmp_path / "m.py"
    body = "".join(f"    x{i} = {i}\n" for i in range(40))
    source.write_text(f"def long():\n{body}    return x0\n\n\ndef short():\n    return 1\n")
    chapter = (
        "```{literalinclude} m.py\n:pyobject: long\n```\n\ntext\n\n"
        "```{literalinclude} m.py\n:pyobject: long\n:start-after: x9 = 9\n:end-before: x30\n"
        ":dedent: 4\n```\n\n```{literalinclude} m.py\n:pyobject: short\n```\n"
    )
    assert listings(chapter, tmp_path) == [(1, "long", 42), (7, "long", 42), (14, "short", 2)]


# --- forward ----------------------------------------------------------------------------------


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def forward_problems(source: str, where: str) -> list[str]:
    """What a ``forward`` of ``source`` does beyond nanoGPT's and ``modeling_bert.py``'s: a
    ``raise``, more than one ``check_*`` call, or a value read back from the device."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.FunctionDef) and node.name == "forward"):
            continue
        at = f"{where}:{node.lineno}"
        inner = list(ast.walk(node))
        if any(isinstance(n, ast.Raise) for n in inner):
            problems.append(f"{at}: forward raises (check where the value enters instead)")
        calls = [n for n in inner if isinstance(n, ast.Call)]
        checks = [_name(c) for c in calls if _name(c).startswith("check")]
        if len(checks) > 1:
            problems.append(f"{at}: forward calls {len(checks)} checks ({', '.join(checks)})")
        for call in calls:
            method = isinstance(call.func, ast.Attribute) and call.func.attr in READ_BACKS
            conversion = isinstance(call.func, ast.Name) and call.func.id in CONVERSIONS
            if method or (conversion and not _on_shape(call)):
                problems.append(f"{at}: forward reads a value back ({_name(call)}())")
    return problems


def _on_shape(call: ast.Call) -> bool:
    """``int(x.shape[1])``, ``int(n)`` of a size: sizes live on the host, nothing waits."""
    text = ast.unparse(call)
    return any(word in text for word in (".shape", ".size(", "len(", ".numel("))


def test_no_forward_checks_or_reads_back():
    problems = []
    for path in sorted((ROOT / "mlmcourse").rglob("*.py")):
        problems += forward_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "body, problem",
    [
        ("if x.min() < 0:\n            raise ValueError('bad')", "raises"),
        ("check_a(x)\n        check_b(x)", "2 checks"),
        ("if bool((x < 0).any()):\n            pass", "reads a value back (bool())"),
        ("n = x.sum().item()", "reads a value back (item())"),
    ],
)
def test_the_forward_rule_finds_each_kind(body, problem):
    source = f"class M:\n    def forward(self, x):\n        {body}\n        return x\n"
    (found,) = forward_problems(source, "m.py")
    assert found.startswith("m.py:2: ") and problem in found


def test_the_forward_rule_allows_one_shape_check():
    source = (
        "class M:\n    def forward(self, x):\n        check_input_shape(self.config, x)\n"
        "        b, t = int(x.shape[0]), len(x)\n        return x\n"
    )
    assert forward_problems(source, "m.py") == []


# --- chapter 3's encoder ----------------------------------------------------------------------


def test_the_encoder_module_has_nothing_of_a_later_chapter():
    text = ENCODER_MODULE.read_text(encoding="utf-8").lower()
    found = [word for word in LATER_CHAPTERS if word in text]
    assert not found, f"{ENCODER_MODULE.name} mentions {found}: those belong to later chapters"


def test_the_encoder_chapter_shows_that_module():
    shown = {m[1] for m in LITERALINCLUDE.finditer((ROOT / "book" / "encoder.md").read_text())}
    assert "../mlmcourse/model/bert.py" in shown


def test_reads_back_is_gone():
    hits = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "mlmcourse").rglob("*.py")
        if "reads_back" in p.read_text(encoding="utf-8")
    ]
    assert hits == []
