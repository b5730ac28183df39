"""Batched object look-ups the fidelity check needs: one ``cat-file`` process for many objects."""

from __future__ import annotations

from typing import Iterable, Sequence

from harness.git.repo import GitError, GitRepo


def object_ids(repo: GitRepo, specs: Sequence[str]) -> list[str | None]:
    """Resolve many object specs (``rev:path``, ``sha^{commit}``…) in one ``cat-file --batch-check``.

    Returns one id per spec, ``None`` where the object does not exist. Specs containing a newline
    cannot be asked for and come back as ``None``.
    """
    if not specs:
        return []
    asked = [s for s in specs if "\n" not in s]
    proc = repo.popen(["cat-file", "--batch-check=%(objectname) %(objecttype)"])
    out, err = proc.communicate("".join(s + "\n" for s in asked).encode("utf-8", "surrogateescape"))
    if proc.returncode != 0:
        raise GitError(["cat-file", "--batch-check"], proc.returncode, err.decode("utf-8", "replace"))
    answers = out.decode("utf-8", "surrogateescape").split("\n")
    found: dict[str, str | None] = {}
    for spec, line in zip(asked, answers):
        # "<spec> missing" / "<spec> ambiguous" end with the status word; found objects with a type.
        parts = line.rsplit(" ", 1)
        ok = len(parts) == 2 and parts[1] in ("blob", "tree", "commit", "tag") and len(parts[0]) >= 40
        found[spec] = parts[0] if ok else None
    return [found.get(s) for s in specs]


def read_blobs(repo: GitRepo, ids: Iterable[str]) -> dict[str, bytes]:
    """Contents of many objects in one ``cat-file --batch`` process (bytes, exactly as stored)."""
    wanted = sorted({i for i in ids if i})
    if not wanted:
        return {}
    proc = repo.popen(["cat-file", "--batch"])
    out, err = proc.communicate("".join(i + "\n" for i in wanted).encode())
    if proc.returncode != 0:
        raise GitError(["cat-file", "--batch"], proc.returncode, err.decode("utf-8", "replace"))
    result: dict[str, bytes] = {}
    pos = 0
    for oid in wanted:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split(b" ")
        pos = nl + 1
        if len(header) != 3:  # "<id> missing"
            continue
        size = int(header[2])
        result[oid] = out[pos:pos + size]
        pos += size + 1  # content is followed by a newline
    return result
