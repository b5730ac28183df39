"""CI lanes: the pytest marker expression of every CI lane in GitHub Actions workflows at a ref.

``scan_lanes`` reads every workflow at the ref from git objects (no checkout), each through
``workflow.lanes_in_text`` with the local actions and reusable workflows it calls read at the same
commit, then adds the lanes given by hand; ``lanes_check`` adds the section (section.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from harness.checks.lanes.section import build_section
from harness.checks.lanes.workflow import Lane, LaneScan, lanes_in_text, marker_key
from harness.checks.result import Checked
from harness.errors import UsageError
from harness.git.evidence import ls_tree
from harness.git.repo import GitRepo
from harness.inputs import yamlpath
from harness.report.model import Section

WORKFLOW_DIR = ".github/workflows"


def workflow_paths(repo: GitRepo, sha: str) -> list[str]:
    """``.github/workflows/*.yml|yaml`` at a commit (top level of the folder, as GitHub reads it)."""
    return sorted(
        e.path
        for e in ls_tree(repo, sha, WORKFLOW_DIR)
        if e.type == "blob"
        and str(PurePosixPath(e.path).parent) == WORKFLOW_DIR
        and e.path.endswith((".yml", ".yaml"))
    )


def _extra(extra_lanes: Iterable[Mapping[str, Any]] | None) -> list[Lane]:
    lanes = []
    for i, item in enumerate(extra_lanes or []):
        name, expr = item.get("name"), item.get("expression")
        if not isinstance(name, str) or not name or not isinstance(expr, str):
            raise UsageError(f"lane {i + 1} given by hand needs a name and an expression (strings)")
        lanes.append(
            Lane(
                name,
                str(item.get("input") or "(by hand)"),
                expr.strip(),
                item.get("path"),
                item.get("line"),
                "scenario",
            )
        )
    return lanes


def scan_lanes(
    repo: GitRepo,
    ref: str = "HEAD",
    workflows: Sequence[str] | None = None,
    extra_lanes: Iterable[Mapping[str, Any]] | None = None,
) -> LaneScan:
    """Read every workflow at ``ref`` (or the ones named) and collect lanes."""
    sha = repo.resolve(ref)
    scan = LaneScan(ref, sha)
    paths = list(workflows) if workflows else workflow_paths(repo, sha)
    texts: dict[str, str] = {}
    others: dict[str, str | None] = {}

    def read(path: str) -> str | None:  # local actions, read from git at the same commit
        if path not in others:
            blob = repo.read_blobs([f"{sha}:{path}"], limit=yamlpath.MAX_BYTES)[0]
            others[path] = None if blob is None else yamlpath.decode(blob)[0]
        return others[path]

    blobs = repo.read_blobs([f"{sha}:{p}" for p in paths], limit=yamlpath.MAX_BYTES)
    for path, blob in zip(paths, blobs, strict=False):
        if blob is None:
            if workflows:
                raise UsageError(f"--workflow {path}: no such file at {ref}")
            continue
        if len(blob) > yamlpath.MAX_BYTES:  # read only that far: a lane file is never this large
            scan.files.append(path)
            scan.problems.append((path, f"not read: over {yamlpath.MAX_BYTES} bytes"))
            continue
        text, replaced = yamlpath.decode(blob)
        texts[path] = text
        scan.files.append(path)
        if replaced:
            scan.problems.append((path, "non-UTF-8 bytes (shown as U+FFFD)"))
        lanes, why = lanes_in_text(path, text, read, scan.notes)
        if why:
            scan.problems.append((path, why))
        scan.lanes += lanes
        lines = text.splitlines()
        known = {n for ln in lanes if ln.path == path for n in (ln.key_line, ln.line)}
        known |= {n for ln in lanes for p, n in ln.read_at if p == path}
        for no, line in enumerate(lines, 1):
            key = marker_key(line)
            if key is not None:
                scan.mentions += 1
                if no not in known:
                    scan.unaccounted.append((path, no, key))
    all_lines = {
        p: t.splitlines()
        for p, t in {**{k: v for k, v in others.items() if v is not None}, **texts}.items()
    }
    for lane in scan.lanes:
        lines = all_lines.get(lane.path or "", [])
        if lane.line and lane.line <= len(lines):
            # the line and the few after it: a folded block or a continued command goes on there
            scan.raw_lines[(lane.path or "", lane.line)] = "\n".join(
                lines[lane.line - 1 : lane.line + 7]
            )
    scan.notes = list(dict.fromkeys(scan.notes))
    scan.lanes += _extra(extra_lanes)
    return scan


def find_lanes(
    repo: GitRepo,
    ref: str = "HEAD",
    workflows: Sequence[str] | None = None,
    extra_lanes: Iterable[Mapping[str, Any]] | None = None,
) -> list[Lane]:
    """Every lane at ``ref`` (workflow lanes in file order, then lanes given by hand)."""
    return scan_lanes(repo, ref, workflows, extra_lanes).lanes


def lanes_check(
    repo: GitRepo,
    ref: str = "HEAD",
    workflows: Sequence[str] | None = None,
    extra_lanes: Iterable[Mapping[str, Any]] | None = None,
) -> Checked[LaneScan]:
    """Report section: lane, expression, file:line, with read-back and text-mention controls."""
    scan = scan_lanes(repo, ref, workflows, extra_lanes)
    return Checked(scan, build_section(ref, scan))


def lanes_section(
    repo: GitRepo,
    ref: str = "HEAD",
    workflows: Sequence[str] | None = None,
    extra_lanes: Iterable[Mapping[str, Any]] | None = None,
) -> Section:
    """The section of ``lanes_check``."""
    return lanes_check(repo, ref, workflows, extra_lanes).section
