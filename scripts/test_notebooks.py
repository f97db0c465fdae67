"""Run the classroom notebooks as a learner gets them: built wheel, fresh environment, empty folder.

1. Build the sdist and the wheel (as the release does).
2. Create a fresh virtual environment with nothing but the wheel and a Jupyter kernel (the
   exact versions of ``requirements.txt`` as constraints, so torch stays the CPU build), and
   register that environment's kernel.
3. A plain ``pip install mlmcourse``: run the chapters that have optional parts (those that
   call ``optional_import``) in an empty folder. They must run through, skipping those parts.
4. Add the ``course`` extra. Write the student and instructor editions, copy each into an
   empty folder of its own, far from the repository, and execute every notebook there with
   nbval on that kernel. The instructor edition runs with ``MLMCOURSE_STRICT_EXERCISES=1``
   (every reference solution must score full marks); the student edition runs with its
   exercises unsolved.

    python scripts/test_notebooks.py                       # both editions, one after the other
    python scripts/test_notebooks.py --parallel            # both at once, a thread each (make)
    python scripts/test_notebooks.py --editions student    # one edition
    python scripts/test_notebooks.py --keep                # keep the work folder to look at
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_notebooks import ROOT, read_release, write_classroom  # noqa: E402

KERNEL = "mlmcourse-learner"


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run(cmd, check=True, **kwargs)


def build(out: Path) -> Path:
    """The sdist and wheel, built without network access (no build isolation)."""
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        stdout=subprocess.DEVNULL)  # fmt: skip
    (wheel,) = out.glob("mlmcourse-*.whl")
    return wheel


def learner_environment(work: Path) -> Path:
    """A fresh venv with a registered kernel; its python."""
    env = work / "env"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line]
    (work / "constraints.txt").write_text("\n".join(pins) + "\n")
    pip_install(python, work, "ipykernel")
    run([str(python), "-m", "ipykernel", "install", "--prefix", str(env), "--name", KERNEL])
    return python


def pip_install(python: Path, work: Path, *requirements: str) -> None:
    """pip install into the learner's venv, pinned by requirements.txt's versions."""
    cmd = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
           "-c", str(work / "constraints.txt"), *requirements]  # fmt: skip
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    # pip's warnings about this machine's extra package index are noise; anything else shows
    noise = "WARNING: Location 'file:"
    print("".join(x for x in done.stderr.splitlines(True) if not x.startswith(noise)), end="")
    if done.returncode != 0:
        raise SystemExit(f"pip install {' '.join(requirements)} failed:\n{done.stdout}")


def check_isolation(python: Path, folder: Path, env: Path) -> None:
    """From the empty folder, the kernel's Python imports the installed wheel, not our sources."""
    found = subprocess.run(
        [str(python), "-c", "import mlmcourse; print(mlmcourse.__file__)"],
        cwd=folder, env=learner_env(), capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    if not Path(found).resolve().is_relative_to(env.resolve()):
        raise SystemExit(f"the learner kernel imports mlmcourse from {found}, not from {env}")
    print(f"learner kernel imports {found}")


def learner_env(strict: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env.pop("MLMCOURSE_STRICT_EXERCISES", None)
    if strict:
        env["MLMCOURSE_STRICT_EXERCISES"] = "1"
    return env


def execute(
    edition: str,
    notebooks: Path,
    work: Path,
    only: list[str] | None = None,
    label: str = "",
    threads: int | None = None,
) -> subprocess.Popen:
    """Start nbval over one edition's notebooks, copied into an empty folder.

    ``threads`` caps the kernel's CPU threads (OpenMP, hence torch); ``None`` leaves torch's
    default, one per core.
    """
    label = label or edition
    folder = work / f"run-{label}"
    folder.mkdir()
    for nb in sorted(notebooks.glob("*.ipynb")):
        if not only or nb.stem in only:
            shutil.copy(nb, folder / nb.name)
    ini = work / f"pytest-{label}.ini"
    ini.write_text("[pytest]\n")
    env = learner_env(strict=edition == "instructor")
    env["JUPYTER_PATH"] = str(work / "env" / "share" / "jupyter")
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(folder),
           "-p", "no:cacheprovider", "--nbval-lax", "--nbval-kernel-name", KERNEL, "-q",
           *sorted(p.name for p in folder.glob("*.ipynb"))]  # fmt: skip
    print(f"+ ({label}) {' '.join(cmd)}", flush=True)
    return subprocess.Popen(cmd, cwd=folder, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--editions", nargs="+", default=["instructor", "student"],
                        choices=["instructor", "student"])  # fmt: skip
    parser.add_argument("--parallel", action="store_true", help="run the editions at once")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--only", nargs="+", metavar="CHAPTER", help="only these chapters")
    parser.add_argument("--no-plain", dest="plain", action="store_false",
                        help="skip the run without the course extra")  # fmt: skip
    args = parser.parse_args(argv)
    start = time.time()
    work = Path(tempfile.mkdtemp(prefix="mlmcourse-learner-"))
    try:
        wheel = build(work / "dist")
        python = learner_environment(work)
        write_classroom(work / "classroom")
        failed = []
        if args.plain:
            pip_install(python, work, str(wheel))  # a plain `pip install mlmcourse`
            optional = sorted(
                p.stem
                for p in (work / "classroom" / "instructor").glob("*.ipynb")
                if "optional_import(" in p.read_text(encoding="utf-8")
                and (not args.only or p.stem in args.only)
            )
            plain = execute(
                "instructor", work / "classroom" / "instructor", work, optional, "plain"
            )
            if plain.wait() != 0:
                failed.append("plain install")
        pip_install(python, work, f"{wheel}[course]")
        empty = work / "empty"
        empty.mkdir()
        check_isolation(python, empty, work / "env")
        print(f"set-up took {time.time() - start:.0f} s (mlmcourse {read_release().version})")
        if args.parallel:
            # One kernel per edition, each on one thread, so two editions share two cores.
            procs = {
                e: execute(e, work / "classroom" / e, work, args.only, threads=1)
                for e in args.editions
            }
            failed += [e for e, p in procs.items() if p.wait() != 0]
        else:
            for edition in args.editions:
                if execute(edition, work / "classroom" / edition, work, args.only).wait() != 0:
                    failed.append(edition)
        print(f"learner notebooks: {time.time() - start:.0f} s in all; failed: {failed or 'none'}")
        return 1 if failed else 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
