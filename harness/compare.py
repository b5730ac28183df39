"""`compare`: run every section that applies to BASE → HEAD and assemble one Report.

Each section is a function from resolved inputs to a Section (built by its own check module).
A section that crashes becomes a section holding a ``harness-error`` finding, so the report is
still written; the command then exits 3.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import traceback
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from harness import __version__
from harness.errors import UsageError
from harness.git import GitRepo
from harness.infra.progress import phase
from harness.report.model import Finding, Report, Section


@dataclass
class CompareInputs:
    """What a compare is asked: the range, the source, the scenarios and the run's options."""

    base: str
    head: str
    source: str | None = None
    source_branch: str | None = None
    scenario_paths: list[str] = field(default_factory=list)
    python: str | None = None
    jobs: int | None = None
    title: str = ""
    no_cache: bool = False  # measure every probe cell afresh, write nothing to the cache
    release_paths: tuple[str, ...] = ()  # the policy's release-only path patterns (fidelity)
    no_fidelity: bool = False  # run without a source branch: the picks are not judged (said so)
    executor: Any = (
        None  # harness.executors.Executor running probe columns and mutation rows (None: local)
    )
    no_tests: bool = False  # --no-tests: the tests section (on whenever picks are judged) is off
    test_timeout: float = 600.0  # --test-timeout: per run of one column of the tests section
    test_setup: tuple[str, ...] = ()  # --test-setup: a build step run in each tree first
    test_constraints: tuple[str, ...] = ()  # --test-constraints: the pins environments are under


Step = Callable[[], Section | list[Section]]  # a section's thunk


@dataclass
class Plan:
    """The sections to run, in report order: (id, title, thunk). ``ahead``: the steps (by
    position) that read only git and no other step's result, run in a thread from the start."""

    steps: list[tuple[str, str, Step]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    header: dict[str, str] = field(
        default_factory=dict
    )  # report header lines the plan found (merge base)
    ahead: list[int] = field(default_factory=list)

    def add(self, sid: str, title: str, fn: Step, ahead: bool = False) -> None:
        if ahead:
            self.ahead.append(len(self.steps))
        self.steps.append((sid, title, fn))


def run_plan(
    plan: Plan, progress: Callable[[str], None] | None = None
) -> tuple[list[Section], bool]:
    """Run each step; a crash becomes a harness-error section. Returns (sections, crashed).

    Each step is a progress phase (spinner with elapsed time on a terminal, plain lines otherwise);
    ``progress``, when given, is told each step's label instead. The ``ahead`` steps run one
    after another in a thread while the others run here (a cold compare's range checks beside
    fidelity: ~0.4 s of ~2.2 s on pytest's 8.0.x); each is waited for, and its outcome taken as
    if it ran here, at its turn."""
    sections: list[Section] = []
    crashed = False
    ahead = _Ahead()
    try:
        early = ahead.start([plan.steps[i][2] for i in plan.ahead])
        taken = dict(zip(plan.ahead, early, strict=True))
        for i, (sid, title, fn) in enumerate(plan.steps, start=1):
            out, failed = _step(
                sid, title, taken.get(i - 1, fn), f"[{i}/{len(plan.steps)}]", progress
            )
            crashed = crashed or failed
            sections.extend(out if isinstance(out, list) else [out])
    finally:
        ahead.stop()
    return sections, crashed


class _Ahead:
    """Steps run in order in one daemon thread (an interrupted or failed run does not wait for
    the one it is running; those not started never start). ``start`` gives, for each, what
    waits for its outcome: its sections, or its exception raised again."""

    def __init__(self) -> None:
        self._stopped = threading.Event()

    def start(self, fns: list[Step]) -> list[Step]:
        if not fns:
            return []
        outcomes: list[tuple[threading.Event, list[Any]]] = [(threading.Event(), []) for _ in fns]

        def run() -> None:
            for fn, (done, box) in zip(fns, outcomes, strict=True):
                if self._stopped.is_set():
                    return
                try:
                    box.append((True, fn()))
                except BaseException as exc:  # noqa: BLE001 - raised again where it is taken
                    box.append((False, exc))
                done.set()

        try:
            threading.Thread(target=run, name="harness-ahead", daemon=True).start()
        except RuntimeError:  # no thread to be had (a process limit): the steps run in line
            return fns
        return [functools.partial(_taken, done, box) for done, box in outcomes]

    def stop(self) -> None:
        self._stopped.set()


def _taken(done: threading.Event, box: list[Any]) -> Section | list[Section]:
    done.wait()
    ok, value = box[0]
    if not ok:
        raise value
    return cast("Section | list[Section]", value)


def _step(
    sid: str,
    title: str,
    fn: Step,
    number: str,
    progress: Callable[[str], None] | None,
) -> tuple[Section | list[Section], bool]:
    """One step's sections, and whether it crashed (its section then says so)."""
    label = f"{number} {title}"
    if progress is not None:
        progress(f"{label} …")
    try:
        with phase(label) if progress is None else nullcontext():
            return fn(), False
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken section must not lose the others
        tb = traceback.format_exc(limit=6)
        out = Section(
            sid,
            title,
            summary="This section failed inside the harness.",
            findings=[
                Finding(
                    "harness-error",
                    "P1",
                    f"{title}: the harness failed: {exc}",
                    detail=tb.strip().splitlines()[-1],
                    key=sid,
                )
            ],
            not_verified=[f"{title}: nothing (the section crashed)"],
        )
        return out, True


def scenario_digest(path: str | None) -> str:
    if not path:
        return ""
    return hashlib.sha1(Path(path).read_bytes()).hexdigest()[:12]


def build_report(
    repo: GitRepo,
    inputs: CompareInputs,
    sections: list[Section],
    skipped: list[str],
    command: str,
    generated: str,
    header: dict[str, str] | None = None,
) -> Report:
    base_sha, head_sha = repo.resolve(inputs.base), repo.resolve(inputs.head)
    info: dict[str, Any] = {
        "base": f"{inputs.base} @ {base_sha[:12]}",
        "head": f"{inputs.head} @ {head_sha[:12]}",
        "head tree": repo.resolve(inputs.head, "tree"),
        **(header or {}),
    }
    if inputs.source:
        info["source"] = f"{inputs.source} @ {repo.resolve(inputs.source)[:12]}"
    if inputs.source_branch:
        info["source branch"] = (
            f"{inputs.source_branch} @ {repo.resolve(inputs.source_branch)[:12]}"
        )
    for i, path in enumerate(inputs.scenario_paths):
        info["scenario" if i == 0 else f"scenario {i + 1}"] = (
            f"{Path(path).name} (sha1 {scenario_digest(path)})"
        )
    info["harness"] = __version__
    report = Report(
        title=inputs.title or f"Backport review: {inputs.base} → {inputs.head}",
        command=command,
        sections=sections,
        inputs=info,
        generated=generated,
    )
    report.not_verified = [f"section not run: {s}" for s in skipped]
    if inputs.no_fidelity and not inputs.source:
        report.unjudged = "no pick of the range was judged (--no-fidelity)"
    return report
