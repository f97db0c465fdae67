"""The classroom assignments: one notebook per chapter, its exercises only, graded in seconds.

``scripts/make_notebooks.py`` writes each chapter's ``## Exercises`` section as an assignment:
its set-up cell (``exercise-setup``) loads what the exercises use from the package, the graded
cells reload the checker and carry hidden tests (the chapter's ``hidden-tests`` cells), and an
experiment that needs a training run (``manually-graded``) is graded by hand.

The fast tests read the generated notebooks. The slow ones execute every assignment as a
learner and a teacher get it, and let nbgrader generate an assignment and autograde a class.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import make_notebooks as mn  # noqa: E402

CHAPTERS = mn.chapter_sources()
IDS = [p.stem for p in CHAPTERS]
# the heaviest assignment (the only one with a manually graded experiment)
CLASS_CHAPTER = "ner_world"


@cache
def editions(stem: str) -> dict:
    return mn.editions(ROOT / "book" / f"{stem}.md", mn.read_release())


@cache
def chapter(stem: str) -> nbformat.NotebookNode:
    """The whole chapter as a notebook (install cell first), before any edition is made."""
    return mn.base_notebook(ROOT / "book" / f"{stem}.md", mn.read_release())


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def grade_cells(nb) -> list:
    """The autograded cells (a manually graded answer is a solution cell that is graded too)."""
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
            and not c.metadata["nbgrader"]["solution"]]  # fmt: skip


def section_text(stem: str) -> str:
    """The chapter's exercise section as written in its MyST source."""
    text = (ROOT / "book" / f"{stem}.md").read_text(encoding="utf-8")
    setup = text.index(":tags: [exercise-setup]")
    start = text.rindex("\n## ", 0, setup) + 1
    end = text.find("\n## ", setup)
    return text[start : end if end >= 0 else len(text)]


def last_statement(source: str) -> str:
    return ast.unparse(ast.parse(source).body[-1])


# --- The assignment: the exercise section, after its set-up cell ------------------------------


@pytest.mark.parametrize("stem", IDS)
def test_the_assignment_is_the_exercise_section_after_its_setup_cell(stem):
    nb, base = editions(stem)["instructor"], chapter(stem)
    assert nb.cells[0].source == base.cells[0].source  # the install cell
    title = mn.chapter_title(base)
    url = f"{mn.read_release().book_url.rstrip('/')}/book/{stem}.html"
    assert (
        nb.cells[1].source.startswith(f"# Exercises: {title}\n")
        and f"]({url})" in nb.cells[1].source
    )
    heading = nb.cells[2].source.split("\n")[0]
    assert heading == ("## How the exercises work" if stem == "intro" else "## Exercises")
    setup = code_cells(nb)[1]
    assert mn.SETUP_TAG in setup.metadata["tags"] and setup.metadata["nbgrader"]["locked"]
    assert [c for c in code_cells(nb) if mn.is_setup(c)] == [setup]
    # every other cell is one of the section's: no cell from elsewhere in the chapter
    section = section_text(stem)
    ours = [c for c in code_cells(base) if c.source in section and not mn.is_hidden_tests(c)]
    theirs = code_cells(nb)[1:]
    assert len(ours) == len(theirs) and len(ours) >= 3
    for mine, cell in zip(ours, theirs, strict=True):
        if mn.is_manual(mine):  # graded by hand: the check stays, for the learner
            assert f"check({mn.graded_function(mn.graded_call(mine))}, " in cell.source
        elif mn.graded_call(mine) is not None:  # rewritten: the checker reloaded, hidden tests
            assert last_statement(mine.source).split(",")[0] in cell.source
        else:
            assert cell.source == mine.source
    for cell in nb.cells[3:]:
        if cell.cell_type == "markdown":
            assert not re.search(r"^## ", cell.source, re.M), cell.source[:80]
    assert nb.cells[-1].cell_type == "code" or "## " not in nb.cells[-1].source


@pytest.mark.parametrize("stem", IDS)
def test_the_assignments_are_valid_notebooks_with_one_grade_id_per_cell(stem):
    for edition in ("instructor", "student"):
        nb = editions(stem)[edition]
        nbformat.validate(nb)
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
        assert len(ids) == len(set(ids)) and all(i.startswith(f"{stem}-") for i in ids)
        assert len({c["id"] for c in nb.cells}) == len(nb.cells)


@pytest.mark.parametrize("stem", IDS)
def test_the_student_assignment_is_what_nbgraders_preprocessors_make(stem):
    """The fast twin of the slow ``generate_assignment`` test: nbgrader's own clearing steps."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    nb = nbformat.from_dict(json.loads(json.dumps(editions(stem)["instructor"])))
    nb, _ = ClearSolutions().preprocess(nb, {})
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    assert [c.source for c in nb.cells] == [c.source for c in editions(stem)["student"].cells]


def _cells(*sources: str | tuple[str, list[str]]) -> list:
    """Notebook cells: a string is markdown, a (code, tags) pair is code."""
    return [
        nbformat.v4.new_markdown_cell(x) if isinstance(x, str)
        else nbformat.v4.new_code_cell(x[0], metadata={"tags": x[1]})
        for x in sources
    ]  # fmt: skip


def test_the_exercise_section_runs_from_its_heading_to_the_next():
    nb = nbformat.v4.new_notebook(cells=_cells(
        ("x = 1", []), "Earlier text.\n\n## Exercises\n\nStart here.", ("import y", [mn.SETUP_TAG]),
        "### 1. First", ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", []),
        "Last words.\n\n## Summary\n\nDone.", ("z = 2", []),
    ))  # fmt: skip
    section = mn.exercise_section(nb)
    assert [c.source for c in section] == [
        "## Exercises\n\nStart here.",
        "import y",
        "### 1. First",
        nb.cells[4].source,
        "Last words.",
    ]
    nb.cells[2].metadata["tags"] = []
    with pytest.raises(ValueError, match="0 cells tagged exercise-setup"):
        mn.exercise_section(nb)


def test_hidden_tests_fold_into_the_graded_cell_of_their_function():
    cells = _cells(
        ("import y", [mn.SETUP_TAG]),
        ("F_CASES = []\n\ndef f():\n    return 0", []),
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", []),
        ("grade(f, F_CASES, points=2)", []),
        ("import random\n\nF_HIDDEN = [random.random()]\ngrade(f, F_HIDDEN, points=2)",
         [mn.HIDDEN_TAG, "remove-cell"]),
    )  # fmt: skip
    nb = mn.instructor_edition(cells, "x")
    assert len(nb.cells) == 4  # the hidden tests are in the graded cell now
    graded = nb.cells[-1]
    assert graded.source == mn.GRADER_IMPORT + (
        "F_HIDDEN = []  # the grader's own cases: filled in when your notebook is graded\n"
        "### BEGIN HIDDEN TESTS\nimport random\n\nF_HIDDEN = [random.random()]\n"
        "### END HIDDEN TESTS\ngrade(f, F_CASES + F_HIDDEN, points=2)"
    )
    assert graded.metadata["nbgrader"]["points"] == 2 and graded.metadata["tags"] == []
    assert mn.student_edition(nb).cells[-1].source == mn.GRADER_IMPORT + (
        "F_HIDDEN = []  # the grader's own cases: filled in when your notebook is graded\n"
        "grade(f, F_CASES + F_HIDDEN, points=2)"
    )
    cells[-1].source = cells[-1].source.replace("grade(f,", "grade(g,")
    with pytest.raises(ValueError, match="grades another function"):
        mn.instructor_edition(cells, "x")


@pytest.mark.parametrize("stem", IDS)
def test_the_chapter_says_its_exercises_need_only_the_setup_cell(stem):
    section = section_text(stem)
    before_setup = section[: section.index("```{code-cell}")]
    assert re.search(r"needs? only the next cell", " ".join(before_setup.split()))
    assert section.count(":tags: [exercise-setup]") == 1


@pytest.mark.parametrize("stem", IDS)
def test_hidden_tests_are_in_the_instructor_assignment_and_not_in_the_student_one(stem):
    base, instructor, student = (
        chapter(stem),
        editions(stem)["instructor"],
        editions(stem)["student"],
    )
    hidden = [c for c in base.cells if mn.is_hidden_tests(c)]
    graded = [c for c in base.cells if mn.graded_call(c) is not None and not mn.is_hidden_tests(c)]
    by_hand = [c for c in graded if mn.is_manual(c)]
    assert len(hidden) == len(graded) - len(by_hand) > 0  # every autograded exercise has some
    for cell in hidden:  # right after the graded cell of the same function, and removed in the book
        before = base.cells[base.cells.index(cell) - 1]
        assert mn.graded_function(mn.graded_call(before)) == mn.graded_function(
            mn.graded_call(cell)
        )
        assert "remove-cell" in cell.metadata["tags"]
    instructor_text = "\n".join(c.source for c in instructor.cells)
    student_text = "\n".join(c.source for c in student.cells)
    assert "HIDDEN TESTS" not in student_text
    for cell in hidden:
        lines = [x.strip() for x in cell.source.split("\n")[:-1] if x.strip() and x[0] != "#"]
        secret = [
            x for x in lines if x not in student_text and not x.startswith(("import", "from"))
        ]
        assert secret, cell.source[:200]
        for line in lines:
            assert line in instructor_text, (stem, line)
        assert not [x for x in secret if x in student_text]
    for mine, theirs in zip(grade_cells(instructor), grade_cells(student), strict=True):
        assert last_statement(mine.source) == last_statement(theirs.source)


@pytest.mark.parametrize("stem", IDS)
def test_graded_cells_reload_the_checker_and_grade_visible_and_hidden_cases(stem):
    instructor = editions(stem)["instructor"]
    for cell in grade_cells(instructor):
        meta = cell.metadata["nbgrader"]
        assert meta["locked"] and meta["points"] > 0
        assert cell.source.startswith(mn.GRADER_IMPORT)
        assert "importlib.reload(mlmcourse.course.exercises)" in cell.source
        call = ast.parse(cell.source).body[-1].value
        assert isinstance(call, ast.Call) and call.func.id == "grade"
        cases = call.args[1]
        assert isinstance(cases, ast.BinOp) and isinstance(cases.right, ast.Name)
        name = cases.right.id
        assert name.endswith("_HIDDEN")
        begin, end = cell.source.index(mn.BEGIN_HIDDEN), cell.source.index(mn.END_HIDDEN)
        assert f"\n{name} = []" in cell.source[:begin]  # the student's notebook runs without them
        assert f"\n{name} = " in cell.source[begin:end] or f"\n{name}: " in cell.source[begin:end]
        assert mn.grade_points(call) == meta["points"]
        compile(cell.source, f"{stem}-graded", "exec")


def test_the_graded_cell_grades_with_the_course_checker_whatever_a_submission_did():
    import mlmcourse.course.exercises as exercises
    from mlmcourse.course.exercises import Case

    cases = [Case(args=(2, 3), expected=5)]
    namespace = {"grade": lambda *a, **k: 1.0}  # a submission reassigned grade
    saved = dict(vars(exercises))  # the reload below makes new classes: put the old ones back
    exercises.grade = lambda *a, **k: 1.0  # and patched the module
    exercises.check = lambda *a, **k: True
    exercises.values_equal = lambda *a, **k: True
    try:
        exec(compile(mn.GRADER_IMPORT, "graded", "exec"), namespace)
        assert namespace["grade"](lambda a, b: a - b, cases, points=2) == 0.0
        assert namespace["grade"](lambda a, b: a + b, cases, points=2) == 2.0
    finally:
        vars(exercises).clear()
        vars(exercises).update(saved)


def _runs_check(source: str, name: str) -> bool:
    """Whether the feedback cell of ``name`` calls ``check`` in this environment."""
    calls = []
    namespace = {"check": lambda *a: calls.append(a), name: None}
    namespace.update({k: None for k in re.findall(r"[A-Z_]+_CASES", source)})
    exec(compile(source, "feedback", "exec"), namespace)
    return bool(calls)


@pytest.mark.parametrize("stem", IDS)
def test_an_experiment_that_needs_a_training_run_is_graded_by_hand(stem, monkeypatch):
    base, instructor, student = (
        chapter(stem),
        editions(stem)["instructor"],
        editions(stem)["student"],
    )
    by_hand = {mn.graded_function(mn.graded_call(c)): c for c in base.cells if mn.is_manual(c)}
    for name, graded in by_hand.items():
        points = mn.grade_points(mn.graded_call(graded))
        (answer,) = [
            c for c in instructor.cells if mn.is_solution(c) and name in mn.solution_names(c)
        ]
        meta = answer.metadata["nbgrader"]
        assert meta["solution"] and meta["grade"] and meta["points"] == points
        assert "Rubric" in answer.source  # inside the solution region: the student never sees it
        assert "Rubric" not in student.cells[instructor.cells.index(answer)].source
        (feedback,) = [c for c in instructor.cells
                       if f"check({name}," in c.source and "NBGRADER_EXECUTION" in c.source]  # fmt: skip
        assert "nbgrader" not in feedback.metadata or not feedback.metadata["nbgrader"]["grade"]
        monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
        assert not _runs_check(feedback.source, name)  # the autograder skips the experiment
        monkeypatch.delenv("NBGRADER_EXECUTION")
        assert _runs_check(feedback.source, name)  # a learner runs it
    if stem == CLASS_CHAPTER:
        assert set(by_hand) == {"dropout_gain"}


@pytest.mark.parametrize("stem", IDS)
def test_colab_keeps_every_chapter_cell_with_hidden_tests_collapsed(stem):
    base, colab = chapter(stem), editions(stem)["colab"]
    assert len(colab.cells) == len(base.cells)
    for mine, theirs in zip(base.cells, colab.cells, strict=True):
        if mn.is_hidden_tests(mine):
            assert theirs.source == f"{mn.HIDDEN_TITLE}\n{mine.source}"
            assert theirs.metadata["jupyter"] == {"source_hidden": True}
        elif mn.is_checks(mine):  # the checks of the text's claims: collapsed too
            assert theirs.source == f"{mn.CHECKS_TITLE}\n{mine.source}"
            assert theirs.metadata["jupyter"] == {"source_hidden": True}
        elif mn.is_expected(mine):  # an experiment's expected outcome, after the prediction
            assert theirs.source == f"{mn.EXPECTED_TITLE}\n{mine.source}"
            assert theirs.metadata["jupyter"] == {"source_hidden": True}
        elif not mn.is_solution(mine):
            assert theirs.source == mine.source


# --- Executing the assignments ------------------------------------------------------------------


def execute(nb, folder: Path, *, strict: bool, timeout: int = 300):
    """Run ``nb`` in ``folder`` with this venv's kernel; the executed notebook and its seconds."""
    from nbclient import NotebookClient

    env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
    env.update(OMP_NUM_THREADS="1", MLMCOURSE_STRICT_EXERCISES="1" if strict else "0")
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})  # fmt: skip
    tic = time.perf_counter()
    client.execute(env=env)  # the kernel's environment
    return nb, time.perf_counter() - tic


def scores(nb) -> list[float]:
    """What each graded cell showed: the points nbgrader reads."""
    out = []
    for cell in grade_cells(nb):
        (result,) = [o for o in cell.outputs if o.output_type == "execute_result"]
        out.append(float(result["data"]["text/plain"]))
    return out


def errors(nb) -> list:
    return [o for c in code_cells(nb) for o in c.outputs
            if o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("stem", IDS)
def test_the_instructor_assignment_runs_alone_with_full_marks(stem, tmp_path):
    """In a fresh kernel and an empty folder, nothing from the chapter: the reference solutions
    score every point, hidden tests included (strict: a shortfall is an error)."""
    nb, seconds = execute(editions(stem)["instructor"], tmp_path, strict=True)
    print(f"{stem}: instructor assignment executed in {seconds:.1f} s")
    assert not errors(nb), errors(nb)
    assert scores(nb) == [float(c.metadata["nbgrader"]["points"]) for c in grade_cells(nb)]


@pytest.mark.slow
@pytest.mark.parametrize("stem", IDS)
def test_the_student_assignment_runs_through_and_scores_nothing(stem, tmp_path):
    nb, seconds = execute(editions(stem)["student"], tmp_path, strict=False)
    print(f"{stem}: student assignment executed in {seconds:.1f} s")
    assert not errors(nb), errors(nb)
    assert scores(nb) and set(scores(nb)) == {0.0}
    text = "".join(o.get("text", "") for c in code_cells(nb) for o in c.outputs)
    assert "not solved yet" in text


# --- nbgrader itself ---------------------------------------------------------------------------


def _nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("MLMCOURSE_STRICT_EXERCISES", None)
    env.pop("NBGRADER_EXECUTION", None)
    env["OMP_NUM_THREADS"] = "1"
    return subprocess.run(
        [str(Path(sys.executable).parent / "nbgrader"), *args, "--force"],
        cwd=course, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip


def _course(tmp_path: Path, stem: str) -> Path:
    """A course folder with our instructor assignment as nbgrader's source, released."""
    course = tmp_path / "course"
    (course / "source" / stem).mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n"
        "c.CourseDirectory.course_id = 'mlmcourse'\n"
        "c.Execute.timeout = 30\n"
    )
    (course / "source" / stem / f"{stem}.ipynb").write_text(mn.dumps(editions(stem)["instructor"]))
    _nbgrader(course, "generate_assignment", stem)
    return course


def _submit(course: Path, stem: str, student: str, nb: dict) -> None:
    folder = course / "submitted" / student / stem
    folder.mkdir(parents=True)
    (folder / f"{stem}.ipynb").write_text(json.dumps(nb))


@pytest.mark.slow
def test_nbgrader_generates_our_student_edition_and_autogrades_it(tmp_path):
    """``nbgrader generate_assignment`` on the instructor edition gives our student edition,
    and ``nbgrader autograde`` gives full marks to the solutions and none to the stubs."""
    from nbgrader.api import Gradebook

    stem = "masking"
    course = _course(tmp_path, stem)
    ours = editions(stem)
    released = json.loads((course / "release" / stem / f"{stem}.ipynb").read_text())
    assert ["".join(c["source"]) for c in released["cells"]] == [
        c.source for c in ours["student"].cells
    ]

    solved = json.loads(json.dumps(released))
    for cell, reference in zip(solved["cells"], ours["instructor"].cells, strict=True):
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            cell["source"] = reference.source  # the learner fills in every exercise
    _submit(course, stem, "solved", solved)
    _submit(course, stem, "unsolved", released)
    _nbgrader(course, "autograde", stem)

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        full = gradebook.find_submission(stem, "solved")
        empty = gradebook.find_submission(stem, "unsolved")
        assert full.max_score == 7 and full.score == 7  # seven graded cells, a point each
        assert empty.max_score == 7 and empty.score == 0
    graded = json.loads((course / "autograded" / "unsolved" / stem / f"{stem}.ipynb").read_text())
    outputs = [o for c in graded["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]  # unsolved runs through
    assert any("not solved yet" in "".join(o.get("text", "")) for o in outputs)
    graded = json.loads((course / "autograded" / "solved" / stem / f"{stem}.ipynb").read_text())
    assert sum("HIDDEN TESTS" in "".join(c["source"]) for c in graded["cells"]) == 7  # restored


# A class of submissions for the class chapter's assignment (ner): a variant of each solution.
EVERY_PIECE = {
    "other": """\
def tag_every_piece(word_ids, word_tags):
    out = []
    for k, w in enumerate(word_ids):
        if w is None:
            out.append(None)
        elif k > 0 and word_ids[k - 1] == w and word_tags[w].startswith("B-"):
            out.append("I-" + word_tags[w][2:])
        else:
            out.append(word_tags[w])
    return out""",
    "first try": """\
def tag_every_piece(word_ids, word_tags):
    return [word_tags[w] if w is not None else None for w in word_ids]""",
    "off by one": """\
def tag_every_piece(word_ids, word_tags):
    out, previous = [], None
    for w in word_ids:
        if w is None:
            out.append(None)
        elif w != previous:
            out.append(word_tags[w])
        else:
            out.append("I-" + word_tags[w][2:] if word_tags[w].startswith("B-") else word_tags[w])
        previous = w
    return out[1:] + [None]""",
    "hard-coded": """\
def tag_every_piece(word_ids, word_tags):
    answers = {
        (None, 0, 1, 1, 2, None): [None, "B-PER", "I-PER", "I-PER", "O", None],
        (None, 0, 0, 0, None): [None, "B-LOC", "I-LOC", "I-LOC", None],
        (None, None): [None, None],
        (None, 0, 0, 1, 1, None): [None, "O", "O", "B-ORG", "I-ORG", None],
    }
    return answers[tuple(word_ids)]""",
    "raises": """\
raise RuntimeError("not finished")


def tag_every_piece(word_ids, word_tags):
    return [None if w is None else word_tags[w] for w in word_ids]""",
}
ENTITIES = {
    "other": """\
def entities(tags):
    spans = []
    for i, tag in enumerate(tags):
        if tag == "O":
            continue
        kind = tag[2:]
        if tag.startswith("I-") and spans and spans[-1][0] == kind and spans[-1][2] == i - 1:
            spans[-1] = (kind, spans[-1][1], i)
        else:
            spans.append((kind, i, i))
    return spans""",
    "B- only": """\
def entities(tags):
    return [(t[2:], i, i) for i, t in enumerate(tags) if t.startswith("B-")]""",
    "end exclusive": """\
def entities(tags):
    spans, current = [], None
    for i, tag in enumerate(tags):
        if current and (tag[0] != "I" or tag[2:] != current[0]):
            spans.append(tuple(current))
            current = None
        if tag != "O" and current is None:
            current = [tag[2:], i, i]
        if current:
            current[2] = i + 1
    return spans + ([tuple(current)] if current else [])""",
    "loops": """\
def entities(tags):
    while True:
        pass""",
    "raises": """\
def entities(tags):
    return [(tags[i + 1][2:], i, i) for i in range(len(tags))]""",
}
ALLOWED = {
    "other": """\
def allowed(previous, label):
    if label.startswith("I-"):
        return previous in (f"B-{label[2:]}", f"I-{label[2:]}")
    return True""",
    "start allowed": """\
def allowed(previous, label):
    if not label.startswith("I-"):
        return True
    return previous is None or (previous != "O" and previous[2:] == label[2:])""",
    "any type": """\
def allowed(previous, label):
    return not (label.startswith("I-") and previous in (None, "O"))""",
}
ALWAYS_EQUAL = """\
class Anything:  # equal to everything, ordered around everything
    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = lambda self, other: True
    __ne__ = lambda self, other: False
    __hash__ = object.__hash__
    __getitem__ = lambda self, key: self
    __len__ = lambda self: 3


"""
TAMPER = {
    "reassigns grade": "\n\ngrade = lambda *args, **kwargs: 1.0",
    "patches the checker": """

import mlmcourse.course.exercises

mlmcourse.course.exercises.grade = lambda *args, **kwargs: 1.0
mlmcourse.course.exercises.check = lambda *args, **kwargs: True
mlmcourse.course.exercises.values_equal = lambda *args, **kwargs: True""",
}
WHILE_IT_RUNS = """\
def tag_every_piece(word_ids, word_tags):
    import mlmcourse.course.exercises

    mlmcourse.course.exercises.values_equal = lambda *args, **kwargs: True
    mlmcourse.course.exercises._holds = lambda *args, **kwargs: (True, "")
    return [None, "B-PER", "I-PER", "I-PER", "O", None]  # the first case's answer"""
# autograded, a point each; dropout_gain by hand
EXERCISES = ("tag_every_piece", "entities", "allowed")


def _class() -> dict[str, tuple[dict[str, str], set[str]]]:
    """student -> (solution cell sources by function, the autograded exercises it gets right).

    A function left out keeps nbgrader's stub; "ref" is the reference solution ("ref" and more
    code: the reference with that code after it).
    """
    ref = {name: "ref" for name in (*EXERCISES, "dropout_gain")}
    return {
        "right": (ref, set(EXERCISES)),
        "right, other code": (
            {
                "tag_every_piece": EVERY_PIECE["other"],
                "entities": ENTITIES["other"],
                "allowed": ALLOWED["other"],
                "dropout_gain": "ref",
            },
            set(EXERCISES),
        ),
        "right, experiment left": ({n: "ref" for n in EXERCISES}, set(EXERCISES)),
        "every piece only": ({"tag_every_piece": "ref"}, {"tag_every_piece"}),
        "entities and allowed": (
            {"tag_every_piece": EVERY_PIECE["off by one"], "entities": "ref", "allowed": "ref"},
            {"entities", "allowed"},
        ),
        "allowed wrong": (
            {
                "tag_every_piece": "ref",
                "entities": ENTITIES["other"],
                "allowed": ALLOWED["start allowed"],
            },
            {"tag_every_piece", "entities"},
        ),
        "allowed only": (
            {"entities": ENTITIES["B- only"], "allowed": ALLOWED["other"]},
            {"allowed"},
        ),
        "first tries": (
            {
                "tag_every_piece": EVERY_PIECE["first try"],
                "entities": ENTITIES["B- only"],
                "allowed": ALLOWED["any type"],
            },
            set(),
        ),
        "off by one": (
            {
                "tag_every_piece": EVERY_PIECE["off by one"],
                "entities": ENTITIES["end exclusive"],
                "allowed": ALLOWED["start allowed"],
                "dropout_gain": "ref",
            },
            set(),
        ),
        # passes what it sees, not more
        "hard-coded": ({"tag_every_piece": EVERY_PIECE["hard-coded"]}, set()),
        "experiment only": ({"dropout_gain": "ref"}, set()),
        "unsolved": ({}, set()),
        "unsolved too": ({}, set()),
        "unsolved again": ({}, set()),
        "raises": (
            {
                "tag_every_piece": EVERY_PIECE["raises"],
                "entities": ENTITIES["raises"],
                "allowed": "ref",
            },
            {"allowed"},
        ),
        "loops": (
            {"tag_every_piece": "ref", "entities": ENTITIES["loops"], "allowed": "ref"},
            {"tag_every_piece", "allowed"},
        ),
        "reassigns grade": (
            {"tag_every_piece": EVERY_PIECE["first try"] + TAMPER["reassigns grade"]},
            set(),
        ),
        "patches the checker": (
            {
                "tag_every_piece": EVERY_PIECE["first try"] + TAMPER["patches the checker"],
                "allowed": ALLOWED["any type"],
            },
            set(),
        ),
        "always equal": (
            {n: ALWAYS_EQUAL + f"def {n}(*args):\n    return Anything()" for n in EXERCISES},
            set(),
        ),
        "patches while it runs": ({"tag_every_piece": WHILE_IT_RUNS}, set()),
        "edits the cases": (
            {"tag_every_piece": EVERY_PIECE["first try"], "entities": "ref", "allowed": "ref"},
            {"entities", "allowed"},
        ),  # and its cases cell: restored by nbgrader
        "right, reassigns grade too": (
            {**ref, "allowed": "ref" + TAMPER["reassigns grade"]},
            set(EXERCISES),
        ),
    }


def _fill(released: dict, instructor, solutions: dict[str, str]) -> dict:
    nb = json.loads(json.dumps(released))
    for cell, source in zip(nb["cells"], instructor.cells, strict=True):
        meta = cell["metadata"].get("nbgrader", {})
        if not meta.get("solution"):
            continue
        (name,) = mn.solution_names(source)
        chosen = solutions.get(name)
        if chosen is not None and chosen.startswith("ref"):
            cell["source"] = mn.strip_markers(source.source) + chosen.removeprefix("ref")
        elif chosen is not None:
            cell["source"] = chosen
    return nb


@pytest.mark.slow
def test_a_class_autogrades_in_seconds_each_with_every_score_as_expected(tmp_path):
    """22 submissions of the heaviest assignment: right, partly right, wrong, unsolved, one
    that raises, one that loops (stopped by nbgrader's 30 s timeout), and tamperers."""
    from nbgrader.api import Gradebook

    stem = CLASS_CHAPTER
    tic = time.perf_counter()
    course = _course(tmp_path, stem)
    instructor = editions(stem)["instructor"]
    released = json.loads((course / "release" / stem / f"{stem}.ipynb").read_text())
    submissions = _class()
    for student, (solutions, _) in submissions.items():
        nb = _fill(released, instructor, solutions)
        if student == "edits the cases":  # a locked cell changed: easy cases of its own
            (cases,) = [c for c in nb["cells"] if "EVERY_PIECE_CASES = [" in "".join(c["source"])]
            cases["source"] = "EVERY_PIECE_CASES = [Case(args=([None], []), expected=[None])]"
        _submit(course, stem, student.replace(" ", "_").replace(",", ""), nb)
    assert len(submissions) >= 20
    _nbgrader(course, "autograde", stem)
    seconds = time.perf_counter() - tic
    print(f"{len(submissions)} submissions of {stem} generated and autograded in {seconds:.0f} s")

    manual = "dropout_gain"
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, (solutions, right) in submissions.items():
            sid = student.replace(" ", "_").replace(",", "")
            submission = gradebook.find_submission(stem, sid)
            assert (submission.score, submission.max_score) == (len(right), 5), student
            answered = manual in solutions  # an answer to grade by hand, not the stub
            assert submission.needs_manual_grade == answered, student
            for name in EXERCISES:
                got = gradebook.find_grade(f"{stem}-{name}-check", stem, stem, sid)
                assert got.auto_score == (1 if name in right else 0), (student, name)
            by_hand = gradebook.find_grade(f"{stem}-{manual}", stem, stem, sid)
            assert by_hand.needs_manual_grade == answered, student
            assert by_hand.auto_score == (None if answered else 0), student
    looped = json.loads((course / "autograded" / "loops" / stem / f"{stem}.ipynb").read_text())
    errors = [o["ename"] for c in looped["cells"] for o in c.get("outputs", [])
              if o["output_type"] == "error"]  # fmt: skip
    assert errors and set(errors) <= {"KeyboardInterrupt", "CellTimeoutError"}, errors


def test_an_experiments_expected_outcome_starts_collapsed_in_the_assignments():
    stem = "pretraining"  # its learning-rate experiment
    for edition in ("instructor", "student"):
        cells = [
            c for c in editions(stem)[edition].cells if "expected" in c.metadata.get("tags", [])
        ]
        assert cells and all(c.metadata["jupyter"] == {"source_hidden": True} for c in cells)
