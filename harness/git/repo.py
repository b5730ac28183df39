"""Read-only access to the user's repository.

Everything that talks to git lives under ``harness/git``. Nothing here changes the
user's HEAD, index, working tree, refs, stash or config: commands are plumbing, and the
few that write objects (a trial merge) write them into a temporary object directory.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.git.capture import capture_file, read_file
from harness.git.kept import end_kept
from harness.git.records import git_time, log_records
from harness.infra.process import GIT_LOCATING_ENV

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class Commit:
    """Metadata of one commit, as read by a single ``git log`` pass."""

    sha: str
    parents: tuple[str, ...]
    tree: str
    author_name: str
    author_email: str
    author_time: int
    author_tz: str
    committer_name: str
    committer_email: str
    committer_time: int
    committer_tz: str
    subject: str
    body: str
    dated: bool = True  # False: git could not date it (its times then read 0, 1970-01-01)

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    @property
    def message(self) -> str:
        return self.subject + ("\n\n" + self.body if self.body else "")


# The one --batch-check format kept running, and how each format the harness asks is read off
# its answer (an object found: "<id> <type> <size>"; else git's own "<spec> missing" line).
_CHECK = "%(objectname) %(objecttype) %(objectsize)"
_FOUND = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})? \S+ \d+\Z")


_CHECK_SPEC = 1024  # longer specs (paths are rarely this long) go to a process of their own


def _exchanges(specs: Sequence[str]) -> Iterator[Sequence[str]]:
    """``specs`` cut into runs of at most 256 specs and 16 KiB."""
    start, size = 0, 0
    for i, spec in enumerate(specs):
        if i > start and (i - start >= 256 or size + len(spec) + 1 > 16 << 10):
            yield specs[start:i]
            start, size = i, 0
        size += len(spec) + 1
    if start < len(specs):
        yield specs[start:]


def _fields_of(*wanted: int) -> Callable[[str], str]:
    def pick(line: str) -> str:
        if not _FOUND.match(line):
            return line
        parts = line.split(" ")
        return " ".join(parts[i] for i in wanted)

    return pick


_CHECK_FORMATS: dict[str, Callable[[str], str]] = {
    _CHECK: _fields_of(0, 1, 2),
    "%(objectname) %(objecttype)": _fields_of(0, 1),
    "%(objecttype) %(objectsize)": _fields_of(1, 2),
}
_LOG_FIELDS = ("%H", "%P", "%T", "%an", "%ae", "%at", "%ad", "%cn", "%ce", "%ct", "%cd", "%s", "%b")


LOCATING_ENV = GIT_LOCATING_ENV
_DISCOVERY_ENV = LOCATING_ENV


def git_env(
    extra: dict[str, str] | None = None, base: dict[str, str] | None = None
) -> dict[str, str]:
    """``base`` (default: this process's environment) without ``LOCATING_ENV``, with ``extra``."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in LOCATING_ENV}
    env.update(extra or {})
    return env


def _discover(where: Path, search_up: bool) -> tuple[Path, Path, bool, Path | None] | str:
    """Git dir, common dir, bare flag and work tree of the repository at ``where`` (or above it
    when ``search_up``), from ``git rev-parse`` itself, so the repository is found exactly as every
    later git call finds it; else why not, in one line."""
    env = {k: v for k, v in os.environ.items() if k not in _DISCOVERY_ENV}
    env["LC_ALL"] = "C"
    if not search_up:  # ``--repo DIR`` names the repository itself, not a folder inside one
        env["GIT_CEILING_DIRECTORIES"] = str(where.resolve().parent)

    try:
        proc = subprocess.run(
            [
                "git",
                "rev-parse",
                "--absolute-git-dir",
                "--git-common-dir",
                "--is-bare-repository",
                "--is-inside-work-tree",
                "--show-cdup",  # the way up to the work tree's top (nothing outside a work tree)
            ],
            capture_output=True,
            env=env,
            cwd=str(where),
        )
    except OSError as exc:  # not a directory, no permission
        return exc.strerror or "cannot enter it"
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        if not why or "not a git" in why[0]:
            return "not a git repository"
        return why[0].removeprefix("fatal: ")
    out = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    if len(out) < 5:
        return "not a git repository"
    git_dir = Path(out[0])
    common = Path(out[1]) if os.path.isabs(out[1]) else (where / out[1]).resolve()
    bare = out[2] == "true"
    work_tree: Path | None
    if out[3] == "true":
        work_tree = (where / out[4]).resolve()
    else:  # bare, or opened at its .git folder
        work_tree = None if bare else (git_dir.parent if git_dir.name == ".git" else where)
    return git_dir, common, bare, work_tree


# A file over this size is binary to every diff the harness asks for (git's core.bigFileThreshold,
# set on each call: the repository's own setting does not count) and its blob is not read whole
# by the checks: a 300 MB text file in a pick cost 105 s and 9.6 GB of memory before.
BIG_FILE = 16 << 20

_RANGE = re.compile(r"\.\.|^\^|\^[@!-]")  # A..B, A...B, ^A, A^@, A^!, A^-: several commits
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class GitRepo:
    """A user's repository, opened read-only (working or bare)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        where = Path(path or os.getcwd())
        if not where.exists():
            raise UsageError(f"--repo {where}: no such directory")
        found = _discover(where, search_up=path is None)
        if isinstance(found, str):
            above = _discover(where, search_up=True) if path is not None else found
            if not isinstance(above, str):  # a folder inside a repository: say which
                top = above[3] or above[0]
                found = f"a folder inside the repository at {top}: --repo names its top folder"
            raise UsageError(f"{where}: {found}")
        self.git_dir, self._common_dir, self.bare, self.work_tree = found
        self._batch: subprocess.Popen[bytes] | None = None
        self._checker: subprocess.Popen[bytes] | None = None  # cat-file --batch-check, kept
        self._check_lock = threading.Lock()
        self._batch_lock = threading.Lock()  # one question at a time to the kept cat-file --batch
        self._resolved: dict[tuple[str, str], str] = {}
        self.big_file = BIG_FILE
        self.walks: dict[tuple[str, str], list[list[str]]] = {}  # git/history.py range_parents
        self.ranges: dict[tuple[str, str], list[Commit]] = {}  # git/history.py range_commits
        self.bases: dict[tuple[str, str], str | None] = {}  # merge bases of two commit ids
        self.grep_unions: dict[tuple[tuple[str, ...], tuple[str, ...]], Any] = {}  # git/picks.py
        self.grep_lock = threading.Lock()

    @property
    def objects_dir(self) -> Path:
        """Where this repository's objects are (shared by all its worktrees)."""
        return self._common_dir / "objects"

    def owns(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (existing or not; links resolved) lies inside this repository's work
        tree or git folders, where the harness never writes."""
        where = Path(path).resolve()
        owned = [p.resolve() for p in (self.work_tree, self.git_dir, self._common_dir) if p]
        owned += self._other_work_trees()
        return any(where == p or p in where.parents for p in owned)

    def _other_work_trees(self) -> list[Path]:
        """The work trees of this repository beside the one opened: the main one (seen from a
        linked worktree) and every linked one (``git worktree add``), from git's own records."""
        common = self._common_dir
        roots = [common.parent] if common.name == ".git" else []
        for record in sorted((common / "worktrees").glob("*/gitdir")):
            try:
                linked = Path(record.read_text(encoding="utf-8", errors="surrogateescape").strip())
            except OSError:
                continue
            if linked.is_absolute():
                roots.append(linked.parent)  # <work tree>/.git → <work tree>
        return [r.resolve() for r in roots]

    def __getstate__(self) -> dict[str, object]:
        """The repository as another interpreter opens it (``harness/infra/offload.py``): its paths and
        limits; no running process, no memo."""
        state = dict(self.__dict__)
        state.update(
            _batch=None, _checker=None, _resolved={}, walks={}, ranges={}, bases={}, grep_unions={}
        )
        state.pop("_check_lock")
        state.pop("_batch_lock")
        state.pop("grep_lock")
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._check_lock = threading.Lock()
        self._batch_lock = threading.Lock()
        self.grep_lock = threading.Lock()

    # -- running git ---------------------------------------------------------------
    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        # Output must not depend on the user's terminal, pager or locale, nor on an outer git's
        # repository, index or object store.
        env = git_env(
            {"GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
        )
        if extra:
            env.update(extra)
        return env

    def _argv(self, args: Sequence[str]) -> list[str]:
        # -c options keep user config from changing the shape of what we parse.
        return [
            "git",
            "--git-dir",
            str(self.git_dir),
            "-c",
            "core.quotepath=false",
            "-c",
            "diff.noprefix=false",
            "-c",
            "diff.mnemonicprefix=false",
            "-c",
            "diff.renames=false",
            "-c",
            "color.ui=false",
            "-c",
            "log.showSignature=false",
            "-c",  # commit messages as stored (a user's ISO-8859-1 would garble them, and the index)
            "i18n.logOutputEncoding=UTF-8",
            "-c",
            "grep.column=false",
            "-c",
            f"core.bigFileThreshold={self.big_file}",
            *args,
        ]

    def run(
        self,
        args: Sequence[str],
        *,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> bytes:
        """Run one git command and return its stdout as bytes (written to a file, read once git
        exits: ``capture_file``)."""
        out = capture_file()
        try:
            proc = subprocess.run(
                self._argv(args),
                input=input,
                stdout=out,
                stderr=subprocess.PIPE,
                env=self._env(env),
                cwd=str(self.git_dir),
            )
            stdout = read_file(out)
        finally:
            os.close(out)
        if check and proc.returncode != 0:
            raise GitError(list(args), proc.returncode, proc.stderr.decode("utf-8", "replace"))
        return stdout

    def stream(self, args: Sequence[str], size: int = 1 << 20) -> Iterator[bytes]:
        """Run one git command and yield its stdout in pieces while git still writes it (a long
        listing parsed as git walks); GitError once it is done, if it failed. Git writes to a
        ``capture_file``, never held up by its reader (a pipe's 64 KiB would make it wait for each
        piece's parse); a consumer that stops early stops git."""
        import time

        out = capture_file()
        try:
            err = capture_file()
        except BaseException:
            os.close(out)
            raise
        try:
            proc = subprocess.Popen(
                self._argv(args),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=self._env(None),
                cwd=str(self.git_dir),
            )
            at = 0
            try:
                while True:
                    done = proc.poll() is not None  # (asked first: all it wrote is then there)
                    piece = os.pread(out, size, at)
                    if piece:
                        at += len(piece)
                        yield piece
                    elif done:
                        break
                    else:
                        time.sleep(0.002)
            finally:
                if proc.poll() is None:
                    proc.kill()  # (the consumer stopped early, or was interrupted)
                proc.wait()
            if proc.returncode != 0:
                message = read_file(err).decode("utf-8", "replace")
                raise GitError(list(args), proc.returncode, message)
        finally:
            os.close(out)
            os.close(err)

    def run_text(self, args: Sequence[str], **kw: object) -> str:
        return self.run(args, **kw).decode("utf-8", "surrogateescape")  # type: ignore[arg-type]

    def feed(self, args: Sequence[str], input: bytes) -> tuple[int, bytes, bytes]:
        """Run one ``--stdin`` git command fed ``input``: its exit status, stdout (through a
        ``capture_file``) and stderr."""
        out = capture_file()
        try:
            proc = self.popen(args, stdout=out)
            try:
                _, err = proc.communicate(input)
            finally:  # interrupted: stop git
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            return proc.returncode, read_file(out), err
        finally:
            os.close(out)

    def popen(
        self, args: Sequence[str], env: dict[str, str] | None = None, *, stdout: int | None = None
    ) -> subprocess.Popen[bytes]:
        """Start a long-lived git process (``--stdin`` batch modes); ``stdout``: a file for its
        output (``capture_file``) instead of a pipe."""
        return subprocess.Popen(
            self._argv(args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE if stdout is None else stdout,
            stderr=subprocess.PIPE,
            env=self._env(env),
            cwd=str(self.git_dir),
        )

    # -- refs ----------------------------------------------------------------------
    def resolve(self, ref: str, kind: str = "commit") -> str:
        """Resolve a ref to a full sha; unknown refs and option-looking names are usage errors."""
        if not ref or "\n" in ref or "\0" in ref:
            raise UsageError(f"invalid ref {ref!r}")
        if _RANGE.search(ref):
            raise UsageError(f"{ref!r} is a range; one ref (a single {kind}) is expected here")
        known = self._resolved.get((ref, kind))
        if (
            known
        ):  # one answer per name for the whole run: later sections see the refs the first saw
            return known
        out = (
            self.run(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{{kind}}}"],
                check=False,
            )
            .decode("utf-8", "replace")
            .strip()
        )
        if not _OBJECT_ID.fullmatch(out):
            hint = (
                (
                    "; this repository is shallow: run `git fetch --unshallow` and fetch the branch (GitHub "
                    "Actions: actions/checkout with `fetch-depth: 0`)"
                )
                if self.is_shallow()
                else ""
            )
            raise UsageError(f"unknown ref {ref!r} (not a {kind} in {self.git_dir}{hint})")
        self._resolved[(ref, kind)] = out
        self._resolved[(out, kind)] = out  # the id itself, asked again later, is known too
        return out

    def preresolve(self, refs: Iterable[str], kinds: Sequence[str] = ("commit", "tree")) -> None:
        """Resolve many refs at once (one ``cat-file --batch-check``) into the answers ``resolve``
        gives for the rest of the run; a ref it cannot answer is left to ``resolve`` and its error."""
        names = sorted(
            {r for r in refs if r and "\n" not in r and "\0" not in r and not _RANGE.search(r)}
        )
        asked = [(r, k) for r in names for k in kinds if (r, k) not in self._resolved]
        if not asked:
            return
        lines = self.batch_check([f"{r}^{{{k}}}" for r, k in asked], "%(objectname) %(objecttype)")
        got = {
            (r, k): line.split(" ", 1)[0]
            for (r, k), line in zip(asked, lines, strict=True)
            if line.endswith(f" {k}") and _OBJECT_ID.fullmatch(line.split(" ", 1)[0])
        }
        self._resolved.update(got)
        for r in names:  # a commit's own id names it and its tree as the ref does
            commit, tree = self._resolved.get((r, "commit")), self._resolved.get((r, "tree"))
            if commit:
                self._resolved.setdefault((commit, "commit"), commit)
                if tree:
                    self._resolved.setdefault((commit, "tree"), tree)

    def shallow_file(self) -> Path:
        """Where git keeps the shallow boundary (``git rev-parse --git-path shallow``: the common
        folder's, a linked worktree's too)."""
        return self._common_dir / "shallow"

    def is_shallow(self) -> bool:
        """Whether history was cut off when this repository was fetched (``$GIT_DIR/shallow`` exists)."""
        return (self.git_dir / "shallow").exists() or self.shallow_file().exists()

    def try_resolve(self, ref: str, kind: str = "commit") -> str | None:
        try:
            return self.resolve(ref, kind)
        except UsageError:
            return None

    def parse_range(self, spec: str) -> tuple[str, str]:
        """``A..B`` → (sha A, sha B)."""
        if ".." not in spec or "..." in spec:
            raise UsageError(f"expected a range BASE..HEAD, got {spec!r}")
        base, head = spec.split("..", 1)
        if not base or not head:
            raise UsageError(f"expected a range BASE..HEAD, got {spec!r}")
        return self.resolve(base), self.resolve(head)

    def merge_base(self, a: str, b: str) -> str | None:
        if (a, b) in self.bases:  # (kept only for commit ids: what they name never moves)
            return self.bases[(a, b)]
        proc = subprocess.run(
            self._argv(["merge-base", a, b]),
            capture_output=True,
            env=self._env(),
            cwd=str(self.git_dir),
        )
        out = proc.stdout.decode().strip() or None
        # 1: no merge base (an answer); anything else but 0 is an error, never kept.
        if proc.returncode in (0, 1) and _OBJECT_ID.fullmatch(a) and _OBJECT_ID.fullmatch(b):
            self.bases[(a, b)] = out
        return out

    def is_ancestor(self, a: str, b: str) -> bool:
        proc = subprocess.run(
            self._argv(["merge-base", "--is-ancestor", a, b]),
            capture_output=True,
            env=self._env(),
            cwd=str(self.git_dir),
        )
        return proc.returncode == 0

    # -- history -------------------------------------------------------------------
    def rev_list(
        self,
        include: Iterable[str],
        exclude: Iterable[str] = (),
        *,
        no_merges: bool = False,
        reverse: bool = True,
        first_parent: bool = False,
    ) -> list[str]:
        args = ["rev-list"]
        if no_merges:
            args.append("--no-merges")
        if reverse:
            args.append("--reverse")
        if first_parent:
            args.append("--first-parent")
        args += [*include, *(f"^{x}" for x in exclude)]
        return self.run_text(args).split()

    def commits(
        self,
        include: Iterable[str],
        exclude: Iterable[str] = (),
        *,
        no_merges: bool = False,
        reverse: bool = True,
        no_walk: bool = False,
    ) -> list[Commit]:
        """Metadata of many commits in one ``git log`` process."""
        include = list(include)
        if not include:
            return []
        options = ["--date=raw"]
        if no_merges:
            options.append("--no-merges")
        if reverse and not no_walk:
            options.append("--reverse")
        if no_walk:
            rows = log_records(self, _LOG_FIELDS, options, shas=include)
        else:
            rows = log_records(self, _LOG_FIELDS, options, include=include, exclude=list(exclude))
        result = []
        for f, _ in rows:
            at, ct = git_time(f[5]), git_time(f[9])
            result.append(
                Commit(
                    sha=f[0],
                    parents=tuple(f[1].split()),
                    tree=f[2],
                    author_name=f[3],
                    author_email=f[4],
                    author_time=at or 0,
                    author_tz=(f[6].split() or ["+0000"])[-1],
                    committer_name=f[7],
                    committer_email=f[8],
                    committer_time=ct or 0,
                    committer_tz=(f[10].split() or ["+0000"])[-1],
                    subject=f[11],
                    body=f[12].rstrip("\n"),
                    dated=at is not None and ct is not None,
                )
            )
        return result

    def commit(self, sha: str) -> Commit:
        return self.commits([sha], no_walk=True)[0]

    # -- objects -------------------------------------------------------------------
    def object_at(self, rev: str, path: str) -> str | None:
        """Object id of ``path`` in ``rev``'s tree (a blob, or a tree for a folder), or None."""
        if "\n" in path or "\0" in path:
            return None
        out = (
            self.run(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}:{path}"],
                check=False,
            )
            .decode()
            .strip()
        )
        return out or None

    def blob_at(self, rev: str, path: str) -> bytes | None:
        """Contents of ``rev:path`` through one long-lived ``cat-file --batch`` (None if absent)."""
        return self.cat_file(f"{rev}:{path}")

    def read_blobs(self, specs: Sequence[str], limit: int | None = None) -> list[bytes | None]:
        """Contents of many objects (``rev:path`` or ids) in ONE ``cat-file --batch``; None when absent.

        With ``limit``, a blob larger than that is not read whole (the reviewed repository may hold
        a huge file where a small one is expected): its first ``limit + 1`` bytes stand for it, so
        a caller's size check still sees it is over."""
        result: list[bytes | None] = [None] * len(specs)
        ask = [(i, s) for i, s in enumerate(specs) if s and "\n" not in s and "\0" not in s]
        if limit is not None and ask:
            sizes = self._sizes([s for _, s in ask])
            for (i, spec), size in zip(ask, sizes, strict=True):
                if size is not None and size > limit:
                    result[i] = self._head(spec, limit + 1)
            ask = [
                (i, s) for (i, s), size in zip(ask, sizes, strict=True) if not size or size <= limit
            ]
        for (i, _), data in zip(ask, self.iter_blobs([s for _, s in ask]), strict=True):
            result[i] = data
        return result

    def iter_blobs(self, specs: Sequence[str]) -> Iterator[bytes | None]:
        """Contents of many objects in ONE ``cat-file --batch``, each yielded as soon as git has
        written it (a caller works on the first while git reads the rest); None when absent or
        not a blob, or for a spec holding a newline or NUL (it cannot be asked)."""
        ask = [s for s in specs if s and "\n" not in s and "\0" not in s]
        if not ask:
            yield from (None for _ in specs)
            return
        proc = self.popen(["cat-file", "--batch"])
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        request = b"".join(s.encode("utf-8", "surrogateescape") + b"\n" for s in ask)
        stdin = proc.stdin

        def write() -> None:  # in a thread: git stops reading while its output is not read
            try:
                stdin.write(request)
                stdin.close()
            except (BrokenPipeError, ValueError):
                pass

        writer = threading.Thread(target=write, name="harness-cat-file", daemon=True)
        writer.start()
        answered = None  # False: git stopped before answering every spec
        try:
            for spec in specs:
                if not spec or "\n" in spec or "\0" in spec:
                    yield None
                    continue
                header = proc.stdout.readline().split()
                if not header:
                    answered = False
                    break
                if len(header) == 3 and header[2].isdigit():
                    size = int(header[2])
                    data = proc.stdout.read(size + 1)  # content is followed by a newline
                    yield data[:size] if header[1] == b"blob" else None
                else:
                    yield None  # "<spec> missing" (or ambiguous)
            else:
                answered = True
        finally:
            if answered is None:  # the caller stopped early: git may be blocked writing to us
                proc.kill()
            writer.join()
            proc.stdout.close()
            err = proc.stderr.read()
            proc.stderr.close()
            code = proc.wait()
        if not answered or code != 0:
            raise GitError(["cat-file", "--batch"], code, err.decode("utf-8", "replace"))

    def batch_check(self, specs: Sequence[str], fmt: str) -> list[str]:
        """One ``cat-file --batch-check=<fmt>`` answer line per spec ("" for a spec that holds a
        newline or NUL and cannot be asked; "<spec> missing" for an absent object). The formats
        the harness asks are answered by one process kept for the run (``_checker``)."""
        asked = [s for s in specs if "\n" not in s and "\0" not in s]
        if not asked:
            return [""] * len(specs)
        pick = _CHECK_FORMATS.get(fmt)
        if pick is not None and max(map(len, asked)) <= _CHECK_SPEC:
            picked = iter([pick(line) for line in self._check(asked)])
            return [next(picked, "") if "\n" not in s and "\0" not in s else "" for s in specs]
        proc = self.popen(["cat-file", f"--batch-check={fmt}"])
        out, err = proc.communicate(
            b"".join(s.encode("utf-8", "surrogateescape") + b"\n" for s in asked)
        )
        if proc.returncode != 0:
            raise GitError(
                ["cat-file", "--batch-check"], proc.returncode, err.decode("utf-8", "replace")
            )
        answers = iter(out.decode("utf-8", "surrogateescape").split("\n"))
        return [next(answers, "") if "\n" not in s and "\0" not in s else "" for s in specs]

    def _check(self, specs: Sequence[str]) -> list[str]:
        """``cat-file --batch-check`` lines (id, type, size) from the process kept for the run,
        asked at most 256 specs and 16 KiB at a time: git echoes a missing spec, so neither pipe
        fills while the other waits."""
        with self._check_lock:
            out: list[str] = []
            for chunk in _exchanges(specs):
                proc = self._checker
                if proc is None or proc.poll() is not None:
                    proc = self._checker = self._kept(["cat-file", f"--batch-check={_CHECK}"])
                assert proc.stdin is not None and proc.stdout is not None
                try:
                    proc.stdin.write(
                        b"".join(s.encode("utf-8", "surrogateescape") + b"\n" for s in chunk)
                    )
                    proc.stdin.flush()
                    lines = [proc.stdout.readline() for _ in chunk]
                except (BrokenPipeError, OSError) as exc:
                    self._checker = None
                    raise GitError(["cat-file", "--batch-check"], -1, str(exc)) from None
                if not all(line.endswith(b"\n") for line in lines):  # git stopped
                    self._checker = None
                    raise GitError(["cat-file", "--batch-check"], proc.wait(), "no answer")
                out += [line[:-1].decode("utf-8", "surrogateescape") for line in lines]
            return out

    def _sizes(self, specs: Sequence[str]) -> list[int | None]:
        """Each blob's size (None: missing, or not a blob)."""
        sizes: list[int | None] = []
        for line in self.batch_check(specs, "%(objecttype) %(objectsize)"):
            kind, _, size = line.rpartition(" ")
            sizes.append(int(size) if kind == "blob" and size.isdigit() else None)
        return sizes

    def _head(self, spec: str, n: int) -> bytes:
        """The first ``n`` bytes of a blob; git is stopped there, not read to the end."""
        proc = self.popen(["cat-file", "blob", spec])
        assert proc.stdout is not None and proc.stdin is not None
        proc.stdin.close()
        try:
            return proc.stdout.read(n)
        finally:
            proc.kill()
            proc.stdout.close()
            if proc.stderr is not None:
                proc.stderr.close()
            proc.wait()

    def cat_file(self, spec: str) -> bytes | None:
        """One object's contents (None when missing). The process runs with ``--git-dir`` so a
        repository owned by another user works too (no safe.directory discovery)."""
        if "\n" in spec or "\0" in spec:
            return None
        # Threads share the process (column trees are made in parallel): a question and its
        # answer are one exchange, or one thread reads another's bytes and waits forever.
        with self._batch_lock:
            proc = self._batch
            if proc is None or proc.poll() is not None:
                proc = self._batch = self._kept(["cat-file", "--batch"])
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3 or not header[2].isdigit():
                return None
            return proc.stdout.read(int(header[2]) + 1)[:-1]

    def _kept(self, args: Sequence[str]) -> subprocess.Popen[bytes]:
        """A batch process kept for the run: ended (its input closed, then reaped) by ``close``,
        or when the repository object goes, or at exit."""
        proc = subprocess.Popen(
            self._argv(args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # (never read while it runs: a full pipe would block git)
            env=self._env(),
            cwd=str(self.git_dir),
        )
        weakref.finalize(self, end_kept, proc)
        return proc

    def close(self) -> None:
        with self._check_lock, self._batch_lock:
            for proc in (self._batch, self._checker):
                if proc is not None:
                    end_kept(proc)
            self._batch = self._checker = None


def run_git(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """Run git outside any ``GitRepo`` (``rev-parse`` on a git dir, ``apply`` in a harness-owned
    folder, the demo writer's ``init``/``fast-import``); output captured as bytes.

    ``check``: a non-zero exit raises ``GitError`` with git's last stderr line."""
    proc = subprocess.run(
        ["git", *args],
        input=input,
        capture_output=True,
        env=git_env(base=env),
        cwd=None if cwd is None else str(cwd),
    )
    if check and proc.returncode != 0:
        raise GitError(list(args), proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc


class GitError(Exception):
    """A git command failed unexpectedly (an internal error, not bad input)."""

    def __init__(self, args: list[str], code: int, stderr: str) -> None:
        super().__init__(
            f"git {' '.join(args[:3])} … exited {code}: {stderr.strip().splitlines()[-1:]}"
        )
        self.code = code
        self.stderr = stderr
