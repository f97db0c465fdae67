"""Every link of the built site and of the notebooks learners download resolves.

- **The site** (``_build/html``): every ``href`` and ``src`` that points into the site (a
  relative path, or an absolute URL under the site's public address, ``html.baseurl`` in
  ``_config.yml``) names a file that exists, and its ``#anchor``, if any, an ``id`` (or a
  ``name``) of that page.
- **The repository**: every link into the course repository, from the site, the notebooks
  (Colab, student and instructor editions) and the README, names a path this checkout tracks:
  ``github.com/OWNER/REPO/blob|tree|raw|edit/REF/PATH``, Colab's
  ``colab.research.google.com/github/OWNER/REPO/blob/REF/PATH``, Binder's ``urlpath``.
- Links to the site from the notebooks are checked like the site's own.

Other external links are listed, never fetched (no machine of ours reaches them all).

    python scripts/check_links.py                 # the site, the notebooks and the README
    python scripts/check_links.py --external      # and list the external links
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
SKIPPED_SCHEMES = ("mailto:", "javascript:", "data:", "tel:", "blob:")
URL = re.compile(r"""https?://[^\s<>"'`)\]]+""")


@dataclass(frozen=True)
class Broken:
    """A link that does not resolve: where it is, the link, and why."""

    where: str
    link: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.link} ({self.why})"


@dataclass(frozen=True)
class Addresses:
    """Where the site is published and where the repository is."""

    site: str  # https://OWNER.github.io/REPO/
    repository: str  # https://github.com/OWNER/REPO

    @property
    def owner_repo(self) -> str:
        return urlsplit(self.repository).path.strip("/")


def addresses(root: Path = ROOT) -> Addresses:
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    site = config["html"]["baseurl"].rstrip("/") + "/"
    return Addresses(site, config["repository"]["url"].rstrip("/"))


# --- Reading pages ----------------------------------------------------------------------------


class _Page(HTMLParser):
    """The links (``href``, ``src``) and the anchors (``id``, ``name``) of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.anchors: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("href", "src"):
                self.links.append(value.strip())
            elif name == "id" or (name == "name" and tag == "a"):
                self.anchors.add(value)


@cache
def _read(page: Path) -> _Page:
    parser = _Page()
    parser.feed(page.read_text(encoding="utf-8", errors="replace"))
    return parser


# --- The site ---------------------------------------------------------------------------------


def site_target(link: str, page: Path, site: Path, where: Addresses) -> tuple[Path, str] | None:
    """The file (and anchor) of the site that ``link`` on ``page`` names; None if external."""
    if link.startswith(where.site):
        link = "/" + link[len(where.site) :]
        base = site
    elif urlsplit(link).scheme or link.startswith("//"):
        return None
    else:
        base = page.parent
    parts = urlsplit(link)
    path = unquote(parts.path)
    if path.startswith("/"):  # from the site's root (the published address's folder)
        target = site / path.lstrip("/")
    elif path:
        target = base / path
    else:
        target = page  # "#anchor" on the same page
    if target.is_dir() or (path.endswith("/") and not target.suffix):
        target = target / "index.html"
    return target.resolve(), unquote(parts.fragment)


def check_site_link(link: str, page: Path, site: Path, where: Addresses) -> str | None:
    """Why ``link`` on ``page`` is broken, or None (external links are not this function's)."""
    found = site_target(link, page, site, where)
    if found is None:
        return None
    target, anchor = found
    if not target.is_relative_to(site.resolve()):
        return "points outside the site"
    if not target.is_file():
        return f"no file {target.relative_to(site.resolve())}"
    if anchor and target.suffix == ".html" and anchor not in _read(target).anchors:
        return f"no anchor #{anchor} in {target.relative_to(site.resolve())}"
    return None


def site_pages(site: Path) -> list[Path]:
    """The site's pages (not the theme's templates in ``_static``, not ``_sources``)."""
    skipped = {"_sources", "_static"}
    return sorted(p for p in site.rglob("*.html") if not skipped & set(p.relative_to(site).parts))


def check_site(site: Path = SITE, where: Addresses | None = None) -> tuple[list[Broken], set[str]]:
    """Every broken link of the built site, and its external links."""
    where = where or addresses()
    broken, external = [], set()
    for page in site_pages(site):
        name = page.relative_to(site).as_posix()
        for link in _read(page).links:
            if not link or link.startswith(SKIPPED_SCHEMES):
                continue
            why = check_site_link(link, page, site, where)
            if why is not None:
                broken.append(Broken(name, link, why))
                continue
            if site_target(link, page, site, where) is None:
                why = check_repository_link(link, where)
                if why is not None:
                    broken.append(Broken(name, link, why))
                elif not is_repository_link(link, where):
                    external.add(link)
    return broken, external


# --- The repository ---------------------------------------------------------------------------


@cache
def tracked(root: Path = ROOT) -> frozenset[str]:
    """The files this checkout tracks, and the folders that hold them."""
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    files = {f for f in out.split("\0") if f}
    folders = {str(Path(f).parent.as_posix()) for f in files}
    while True:
        more = {str(Path(f).parent.as_posix()) for f in folders} - folders
        if not more:
            break
        folders |= more
    return frozenset(files | folders | {""})


def repository_path(link: str, where: Addresses) -> str | None:
    """The path in the repository that ``link`` names ("" for the repository itself), or
    None if ``link`` is not a link into it."""
    repo = where.owner_repo
    parts = urlsplit(link)
    host, path = parts.netloc.lower(), unquote(parts.path).strip("/")
    prefixes = {
        "github.com": repo,
        "colab.research.google.com": f"github/{repo}",
        "raw.githubusercontent.com": repo,
    }
    if host == "mybinder.org" and path.startswith(f"v2/gh/{repo}"):
        urlpath = parse_qs(parts.query).get("urlpath", [""])[0]
        return re.sub(r"^(tree|lab/tree|notebooks)/", "", urlpath)
    prefix = prefixes.get(host)
    if prefix is None or not (path == prefix or path.startswith(prefix + "/")):
        return None
    rest = path[len(prefix) :].strip("/").split("/")
    if host == "raw.githubusercontent.com":
        return "/".join(rest[1:])  # REF/PATH
    if rest and rest[0] in ("blob", "tree", "raw", "edit", "blame", "commits"):
        return "/".join(rest[2:])  # KIND/REF/PATH
    return ""  # the repository, its issues, releases, ...


def is_repository_link(link: str, where: Addresses) -> bool:
    return repository_path(link, where) is not None


def check_repository_link(link: str, where: Addresses, root: Path = ROOT) -> str | None:
    """Why a link into the repository is broken (the path is not tracked here), or None."""
    path = repository_path(link, where)
    if path is None or path in tracked(root):
        return None
    return f"this checkout has no {path}"


# --- Notebooks and the README -----------------------------------------------------------------


def links_in_text(text: str) -> Iterator[str]:
    """The URLs of a markdown or code text (markdown links, HTML attributes, bare URLs)."""
    for match in URL.finditer(text):
        yield match.group(0).rstrip(".,;:")


def check_text_links(
    where_name: str, text: str, where: Addresses, site: Path | None
) -> Iterator[Broken]:
    """The broken links of a notebook cell or a README: into the repository, or the site."""
    for link in links_in_text(text):
        why = check_repository_link(link, where)
        if why is None and link.startswith(where.site) and site is not None:
            why = check_site_link(link, site / "index.html", site, where)
        if why is not None:
            yield Broken(where_name, link, why)


def notebook_texts(root: Path = ROOT) -> Iterable[tuple[str, str]]:
    """(where, text) of every cell of every edition of every chapter, and of the README."""
    sys.path.insert(0, str(root / "scripts"))
    import make_notebooks as mn

    release = mn.read_release(root)
    for source in mn.chapter_sources():
        for edition, nb in mn.editions(source, release).items():
            for k, cell in enumerate(nb.cells):
                yield f"{source.stem} ({edition}), cell {k}", cell.source
    yield "README.md", (root / "README.md").read_text(encoding="utf-8")


def check_notebooks(site: Path | None = SITE, where: Addresses | None = None) -> list[Broken]:
    where = where or addresses()
    site = site if site is not None and site.is_dir() else None
    return [b for name, text in notebook_texts() for b in check_text_links(name, text, where, site)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=SITE, help="the built site (_build/html)")
    parser.add_argument("--external", action="store_true", help="list the external links")
    args = parser.parse_args(argv)
    broken, external = check_site(args.site) if args.site.is_dir() else ([], set())
    broken += check_notebooks(args.site)
    for b in broken:
        print(b)
    if args.external:
        print("\n".join(sorted(external)))
    print(f"{len(broken)} broken links; {len(external)} external links listed, not fetched")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
