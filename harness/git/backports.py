"""Git reads of the release matrix (``harness backports``): the source history with messages,
ancestry sets, patch ids of many commits, and trial cherry-picks.

Whether a change is in place on a release: its diff (context kept) checked with ``git apply
--check``, reverse and forward, against the release's copies of its files, written into a
temporary folder of the run folder outside any repository.

Batched: one ``git log`` for the history, one ``rev-list`` per release, one ``diff-tree --stdin``
piped into one ``git patch-id`` for every commit at once. Trial picks never touch the user's
repository: the three commits a cherry-pick merges (the source's parent as the base, the source and
the release tip on top of it) are written in-process as loose objects into a temporary object
directory of the run folder (the repository's own objects are its alternate), and ``git merge-tree
--write-tree`` merges them there; the directory is removed afterwards.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.git.apply import _object_format, check_both_ways
from harness.git.patch import FilePatch, parse_files
from harness.git.picks import object_ids, objects
from harness.git.records import log_records
from harness.git.repo import GitError, GitRepo
from harness.infra import workarea
from harness.infra.futures import ThreadPoolExecutor


@dataclass(frozen=True)
class SourceCommit:
    """A source-branch commit as the matrix needs it: subject and body (for the candidate rule)."""

    sha: str
    parents: tuple[str, ...]
    commit_time: int
    subject: str
    body: str

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


def source_log(
    repo: GitRepo,
    include: Sequence[str],
    exclude: Sequence[str] = (),
    *,
    since: str | None = None,
    first_parent: bool = False,
) -> list[SourceCommit]:
    """Commits of ``include ^exclude`` (newest first), with subject and body, in one ``git log``.
    ``since`` is a date git understands (``--since``, by committer date)."""
    options = []
    if since is not None:
        options.append(f"--since={since}")
    if first_parent:
        options.append("--first-parent")
    rows = log_records(
        repo, ("%H", "%P", "%ct", "%s", "%b"), options, include=include, exclude=exclude
    )
    return [
        SourceCommit(sha, tuple(parents.split()), int(ct or 0), subject, body)
        for (sha, parents, ct, subject, body), _ in rows
    ]


def reachable(repo: GitRepo, tip: str, exclude: Sequence[str] = ()) -> set[str]:
    """Every commit of ``tip ^exclude`` (one ``rev-list``)."""
    out = repo.run_text(["rev-list", tip, *(f"^{x}" for x in exclude), "--"])
    return set(out.split())


def first_parent_line(repo: GitRepo, tip: str, exclude: str) -> list[str]:
    """The commits of ``tip``'s first-parent line down to ``exclude`` (one ``rev-list``)."""
    out = repo.run_text(["rev-list", "--first-parent", tip, f"^{exclude}", "--"])
    return out.split()


def non_merges(repo: GitRepo, tip: str, exclude: Sequence[str] = ()) -> list[str]:
    """The non-merge commits of ``tip ^exclude``, newest first (one ``rev-list``)."""
    out = repo.run_text(["rev-list", "--no-merges", tip, *(f"^{x}" for x in exclude), "--"])
    return out.split()


def brought_commits(repo: GitRepo, merges: Sequence[str], cap: int = 50) -> dict[str, list[str]]:
    """The non-merge commits each merge brought (``rev-list --no-merges M ^M^1``), oldest first;
    an empty list past ``cap`` commits (a merge of a long-lived branch is judged by itself)."""
    out: dict[str, list[str]] = {}
    for m in dict.fromkeys(merges):
        text = repo.run_text(["rev-list", "--no-merges", "--reverse", m, f"^{m}^1", "--"])
        shas = text.split()
        out[m] = shas if len(shas) <= cap else []
    return out


def merge_base_all(repo: GitRepo, shas: Sequence[str]) -> str | None:
    """The best common ancestor of all ``shas`` (``merge-base --octopus``); None when there is none."""
    uniq = list(dict.fromkeys(shas))
    if len(uniq) == 1:
        return uniq[0]
    proc = repo.popen(["merge-base", "--octopus", *uniq])
    out, _ = proc.communicate(b"")
    return out.decode().split()[0] if proc.returncode == 0 and out.strip() else None


def commit_times(repo: GitRepo, shas: Sequence[str]) -> dict[str, int]:
    """Committer time of each commit, in one ``git log --no-walk``."""
    uniq = list(dict.fromkeys(shas))
    if not uniq:
        return {}
    return {sha: int(ct or 0) for (sha, ct), _ in log_records(repo, ("%H", "%ct"), shas=uniq)}


def patch_ids(repo: GitRepo, pairs: Sequence[tuple[str, str | None]]) -> dict[str, str]:
    """``git patch-id --stable`` of each ``(commit, against)`` (``against`` None: its first
    parent), from one ``diff-tree --stdin -p`` piped into one ``patch-id``. A commit whose diff is
    empty (or binary only) has no patch id and is left out."""
    if not pairs:
        return {}
    lines = "".join(f"{c} {a}\n" if a else f"{c}\n" for c, a in pairs)
    diff = repo.popen(["diff-tree", "--stdin", "-p", "-r", "--root", "--no-color", "--always"])
    text, err = diff.communicate(lines.encode())
    if diff.returncode != 0:
        raise GitError(["diff-tree", "--stdin"], diff.returncode, err.decode("utf-8", "replace"))
    pid = repo.popen(["patch-id", "--stable"])
    out, err = pid.communicate(text)
    if pid.returncode != 0:
        raise GitError(["patch-id", "--stable"], pid.returncode, err.decode("utf-8", "replace"))
    # diff-tree prints "<commit>" (or "<commit> (from <parent>)") before each diff; patch-id answers
    # "<patch id> <commit>" per diff.
    result: dict[str, str] = {}
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            result[parts[1]] = parts[0]
    return result


# -- trial cherry-picks --------------------------------------------------------------
@dataclass(frozen=True)
class TrialPick:
    """Would ``commit`` (diffed against ``parent``) apply cleanly on top of ``onto``? ``files``:
    the commit's changes as ``(status, old path, new path)`` when known (enables the fast path)."""

    commit: str
    parent: str
    onto: str
    files: tuple[tuple[str, str | None, str | None], ...] | None = None


def _fast_specs(t: TrialPick) -> list[str] | None:
    """The objects that decide a trial without a merge, or None when only a merge can tell (a
    rename or copy, no file list)."""
    if not t.files or any(st[:1] in ("R", "C") for st, _, _ in t.files):
        return None
    specs: list[str] = []
    for st, old, new in t.files:
        path = new if st == "A" else old
        if not path:
            return None
        specs += [f"{t.onto}:{path}", f"{t.parent}:{path}"]
        if st == "A" and "/" in path:
            specs.append(f"{t.onto}:{path.rsplit('/', 1)[0]}")
    return specs


def _fast_answer(t: TrialPick, ids: dict[str, str | None]) -> bool | None:
    """True when every file the commit changes is, at ``onto``, what it was at ``parent`` (and a
    file it adds is absent there, in a folder that still exists): git's three-way merge then
    takes the commit's side of each file, cleanly. None: a merge must tell."""
    assert t.files is not None
    for st, old, new in t.files:
        path = new if st == "A" else old
        at_onto, at_parent = ids.get(f"{t.onto}:{path}"), ids.get(f"{t.parent}:{path}")
        if st == "A":
            folder_ok = "/" not in (path or "") or ids.get(
                f"{t.onto}:{(path or '').rsplit('/', 1)[0]}"
            )
            if at_onto is not None or at_parent is not None or not folder_ok:
                return None
        elif at_onto is None or at_onto != at_parent:
            return None
    return True


def _objects_dir(repo: GitRepo) -> Path:
    rel = repo.run_text(["rev-parse", "--git-path", "objects"]).strip()
    p = Path(rel)
    return p if p.is_absolute() else (repo.git_dir / p).resolve()


class _LooseWriter:
    """Writes commit objects as loose objects into a directory the harness owns."""

    def __init__(self, repo: GitRepo, root: Path) -> None:
        self.root = root
        self.algo = (
            hashlib.sha256 if _object_format(str(repo.git_dir)) == "sha256" else hashlib.sha1
        )

    def commit(self, tree: str, parents: Sequence[str] = ()) -> str:
        who = b"harness <harness@invalid> 0 +0000"
        body = b"tree " + tree.encode() + b"\n"
        body += b"".join(b"parent " + p.encode() + b"\n" for p in parents)
        body += b"author " + who + b"\ncommitter " + who + b"\n\ntrial pick\n"
        raw = b"commit %d\0" % len(body) + body
        sha = self.algo(raw).hexdigest()
        folder = self.root / sha[:2]
        folder.mkdir(exist_ok=True)
        path = folder / sha[2:]
        if not path.exists():
            path.write_bytes(zlib.compress(raw))
        return sha


def trial_picks(
    repo: GitRepo, trials: Sequence[TrialPick], workers: int = 0, *, fast: bool = True
) -> list[bool | None]:
    """For each trial: True when a cherry-pick would apply without a conflict, False when it
    conflicts, None when git could not tell (a tree is missing, merge-tree failed).

    The cherry-pick is merge-ort's three-way merge of ``onto`` and ``commit`` over ``parent``
    (what ``git cherry-pick`` does), run as ``merge-tree --write-tree`` on synthetic commits: the
    parent's tree as a root commit, and the two trees as its children, so that their merge base is
    the parent whatever git version (``--merge-base`` needs git 2.40)."""
    if not trials:
        return []
    # Fast path: files the release never changed since the commit's parent take the commit's side.
    quick: dict[int, bool] = {}
    asked = {i: (_fast_specs(t) if fast else None) for i, t in enumerate(trials)}
    wanted = sorted({x for v in asked.values() if v for x in v})
    if wanted:
        ids = dict(zip(wanted, object_ids(repo, wanted), strict=True))
        for i, v in asked.items():
            if v is not None and _fast_answer(trials[i], ids):
                quick[i] = True
    slow = [t for i, t in enumerate(trials) if i not in quick]
    merged = iter(_merge_trials(repo, slow, workers))
    return [True if i in quick else next(merged) for i in range(len(trials))]


def _merge_trials(repo: GitRepo, trials: Sequence[TrialPick], workers: int) -> list[bool | None]:
    return [None if r is None else r[0] for r in _merges(repo, trials, workers)]


def empty_picks(repo: GitRepo, trials: Sequence[TrialPick], workers: int = 0) -> list[bool]:
    """For each trial: True when the cherry-pick merges cleanly and changes nothing (the merged
    tree is ``onto``'s own: every hunk of the commit is already there as the commit has it)."""
    trees = dict(zip(
        [t.onto for t in trials],
        [o[0] if o else None for o in objects(repo, [f"{t.onto}^{{tree}}" for t in trials])],
        strict=False,
    ))  # fmt: skip
    return [
        r is not None and r[0] is True and r[1] == trees.get(t.onto)
        for t, r in zip(trials, _merges(repo, trials, workers), strict=True)
    ]


def _merges(
    repo: GitRepo, trials: Sequence[TrialPick], workers: int
) -> list[tuple[bool | None, str] | None]:
    """``merge-tree --write-tree`` of each trial: (clean, the merged tree), None where a tree is
    missing."""
    if not trials:
        return []
    specs = sorted({x for t in trials for x in (t.commit, t.parent, t.onto)})
    trees = dict(
        zip(
            specs,
            [o[0] if o else None for o in objects(repo, [f"{s}^{{tree}}" for s in specs])],
            strict=True,
        )
    )
    tmp = workarea.mkdtemp("harness-pick-objects-")
    try:
        writer = _LooseWriter(repo, tmp)
        env = {
            "GIT_OBJECT_DIRECTORY": str(tmp),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(_objects_dir(repo)),
        }
        jobs: list[tuple[str, str] | None] = []
        bases: dict[str, str] = {}
        for t in trials:
            tb, tc, to = trees.get(t.parent), trees.get(t.commit), trees.get(t.onto)
            if not (tb and tc and to):
                jobs.append(None)
                continue
            if tb not in bases:
                bases[tb] = writer.commit(tb)
            base = bases[tb]
            jobs.append((writer.commit(to, [base]), writer.commit(tc, [base])))

        def merge(job: tuple[str, str] | None) -> tuple[bool | None, str] | None:
            if job is None:
                return None
            proc = repo.popen(["merge-tree", "--write-tree", "--name-only", "-z", *job], env=env)
            out, _ = proc.communicate(b"")
            tree = out.split(b"\0", 1)[0].split(b"\n", 1)[0].decode("ascii", "replace").strip()
            return {0: True, 1: False}.get(proc.returncode), tree

        n = workers or min(
            8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2
        )
        if n <= 1 or len(jobs) < 4:
            return [merge(j) for j in jobs]
        with ThreadPoolExecutor(max_workers=n, thread_name_prefix="harness-trial-pick") as pool:
            return list(pool.map(merge, jobs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- is a change in place? -----------------------------------------------------------
@dataclass(frozen=True)
class InPlaceCheck:
    """A commit's diff (``git diff`` text, context kept, no binary file) and the release's
    content of each path it names (None: absent there)."""

    diff: bytes
    files: tuple[tuple[str, bytes | None], ...]


def in_place(checks: Sequence[InPlaceCheck], workers: int = 0) -> list[tuple[bool, bool]]:
    """For each check: (the diff reverse-applies, the diff applies) to the release's files, each
    written into its own temporary folder (outside any repository; removed afterwards)."""
    if not checks:
        return []
    tmp = workarea.mkdtemp("harness-in-place-")
    try:

        def one(i: int) -> tuple[bool, bool]:
            root = tmp / str(i)
            root.mkdir()
            try:
                for path, data in checks[i].files:
                    if data is None:
                        continue
                    target = root / path
                    if ".." in Path(path).parts or path.startswith("/"):
                        return (False, False)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
            except OSError:  # a path both a file and a folder: not judged
                return (False, False)
            try:
                return check_both_ways(root, checks[i].diff)
            finally:
                shutil.rmtree(root, ignore_errors=True)

        n = workers or min(
            8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2
        )
        if n <= 1 or len(checks) < 4:
            return [one(i) for i in range(len(checks))]
        with ThreadPoolExecutor(max_workers=n, thread_name_prefix="harness-in-place") as pool:
            return list(pool.map(one, range(len(checks))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def file_sections(chunk: bytes) -> list[tuple[FilePatch, bytes]]:
    """A commit's ``diff-tree -p`` text (``diff_chunks``) cut into its files: each file's patch
    with its own ``diff --git`` section."""
    parts = chunk.split(b"\ndiff --git ")
    out: list[tuple[FilePatch, bytes]] = []
    for part in parts[1:]:
        text = b"diff --git " + part.rstrip(b"\n") + b"\n"
        parsed = parse_files(text)
        if len(parsed) == 1:
            out.append((parsed[0], text))
    return out
