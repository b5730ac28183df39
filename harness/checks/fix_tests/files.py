"""Which tests: the test files the picks and their sources add or modify, by each runner's own
discovery rules at HEAD, the support files (``conftest.py``) they change, and the node ids whose
code a change touched."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.checks.fix_tests.runners import NAMES, get_runner
from harness.git.evidence import ls_tree
from harness.git.mutation import changed_lines
from harness.git.picks import entries, paths_per_commit
from harness.git.repo import GitRepo

MAX_FILES = 200  # test files run per section; past it the rest are named as not run


@dataclass(frozen=True)
class Sources:
    """The source side of the picks: every source commit, the newest (the ``source`` column) and
    the oldest's first parent (``source_parent``); empty when no pick has a source."""

    commits: tuple[str, ...] = ()
    newest: str | None = None
    parent: str | None = None


@dataclass
class TestFile:
    path: str
    runner: str
    origin: str  # "pick" | "source" | "both"
    spans_at: str  # the commit whose version of the file the changed lines refer to
    changed: set[int] = field(default_factory=set)  # changed line numbers in that version


@dataclass
class Selection:
    files: list[TestFile] = field(default_factory=list)
    support: list[TestFile] = field(default_factory=list)  # conftest.py and the like, changed
    deleted: list[str] = field(default_factory=list)  # test files a side deleted: not run
    left_out: list[str] = field(default_factory=list)  # past MAX_FILES
    # (source path, pick path): a source's test file the pick carries at another path (fidelity
    # pairs them): not run beside HEAD, where the pick's own file is the same change
    carried: list[tuple[str, str]] = field(default_factory=list)
    source_changed: list[str] = field(default_factory=list, repr=False)  # paths the sources change
    configs: dict[str, str] = field(default_factory=dict)  # runner → where its discovery was read
    head_listing: list[str] = field(default_factory=list, repr=False)  # every file at HEAD
    source_listing: list[str] = field(default_factory=list, repr=False)  # at the newest source


def order_sources(repo: GitRepo, shas: Sequence[str]) -> Sources:
    """The sources by commit time: the newest is the ``source`` column, the oldest's first parent
    the ``source_parent`` column."""
    uniq = list(dict.fromkeys(shas))
    if not uniq:
        return Sources()
    rows = sorted(entries(repo, uniq), key=lambda e: (e.commit_time or e.author_time, e.sha))
    oldest = rows[0]
    return Sources(
        tuple(e.sha for e in rows), rows[-1].sha, oldest.parents[0] if oldest.parents else None
    )


def _changed(repo: GitRepo, shas: Sequence[str]) -> set[str]:
    """Paths the commits change (a merge against its first parent)."""
    rows = entries(repo, list(shas))
    against = {e.sha: e.parents[0] for e in rows if len(e.parents) > 1}
    return {p for names in paths_per_commit(repo, list(shas), against).values() for p in names}


def select_tests(
    repo: GitRepo,
    base: str,
    head: str,
    picks: Sequence[str],
    sources: Sources,
    renamed: Sequence[tuple[str, str]] = (),
) -> Selection:
    """The selection of one section (paths as at HEAD, for source-only files as at the source;
    ``renamed``: (pick path, source path) of files the pick carries at another path)."""
    sel = Selection()
    carried_at = {src: mine for mine, src in renamed}
    pick_paths = _changed(repo, picks)
    source_paths = _changed(repo, sources.commits) if sources.commits else set()
    sel.source_changed = sorted(source_paths)
    sel.head_listing = sorted(e.path for e in ls_tree(repo, head) if e.type == "blob")
    head_listing = set(sel.head_listing)
    if sources.newest:
        sel.source_listing = sorted(
            e.path for e in ls_tree(repo, sources.newest) if e.type == "blob"
        )
    source_listing = set(sel.source_listing)

    def read(path: str) -> bytes | None:
        return repo.blob_at(head, path)

    for name in NAMES:
        runner = get_runner(name)
        config = runner.configure(read, sel.head_listing)
        found = False
        for path in sorted(pick_paths | source_paths):
            support = runner.is_support_file(path)
            if not support and not runner.is_test_file(path, config):
                continue
            found = found or not support
            in_pick, in_source = path in pick_paths, path in source_paths
            origin = "both" if in_pick and in_source else "pick" if in_pick else "source"
            mine = carried_at.get(path)
            if (
                origin == "source"
                and mine in pick_paths
                and mine in head_listing
                and runner.is_test_file(mine, config)
            ):
                # ipython 8.x carries main's tests/test_completer.py change in
                # IPython/core/tests/test_completer.py: main's whole file beside 8.x would run
                # main's other tests there (its features are not 8.x's)
                sel.carried.append((path, mine))
                continue
            at = head if in_pick else str(sources.newest)
            if path not in (head_listing if in_pick else source_listing):
                if not support:
                    sel.deleted.append(path)
                continue
            (sel.support if support else sel.files).append(TestFile(path, name, origin, at))
        if found:
            sel.configs[name] = getattr(config, "inifile", "") or "defaults"
    if len(sel.files) > MAX_FILES:
        sel.left_out = [f.path for f in sel.files[MAX_FILES:]]
        sel.files = sel.files[:MAX_FILES]
    _mark_changed(repo, base, head, sources, sel.files)
    return sel


def _mark_changed(
    repo: GitRepo, base: str, head: str, sources: Sources, files: list[TestFile]
) -> None:
    """Each file's changed lines: HEAD against BASE for what the picks carry, the source against
    its parent for source-only files."""
    at_head = [f.path for f in files if f.origin != "source"]
    at_source = [f.path for f in files if f.origin == "source"]
    lines = changed_lines(repo, base, head, at_head) if at_head else {}
    if at_source and sources.newest and sources.parent:
        lines.update(changed_lines(repo, sources.parent, sources.newest, at_source))
    for f in files:
        f.changed = lines.get(f.path, set())
