"""The CI lanes of each test: the lanes ``harness lanes`` reads from HEAD's workflows, evaluated
over one collection pass at HEAD (``select``'s plugin), per node id of the section's files. A lane
whose pytest call names its own test files or folders selects only tests under them. A proving
test no lane selects is a finding only when every pytest invocation of the workflows was read as a
lane; a step that runs pytest without ``-m`` (it may select every test), or runs tests through
tox, nox or make, leaves the lanes "not verified" with the reason."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from harness.checks.tests_as_evidence.selection import (
    CONTROL_ALL,
    CONTROL_NONE,
    Lane,
    collect_refs,
)
from harness.errors import HarnessError, UsageError
from harness.executors import Executor
from harness.git.repo import GitRepo
from harness.infra.cache import Cache

MAX_WORKFLOW = 1 << 20
_PYTEST_CALL = re.compile(r"(?<![\w./-])(?:py\.test|pytest)(?![\w.-])")


@dataclass
class TestLanes:
    names: list[str] = field(default_factory=list)  # every lane read
    nodes: dict[str, list[str]] = field(default_factory=dict)  # node id → lanes selecting it
    complete: bool = False  # every pytest invocation read: "no lane" may be claimed
    why_not: list[str] = field(default_factory=list)  # what was not read, and why


_OPTION_WITH_VALUE = {"-m", "-k", "-p", "-c", "-o", "-n", "--rootdir", "--junitxml"}
_COMMAND = re.compile(r"^\s*(?:-\s*)?(?:run:\s*)?(tox|nox|make)(?:\s|$)")


def _named_paths(text: str) -> list[str]:
    """Test files or folders a pytest command line names (after ``pytest``, not options or their
    values): the lane selects nothing outside them."""
    for line in text.splitlines():
        m = _PYTEST_CALL.search(line)
        if m:
            break
    else:
        return []
    try:
        words = shlex.split(line[m.end() :])
    except ValueError:
        return []
    out: list[str] = []
    skip = False
    for w in words:
        if w in ("&&", "||", ";", "|"):
            break
        if skip or w in _OPTION_WITH_VALUE:
            skip = not skip
            continue
        if not w.startswith("-"):  # pytest's positional arguments are files or folders
            out.append(w.split("::", 1)[0].rstrip("/").removeprefix("./"))
    return out


def _command_at(lines: list[str], line: int) -> str:
    """The ``run:`` command a lane was read at, as one line: from the step's ``run:`` key above
    ``line`` (a folded or continued block puts ``-m`` lines after the pytest call) to the end of
    its block (the first line indented no deeper than the key)."""
    start = line - 1
    for k in range(min(line - 1, len(lines) - 1), max(-1, line - 41), -1):
        if "run:" in lines[k]:
            start = k
            break
    if start >= len(lines):
        return ""
    key = lines[start]
    indent = len(key) - len(key.lstrip(" -"))
    block = [key.split("run:", 1)[-1]]
    for ln in lines[start + 1 : start + 60]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
            break
        block.append(ln)
    return " ".join(ln.strip().rstrip("\\").strip() for ln in block if ln.strip())


def _under(path: str, named: list[str]) -> bool:
    return any(path == n or path.startswith(n + "/") for n in named)


def _unread_invocations(texts: dict[str, list[str]], lane_lines: set[tuple[str, int]]) -> list[str]:
    """Workflow lines that run pytest without ``-m`` (not a lane) or run tests through tox, nox
    or make: "path:line" and why."""
    out: list[str] = []
    for path, lines in texts.items():
        for no, line in enumerate(lines, 1):
            text = line.split(" #", 1)[0]
            if _PYTEST_CALL.search(text) and " -m" not in text and (path, no) not in lane_lines:
                out.append(f"{path}:{no} runs pytest without -m (it may select every test)")
            elif _COMMAND.match(text):
                out.append(f"{path}:{no} runs tests through tox, nox or make (not read as lanes)")
    return out[:10]


def test_lanes(
    repo: GitRepo,
    head: str,
    files: list[str],
    python: str,
    timeout: float,
    setup: tuple[str, ...],
    no_cache: bool,
    executor: Executor,
) -> TestLanes:
    from harness.checks.lanes.check import scan_lanes
    from harness.checks.lanes.lane_expr import filled_in_by_ci

    out = TestLanes()
    scan = scan_lanes(repo, head)
    out.why_not = [f"workflow not read: {p}: {why}" for p, why in scan.problems]
    blobs = repo.read_blobs([f"{head}:{p}" for p in scan.files], MAX_WORKFLOW)
    texts = {
        p: b.decode("utf-8", "replace").splitlines()
        for p, b in zip(scan.files, blobs, strict=True)
        if b is not None and len(b) <= MAX_WORKFLOW
    }
    lanes: list[Lane] = []
    named: dict[str, list[str]] = {}
    lane_lines: set[tuple[str, int]] = set()
    seen: dict[str, int] = {}
    for found in scan.lanes:
        if filled_in_by_ci(found.expression):
            out.why_not.append(
                f"lane filled in by CI at run time: {found.name}: {found.expression}"
            )
            continue
        seen[found.name] = seen.get(found.name, 0) + 1
        name = found.name if seen[found.name] == 1 else f"{found.name} #{seen[found.name]}"
        lanes.append(Lane(name, found.expression, from_repo=True))
        text = texts.get(found.path or "")
        raw = (
            _command_at(text, found.line)
            if text is not None and found.line
            else scan.raw_lines.get((found.path or "", found.line or 0), "")
        )
        named[name] = _named_paths(raw)
        for k in range(-40, 8):  # the lines a lane's command spans (its pytest call is above)
            lane_lines.add((found.path or "", (found.line or 0) + k))
    out.names = [lane.name for lane in lanes]
    out.why_not += _unread_invocations(texts, lane_lines)
    if not lanes:
        out.why_not.append(
            "no pytest -m lane found in HEAD's workflows (tox, nox, make or a plain pytest run "
            "are not lanes the harness can evaluate)"
        )
        return out
    try:
        col = collect_refs(
            repo,
            [head],
            lanes,
            files,
            python=python,
            timeout=timeout,
            setup=setup,
            cache=Cache(namespace="collections", enabled=not no_cache),
            executor=executor,
        )[0]
    except (HarnessError, UsageError) as exc:  # a collection past its timeout, a lost worker
        out.why_not.append(f"the collection at HEAD did not finish: {exc}")
        return out
    if not col.pytest_version or col.errors:
        out.why_not.append(
            "the collection at HEAD did not finish cleanly: "
            + (col.errors[0]["message"] if col.errors else "no report")
        )
    files_seen = {n.split("::", 1)[0] for n in col.nodes}
    for name, paths in named.items():  # a bare word is a folder only where tests lie under it
        named[name] = [
            p
            for p in paths
            if "/" in p or p.endswith(".py") or any(f.startswith(p + "/") for f in files_seen)
        ]
    out.nodes = {
        n: [
            x
            for x in sel
            if x not in (CONTROL_ALL, CONTROL_NONE)
            and (not named.get(x) or _under(n.split("::", 1)[0], named[x]))
        ]
        for n, sel in col.nodes.items()
    }
    out.complete = not out.why_not
    return out
