"""Which sections `compare` runs, from the command line and the scenario's extra keys.

Everything is validated here, before any section runs, so bad input exits 2 with nothing written.

Scenario keys read here (besides the probe keys of harness/inputs/scenario.py)::

    source: main                      # default for --source
    source_branch: pr/42              # default for --source-branch
    traces:   [{string: "Engine ready", refs: [base, head, source], under: serving, range: base..head}]
    pins:     [{file: deploy/engine.yaml, key: 'sglang["cuda13.0"].runtime_image_tag', refs: [...]}]
    lanes:    {ref: head, workflows: [...], extra: [{name: smoke, expression: "pre_merge"}]}
    selection: {refs: [base, head], files: [tests/test_x.py], setup: ["cmd run in the tree first"]}
    mutations: {ref: head, tests: [tests], marker: EXPR, gaps: missing | [commit, ...], setup: [...],
                edits: [{name: liveness, expect: killed, replace: OLD, new: NEW, path: f.py}, ...]}
    sweep:    {tests: [tests], marker: EXPR}
    backports: {releases: [release/1.x, release/2.x], candidates: [SHA, "#123"], rule: REGEX,
                since: REF | YYYY-MM-DD}   # the release matrix against --source (or source:)

Ref names may be scenario column names or base/head/source/source_branch.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.checks.judgeable import RangeFacts, judge_range
from harness.checks.registry import RANGE_CHECKS, Check, lazy
from harness.checks.result import FidelityResult
from harness.compare import CompareInputs, Plan
from harness.errors import UsageError
from harness.git import GitRepo
from harness.git.history import git_version
from harness.infra.cache import Cache, cached_section, cached_value
from harness.report.model import Section

if TYPE_CHECKING:
    from harness.infra.history_index import HistoryIndex
    from harness.inputs.scenario import Scenario, Value

# Imported when a section is built, not when it is planned (see ``lazy``).
fidelity_check = lazy("harness.checks.fidelity.check", "fidelity_check")
lanes_section = lazy("harness.checks.lanes.check", "lanes_section")
pin_section = lazy("harness.checks.pins", "pin_section")
trace_section = lazy("harness.checks.trace", "trace_section")

_EXTRA_FIELDS = {
    "traces": ("string", "refs", "under", "range"),
    "pins": ("file", "key", "refs"),
    "lanes": ("ref", "workflows", "extra"),
    "selection": ("refs", "files", "args", "setup"),
    "mutations": ("ref", "tests", "marker", "gaps", "edits", "setup"),
    "sweep": ("tests", "marker"),
    "backports": ("releases", "candidates", "rule", "since"),
}


@dataclass
class _Handed:
    """Results a later step takes from an earlier one, filled in as the steps run (plan order)."""

    fidelity: FidelityResult | None = None
    fidelity_later: Callable[[], FidelityResult] | None = None

    def fidelity_result(self) -> FidelityResult | None:
        if self.fidelity is None and self.fidelity_later is not None:
            self.fidelity = self.fidelity_later()
        return self.fidelity


class _Refs:
    """Ref aliases: base/head/source/source_branch and the scenarios' column names."""

    def __init__(self, repo: GitRepo, inputs: CompareInputs, scenarios: list[Scenario]) -> None:
        self.repo = repo
        self.alias: dict[str, str] = {"base": inputs.base, "head": inputs.head}
        if inputs.source:
            self.alias["source"] = inputs.source
        if inputs.source_branch:
            self.alias["source_branch"] = inputs.source_branch
        for scenario in scenarios:
            for c in scenario.columns:
                if c.role == "ref":
                    self.alias.setdefault(c.name, c.ref)

    def ref(self, name: str, where: Value | None = None) -> str:
        ref = self.alias.get(name, name)
        try:
            self.repo.resolve(ref)
        except UsageError as exc:
            raise where.error(str(exc)) if where is not None else exc from None
        return ref

    def defaults(self) -> list[str]:
        return [self.alias[k] for k in ("base", "head", "source") if k in self.alias]


def _retarget(scenario: Scenario, inputs: CompareInputs) -> list[str]:
    """Columns named base/head follow the command line, and so do controls built on them; returns
    what was replaced ("base release/1.0 → main")."""
    old = {c.name: c.ref for c in scenario.columns if c.role == "ref"}
    new = {"base": inputs.base, "head": inputs.head}
    moved = {old[n]: new[n] for n in ("base", "head") if n in old and old[n] != new[n]}
    for c in scenario.columns:
        if c.ref in moved:
            c.ref = moved[c.ref]
    return [f"{n} {old[n]} → {new[n]}" for n in ("base", "head") if n in old and old[n] != new[n]]


def _overridden(scenarios: list[Scenario], inputs: CompareInputs) -> str:
    """One line saying what the command line replaced in the scenarios (refs, and then the title,
    which named the scenario's own range), or "" when nothing was."""
    parts = []
    for scenario in scenarios:
        moved = _retarget(scenario, inputs)
        if moved:
            parts.append(f"{scenario.path.name}: {', '.join(moved)}")
    if not parts:
        return ""
    titled = next((s for s in scenarios if "title" in s.extra), None)
    line = "the command line replaced the scenario's refs (" + "; ".join(parts) + ")"
    if titled is not None and inputs.title == titled.title:
        inputs.title = ""  # the scenario's title names its own refs: the report's default instead
        line += f" and its title {titled.title!r}"
    return line


def _first(scenarios: list[Scenario], key: str) -> Value | None:
    return next((s.extra[key] for s in scenarios if key in s.extra), None)


def _all(scenarios: list[Scenario], key: str) -> list[Value]:
    return [s.extra[key] for s in scenarios if key in s.extra]


def plan_for(repo: GitRepo, inputs: CompareInputs) -> Plan:
    """Validate inputs and the scenarios, and list the sections to run.

    With several scenarios, each adds its traces, pins, probes, selection, mutations and sweep;
    source, source_branch, title and lanes come from the first scenario that sets them.
    """
    scenarios, overridden, facts, refs = _read_inputs(repo, inputs)
    plan = Plan(header=facts.header())
    if overridden:
        plan.header["overridden"] = overridden
    handed = _Handed()
    cached = _GitCache(repo, inputs.no_cache)
    base, head = inputs.base, inputs.head
    if inputs.source:
        plan.add("fidelity", "cherry-pick fidelity", _fidelity_step(repo, inputs, handed, cached))
    else:
        plan.skipped.append("fidelity (--no-fidelity: no pick of the range is judged)")
    if inputs.source and not inputs.no_tests:
        plan.add("tests", "tests of the fix", _tests_step(repo, inputs, handed))
    elif inputs.source:
        plan.skipped.append("tests of the fix (--no-tests)")
    _add_range_checks(plan, repo, inputs, cached)
    _add_traces(plan, repo, scenarios, refs, cached)
    _add_pins(plan, repo, scenarios, refs, cached)
    lane_ref, workflows, extra_lanes = _lanes_inputs(scenarios, refs, head)
    _add_lanes(plan, repo, lane_ref, workflows, extra_lanes, cached)
    for sel_v in _all(scenarios, "selection"):
        plan.add(
            "selection",
            "tests per CI lane",
            _selection_step(
                repo,
                refs,
                sel_v,
                lane_ref,
                workflows,
                extra_lanes,
                inputs.python,
                inputs.no_cache,
                inputs.executor,
            ),
        )
    if not _all(scenarios, "selection"):
        plan.skipped.append("test counts per lane (no scenario with 'selection')")
    for bp_v in _all(scenarios, "backports"):
        plan.add("backports", "release matrix", _backports_step(repo, refs, bp_v, inputs, cached))
    for scenario in scenarios:
        if scenario.probes:
            plan.add(
                "probes",
                f"differential probes ({scenario.path.name})",
                _probe_step(repo, scenario, inputs),
            )
    if not scenarios:
        plan.skipped.append("probes, traces, pins, mutations (no --scenario)")
    for mut_v in _all(scenarios, "mutations"):
        plan.add(
            "mutations",
            "mutation controls",
            _mutation_step(
                repo, refs, mut_v, handed, inputs.python, inputs.no_cache, inputs.executor
            ),
        )
    for sweep_v in _all(scenarios, "sweep"):
        plan.add(
            "sweep",
            "mutmut sweep",
            _sweep_step(repo, base, head, sweep_v, inputs.python, inputs.executor),
        )
    if not inputs.source and not inputs.no_fidelity:
        # A compare that judges no pick must not pass as if it had: a usage gap, not a verdict
        # (after every other input is checked, so the first error named is the user's own).
        raise UsageError(
            "compare: no --source (and no scenario sets one): the picks would not be judged; "
            "name the branch they came from with --source REF, or pass --no-fidelity"
        )
    return plan


def _tests_step(repo: GitRepo, inputs: CompareInputs, handed: _Handed) -> Callable[[], Section]:
    """The tests section (harness/checks/fix_tests/): the tests the picks and their sources
    change, run without the fix, with it and at the source; fidelity's result names the sources
    and the gaps."""

    def step() -> Section:
        from harness.checks.fix_tests.check import TestsOptions, tests_check

        fidelity = handed.fidelity_result()
        assert fidelity is not None  # planned only with --source, after fidelity
        options = TestsOptions(
            python=inputs.python,
            setup=tuple(inputs.test_setup),
            timeout=inputs.test_timeout,
            constraints=inputs.test_constraints,
            no_cache=inputs.no_cache,
        )
        return tests_check(
            repo, inputs.base, inputs.head, fidelity, options, inputs.executor, source=inputs.source
        ).section

    return step


def _add_lanes(
    plan: Plan,
    repo: GitRepo,
    lane_ref: str,
    workflows: list[str] | None,
    extra_lanes: list[dict[str, str]] | None,
    cached: _GitCache,
) -> None:
    """The lanes step: the CI lanes at ``lane_ref``, cached by what they read."""
    plan.add(
        "lanes",
        "CI lanes",
        lambda: cached(
            ("lanes", lane_ref),
            # pytest's own -m parser judges the expressions: its version is part of the key.
            (json.dumps([workflows, extra_lanes], sort_keys=True), _pytest_version()),
            lambda: lanes_section(repo, lane_ref, workflows, extra_lanes),
        ),
    )


def _read_inputs(
    repo: GitRepo, inputs: CompareInputs
) -> tuple[list[Scenario], str, RangeFacts, _Refs]:
    """The scenarios (their refs checked at their lines), what the command line overrides in
    them, the range's facts (a shallow history, a missing source branch or an empty range: exit
    2 before any section runs) and every ref resolved."""
    scenarios: list[Scenario] = []
    if inputs.scenario_paths:  # (YAML and the columns' trees: ~15 ms of imports, only for them)
        from harness.inputs.scenario import load_scenario

        scenarios = [load_scenario(p, require_probes=False) for p in inputs.scenario_paths]
    for scenario in scenarios:  # every column's ref and apply-commit, at its line, before any work
        if scenario.probes:
            scenario.check_refs(repo)
    for key in ("source", "source_branch"):
        v = _first(scenarios, key)
        if v is not None and not getattr(inputs, key):
            setattr(inputs, key, v.str())
    titled = next((s for s in scenarios if "title" in s.extra), None)
    if not inputs.title and titled is not None:
        inputs.title = titled.title
    overridden = _overridden(scenarios, inputs)
    repo.preresolve(
        [inputs.base, inputs.head, inputs.source or "", inputs.source_branch or ""]
        + [c.ref for s in scenarios for c in s.columns]
    )
    if not inputs.no_cache:  # the range's walk, merge base and commits, where the index keeps them
        from harness.infra.history_index import open_index

        base, head = repo.try_resolve(inputs.base), repo.try_resolve(inputs.head)
        index = open_index(repo) if base and head else None  # (a bad ref: nothing is opened)
        if index is not None and base and head:
            index.prime_range(base, head)
    # Shallow history, a missing source branch or an empty range: exit 2 before any section runs.
    facts = judge_range(
        repo,
        inputs.base,
        inputs.head,
        source=inputs.source,
        source_branch=inputs.source_branch,
        picks=bool(inputs.source),
    )
    refs = _Refs(repo, inputs, scenarios)
    for name in ("base", "head", "source", "source_branch"):
        if name in refs.alias:
            refs.ref(name)
    for scenario in scenarios:
        for c in scenario.columns:
            refs.ref(c.ref, scenario.column_where.get(c.name))
    return scenarios, overridden, facts, refs


def _add_range_checks(plan: Plan, repo: GitRepo, inputs: CompareInputs, cached: _GitCache) -> None:
    base, head = inputs.base, inputs.head
    for check in RANGE_CHECKS.values():
        plan.add(
            check.id,
            check.title,
            functools.partial(
                _cached_section_of,
                cached,
                check,
                repo,
                base,
                head,
                inputs.source if check.takes_source else None,
            ),
            # Git alone, no other step's result, no parser shared with another step (lanes
            # and the tests section share bashlex and pytest's -m parser): beside fidelity and
            # the tests.
            ahead=True,
        )


def _fidelity_step(
    repo: GitRepo, inputs: CompareInputs, handed: _Handed, cached: _GitCache
) -> Callable[[], Section]:
    """The fidelity step: its section (cached), and its typed result handed to later steps."""
    base, head = inputs.base, inputs.head

    def _fidelity() -> Section:
        src, branch = str(inputs.source), inputs.source_branch
        refs = ("fidelity-result", base, head, src, branch)
        rel = inputs.release_paths

        def build() -> Section:
            checked = fidelity_check(
                repo, base, head, src, branch, release_paths=rel, index=cached.index()
            )
            handed.fidelity = checked.result
            cached.value(refs, (), lambda: _result_json(checked.result))
            return checked.section

        # A section served from the cache carries no typed result: a later step that needs it
        # (missing commits as mutations) reads it from beside the section, or computes it then.
        def later() -> FidelityResult:
            raw = cached.value(
                refs,
                (),
                lambda: _result_json(
                    fidelity_check(
                        repo, base, head, src, branch, release_paths=rel, index=cached.index()
                    ).result
                ),
            )
            kept = FidelityResult.from_json(raw)
            if kept is None:  # written by an older harness: computed again
                return fidelity_check(
                    repo, base, head, src, branch, release_paths=rel, index=cached.index()
                ).result
            return kept

        handed.fidelity_later = later
        return cached(("fidelity", base, head, src, branch), rel, build)

    return _fidelity


def _add_traces(
    plan: Plan, repo: GitRepo, scenarios: list[Scenario], refs: _Refs, cached: _GitCache
) -> None:
    for v in [x for group in _all(scenarios, "traces") for x in group.list()]:
        f = v.map(_EXTRA_FIELDS["traces"], required=("string",))
        needle = f.req("string").str()
        trefs = (
            [refs.ref(x.str(), x) for x in f.req("refs").list()] if "refs" in f else refs.defaults()
        )
        under = _repo_path(f.req("under")) if "under" in f else None
        rng = None
        if "range" in f:
            a, sep, b = f.req("range").str().partition("..")
            if not sep:
                raise f.req("range").error("expected A..B")
            rng = f"{refs.ref(a, f.req('range'))}..{refs.ref(b, f.req('range'))}"
        plan.add(
            "trace",
            f"trace {needle!r}",
            functools.partial(
                cached,
                ("trace", *trefs, *(rng.split("..") if rng else ())),
                (needle, under, rng),
                functools.partial(trace_section, repo, needle, trefs, under, rng),
            ),
        )


def _add_pins(
    plan: Plan, repo: GitRepo, scenarios: list[Scenario], refs: _Refs, cached: _GitCache
) -> None:
    pins = [x for group in _all(scenarios, "pins") for x in group.list()]
    if not pins:
        return
    from harness.inputs import yamlpath  # (YAML: only where a scenario asks for pins)

    for v in pins:
        f = v.map(_EXTRA_FIELDS["pins"], required=("file", "key"))
        prefs = (
            [refs.ref(x.str(), x) for x in f.req("refs").list()] if "refs" in f else refs.defaults()
        )
        path, key = _repo_path(f.req("file")), f.req("key").str()
        try:
            yamlpath.parse_keypath(key)  # a bad key path is input: its file:line, before any work
        except UsageError as exc:
            raise f.req("key").error(str(exc)) from None
        plan.add(
            "pin",
            f"pin {key}",
            functools.partial(
                cached,
                ("pin", *prefs),
                (path, key),
                functools.partial(pin_section, repo, path, key, prefs),
            ),
        )


def _lanes_inputs(
    scenarios: list[Scenario], refs: _Refs, head: str
) -> tuple[str, list[str] | None, list[dict[str, str]] | None]:
    """The ref, workflow files and hand-given lanes of the lanes step (the scenario's ``lanes``)."""
    lane_ref = head
    workflows: list[str] | None = None
    extra_lanes: list[dict[str, str]] | None = None
    lanes_v = _first(scenarios, "lanes")
    if lanes_v is not None:
        f = lanes_v.map(_EXTRA_FIELDS["lanes"])
        lane_ref = refs.ref(f.req("ref").str(), f.req("ref")) if "ref" in f else head
        workflows = f.req("workflows").str_list() if "workflows" in f else None
        if "extra" in f:
            extra_lanes = []
            for x in f.req("extra").list():
                xf = x.map(("name", "expression"), required=("name", "expression"))
                extra_lanes.append(
                    {
                        "name": xf.req("name").str(),
                        "expression": xf.req("expression").str(nonempty=False),
                    }
                )
    return lane_ref, workflows, extra_lanes


def _cached_section_of(
    cached: _GitCache,
    check: Check,
    repo: GitRepo,
    base: str,
    head: str,
    source: str | None = None,
) -> Section:
    refs = (check.id, base, head) + ((source,) if source else ())
    return cached(refs, (), lambda: check.run(repo, base, head, source).section)


def _result_json(result: FidelityResult) -> dict[str, list[Any]]:
    return result.as_json()


def _pytest_version() -> str | None:
    """The version of the pytest whose ``-m`` parser checks lane expressions, from its own small
    version module (``importlib.metadata`` would cost ~10 ms of imports per run)."""
    try:
        from _pytest._version import version

        return str(version)
    except ImportError:
        pass
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("pytest")
    except PackageNotFoundError:
        return None


class _GitCache:
    """Sections (and small values) that only read git, cached by what they read: each ref name
    with the commit it resolves to, the options, the harness code and the git version
    (harness/infra/cache.py)."""

    def __init__(self, repo: GitRepo, no_cache: bool) -> None:
        self.repo = repo
        self.store = Cache(namespace="sections", enabled=not no_cache)

    def index(self) -> HistoryIndex | None:
        """The repository's history index (harness/infra/history_index.py), or None with --no-cache."""
        from harness.infra.history_index import open_index

        return open_index(self.repo, self.store.enabled)

    def _parts(
        self, refs: tuple[str | None, ...], options: tuple[str | None, ...]
    ) -> tuple[Any, ...]:
        kind, *names = refs
        resolved = [(n, self.repo.try_resolve(n) if n else None) for n in names]
        return (git_version(self.repo), kind, resolved, options)

    def __call__(
        self,
        refs: tuple[str | None, ...],
        options: tuple[str | None, ...],
        build: Callable[[], Section],
    ) -> Section:
        return cached_section(self.store, self._parts(refs, options), build)

    def value(
        self,
        refs: tuple[str | None, ...],
        options: tuple[str | None, ...],
        build: Callable[[], Any],
    ) -> Any:
        return cached_value(self.store, self._parts(refs, options), build)


def _repo_path(v: Value) -> str:
    """A path inside the repository (relative, no '..'), else an error at the scenario's line."""
    from harness.commands._validate import check_repo_path

    text = v.str()
    try:
        check_repo_path(text, "path")
    except UsageError as exc:
        raise v.error(str(exc)) from None
    return text


def _selection_step(
    repo: GitRepo,
    refs: _Refs,
    v: Value,
    lane_ref: str,
    workflows: list[str] | None,
    extra_lanes: list[dict] | None,
    python: str | None,
    no_cache: bool = False,
    executor: Any = None,
) -> Callable[[], Section]:
    from harness.checks.tests_as_evidence.selection import (
        collect_refs,
        lanes_from_workflows,
        selection_section,
    )

    f = v.map(_EXTRA_FIELDS["selection"])
    srefs = (
        [refs.ref(x.str(), x) for x in f.req("refs").list()]
        if "refs" in f
        else [refs.alias["base"], refs.alias["head"]]
    )
    files = f.req("files").str_list() if "files" in f else []
    args = f.req("args").str_list() if "args" in f else []
    setup = f.req("setup").str_list() if "setup" in f else []

    def step() -> Section:
        import sys

        unread: list[str] = []
        lanes, skipped = lanes_from_workflows(repo, lane_ref, workflows, extra_lanes, unread)
        cache = Cache(namespace="collections", enabled=not no_cache)
        cols = collect_refs(
            repo,
            srefs,
            lanes,
            files,
            python=python or sys.executable,
            args=args,
            setup=setup,
            cache=cache,
            executor=executor,
        )
        section = selection_section(cols, lanes, files)
        section.not_verified += [
            f"workflow lane not evaluated (its expression is filled in by CI): {x}" for x in skipped
        ]
        section.not_verified += [f"workflow not read: {u}" for u in unread]
        return section

    return step


def _backports_step(
    repo: GitRepo, refs: _Refs, v: Value, inputs: CompareInputs, cached: _GitCache
) -> Callable[[], Section]:
    """The release matrix (harness/checks/backports.py), validated now, run as a section."""
    from harness.checks.backports_candidates import compile_rule, parse_candidates, since_of

    f = v.map(_EXTRA_FIELDS["backports"], required=("releases",))
    if not inputs.source:
        raise v.error("backports needs a source branch (--source or the scenario's source:)")
    source = str(inputs.source)
    releases = [refs.ref(x.str(), x) for x in f.req("releases").list()]
    if not releases:
        raise f.req("releases").error("list at least one release branch")
    listed = (
        [(f"{x.file}:{x.line}", x.str()) for x in f.req("candidates").list()]
        if "candidates" in f
        else []
    )
    candidates = parse_candidates(listed)  # its errors name the scenario's file and line
    for c in candidates:
        if c.ref is not None and (c.ref.startswith("-") or repo.try_resolve(c.ref) is None):
            raise UsageError(f"{c.where}: unknown commit {c.ref!r}")
    rule_text = f.req("rule").str() if "rule" in f else None
    since_text = f.req("since").str() if "since" in f else None
    try:
        rule = compile_rule(rule_text, "rule")
    except UsageError as exc:
        raise f.req("rule").error(str(exc)) from None
    try:
        since = since_of(repo, since_text)
    except UsageError as exc:
        raise f.req("since").error(str(exc)) from None

    def step() -> Section:
        from harness.checks.backports import backports_check

        def build() -> Section:
            return backports_check(
                repo, source, releases, candidates, rule, since, index=cached.index()
            ).section

        options = (json.dumps([listed, rule_text, since_text], sort_keys=True),)
        return cached(("backports", source, *releases), options, build)

    return step


def _probe_step(
    repo: GitRepo, scenario: Scenario, inputs: CompareInputs
) -> Callable[[], list[Section]]:
    from harness.checks.probe_table import probe_sections

    def step() -> list[Section]:
        return probe_sections(
            repo,
            scenario,
            None,
            inputs.python,
            inputs.jobs,
            cache=Cache(enabled=not inputs.no_cache),
            executor=inputs.executor,
        )

    return step


def _mutation_step(
    repo: GitRepo,
    refs: _Refs,
    v: Value,
    handed: _Handed,
    python: str | None,
    no_cache: bool = False,
    executor: Any = None,
) -> Callable[[], Section]:
    from harness.checks.tests_as_evidence.mutation import (
        check_commits,
        gap_mutations,
        mutation_from_mapping,
        mutation_section,
        run_mutations,
    )

    f = v.map(_EXTRA_FIELDS["mutations"], required=("tests",))
    ref = refs.ref(f.req("ref").str(), f.req("ref")) if "ref" in f else refs.alias["head"]
    tests = f.req("tests").str_list()
    marker = f.req("marker").str() if "marker" in f else None
    setup = f.req("setup").str_list() if "setup" in f else []
    mutations = (
        [mutation_from_mapping(x.plain(), x.where) for x in f.req("edits").list()]
        if "edits" in f
        else []
    )
    check_commits(repo, mutations)
    gaps_missing = False
    gap_refs: list[str] = []
    if "gaps" in f:
        g = f.req("gaps")
        if not g.is_list():
            g.str(("missing",))
            gaps_missing = True
        else:
            gap_refs = [refs.ref(x.str(), x) for x in g.list()]

    def step() -> Section:
        import sys

        gaps = list(gap_refs)
        fidelity = handed.fidelity_result() if gaps_missing else None
        if fidelity is not None:
            gaps += fidelity.missing_commits
        run = run_mutations(
            repo,
            ref,
            [*mutations, *gap_mutations(repo, gaps)],
            tests,
            marker,
            python=python or sys.executable,
            setup=setup,
            cache=Cache(namespace="mutations", enabled=not no_cache),
            executor=executor,
        )
        return mutation_section(run)

    return step


def _sweep_step(
    repo: GitRepo, base: str, head: str, v: Value, python: str | None, executor: Any = None
) -> Callable[[], Section]:
    from harness.checks.tests_as_evidence.sweep import run_sweep, sweep_section

    f = v.map(_EXTRA_FIELDS["sweep"])
    tests = f.req("tests").str_list() if "tests" in f else []
    marker = f.req("marker").str() if "marker" in f else None

    def step() -> Section:
        import sys

        return sweep_section(
            run_sweep(
                repo,
                base,
                head,
                tests=tests,
                marker=marker,
                python=python or sys.executable,
                executor=executor,
            )
        )

    return step
