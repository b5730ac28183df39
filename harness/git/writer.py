"""Builds NEW repositories that the harness owns (the demo), in one ``git fast-import`` stream.

This never touches a user's repository: it refuses a target that already holds files it did
not create.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import UsageError
from harness.git.repo import run_git

MARKER = ".harness-owned"


@dataclass
class CommitSpec:
    """One commit to write: files to set (``None`` deletes), parents by mark, fixed identity and dates."""

    mark: str
    branch: str
    message: str
    files: Mapping[str, str | None]
    parents: list[str] = field(default_factory=list)  # marks; first is the first parent
    author: str = "Demo Author <author@example.com>"
    committer: str | None = None
    author_time: int = 1_767_225_600  # 2026-01-01, fixed so shas are reproducible
    committer_time: int | None = None


def _data(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"data %d\n" % len(raw) + raw + b"\n"


def write_repo(
    path: Path, commits: list[CommitSpec], branches: dict[str, str], checkout: str
) -> dict[str, str]:
    """Create ``path`` as a fresh repository holding ``commits``; returns mark → sha.

    ``branches`` maps extra branch names to marks; ``checkout`` is the branch whose files are
    written to the work tree.
    """
    path = path.resolve()
    if path.exists():
        if not (path / MARKER).exists():
            raise UsageError(f"{path} exists and was not created by harness; choose another --dir")
        shutil.rmtree(path)
    path.mkdir(parents=True)
    env_git = [
        "-c",
        "init.defaultBranch=main",
        "-c",
        "core.autocrlf=false",
        "-c",
        "core.hooksPath=/dev/null",
    ]
    run_git([*env_git, "init", "-q", str(path)], check=True)
    marks: dict[str, int] = {}
    stream = bytearray()
    for i, c in enumerate(commits, start=1):
        marks[c.mark] = i
        committer = c.committer or c.author
        ct = c.committer_time if c.committer_time is not None else c.author_time
        stream += f"commit refs/heads/{c.branch}\nmark :{i}\n".encode()
        stream += (
            f"author {c.author} {c.author_time} +0000\ncommitter {committer} {ct} +0000\n".encode()
        )
        stream += _data(c.message)
        if c.parents:
            stream += f"from :{marks[c.parents[0]]}\n".encode()
            for extra in c.parents[1:]:
                stream += f"merge :{marks[extra]}\n".encode()
        for rel, content in sorted(c.files.items()):
            if content is None:
                stream += f"D {rel}\n".encode()
            else:
                stream += f"M 100644 inline {rel}\n".encode() + _data(content)
        stream += b"\n"
    for name, mark in branches.items():
        stream += f"reset refs/heads/{name}\nfrom :{marks[mark]}\n\n".encode()
    export = path / ".git" / "harness-marks"
    run_git(
        [*env_git, "-C", str(path), "fast-import", "--quiet", f"--export-marks={export}"],
        input=bytes(stream),
        check=True,
    )
    by_num = dict(line.split() for line in export.read_text().splitlines())
    export.unlink()
    run_git([*env_git, "-C", str(path), "checkout", "-q", "-f", checkout], check=True)
    (path / MARKER).write_text("created by harness demo; safe to delete\n")
    with open(path / ".git" / "info" / "exclude", "a", encoding="utf-8") as fh:
        fh.write(f"/{MARKER}\n")
    return {mark: by_num[f":{num}"] for mark, num in marks.items()}
