"""A STAND-IN for the GitHub REST API, for tests (the network is not reachable from the test suite).

A tiny ``http.server`` in a thread that answers the few routes the action (``harness/ci/``) calls —
issue comments (list with pagination, create, update), a pull request, artifact listings (by name,
by run), an artifact's zip (a redirect to a "storage" URL that refuses the API token, as GitHub's
does) — and records every request. ``add_artifact`` plays the part of ``actions/upload-artifact``:
it zips a report folder (files at the zip's root) into the stand-in's artifact store.
"""

from __future__ import annotations

import io
import json
import re
import threading
import urllib.parse
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Recorded:
    method: str
    path: str
    authorized: bool
    body: Any = None


@dataclass
class StandInGitHub:
    """The stand-in's state: what a test arranges and what the action did to it."""

    token: str = "stand-in-token"
    page_size: int = 2  # small, so listings are paginated and the client must follow `Link`
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    zips: dict[int, bytes] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""
    _next: int = 1000
    _server: ThreadingHTTPServer | None = None

    def new_id(self) -> int:
        self._next += 1
        return self._next

    # -- what a test arranges ------------------------------------------------------------------------
    def add_comment(self, pr: int, body: str, user: str = "someone") -> int:
        cid = self.new_id()
        self.comments.setdefault(pr, []).append({"id": cid, "body": body, "user": {"login": user}})
        return cid

    def add_artifact(self, name: str, folder: Path, run_id: int, head_sha: str = "") -> int:
        """What ``actions/upload-artifact`` does with ``path: folder``: its files, zipped."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for p in sorted(Path(folder).rglob("*")):
                if p.is_file():
                    zf.write(p, p.relative_to(folder).as_posix())
        aid = self.new_id()
        self.zips[aid] = buf.getvalue()
        self.artifacts.append(
            {
                "id": aid,
                "name": name,
                "expired": False,
                "created_at": f"2026-01-01T00:00:{len(self.artifacts):02d}Z",
                "workflow_run": {"id": run_id, "head_sha": head_sha},
            }
        )
        return aid

    def posted(self, method: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method]

    # -- the server ---------------------------------------------------------------------------------
    def __enter__(self) -> StandInGitHub:
        handler = type("Handler", (_Handler,), {"state": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


_ROUTES = [
    ("GET", r"/repos/[^/]+/[^/]+/issues/(\d+)/comments", "list_comments"),
    ("POST", r"/repos/[^/]+/[^/]+/issues/(\d+)/comments", "create_comment"),
    ("PATCH", r"/repos/[^/]+/[^/]+/issues/comments/(\d+)", "update_comment"),
    ("GET", r"/repos/[^/]+/[^/]+/pulls/(\d+)", "pull"),
    ("GET", r"/repos/([^/]+/[^/]+)/actions/artifacts", "artifacts"),
    ("GET", r"/repos/([^/]+/[^/]+)/actions/runs/(\d+)/artifacts", "run_artifacts"),
    ("GET", r"/repos/([^/]+/[^/]+)/actions/artifacts/(\d+)/zip", "artifact_zip"),
]


def _route(method: str, path: str) -> tuple[str, tuple[str, ...]] | None:
    for m, pattern, name in _ROUTES:
        hit = re.fullmatch(pattern, path)
        if m == method and hit:
            return name, hit.groups()
    return None


class _Handler(BaseHTTPRequestHandler):
    """Answers one request from ``state`` (a subclass per server sets it) and records it there."""

    state: StandInGitHub

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, code: int, doc: Any = None, headers: dict[str, str] | None = None) -> None:
        raw = b"" if doc is None else (doc if isinstance(doc, bytes) else json.dumps(doc).encode())
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _handle(self, method: str) -> None:
        state = self.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = json.loads(raw) if raw else {}
        auth = self.headers.get("Authorization") == f"Bearer {state.token}"
        state.requests.append(Recorded(method, self.path, auth, body))
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path.startswith("/_storage/"):
            if self.headers.get("Authorization"):
                return self._send(400, {"message": "storage refuses an Authorization header"})
            return self._send(200, state.zips[int(url.path.rsplit("/", 1)[1])])
        if not auth:
            return self._send(401, {"message": "Bad credentials"})
        route = _route(method, url.path)
        if route is None:
            return self._send(404, {"message": "Not Found (stand-in)"})
        self._answer(*route, query, body)

    def _answer(self, name: str, args: tuple[str, ...], query: dict[str, str], body: Any) -> None:
        """The answer of the route ``name`` (its path's groups ``args``)."""
        state = self.state
        if name == "list_comments":
            return self._page(state.comments.get(int(args[0]), []), query, None)
        if name == "create_comment":
            cid = state.add_comment(int(args[0]), body["body"], user="github-actions[bot]")
            return self._send(201, {"id": cid, "body": body["body"]})
        if name == "update_comment":
            return self._update_comment(int(args[0]), body["body"])
        if name == "pull":
            pull = state.pulls.get(int(args[0]))
            return self._send(200, pull) if pull else self._send(404, {"message": "no pull"})
        if name in ("artifacts", "run_artifacts"):
            arts = [
                {
                    **a,
                    "archive_download_url": f"{state.url}/repos/{args[0]}/actions/artifacts/{a['id']}/zip",
                }
                for a in state.artifacts
                if ("name" not in query or a["name"] == query["name"])
                and (name == "artifacts" or a["workflow_run"]["id"] == int(args[1]))
            ]
            return self._page(arts, query, "artifacts")
        if name == "artifact_zip":
            return self._send(302, None, {"Location": f"{state.url}/_storage/{args[1]}"})
        return self._send(404, {"message": "Not Found (stand-in)"})

    def _update_comment(self, cid: int, text: str) -> None:
        for cs in self.state.comments.values():
            for c in cs:
                if c["id"] == cid:
                    c["body"] = text
                    return self._send(200, c)
        return self._send(404, {"message": "no such comment"})

    def _page(self, items: list[Any], query: dict[str, str], key: str | None) -> None:
        page = int(query.get("page", "1"))
        size = self.state.page_size
        chunk = items[(page - 1) * size : page * size]
        headers = {}
        if page * size < len(items):
            nxt = dict(query, page=str(page + 1))
            path = urllib.parse.urlsplit(self.path).path
            headers["Link"] = f'<{self.state.url}{path}?{urllib.parse.urlencode(nxt)}>; rel="next"'
        doc = {"total_count": len(items), key: chunk} if key else chunk
        self._send(200, doc, headers)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")
