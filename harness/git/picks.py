"""Batched object look-ups the fidelity check needs: one ``cat-file`` process for many objects."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

from harness.git.entry import (  # noqa: F401 - (re-exported: the history's callers name them here)
    ENTRY_COMMITTED,
    ENTRY_PARENTS,
    ENTRY_SHA,
    ENTRY_SHA_PARENTS,
    ENTRY_SUBJECT,
    LogEntry,
)
from harness.git.records import git_time, log_format, log_records, records, streamed_log_records
from harness.git.repo import GitError, GitRepo
from harness.infra.lean import lazy_re

if TYPE_CHECKING:
    from harness.infra.futures import Future


def object_ids(repo: GitRepo, specs: Sequence[str]) -> list[str | None]:
    """Resolve many object specs (``rev:path``, ``sha^{commit}``…) in one ``cat-file --batch-check``.

    Returns one id per spec, ``None`` where the object does not exist. Specs containing a newline
    cannot be asked for and come back as ``None``.
    """
    return [x[0] if x else None for x in objects(repo, specs)]


def objects(repo: GitRepo, specs: Sequence[str]) -> list[tuple[str, int] | None]:
    """``(id, size)`` of many object specs in one ``cat-file --batch-check`` (None: absent, or a
    spec holding a newline)."""
    found: list[tuple[str, int] | None] = []
    for line in repo.batch_check(specs, "%(objectname) %(objecttype) %(objectsize)"):
        # "<spec> missing" / "<spec> ambiguous" end with the status word; found objects with a size.
        parts = line.rsplit(" ", 2)
        ok = (
            len(parts) == 3
            and parts[1] in ("blob", "tree", "commit", "tag")
            and len(parts[0]) >= 40
            and parts[2].isdigit()
        )
        found.append((parts[0], int(parts[2])) if ok else None)
    return found


def entries_at(repo: GitRepo, wanted: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The object id at ``rev:path`` for many (rev, path) pairs (a blob, or a submodule's commit,
    which need not be in the repository); absent pairs are left out. Asked of the run's kept
    ``cat-file --batch-check`` first (``rev:path`` names the tree entry's object); what it does not
    find (an absent path, a submodule's commit not in the repository, a path it cannot be asked)
    is listed by one ``ls-tree`` per rev, as before."""
    pairs = list(dict.fromkeys(wanted))
    out: dict[tuple[str, str], str] = {}
    by_rev: dict[str, list[str]] = {}
    ids = object_ids(repo, [f"{rev}:{path}" for rev, path in pairs]) if pairs else []
    for (rev, path), oid in zip(pairs, ids, strict=True):
        if oid is not None:
            out[(rev, path)] = oid
        else:
            by_rev.setdefault(rev, []).append(path)
    if not by_rev:
        return out

    def listing(rev: str) -> bytes:
        args = ["ls-tree", "-z", "--full-tree", rev, "--"]
        return repo.run(args + [f":(literal){p}" for p in dict.fromkeys(by_rev[rev])])

    # The processes mostly start and wait: a few at a time (a release's picks: ~8 ms each).
    from harness.infra.futures import ThreadPoolExecutor  # (a warm run asks for none)

    with ThreadPoolExecutor(min(4, len(by_rev)), "harness-ls-tree") as pool:
        for rev, text in zip(by_rev, pool.map(listing, by_rev), strict=True):
            for rec in text.split(b"\0"):
                if rec:
                    meta, _, p = rec.partition(b"\t")
                    out[(rev, p.decode("utf-8", "surrogateescape"))] = meta.decode().split()[2]
    return out


def paths_per_commit(
    repo: GitRepo, shas: Sequence[str], against: dict[str, str] | None = None
) -> dict[str, list[str]]:
    """Paths each commit changes against its first parent (or ``against[sha]``: a merge's first
    parent), in one ``diff-tree --stdin --name-only``.

    Far cheaper than patches (and than a pathspec, which git matches per tree entry): callers use
    it to pick the few commits whose patches they need.
    """
    if not shas:
        return {}
    args = [
        "diff-tree",
        "--stdin",
        "-r",
        "-z",
        "--name-only",
        "--no-renames",
        "--always",
        "--root",
        log_format("%H"),
    ]
    against = against or {}
    code, out, err = repo.feed(
        args, "".join(f"{s} {against[s]}\n" if s in against else s + "\n" for s in shas).encode()
    )
    if code != 0:
        raise GitError(args, code, err.decode("utf-8", "replace"))
    return {sha: names for (sha,), names in records(out.decode("utf-8", "surrogateescape"), 1)}


def patch_paths(repo: GitRepo, shas: Sequence[str]) -> dict[str, frozenset[str]]:
    """The path each file of a commit's patch is named by (the new path; the old one of a
    deletion) with renames detected as ``diff_many`` detects them, in one ``diff-tree --raw``
    process: no blob is diffed, so this costs a fraction of reading the patches."""
    if not shas:
        return {}
    args = ["diff-tree", "--stdin", "-r", "-z", "--raw", "-M", "--always", "--root"]
    code, out, err = repo.feed([*args, log_format("%H")], "".join(s + "\n" for s in shas).encode())
    if code != 0:
        raise GitError(args, code, err.decode("utf-8", "replace"))
    result: dict[str, frozenset[str]] = {}
    for (sha,), fields in records(out.decode("utf-8", "surrogateescape"), 1):
        named: set[str] = set()
        i = 0
        while i + 1 < len(fields) and fields[i].startswith(":"):
            status = fields[i].split(" ")[-1][:1]
            two = status in ("R", "C")  # source and destination paths follow
            path = fields[i + 2] if two and i + 2 < len(fields) else fields[i + 1]
            named.add(path)
            i += 3 if two else 2
        result[sha] = frozenset(named)
    return result


def history(
    repo: GitRepo, include: Sequence[str], exclude: Sequence[str] = (), *, paths: bool = False
) -> list[LogEntry]:
    """Commits of ``include ^exclude``, oldest first, in one ``git log`` (with ``--name-only`` if ``paths``)."""
    # git's own order, newest first, turned here: ``--reverse`` makes git hold the whole walk
    # before it writes (a 20k-commit listing of paths: ~15 % more of git's time).
    if not paths:
        return _entries(log_records(repo, _FIELDS, include=include, exclude=exclude), False)[::-1]
    # The listing of paths: parsed as git writes it, and where greps over this walk were
    # announced, with each message, which names the commits their union may match (_Union.feed).
    union = _union_of(repo, include, exclude)
    fed = union.feed() if union is not None else None
    out: list[LogEntry] = []
    if fed is None:
        for batch in streamed_log_records(
            repo, _FIELDS, _path_options(True), include=include, exclude=exclude
        ):
            out += _entries(batch, True)
        return out[::-1]
    assert union is not None
    matched: list[str] = []
    try:
        prefilter = _prefilter(union.patterns).search
        for batch in streamed_log_records(
            repo, _WITH_BODY, _path_options(True), include=include, exclude=exclude
        ):
            matched += [h[0] for h, _ in batch if prefilter(h[3])]
            out += _entries([(_NO_BODY(h), names) for h, names in batch], True)
    except BaseException as e:
        fed.set_exception(e)  # (its walk of its own, then)
        raise
    fed.set_result(matched)
    return out[::-1]


def entries(repo: GitRepo, shas: Sequence[str], *, paths: bool = False) -> list[LogEntry]:
    """``history``'s records of these very commits (no walk), in their order, in one ``git log``
    fed on stdin: what the history index lacks."""
    if not shas:
        return []
    return _entries(log_records(repo, _FIELDS, _path_options(paths), shas=shas), paths)


def walk(repo: GitRepo, include: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """The shas ``history`` lists, in its order (oldest first): one ``rev-list``, no message read."""
    return repo.rev_list(include, exclude)


_FIELDS = ("%H", "%P", "%at", "%ct", "%s")
# The listing's fields with each raw message (``%B``): the greps' candidates are read from it.
_WITH_BODY = ("%H", "%P", "%at", "%B", "%ct", "%s")
_NO_BODY = itemgetter(0, 1, 2, 4, 5)  # a record of _WITH_BODY as one of _FIELDS


def _path_options(paths: bool) -> list[str]:
    # a merge's paths are those of its first-parent diff (the whole PR)
    return ["--name-only", "--no-renames", "--diff-merges=first-parent"] if paths else []


def _entries(rows: Iterable[tuple[Sequence[str], list[str]]], paths: bool) -> list[LogEntry]:
    new = tuple.__new__  # LogEntry's own __new__ is a Python call more, 20k times over
    return [
        new(
            LogEntry,
            (
                sha,
                tuple(parents.split()),
                _time(at),
                subject,
                tuple(names) if paths else None,
                _time(ct),
            ),
        )
        for (sha, parents, at, ct, subject), names in rows
    ]


def _time(text: str) -> int:
    """``git_time(text) or 0``; a time of ten ASCII digits (every date from 2001 to 2286) read
    at once."""
    if len(text) == 10 and text.isdigit() and text.isascii():
        return int(text)
    return git_time(text) or 0


def bodies(
    repo: GitRepo,
    include: Sequence[str],
    exclude: Sequence[str] = (),
    *,
    merges: bool = False,
    grep: Sequence[str] = (),
) -> dict[str, str]:
    """Message bodies of ``include ^exclude`` in one ``git log``: merges only, or the commits whose
    message matches one of the ``grep`` patterns (extended regex, case-insensitive). Where the
    greps over this walk were announced (``greps_ahead``), read from the commits that match any of
    them: the same answer."""
    together = _together(repo, include, exclude, grep) if grep and not merges else None
    if together is not None:
        return bodies_of(repo, together.shas(), grep=grep)
    options = _bodies_options(merges, grep)
    return _bodies(
        log_records(repo, ("%H", "%b"), options, include=include, exclude=exclude, errors="replace")
    )


def greps_ahead(
    repo: GitRepo, include: Sequence[str], exclude: Sequence[str], greps: Sequence[Sequence[str]]
) -> None:
    """Say that ``bodies`` will be asked for each of ``greps`` over ``include ^exclude``: the
    first ask lists the commits whose message matches any of their patterns in one walk (a
    commit matches a grep only if it matches the union), and each grep is then read from those
    commits alone (``bodies_of``, in the walk's order): one walk of the history, not one per
    grep."""
    key = (tuple(include), tuple(exclude))
    with repo.grep_lock:
        repo.grep_unions[key] = _Union(repo, include, exclude, [g for gs in greps for g in gs])


def _union_of(repo: GitRepo, include: Sequence[str], exclude: Sequence[str]) -> _Union | None:
    with repo.grep_lock:
        union: _Union | None = repo.grep_unions.get((tuple(include), tuple(exclude)))
    return union


def _together(
    repo: GitRepo, include: Sequence[str], exclude: Sequence[str], grep: Sequence[str]
) -> _Union | None:
    union = _union_of(repo, include, exclude)
    return union if union is not None and set(grep) <= set(union.patterns) else None


# What Python's ``re`` reads otherwise than a POSIX extended regex: bracket classes and equivalence
# classes, word boundaries, back-references (numbered anew once the patterns are joined).
_NOT_PYTHON = lazy_re(r"\[\[[:.=]|\\[<>bBwWsSdD1-9]")


def _prefilter(patterns: Sequence[str]) -> re.Pattern[str]:
    """A Python regex that matches every message git's ``-E -i --grep`` of ``patterns`` matches
    (and maybe more: Python folds case over more of Unicode, reads each line of the message as git
    does, and a byte that is not UTF-8 as one character); ValueError where a pattern holds what
    Python reads otherwise (``_NOT_PYTHON``) or does not compile."""
    if any(_NOT_PYTHON.search(p) for p in patterns):
        raise ValueError("not read alike by Python and git")
    try:
        return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE | re.MULTILINE)
    except re.error as e:
        raise ValueError(str(e)) from e


class _Union:
    """The commits of one walk whose message matches any of ``patterns``, listed once."""

    def __init__(
        self, repo: GitRepo, include: Sequence[str], exclude: Sequence[str], patterns: list[str]
    ) -> None:
        self.repo, self.include, self.exclude = repo, list(include), list(exclude)
        self.patterns = list(dict.fromkeys(patterns))
        self._lock = threading.Lock()
        self._shas: list[str] | None = None
        self._fed: Future[list[str]] | None = None

    def feed(self) -> Future[list[str]] | None:
        """For a listing of the same walk that reads every message (``history``): the future it
        completes with the commits a Python regex of the patterns matches, in the walk's order, a
        superset of git's answer; None where the union was walked or is being fed already."""
        if not self._lock.acquire(blocking=False):
            return None  # being walked: the listing does not wait for that walk
        try:
            if self._shas is not None or self._fed is not None:
                return None
            try:
                _prefilter(self.patterns)
            except ValueError:
                return None
            from harness.infra.futures import (
                Future,  # a warm run, which feeds none, never pays for it
            )

            self._fed = Future()
            return self._fed
        finally:
            self._lock.release()

    def shas(self) -> list[str]:
        """The walk's commits whose message matches any of the patterns, newest first: git's
        ``--grep`` over the commits a listing fed (no walk: their ids on stdin), else over a walk
        of its own."""
        with self._lock:
            fed = self._fed if self._shas is None else None
        candidates = None
        if fed is not None:
            try:
                candidates = fed.result()
            except BaseException:  # noqa: BLE001 - the listing failed: walked here instead
                candidates = None
        with self._lock:
            if self._shas is None:
                options = _bodies_options(False, self.patterns)
                if candidates is None:
                    rows = log_records(
                        self.repo, ("%H",), options, include=self.include, exclude=self.exclude
                    )
                    self._shas = [sha for (sha,), _ in rows]
                elif candidates:
                    rows = log_records(self.repo, ("%H",), options, shas=candidates)
                    self._shas = [sha for (sha,), _ in rows]
                else:  # (none: git would read an empty stdin as HEAD)
                    self._shas = []
            return self._shas


def bodies_of(
    repo: GitRepo, shas: Sequence[str], *, merges: bool = False, grep: Sequence[str] = ()
) -> dict[str, str]:
    """``bodies`` of these very commits (no walk) that pass the same filter, fed on stdin."""
    if not shas:
        return {}
    options = _bodies_options(merges, grep)
    return _bodies(log_records(repo, ("%H", "%b"), options, shas=shas, errors="replace"))


def _bodies_options(merges: bool, grep: Sequence[str]) -> list[str]:
    args: list[str] = []
    if merges:
        args.append("--merges")
    if grep:
        args += ["-E", "-i", *(f"--grep={g}" for g in _one_pattern(grep))]
    return args


_BACKREFERENCE = lazy_re(r"\\[1-9]")


def _one_pattern(grep: Sequence[str]) -> list[str]:
    """Patterns git ORs, as one extended regex of their alternation: git matches each line of a
    message against every ``--grep`` in turn (eight patterns over a 20k-commit history: 0.36 s;
    their alternation: 0.19 s). Not where a pattern refers back to a group by number."""
    if len(grep) < 2 or any(_BACKREFERENCE.search(g) for g in grep):
        return list(grep)
    return ["|".join(f"({g})" for g in grep)]


def _bodies(rows: Iterable[tuple[Sequence[str], list[str]]]) -> dict[str, str]:
    result: dict[str, str] = {}
    for (sha, body), _ in rows:
        result[sha] = body.strip()
    return result
