"""Mutation controls: does the test selection notice an edit of the code?

Each mutation is a control column (a ref plus edits, see harness/columns/trees.py) materialized in a
tree the harness owns; the same pytest selection runs in each, with
``probes/pytest_outcomes_plugin.py`` recording every test's outcome and where the edited modules
were imported from. The row "none" (no edit) always runs first and is the baseline. A mutation
declared ``expect: killed`` is the liveness control: if no test fails for it, the suite cannot
fail for this selection and the whole table is not evidence. Gap pinning applies a commit's diff
as a mutation of the head and asks whether any test changes outcome.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.checks.tests_as_evidence.pytest_run import (
    code_digests,
    output_text,
    pytest_argv,
    pytest_env,
    run_in_tree,
    run_setup,
    tree_paths,
)
from harness.columns.edits import Edit, EditProof, edit_from_mapping, resolve_commits
from harness.columns.trees import Column, identify, materialize, user_blob
from harness.envs import interpreter, proof
from harness.envs.fingerprint import runtime_fingerprint, worker_differs
from harness.envs.interpreter import Env
from harness.errors import UsageError
from harness.executors import Executor, Task, TaskResult, TreeSpec
from harness.executors.local import LocalExecutor
from harness.git.repo import GitRepo
from harness.infra import process, workarea, zygote
from harness.infra.cache import Cache, content_key, provenance_text
from harness.infra.progress import phase
from harness.inputs import yamlpath
from harness.report.model import Anchors, Code, Control, Finding, Section, Sha, Table

EXPECTS = ("killed", "survived")
COUNTED = ("passed", "failed", "error", "skipped")


@dataclass
class Mutation:
    name: str
    edits: list[Edit]
    expect: str | None = None  # "killed": liveness control; "survived": must not change anything
    gap: str | None = None  # commit sha when this mutation fills a gap (apply-commit)

    def describe(self) -> str:
        return "; ".join(e.describe() for e in self.edits) or "(no edit)"


@dataclass
class Outcome:
    """One pytest run of the selection in one tree."""

    outcomes: dict[str, str] = field(default_factory=dict)  # node id → passed/failed/error/skipped
    collection_errors: list[dict[str, str]] = field(default_factory=list)
    exit_code: int | None = None
    module_proofs: dict[str, dict[str, Any]] = field(default_factory=dict)
    problem: str = ""  # set when pytest could not report (crash, timeout) or the edit did not apply
    seconds: float = 0.0

    def count(self, kind: str) -> int:
        n = sum(1 for v in self.outcomes.values() if v == kind)
        return n + len(self.collection_errors) if kind == "error" else n

    @property
    def failing(self) -> set[str]:
        return {k for k, v in self.outcomes.items() if v in ("failed", "error")} | {
            e["nodeid"] for e in self.collection_errors
        }


@dataclass
class Row:
    mutation: Mutation | None  # None: the baseline row "none"
    outcome: Outcome
    tree: str = ""
    proofs: list[EditProof] = field(default_factory=list)
    key: str = ""  # the cache key of this row's outcome
    cached: bool = False  # served from the cache rather than run

    @property
    def name(self) -> str:
        return self.mutation.name if self.mutation else "none"


@dataclass
class MutationRun:
    ref: str
    commit: str
    tests: list[str]
    marker: str | None
    rows: list[Row]


# -- input ---------------------------------------------------------------------------
def load_mutations(path: str) -> list[Mutation]:
    """Mutations from YAML: a list (or ``{mutations: [...]}``) of ``{name, expect, edits | <edit keys>}``."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = yamlpath.safe_load(fh.read(yamlpath.MAX_BYTES + 1), f"--mutation {path}")
    except OSError as exc:
        raise UsageError(f"--mutation {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--mutation {path}: not UTF-8") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"--mutation {path}: invalid YAML: {str(exc).splitlines()[0]}") from None
    if isinstance(data, dict) and "mutations" in data:
        data = data["mutations"]
    if not isinstance(data, list) or not data:
        raise UsageError(f"{path}: expected a non-empty list of mutations (or a 'mutations:' key)")
    return [mutation_from_mapping(item, f"{path}: mutations[{i}]: ") for i, item in enumerate(data)]


def mutation_from_mapping(item: Any, where: str = "") -> Mutation:
    """``{name, expect?, edits: [...]}`` or ``{name, expect?, <one edit's keys>}`` → Mutation."""
    if not isinstance(item, dict):
        raise UsageError(f"{where}a mutation must be a mapping")
    item = dict(item)
    name = item.pop("name", None)
    if not isinstance(name, str) or not name.strip() or name == "none":
        raise UsageError(f"{where}'name' must be a non-empty string other than 'none'")
    expect = item.pop("expect", None)
    if expect is not None and expect not in EXPECTS:
        raise UsageError(f"{where}'expect' must be one of {', '.join(EXPECTS)}, got {expect!r}")
    if "edits" in item:
        raw = item.pop("edits")
        if item:
            raise UsageError(f"{where}unknown key {sorted(item)[0]!r} next to 'edits'")
        if not isinstance(raw, list) or not raw:
            raise UsageError(f"{where}'edits' must be a non-empty list")
        edits = [edit_from_mapping(e, f"{where}edits[{j}]: ") for j, e in enumerate(raw)]
    else:
        edits = [edit_from_mapping(item, where)]
    return Mutation(name.strip(), edits, expect)


def check_commits(repo: GitRepo, mutations: Sequence[Mutation]) -> None:
    """Resolve every apply-commit edit's commit before any work (test collection runs repository
    code): an unknown one fails at the line and key that named it."""
    for m in mutations:
        resolve_commits(repo, m.edits)


def gap_mutations(repo: GitRepo, commits: Sequence[str]) -> list[Mutation]:
    """One apply-commit mutation per gap commit (resolved, so a bad ref is a usage error up front)."""
    result = []
    for ref in commits:
        sha = repo.resolve(ref)
        subject = repo.commit(sha).subject
        result.append(
            Mutation(
                f"gap {sha[:10]} {subject[:50]}", [Edit(kind="apply-commit", commit=sha)], gap=sha
            )
        )
    return result


# -- running -------------------------------------------------------------------------
def run_selection(
    tree_dir: Path,
    tests: Sequence[str],
    marker: str | None,
    *,
    python: str | None = None,
    proof_paths: Sequence[str] = (),
    timeout: float = 900,
    setup: Sequence[str] = (),
) -> Outcome:
    """Run the pytest selection once in ``tree_dir`` with ``python`` (default: the harness's own);
    the tree's own modules shadow installed copies."""
    python = interpreter.resolve(python).python
    env = pytest_env(tree_paths(tree_dir), bytecode=True)  # trees are ours and reused
    with workarea.temp_dir("harness-outcomes-") as tmp:
        out = Path(tmp) / "out.json"
        env["HARNESS_OUTCOMES_OUT"] = str(out)
        env["HARNESS_PROOF_PATHS"] = json.dumps(list(proof_paths))
        argv = pytest_argv(
            python,
            tree_dir,
            "pytest_outcomes_plugin",
            args=[
                "-o",
                "console_output_style=classic",
                *(["-m", marker] if marker else []),
                "--",
                *tests,
            ],
        )
        start = time.monotonic()
        outcome = Outcome()
        outcome.problem = run_setup(tree_dir, setup, env, timeout)
        if outcome.problem:
            return outcome
        try:
            proc = run_in_tree(argv, tree_dir, env, timeout, fork=not setup)
        except process.TimeoutExpired:
            outcome.problem = f"timeout after {timeout:.0f}s"
            outcome.seconds = time.monotonic() - start
            return outcome
        outcome.seconds = time.monotonic() - start
        outcome.exit_code = proc.returncode
        if not out.exists():
            tail = [ln for ln in output_text(proc).splitlines() if ln.strip()]
            outcome.problem = f"pytest exited {proc.returncode} without a report: " + (
                tail[-1] if tail else ""
            )
            return outcome
        data = json.loads(out.read_text(encoding="utf-8"))
    outcome.outcomes = data["outcomes"]
    outcome.collection_errors = data["collection_errors"]
    outcome.module_proofs = data["module_proofs"]
    if proc.returncode == 4:  # pytest usage error, e.g. a node id that does not exist
        outcome.problem = (
            "pytest usage error (exit 4): " + proc.stderr.decode("utf-8", "replace").strip()[-200:]
        )
    return outcome


def _edited_paths(mutations: Sequence[Mutation]) -> list[str]:
    return sorted({e.path for m in mutations for e in m.edits if e.path and e.path.endswith(".py")})


def row_key(
    repo: GitRepo,
    column: Column,
    tests: Sequence[str],
    marker: str | None,
    proof_paths: Sequence[str],
    env: Env,
    timeout: float,
    setup: Sequence[str],
    store: Cache | None = None,
) -> str:
    """What a row's outcome depends on: the column's tree and edits, the selection, the interpreter
    with its distributions (``env``'s fingerprint), the setup, and the code that runs and reads the
    selection (``store``: where the interpreter's description may be kept)."""
    code = code_digests("pytest_outcomes_plugin", __file__)
    return content_key(
        "mutation-row",
        identify(repo, column).key,
        list(tests),
        marker,
        list(proof_paths),
        env.fingerprint(store),
        timeout,
        list(setup),
        code,
    )


def _from_cache(
    repo: GitRepo, commit: str, mutation: Mutation | None, key: str, hit: dict[str, Any]
) -> Row:
    proofs = [EditProof(**p) for p in hit["proofs"]]
    for p in proofs:  # the user's copy is read now, never from the cache
        p.blob_user_before = p.blob_user_after = user_blob(repo, commit, p.path)
    return Row(mutation, Outcome(**hit["outcome"]), hit["tree"], proofs, key, cached=True)


def _column(commit: str, mutation: Mutation | None) -> Column:
    """Row "none" is the ref itself; a mutation is a control column with its edits."""
    return Column(
        mutation.name if mutation else "none",
        commit,
        list(mutation.edits) if mutation else [],
        role="control" if mutation else "ref",
    )


def run_mutations(
    repo: GitRepo,
    ref: str,
    mutations: Sequence[Mutation],
    tests: Sequence[str],
    marker: str | None = None,
    *,
    python: str | None = None,
    timeout: float = 900,
    workroot: Path | None = None,
    setup: Sequence[str] = (),
    cache: Cache | None = None,
    executor: Executor | None = None,
    jobs: int | None = None,
) -> MutationRun:
    """Row "none" first, then each mutation in its own control column; a row whose key is in the
    cache is served from it (``cache=Cache(enabled=False)`` runs every row), the others are one
    executor task each (``local`` runs them one after another unless ``jobs`` says otherwise)."""
    commit = repo.resolve(ref)
    cache = cache if cache is not None else Cache(namespace="mutations")
    names = [m.name for m in mutations]
    if len(set(names)) != len(names):
        raise UsageError(
            f"duplicate mutation names: {sorted({n for n in names if names.count(n) > 1})}"
        )
    proof_paths = _edited_paths(mutations)
    executor = executor or LocalExecutor()
    env = interpreter.resolve(python)  # --python, else the harness's own
    # a remote worker checks that its interpreter is the one the rows' keys name
    driver = runtime_fingerprint(env.python) if executor.name != "local" else ""
    rows: list[Row | None] = []
    tasks: list[Task[Row]] = []
    slots: list[int] = []  # the rows that are tasks
    with ExitStack() as trees:
        # Every column's edits are applied before any test runs: a mutation that does not apply is
        # bad input (exit 2) found before the work starts, or, for a gap, a row saying why.
        for mutation in [None, *mutations]:
            column = _column(commit, mutation)
            try:
                key = row_key(repo, column, tests, marker, proof_paths, env, timeout, setup, cache)
                hit = cache.get(key)
                if hit is not None:
                    rows.append(_from_cache(repo, commit, mutation, key, hit))
                    continue
                mat = trees.enter_context(materialize(repo, column, workroot))
            except UsageError as exc:
                if mutation is None or mutation.gap is None:
                    raise
                rows.append(Row(mutation, Outcome(problem=f"does not apply on {ref}: {exc}")))
                continue
            rows.append(None)
            slots.append(len(rows) - 1)
            tasks.append(
                Task(
                    key,
                    mutation_row,
                    TreeSpec(repo, column, workroot, ready=mat),
                    (
                        mutation,
                        ref,
                        list(tests),
                        marker,
                        env.python,
                        proof_paths,
                        timeout,
                        list(setup),
                        driver,
                    ),
                    timeout=2 * timeout + 120,
                    label=f"mutation {column.name}",
                )
            )
        with zygote.forking():  # the rows' pytest runs: pytest imported once
            results = executor.run(tasks, jobs=jobs or (1 if executor.name == "local" else None))
    for i, task, res in zip(slots, tasks, results, strict=False):
        rows[i] = _ran(repo, commit, cache, task, res)
    return MutationRun(ref, commit, list(tests), marker, [r for r in rows if r is not None])


def _ran(repo: GitRepo, commit: str, cache: Cache, task: Task[Row], res: TaskResult[Row]) -> Row:
    """A row task's row, cached when it measured something (on the driver)."""
    mutation = task.args[0]
    if res.status != "ok" or res.value is None:  # past its timeout, or its worker lost: not cached
        return Row(mutation, Outcome(problem=res.detail), key=task.key)
    row = res.value
    for p in row.proofs:
        if p.blob_user_after is None:  # packed trees: the user's copy is read here, after the run
            p.blob_user_after = user_blob(repo, commit, p.path)
    if row.tree:  # it ran (a gap that does not apply has no key, as before)
        row.key = task.key
        if not row.outcome.problem:  # a timeout or crash is measured again next time
            cache.put(
                task.key,
                {
                    "outcome": asdict(row.outcome),
                    "tree": row.tree,
                    "proofs": [
                        {**asdict(p), "blob_user_before": None, "blob_user_after": None}
                        for p in row.proofs
                    ],
                },
            )
    return row


def mutation_row(
    tree: Any,
    mutation: Mutation | None,
    ref: str,
    tests: list[str],
    marker: str | None,
    python: str,
    proof_paths: list[str],
    timeout: float,
    setup: list[str],
    driver: str = "",
) -> Row:
    """One row as an executor task: the selection run once in the row's tree (wherever that is);
    ``driver``: the driver's interpreter fingerprint, which a remote worker's must match."""
    differs = worker_differs(python, driver)
    if differs:  # a problem row: shown, not cached
        return Row(mutation, Outcome(problem=differs))
    try:
        with tree.open() as mat:
            paths = sorted(
                set(proof_paths) | {p.path for p in mat.proofs if p.path.endswith(".py")}
            )
            with (
                phase(
                    f"tests under mutation {mutation.name}"
                    if mutation
                    else "tests without mutation"
                ),
                zygote.reusing(),  # a worker's later rows fork from the pytest it imported once
            ):
                outcome = run_selection(
                    mat.path,
                    tests,
                    marker,
                    python=python,
                    proof_paths=paths,
                    timeout=timeout,
                    setup=setup,
                )
            row = Row(mutation, outcome, mat.tree_sha, mat.proofs)
    except UsageError as exc:
        if mutation is None or mutation.gap is None:
            raise
        row = Row(mutation, Outcome(problem=f"does not apply on {ref}: {exc}"))
    return row


# -- report --------------------------------------------------------------------------
def killed_by(row: Row, baseline: Row) -> list[str]:
    """Tests that pass in the baseline and fail (or error) with the mutation."""
    return sorted(row.outcome.failing - baseline.outcome.failing)


def changed_tests(row: Row, baseline: Row) -> list[str]:
    """Tests whose outcome differs from the baseline (appearing and vanishing tests included)."""
    a, b = baseline.outcome.outcomes, row.outcome.outcomes
    moved = {t for t in set(a) | set(b) if a.get(t) != b.get(t)}
    ea = {e["nodeid"] for e in baseline.outcome.collection_errors}
    eb = {e["nodeid"] for e in row.outcome.collection_errors}
    return sorted(moved | (ea ^ eb))


def _proof_cell(row: Row) -> str:
    proofs = row.outcome.module_proofs
    if not proofs:
        return "—"
    edited = {p.path for p in row.proofs}
    relevant = {k: v for k, v in proofs.items() if not edited or k in edited} or proofs
    states = sorted({v["status"] for v in relevant.values()})
    return ", ".join(states)


def mutation_section(run: MutationRun) -> Section:
    """The mutation table with sha proofs, the liveness control and gap pinning findings."""
    base = run.rows[0]
    findings: list[Finding] = []
    rows: list[list] = []
    proof_rows: list[list] = []
    live_rows = [r for r in run.rows[1:] if r.mutation and r.mutation.expect == "killed"]
    liveness_failed = [r for r in live_rows if not killed_by(r, base)]
    baseline_total = len(base.outcome.outcomes) + len(base.outcome.collection_errors)
    shadowed = [r for r in run.rows if proof.shadowed(r.outcome.module_proofs)]
    evidence = (
        bool(live_rows)
        and not liveness_failed
        and baseline_total > 0
        and not base.outcome.problem
        and not shadowed
    )

    for r in run.rows:
        _add_row(run, r, base, rows, proof_rows, findings)
    findings += _run_findings(run, base, liveness_failed, baseline_total, shadowed)
    liveness = _liveness(run, base, live_rows, liveness_failed)
    tables = _tables(run, rows, proof_rows, liveness)
    gaps = [r for r in run.rows if r.mutation and r.mutation.gap]
    not_pinned = [r for r in gaps if not r.outcome.problem and not changed_tests(r, base)]
    controls = [
        Control(
            "row 'none' (baseline)",
            f"{baseline_total} tests, {len(base.outcome.failing)} failing",
            baseline_total > 0 and not base.outcome.problem,
        ),
        Control("liveness", liveness, bool(live_rows) and not liveness_failed),
        Control(
            "module path proof",
            "edited modules imported from the column's tree"
            if not shadowed
            else f"shadowed in {len(shadowed)} row(s)",
            not shadowed,
        ),
    ]
    summary = (
        f"{len(run.rows) - 1} mutation(s) at {run.ref}; "
        + liveness
        + (f"; {len(not_pinned)} of {len(gaps)} gap(s) pinned by no test" if gaps else "")
    )
    return Section(
        id="mutation",
        title="Mutation controls" + (" and gap pinning" if gaps else ""),
        summary=summary,
        tables=tables,
        findings=findings,
        controls=controls,
        not_verified=[
            "only the given selection ran; tests outside it may pin what it does not",
            "the project's addopts were neutralised; plugins' own options were not applied",
            "a mutation that changes no outcome may still be caught by a test that is skipped here",
        ],
        data={
            "ref": run.ref,
            "commit": run.commit,
            "tests": run.tests,
            "marker": run.marker,
            "evidence": evidence,
            "rows": [_row_data(r, base) for r in run.rows],
        },
    )


def _add_row(
    run: MutationRun,
    r: Row,
    base: Row,
    rows: list[list],
    proof_rows: list[list],
    findings: list[Finding],
) -> None:
    """One mutation's table row and sha proof rows, and its findings (a leaked edit, a survivor
    expected to be killed, a gap no test pins)."""
    o = r.outcome
    kills = killed_by(r, base) if r.mutation else []
    moved = changed_tests(r, base) if r.mutation else []
    first = r.proofs[0] if r.proofs else None
    rows.append(
        [
            r.name,
            (r.mutation.expect or "") if r.mutation else "",
            _verdict(r, kills, moved),
            *(o.count(k) for k in COUNTED),
            Code(", ".join(kills[:5]) + (f" (+{len(kills) - 5})" if len(kills) > 5 else ""))
            if kills
            else "",
            Sha(first.blob_before) if first and first.blob_before else None,
            Sha(first.blob_after) if first and first.blob_after else None,
            Sha(first.blob_user_after) if first and first.blob_user_after else None,
            _proof_cell(r),
            o.problem,
        ]
    )
    _add_proofs(r, proof_rows, findings)
    if r.mutation and r.mutation.expect == "survived" and kills:
        findings.append(
            Finding(
                "mutation-expectation",
                "P2",
                f"mutation {r.name} was expected to survive but {len(kills)} test(s) failed",
                ", ".join(kills[:10]),
                key=r.name,
            )
        )
    if r.mutation and r.mutation.gap and not o.problem and not moved:
        counts = ", ".join(f"{o.count(k)} {k}" for k in COUNTED)
        findings.append(
            Finding(
                "gap-not-pinned",
                "P2",
                f"no test in this selection pins this gap: {r.name}",
                f"with the gap filled the selection gives {counts} — the same outcome for all "
                f"{len(o.outcomes)} tests as without it",
                key=f"{r.mutation.gap}:{run.tests}:{run.marker}",
                anchors=Anchors(commit=str(r.mutation.gap)),
            )
        )


def _verdict(r: Row, kills: list[str], moved: list[str]) -> str:
    """A row's verdict: the baseline, not run, a gap pinned or not, a mutation killed or not."""
    if r.mutation is None:
        return "baseline"
    if r.outcome.problem:
        return "not run"
    if r.mutation.gap:
        return "pinned" if moved else "NOT PINNED"
    return "killed" if kills else "survived"


def _add_proofs(r: Row, proof_rows: list[list], findings: list[Finding]) -> None:
    """A row's sha proof rows, and a finding for each user's copy the mutation changed."""
    for p in r.proofs:
        unchanged = p.blob_user_before == p.blob_user_after
        proof_rows.append(
            [
                r.name,
                Code(p.path),
                Sha(p.blob_before) if p.blob_before else "(new)",
                Sha(p.blob_after) if p.blob_after else "(deleted)",
                Sha(p.blob_user_after) if p.blob_user_after else "(absent)",
                "unchanged" if unchanged else "CHANGED",
            ]
        )
        if not unchanged:
            findings.append(
                Finding(
                    "mutation-leaked",
                    "P1",
                    f"the user's copy of {p.path} changed during mutation {r.name}",
                    key=f"{r.name}:{p.path}",
                )
            )


def _run_findings(
    run: MutationRun,
    base: Row,
    liveness_failed: list[Row],
    baseline_total: int,
    shadowed: list[Row],
) -> list[Finding]:
    """Findings about the run as a whole: liveness, an empty or failing baseline, shadowing."""
    findings: list[Finding] = []
    for r in liveness_failed:
        findings.append(
            Finding(
                "liveness-failed",
                "P1",
                f"liveness control {r.name} made no test fail: the suite cannot fail for this selection",
                f"{r.outcome.count('passed')} passed, {r.outcome.count('failed')} failed; the mutation table is "
                "not evidence",
                key=f"{r.name}:{run.tests}:{run.marker}",
            )
        )
    if baseline_total == 0:
        findings.append(
            Finding(
                "selection-empty",
                "P1",
                "the test selection ran no test at the baseline",
                base.outcome.problem,
                key=f"{run.tests}:{run.marker}",
            )
        )
    if base.outcome.failing:
        findings.append(
            Finding(
                "baseline-failing",
                "P2",
                f"{len(base.outcome.failing)} test(s) already fail without any mutation",
                ", ".join(sorted(base.outcome.failing)[:10]),
                key=str(sorted(base.outcome.failing)),
            )
        )
    for r in shadowed:
        findings.append(
            Finding(
                "module-shadowed",
                "P1",
                f"row {r.name}: the edited module was imported from outside the column's tree",
                "; ".join(proof.outside(r.outcome.module_proofs)),
                key=f"{r.name}",
            )
        )
    return findings


def _liveness(run: MutationRun, base: Row, live_rows: list[Row], liveness_failed: list[Row]) -> str:
    if not live_rows:
        liveness = "no liveness mutation (expect: killed) declared — not evidence"
    elif liveness_failed:
        liveness = (
            "liveness FAILED (" + ", ".join(r.name for r in liveness_failed) + "): NOT EVIDENCE"
        )
    else:
        liveness = "liveness held: " + ", ".join(
            f"{r.name} killed {len(killed_by(r, base))}" for r in live_rows
        )
    liveness += " · rows " + provenance_text(
        [(r.key, "cache" if r.cached else "run") for r in run.rows if r.key]
    )
    return liveness


def _tables(
    run: MutationRun, rows: list[list], proof_rows: list[list], liveness: str
) -> list[Table]:
    selection = " ".join(run.tests) + (f" -m {run.marker!r}" if run.marker else "")
    table = Table(
        f"Mutations at {run.ref} — selection: {selection or '(all)'}",
        [
            "mutation",
            "expect",
            "verdict",
            *COUNTED,
            "tests killed",
            "baseline",
            "mutated",
            "restored",
            "module",
            "problem",
        ],
        rows,
        legend="killed = a test passing in 'none' fails; gap rows: pinned = some test changes outcome; "
        "baseline/mutated = blob of the edited file in the column, restored = the user's copy afterwards "
        "(equal to baseline when --ref is the checked-out, clean commit); "
        "module = where the edited module was imported from",
        control=liveness,
    )
    tables = [table]
    if proof_rows:
        tables.append(
            Table(
                "Edit sha proofs per file",
                ["mutation", "file", "baseline", "mutated", "restored", "user's copy"],
                proof_rows,
                control="restored must equal the user's copy before the run",
                collapsed=len(proof_rows) > 8,
            )
        )
    return tables


def _row_data(r: Row, base: Row) -> dict[str, object]:
    return {
        "name": r.name,
        "expect": r.mutation.expect if r.mutation else None,
        "gap": r.mutation.gap if r.mutation else None,
        "tree": r.tree,
        "counts": {k: r.outcome.count(k) for k in COUNTED},
        "killed_by": killed_by(r, base) if r.mutation else [],
        "changed": changed_tests(r, base) if r.mutation else [],
        "outcomes": r.outcome.outcomes,
        "problem": r.outcome.problem,
        "module_proofs": r.outcome.module_proofs,
        "proofs": [
            {
                "path": p.path,
                "baseline": p.blob_before,
                "mutated": p.blob_after,
                "restored": p.blob_user_after,
                "user_before": p.blob_user_before,
            }
            for p in r.proofs
        ],
    }
