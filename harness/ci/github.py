"""A small GitHub REST client on ``urllib``: issue comments, pull requests, artifacts.

``GITHUB_API_URL`` (default ``https://api.github.com``) and ``GITHUB_TOKEN`` come from the
environment, so tests point it at a local stand-in server. An artifact's zip is fetched by following
GitHub's redirect without the token (the storage behind it takes a signed URL, not our token).
"""

from __future__ import annotations

import io
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from typing import Any

MAX_ZIP = 64 * 1024 * 1024  # bytes of an artifact zip read at most
MAX_MEMBER = 32 * 1024 * 1024  # bytes of one file taken out of it
MAX_PAGES = 50


class APIError(Exception):
    """A request GitHub (or the stand-in) answered with an error, or that did not reach it."""


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    created_at: str
    expired: bool
    run_id: int | None
    head_sha: str
    download_url: str


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class GitHub:
    def __init__(self, api_url: str, token: str, timeout: float = 30.0) -> None:
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> GitHub:
        e = os.environ if env is None else env
        return cls(e.get("GITHUB_API_URL") or "https://api.github.com", e.get("GITHUB_TOKEN", ""))

    def _open(self, req: urllib.request.Request, redirect: bool = True) -> Any:
        opener = (
            urllib.request.build_opener()
            if redirect
            else urllib.request.build_opener(_NoRedirect())
        )
        try:
            return opener.open(req, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            if not redirect and exc.code in (301, 302, 303, 307, 308):
                return exc
            detail = exc.read(500).decode("utf-8", "replace").strip()
            raise APIError(f"{req.get_method()} {req.full_url}: HTTP {exc.code} {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise APIError(f"{req.get_method()} {req.full_url}: {exc}") from None

    def _request(
        self, method: str, path: str, body: Any = None, accept: str = "application/vnd.github+json"
    ) -> urllib.request.Request:
        url = path if path.startswith(("http://", "https://")) else self.api_url + path
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", accept)
        req.add_header("X-GitHub-Api-Version", "2022-11-28")
        req.add_header("User-Agent", "harness-ci")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_unredirected_header("Authorization", f"Bearer {self.token}")
        return req

    def call(self, method: str, path: str, body: Any = None) -> Any:
        with self._open(self._request(method, path, body)) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def pages(self, path: str, key: str | None = None) -> list[Any]:
        """Every item of a paginated listing (``Link: rel="next"``), ``key`` for wrapped lists."""
        items: list[Any] = []
        url: str | None = path
        for _ in range(MAX_PAGES):
            if url is None:
                break
            with self._open(self._request("GET", url)) as resp:
                doc = json.loads(resp.read() or b"null")
                link = resp.headers.get("Link", "")
            items += (doc or {}).get(key, []) if key else (doc or [])
            m = re.search(r'<([^>]+)>;\s*rel="next"', link)
            url = m.group(1) if m else None
        return items

    # -- pull requests and comments --------------------------------------------------------------
    def pull(self, repo: str, number: int) -> dict[str, Any]:
        doc = self.call("GET", f"/repos/{repo}/pulls/{number}")
        return doc if isinstance(doc, dict) else {}

    def upsert_comment(self, repo: str, number: int, body: str, marker: str) -> tuple[str, int]:
        """Edit the comment that starts with ``marker``, else create one: ("updated"|"created", id)."""
        for c in self.pages(f"/repos/{repo}/issues/{number}/comments?per_page=100"):
            if str(c.get("body") or "").lstrip().startswith(marker):
                self.call("PATCH", f"/repos/{repo}/issues/comments/{c['id']}", {"body": body})
                return "updated", int(c["id"])
        doc = self.call("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
        return "created", int(doc["id"])

    # -- artifacts -------------------------------------------------------------------------------
    def artifacts(
        self, repo: str, name: str | None = None, run_id: int | None = None
    ) -> list[Artifact]:
        if run_id is not None:
            path = f"/repos/{repo}/actions/runs/{run_id}/artifacts?per_page=100"
        else:
            path = f"/repos/{repo}/actions/artifacts?per_page=100"
        if name:
            path += "&name=" + urllib.parse.quote(name)
        out = []
        for a in self.pages(path, key="artifacts"):
            run = a.get("workflow_run") or {}
            out.append(
                Artifact(
                    id=int(a["id"]),
                    name=str(a.get("name", "")),
                    created_at=str(a.get("created_at") or ""),
                    expired=bool(a.get("expired")),
                    run_id=int(run["id"]) if run.get("id") is not None else None,
                    head_sha=str(run.get("head_sha") or ""),
                    download_url=str(
                        a.get("archive_download_url")
                        or f"{self.api_url}/repos/{repo}/actions/artifacts/{a['id']}/zip"
                    ),
                )
            )
        return out

    def artifact_zip(self, artifact: Artifact) -> bytes:
        """The artifact's zip: GitHub answers with a redirect to storage, fetched without the token."""
        resp = self._open(self._request("GET", artifact.download_url), redirect=False)
        with resp:
            location = (
                resp.headers.get("Location") if resp.status in (301, 302, 303, 307, 308) else None
            )
            if location is None:
                return bytes(resp.read(MAX_ZIP + 1)[:MAX_ZIP])
        plain = urllib.request.Request(location, headers={"User-Agent": "harness-ci"})
        with self._open(plain) as blob:
            data = blob.read(MAX_ZIP + 1)
        if len(data) > MAX_ZIP:
            raise APIError(f"artifact {artifact.name}: larger than {MAX_ZIP} bytes")
        return bytes(data)


def zip_members(data: bytes, names: tuple[str, ...]) -> dict[str, bytes]:
    """The named files of a zip (by base name, at any depth; the first of each), size-bounded."""
    found: dict[str, bytes] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            base = info.filename.rsplit("/", 1)[-1]
            if base in names and base not in found and not info.is_dir():
                if info.file_size > MAX_MEMBER:
                    continue
                found[base] = zf.read(info)
    return found
