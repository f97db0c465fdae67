"""A Python package index on 127.0.0.1 serving our wheels, as PyPI would (PEP 503).

``GET /simple/`` lists the projects, ``GET /simple/<project>/`` links each file with its
sha256, ``GET /files/<name>`` sends it. Every request is logged (:attr:`LocalIndex.log`), so a
test can tell that pip took the wheel from here. Projects it does not hold are a 404, which
pip reads as "not on this index" and looks for on the next one (``--extra-index-url``).
"""

from __future__ import annotations

import hashlib
import html
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def normalized(name: str) -> str:
    """A project's name as PEP 503 writes it in URLs."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_of(filename: str) -> str:
    """``mlmcourse`` for ``mlmcourse-0.2.0-py3-none-any.whl``."""
    return normalized(filename.split("-")[0])


class LocalIndex:
    """``with LocalIndex(wheels) as index``: ``index.url`` is the ``--index-url``."""

    def __init__(self, files: list[Path]) -> None:
        self.files = {f.name: f for f in files}
        self.log: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/simple/"

    def __enter__(self) -> LocalIndex:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def page(self, path: str) -> bytes | None:
        """The body for ``path``, or None for a 404."""
        parts = [p for p in path.split("/") if p]
        if parts == ["simple"]:
            projects = sorted({project_of(name) for name in self.files})
            links = "".join(f'<a href="/simple/{p}/">{p}</a>\n' for p in projects)
        elif len(parts) == 2 and parts[0] == "simple":
            names = [n for n in sorted(self.files) if project_of(n) == normalized(parts[1])]
            if not names:
                return None
            links = "".join(
                f'<a href="/files/{html.escape(n)}#sha256='
                f'{hashlib.sha256(self.files[n].read_bytes()).hexdigest()}">{html.escape(n)}</a>\n'
                for n in names
            )
        elif len(parts) == 2 and parts[0] == "files" and parts[1] in self.files:
            return self.files[parts[1]].read_bytes()
        else:
            return None
        return f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        index = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                body = index.page(path)
                index.log.append(f"GET {path} {200 if body is not None else 404}")
                status, body = (200, body) if body is not None else (404, b"not found")
                self.send_response(status)
                kind = "text/html" if path.startswith("/simple") else "application/octet-stream"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
