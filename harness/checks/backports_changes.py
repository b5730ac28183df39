"""The release matrix's rows of one change (one patch id, Change-Id or PR number) joined into
one row, named by the commit on the source's first-parent line."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from harness.checks.backports_matrix import MatrixCell, MatrixRow
from harness.git import GitRepo
from harness.git.backports import first_parent_line, patch_ids


def _change_keys(
    repo: GitRepo,
    rows: Sequence[MatrixRow],
    body: Callable[[str], str],
    parents: Callable[[str], tuple[str, ...]],
) -> dict[str, list[str]]:
    """What names each row's change: its ``git patch-id --stable`` (a merge: against its first
    parent), its Gerrit Change-Ids, and the PR number of a subject that names exactly one (a
    revert's aside)."""
    from harness.checks.fidelity.changeid import change_ids
    from harness.checks.fidelity.subjects import pr_numbers

    pids = patch_ids(
        repo, [(r.sha, parents(r.sha)[0] if len(parents(r.sha)) > 1 else None) for r in rows]
    )
    keys: dict[str, list[str]] = {}
    for r in rows:
        got = [f"patch-id {pids[r.sha]}"] if r.sha in pids else []
        got += [f"Change-Id {c}" for c in change_ids(body(r.sha))]
        numbers = pr_numbers(r.subject)
        if len(numbers) == 1 and not r.subject.lower().startswith(("revert", '"revert')):
            got.append(f"PR #{numbers[0]}")
        keys[r.sha] = got
    return keys


def one_row_per_change(
    repo: GitRepo,
    src: str,
    oldest: str,
    rows: Sequence[MatrixRow],
    cells: dict[tuple[str, str], MatrixCell],
    order: Sequence[str],
    position: Mapping[str, int],
    body: Callable[[str], str],
    parents: Callable[[str], tuple[str, ...]],
) -> list[MatrixRow]:
    """Rows of one change (one patch id, Change-Id or PR number) joined into one, named by the
    commit on the source's first-parent line (else on the source, else the first row): its cells
    take a pick or a reach of any of them. Two first-parent source commits are never joined (a
    fix made again after a revert is its own row)."""
    if len(rows) < 2:
        return list(rows)
    keys = _change_keys(repo, rows, body, parents)
    parent_of = {r.sha: r.sha for r in rows}

    def find(x: str) -> str:
        while parent_of[x] != x:
            parent_of[x] = parent_of[parent_of[x]]
            x = parent_of[x]
        return x

    first_seen: dict[str, str] = {}
    for r in rows:
        for k in keys[r.sha]:
            other = first_seen.setdefault(k, r.sha)
            if other != r.sha:
                parent_of[find(r.sha)] = find(other)
    groups: dict[str, list[MatrixRow]] = {}
    for r in rows:
        groups.setdefault(find(r.sha), []).append(r)
    if all(len(g) == 1 for g in groups.values()):
        return list(rows)
    first_parent = set(first_parent_line(repo, src, oldest))
    on_source = {r.sha for r in rows if r.sha in position or repo.is_ancestor(r.sha, src)}
    out: list[MatrixRow] = []
    joined: dict[str, list[MatrixRow]] = {}
    for r in rows:
        group = groups[find(r.sha)]
        if len(group) == 1 or sum(g.sha in first_parent for g in group) > 1:
            out.append(r)
            continue
        named = next(
            (g for g in group if g.sha in first_parent),
            next((g for g in group if g.sha in on_source), group[0]),
        )
        if r is not named:
            continue
        others = [g for g in group if g is not named]
        joined[named.sha] = others
        out.append(
            MatrixRow(
                named.sha,
                named.subject,
                tuple(dict.fromkeys(x for g in (named, *others) for x in g.reasons)),
                tuple(dict.fromkeys(x for g in (named, *others) for x in g.prs)),
                tuple(g.sha for g in others),
            )
        )
    for named_sha, others in joined.items():
        for n in order:
            own = cells[(named_sha, n)]
            if own.state in ("in-fork", "picked"):
                continue
            theirs = [cells[(g.sha, n)] for g in others]
            got = next((c for c in theirs if c.state == "picked"), None)
            if got is None and own.state != "reached":
                got = next((c for c in theirs if c.state in ("reached", "in-fork")), None)
            if got is None:
                continue
            if got.state == "in-fork":
                got = MatrixCell(got.source, n, "reached", how="merged")
            cells[(named_sha, n)] = dataclasses.replace(got, source=named_sha)
    return out
