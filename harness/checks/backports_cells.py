"""The release matrix's cells, classified in order: by ancestry (in-fork, picked, reached by a
merge), by content (reached by patch id, by subject or in place; n/a), the rest missing with a
trial cherry-pick; a merge's row by the commits it brought."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from harness.checks.backports_matrix import MatrixCell
from harness.checks.backports_rows import ReleasePicks
from harness.git import GitRepo
from harness.git.apply import blob_sha
from harness.git.backports import (
    InPlaceCheck,
    SourceCommit,
    TrialPick,
    empty_picks,
    file_sections,
    in_place,
    non_merges,
    patch_ids,
    reachable,
    trial_picks,
)
from harness.git.patch import FilePatch, diff_chunks, diff_many


def merges_by_commits(
    cells: dict[tuple[str, str], MatrixCell],
    brought: Mapping[str, Sequence[str]],
    order: Sequence[str],
) -> None:
    """A merge's row is picked (or reached) on a release where every commit it brought is
    picked, reached or in the fork there (picked where one of them is: a pick says more than a
    reach); a merge in the fork or picked by its own cell stays so."""
    for merge, commits in brought.items():
        if not commits:
            continue
        for n in order:
            own = cells[(merge, n)]
            if own.state in ("in-fork", "picked"):
                continue
            theirs = [cells[(c, n)] for c in commits]
            if not all(c.state in ("in-fork", "picked", "reached") for c in theirs):
                continue
            first = next((c for c in theirs if c.state == "picked"), None)
            if own.state == "reached" and first is None:
                continue
            if first is not None:
                cells[(merge, n)] = MatrixCell(merge, n, "picked", first.pick, first.status)
            else:
                cells[(merge, n)] = MatrixCell(merge, n, "reached", how="its commits")


def ancestry_cells(
    repo: GitRepo,
    row_shas: Sequence[str],
    order: Sequence[str],
    position: dict[str, int],
    forks: dict[str, str],
    tips: dict[str, str],
    oldest: str,
    picked: dict[str, ReleasePicks],
) -> tuple[dict[str, set[str]], dict[tuple[str, str], MatrixCell], list[tuple[str, str]]]:
    """The cells ancestry decides (in-fork, picked, reached by a merge) and the rest, undecided."""
    # Ancestry: one rev-list per release for rows in the history; is-ancestor for the rest.
    fork_sets = {n: reachable(repo, forks[n], [oldest]) for n in order}
    tip_sets = {n: reachable(repo, tips[n], [oldest]) for n in order}
    cells: dict[tuple[str, str], MatrixCell] = {}
    undecided: list[tuple[str, str]] = []
    for s in row_shas:
        for n in order:
            if s in position:
                in_fork, on_tip = s in fork_sets[n], s in tip_sets[n]
            else:
                in_fork = repo.is_ancestor(s, forks[n])
                on_tip = in_fork or repo.is_ancestor(s, tips[n])
            p = picked[n].by_source.get(s)
            if in_fork:
                cells[(s, n)] = MatrixCell(s, n, "in-fork")
            elif p is not None:
                cells[(s, n)] = MatrixCell(s, n, "picked", p.pick, p.status)
            elif on_tip:
                cells[(s, n)] = MatrixCell(s, n, "reached", how="merged")
            else:
                undecided.append((s, n))
    return fork_sets, cells, undecided


def by_content(
    repo: GitRepo,
    undecided: Sequence[tuple[str, str]],
    cells: dict[tuple[str, str], MatrixCell],
    order: Sequence[str],
    forks: dict[str, str],
    tips: dict[str, str],
    picked: dict[str, ReleasePicks],
    history: Sequence[SourceCommit],
    subject: Callable[[str], str],
    parents: Callable[[str], tuple[str, ...]],
) -> tuple[list[tuple[str, str]], dict[str, list[FilePatch]]]:
    """The undecided cells that content decides (reached by patch id, by subject or in place;
    n/a where the release has none of the files), and the rest, missing, with their patches."""
    # Patch ids of the undecided rows and of every release's own commits, in one pass.
    rows_left = list(dict.fromkeys(s for s, _ in undecided))
    against = {s: (parents(s)[0] if len(parents(s)) > 1 else None) for s in rows_left}
    release_commits = {n: non_merges(repo, tips[n], [forks[n]]) for n in order}
    pids = patch_ids(
        repo,
        [(s, against[s]) for s in rows_left]
        + [(c, None) for n in order for c in release_commits[n] if c not in against],
    )
    pid_on: dict[str, dict[str, str]] = {}
    for n in order:
        for rc in reversed(release_commits[n]):  # the oldest release commit with that patch id
            if rc in pids:
                pid_on.setdefault(n, {}).setdefault(pids[rc], rc)

    # The undecided rows' changes (-U0) and the files they touch at each release tip.
    patches = {
        p.commit: p.files
        for p in diff_many(repo, [(s, against[s]) for s in rows_left], context=False)
    }
    specs: list[str] = []
    for s, n in undecided:
        for f in patches.get(s, []):
            for path in {f.old_path, f.new_path} - {None}:
                specs.append(f"{tips[n]}:{path}")
    specs = list(dict.fromkeys(specs))
    blobs = dict(zip(specs, repo.read_blobs(specs, limit=repo.big_file), strict=True))

    # A pick fidelity found no source for, whose subject (PR numbers and a leading tag aside) is
    # the row's and no other source commit's since the oldest fork point: the same change, adapted.
    from harness.checks.fidelity.subjects import strip_numbers

    subject_count = Counter(strip_numbers(c.subject) for c in history)

    def subject_pick(s: str, n: str) -> str | None:
        key = strip_numbers(subject(s))
        return picked[n].unsourced.get(key) if subject_count[key] <= 1 else None

    # The release commits with a row's subject, read to confirm they change one of its files.
    named = list(dict.fromkeys(p for s, n in undecided if (p := subject_pick(s, n))))
    subject_patches = {
        p.commit: p.files for p in diff_many(repo, [(c, None) for c in named], context=False)
    }
    missing: list[tuple[str, str]] = []
    maybe: list[tuple[str, str]] = []  # cells whose change may be in place: git apply tells
    for s, n in undecided:
        pid = pids.get(s)
        same = pid_on.get(n, {}).get(pid) if pid else None
        files = patches.get(s, [])
        if same is not None:
            cells[(s, n)] = MatrixCell(s, n, "reached", same, how="patch-id")
            continue
        by_subject = subject_pick(s, n)
        if by_subject is not None and _shares_a_path(files, subject_patches.get(by_subject, [])):
            cells[(s, n)] = MatrixCell(s, n, "reached", by_subject, how="subject")
            continue
        existing = [f for f in files if f.status != "A" and f.old_path]
        if existing and all(blobs.get(f"{tips[n]}:{f.old_path}") is None for f in existing):
            cells[(s, n)] = MatrixCell(s, n, "n/a")
            continue
        if _could_be_in_place(files, blobs, tips[n], repo.big_file):
            maybe.append((s, n))
            continue
        missing.append((s, n))

    placed = _in_place(repo, maybe, against, blobs, tips, parents)
    for s, n in maybe:
        if (s, n) in placed:
            cells[(s, n)] = MatrixCell(s, n, "reached", how="in place")
        else:
            missing.append((s, n))
    return missing, patches


def try_missing(
    repo: GitRepo,
    missing: Sequence[tuple[str, str]],
    cells: dict[tuple[str, str], MatrixCell],
    patches: dict[str, list[FilePatch]],
    tips: dict[str, str],
    parents: Callable[[str], tuple[str, ...]],
    trial: bool,
) -> tuple[tuple[str, str, bool | None], ...]:
    """The missing cells, each with whether a trial cherry-pick applies; and the control that
    checks the trials' fast path against git's merge on a sample."""
    applies: list[bool | None] = [None] * len(missing)
    trials = [
        TrialPick(
            s,
            parents(s)[0],
            tips[n],
            tuple((f.status, f.old_path, f.new_path) for f in patches.get(s, [])) or None,
        )
        for s, n in missing
        if parents(s)
    ]
    answered: list[bool | None] = []
    if trial and trials:
        answered = trial_picks(repo, trials)
        answers = iter(answered)
        applies = [next(answers) if parents(s) else None for s, _ in missing]
    for (s, n), ok in zip(missing, applies, strict=True):
        cells[(s, n)] = MatrixCell(s, n, "missing", applies=ok if parents(s) else None)
    if trial and trials:
        # The fast path (files the release left as they were at the commit's parent) must answer
        # as git's merge does: a sample of its answers is merged for real.
        clean = [t for t, ok in zip(trials, answered, strict=True) if ok]
        sample = clean[:: max(1, len(clean) // 5)][:5]
        merged = trial_picks(repo, sample, fast=False)
        agree = sum(ok is True for ok in merged)
        return (
            (
                "trial-pick fast path",
                f"{agree} of {len(sample)} sampled clean trials are clean merged by merge-tree too",
                agree == len(sample),
            ),
        )
    return ()


def _shares_a_path(ours: Sequence[FilePatch], theirs: Sequence[FilePatch]) -> bool:
    """Whether two changes touch a file in common (a path either side had): a subject alone
    ("fix test") names unrelated commits."""
    paths = {x for f in ours for x in (f.old_path, f.new_path) if x}
    return any(x in paths for f in theirs for x in (f.old_path, f.new_path) if x)


def _could_be_in_place(
    files: Sequence[FilePatch], blobs: dict[str, bytes | None], tip: str, limit: int
) -> bool:
    """What the change in place needs at the release tip, cheaply: every file it deletes (or
    renames away) absent, every file it leaves present (within the size limit) with every line
    it adds. ``_in_place`` then asks git whether the change itself is there."""
    if not files:
        return False
    for f in files:
        if f.status == "D" or (f.status == "R" and f.old_path):
            if f.old_path and blobs.get(f"{tip}:{f.old_path}") is not None:
                return False
            if f.status == "D":
                continue
        at_tip = blobs.get(f"{tip}:{f.path}")
        if at_tip is None or len(at_tip) > limit:
            return False
        lines = set(at_tip.splitlines())
        if not all(ln in lines for ln in f.added):
            return False
    return True


def _in_place(
    repo: GitRepo,
    cells: Sequence[tuple[str, str]],
    against: Mapping[str, str | None],
    blobs: dict[str, bytes | None],
    tips: Mapping[str, str],
    parents: Callable[[str], tuple[str, ...]],
) -> set[tuple[str, str]]:
    """The cells whose change is in place at the release tip: file by file, the release's file
    is the commit's after-image (the same blob, or absent where the commit deletes it), or the
    commit's diff of it reverse-applies there (its after-image, context included, is in the file)
    while the forward diff does not apply (its before-image is not there too). Lines found
    elsewhere in a file never count: the hunks' context must match. Else a trial cherry-pick
    that merges cleanly into the release's own tree (nothing to change: git's merge found every
    hunk there as the commit has it)."""
    if not cells:
        return set()

    def parent_of(s: str) -> str | None:
        return against.get(s) or (parents(s)[0] if parents(s) else None)

    rows = list(dict.fromkeys(s for s, _ in cells))
    chunks = diff_chunks(repo, [(s, against.get(s)) for s in rows], renames=False)
    sections = {s: file_sections(c) for s, c in zip(rows, chunks, strict=True)}
    more = [
        f"{tips[n]}:{f.path}"
        for s, n in cells
        for f, _ in sections[s]
        if f"{tips[n]}:{f.path}" not in blobs
    ]
    more = list(dict.fromkeys(more))
    blobs = {**blobs, **dict(zip(more, repo.read_blobs(more, limit=repo.big_file), strict=True))}
    placed: set[tuple[str, str]] = set()
    checks: list[InPlaceCheck] = []
    asked: list[tuple[str, str]] = []
    for s, n in cells:
        diff: list[bytes] = []
        files: list[tuple[str, bytes | None]] = []
        ok = bool(sections[s])
        for f, text in sections[s]:
            now = blobs.get(f"{tips[n]}:{f.path}")
            if now is not None and len(now) > repo.big_file:
                ok = False
                break
            after = None if f.status == "D" else f.new_blob
            if (now is None and after is None) or (
                now is not None and after is not None and blob_sha(repo, now) == after
            ):
                continue  # the after-image itself
            if f.binary or f.status in ("A", "D"):
                ok = False  # a binary file, an added or deleted one: only the same blob counts
                break
            diff.append(text)
            files.append((f.path, now))
        if not ok:
            continue
        if not diff:
            placed.add((s, n))
            continue
        checks.append(InPlaceCheck(b"".join(diff), tuple(files)))
        asked.append((s, n))
    for cell, (back, forward) in zip(asked, in_place(checks), strict=True):
        if back and not forward:
            placed.add(cell)
    # The rest: a cherry-pick that merges cleanly and changes nothing (a line near the change
    # differs on the release, or the same lines are elsewhere too): the hunks are there as the
    # commit has them, and git's merge placed them.
    rest = [(s, n) for s, n in cells if (s, n) not in placed and parent_of(s)]
    trials = [TrialPick(s, parent_of(s) or "", tips[n]) for s, n in rest]
    for cell, empty in zip(rest, empty_picks(repo, trials), strict=True):
        if empty:
            placed.add(cell)
    return placed
