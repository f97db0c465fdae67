"""A Hugging Face Hub on 127.0.0.1: the requests ``huggingface_hub.snapshot_download`` makes.

The chapters' real-model cells download through ``huggingface_hub`` from ``HF_ENDPOINT``. No
machine of ours reaches huggingface.co, so this server answers, for the repositories it is
given, exactly what the client asks (read from ``huggingface_hub`` 2.4, as installed):

1. ``GET /api/models/{org}/{name}/revision/{revision}`` (the revision URL-quoted, as in
   ``refs%2Fpr%2F2``): ``{"id", "sha", "siblings"}``; older clients read the siblings.
2. ``GET /api/models/{org}/{name}/tree/{sha}?recursive=true``: every file and folder, weights
   as Git LFS entries with their sha256 (no Xet hashes: those switch the client to Xet).
3. ``HEAD`` then ``GET /{org}/{name}/resolve/{revision}/{path}``: ``X-Repo-Commit``, ``ETag``
   and ``Content-Length``, then the bytes.

Errors are 404s with the Hub's ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``,
``EntryNotFound``). Every request is logged (:attr:`LocalHub.log`), so a test can say which
files were fetched, and that no decoy (a pickle, a model's own code, TensorFlow or ONNX
weights) ever was.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".h5", ".onnx", ".msgpack", ".pt")
# What a real model repository also holds, and a loader of ours must never download.
DECOYS = {
    "pytorch_model.bin": b"a pickle: loading it runs code",
    "modeling_bert.py": b"raise SystemExit('remote code ran')\n",
    "tf_model.h5": b"TensorFlow weights",
    "onnx/model.onnx": b"ONNX weights",
    "README.md": b"---\nlicense: apache-2.0\n---\n# a stand-in\n",
}


def git_blob_id(data: bytes) -> str:
    """The id git gives a file's contents (what the Hub calls its ``oid``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def commit_id(files: dict[str, bytes]) -> str:
    """A 40-hex commit id for a set of files (the same files, the same id)."""
    digest = hashlib.sha1()
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + git_blob_id(files[path]).encode())
    return digest.hexdigest()


@dataclass
class Repo:
    """A model repository: its commits (files by path) and its refs (``main``, ``refs/pr/2``)."""

    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)

    def add(self, files: dict[str, bytes], *refs: str) -> str:
        sha = commit_id(files)
        self.commits[sha] = files
        for ref in refs:
            self.refs[ref] = sha
        return sha

    def resolve(self, revision: str) -> str | None:
        """The commit a branch, ref or commit id names."""
        return revision if revision in self.commits else self.refs.get(revision)


class Request(NamedTuple):
    method: str
    repo_id: str | None
    kind: str  # "info", "tree", "file" or "other"
    path: str  # the file's path in the repository, or the URL's path
    status: int


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its path relative to it."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


class LocalHub:
    """The server, on a free port of 127.0.0.1, in a thread; ``with LocalHub(repos) as hub``."""

    def __init__(self, repos: dict[str, Repo]) -> None:
        self.repos = repos
        self.log: list[Request] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LocalHub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def record(self, request: Request) -> None:
        with self._lock:
            self.log.append(request)

    def fetched(self, repo_id: str) -> set[str]:
        """The files of ``repo_id`` whose bytes were sent (a ``GET`` answered 200)."""
        return {
            r.path
            for r in self.log
            if r.repo_id == repo_id and r.kind == "file" and r.method == "GET" and r.status == 200
        }

    def kinds(self, repo_id: str) -> set[str]:
        """Which of the three kinds of request ``repo_id`` received."""
        return {r.kind for r in self.log if r.repo_id == repo_id}


def _tree(files: dict[str, bytes]) -> list[dict]:
    """The Hub's recursive tree listing: folders, then files (weights as LFS entries)."""
    folders = sorted({str(Path(p).parent) for p in files} - {"."})
    entries: list[dict] = [
        {"type": "directory", "oid": commit_id({}), "path": folder} for folder in folders
    ]
    for path, data in sorted(files.items()):
        entry = {"type": "file", "oid": git_blob_id(data), "size": len(data), "path": path}
        if path.endswith(LFS_SUFFIXES):
            pointer = 134  # the size of a Git LFS pointer file
            entry["lfs"] = {
                "oid": hashlib.sha256(data).hexdigest(),
                "size": len(data),
                "pointerSize": pointer,
            }
        entries.append(entry)
    return entries


def _handler(hub: LocalHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # the hub's own log instead of stderr
            pass

        def do_HEAD(self) -> None:
            self.answer(body=False)

        def do_GET(self) -> None:
            self.answer(body=True)

        def send(self, status: int, data: bytes, headers: dict[str, str], body: bool) -> None:
            self.send_response(status)
            for name, value in {"Content-Length": str(len(data)), **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            if body:
                self.wfile.write(data)

        def error(self, code: str, message: str, body: bool, record: tuple) -> None:
            hub.record(Request(self.command, *record, 404))
            data = json.dumps({"error": message}).encode()
            headers = {"Content-Type": "application/json", "X-Error-Code": code,
                       "X-Error-Message": message}  # fmt: skip
            self.send(404, data, headers, body)

        def answer(self, body: bool) -> None:
            path = urlsplit(self.path).path
            parts = path.strip("/").split("/")
            if parts[:2] == ["api", "models"] and len(parts) >= 6:
                repo_id, kind, rest = "/".join(parts[2:4]), parts[4], "/".join(parts[5:])
                self.api(repo_id, kind, unquote(rest), body)
            elif len(parts) >= 5 and parts[2] == "resolve":
                repo_id, revision, file = "/".join(parts[:2]), unquote(parts[3]), parts[4:]
                self.file(repo_id, revision, unquote("/".join(file)), body)
            else:
                self.error("EntryNotFound", f"no route {path}", body, (None, "other", path))

        def api(self, repo_id: str, kind: str, revision: str, body: bool) -> None:
            kind = {"revision": "info", "tree": "tree"}.get(kind, "other")
            record = (repo_id, kind, self.path)
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self.error("RepoNotFound", f"Repository {repo_id} not found", body, record)
            sha = repo.resolve(revision)
            if sha is None or kind == "other":
                message = f"Invalid rev id: {revision}"
                return self.error("RevisionNotFound", message, body, record)
            files = repo.commits[sha]
            if kind == "info":
                siblings = [{"rfilename": p} for p in sorted(files)]
                data = {"id": repo_id, "modelId": repo_id, "sha": sha, "siblings": siblings,
                        "private": False, "gated": False, "disabled": False}  # fmt: skip
            else:
                data = _tree(files)
            hub.record(Request(self.command, *record, 200))
            self.send(200, json.dumps(data).encode(), {"Content-Type": "application/json"}, body)

        def file(self, repo_id: str, revision: str, path: str, body: bool) -> None:
            record = (repo_id, "file", path)
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self.error("RepoNotFound", f"Repository {repo_id} not found", body, record)
            sha = repo.resolve(revision)
            if sha is None:
                message = f"Invalid rev id: {revision}"
                return self.error("RevisionNotFound", message, body, record)
            data = repo.commits[sha].get(path)
            if data is None:
                return self.error("EntryNotFound", f"{path} does not exist", body, record)
            lfs = path.endswith(LFS_SUFFIXES)
            etag = hashlib.sha256(data).hexdigest() if lfs else git_blob_id(data)
            headers = {"X-Repo-Commit": sha, "ETag": f'"{etag}"',
                       "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}  # fmt: skip
            hub.record(Request(self.command, *record, 200))
            self.send(200, data, headers, body)

    return Handler


def resolve_url(repo_id: str, revision: str, path: str) -> str:
    """The resolve path a client asks for (for tests of the server itself)."""
    return f"/{repo_id}/resolve/{quote(revision, safe='')}/{path}"
