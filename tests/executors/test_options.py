"""Choosing an executor: names, the environment, a missing ray, and packed trees (no ray needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.columns.edits import Edit
from harness.columns.trees import Column, listing_of, materialize
from harness.executors import TreeSpec, make_executor
from harness.executors.options import without_executor_options
from harness.executors.trees import InputFiles, pack_tree
from harness.git import GitRepo


def test_unknown_executor_and_a_stray_address_are_one_line_exit_2(
    builder, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builder.commit("one", {"a": "1\n"})
    out = tmp_path / "out"
    for argv, said in (
        (["--executor", "slurm"], "--executor slurm: unknown executor (choose from local, ray)"),
        (["--ray-address", "10.0.0.1:6379"], "--ray-address needs --executor ray"),
    ):
        code, _, err = run_cli(
            "compare", "HEAD", "HEAD", "--repo", str(builder.path), "--output-dir", str(out), *argv
        )
        assert code == 2 and said in err, err
        assert err.count("\n") == 1 and not out.exists()
    monkeypatch.setenv("HARNESS_EXECUTOR", "nope")
    code, _, err = run_cli(
        "compare", "HEAD", "HEAD", "--repo", str(builder.path), "--output-dir", str(out)
    )
    assert code == 2 and "--executor nope: unknown executor" in err and not out.exists()


def test_executor_ray_without_ray_installed_is_one_line_exit_2(
    builder, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builder.commit("one", {"a": "1\n"})
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: find_spec gives up
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "HEAD",
        "HEAD",
        "--repo",
        str(builder.path),
        "--output-dir",
        str(tmp_path / "out"),
        "--executor",
        "ray",
    )
    assert code == 2 and err.count("\n") == 1
    assert (
        "--executor ray needs ray: pip install 'harness[ray]'" in err
        and not (tmp_path / "out").exists()
    )


def test_an_address_nobody_answers_on_is_one_line_exit_2(builder, run_cli, tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="ray is not installed (pip install 'harness[ray]')")
    builder.commit("one", {"a": "1\n"})
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "HEAD",
        "HEAD",
        "--repo",
        str(builder.path),
        "--output-dir",
        str(tmp_path / "o"),
        "--executor",
        "ray",
        "--ray-address",
        "127.0.0.1:1",
    )
    assert (
        code == 2
        and err.count("\n") == 1
        and "--ray-address 127.0.0.1:1: no Ray cluster answers there" in err
    )
    assert not (tmp_path / "o").exists()


def test_environment_picks_the_executor_and_local_is_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HARNESS_EXECUTOR", raising=False)
    assert make_executor().name == "local"
    monkeypatch.setenv("HARNESS_EXECUTOR", "local")
    assert make_executor(None).name == "local"


def test_the_report_command_line_leaves_executor_options_out() -> None:
    argv = [
        "compare",
        "a",
        "b",
        "--executor",
        "ray",
        "--ray-address=h:1",
        "--ray-address",
        "h:2",
        "--executor=local",
        "--format",
        "none",
    ]
    assert without_executor_options(argv) == ["compare", "a", "b", "--format", "none"]
    assert without_executor_options(None) is None


def test_a_packed_tree_unpacks_to_the_materialized_tree(builder, tmp_path: Path) -> None:
    """Ref columns travel as git archive bytes, controls as their edited tree; both open to the same
    files, modes and edit proofs as a local materialization, and the user's repository is not read
    by the opener."""
    builder.commit("one", {"pkg/m.py": "x = 1\n", "run.sh": "#!/bin/sh\n", "d/e/f.txt": "deep\n"})
    repo = GitRepo(builder.path)
    for column in (
        Column("head", "HEAD"),
        Column(
            "ctl",
            "HEAD",
            [Edit(kind="replace", path="pkg/m.py", old="x = 1", new="x = 2")],
            role="control",
        ),
    ):
        packed = pack_tree(TreeSpec(repo, column, tmp_path / "work"))
        with materialize(repo, column, tmp_path / "work2") as mat:
            want = {p: (mat.path / p).read_bytes() for p in listing_of(mat.path)}
            want_modes = {p: v[2] for p, v in listing_of(mat.path).items()}
            want_proofs = [(p.path, p.blob_before, p.blob_after) for p in mat.proofs]
        with packed.open() as got:
            assert {p: (got.path / p).read_bytes() for p in listing_of(got.path)} == want
            assert {p: v[2] for p, v in listing_of(got.path).items()} == want_modes
            assert [(p.path, p.blob_before, p.blob_after) for p in got.proofs] == want_proofs
            assert got.tree_sha == repo.resolve("HEAD", "tree") and not got.changes()
            where = got.path
        assert not where.exists()  # a worker's copy is removed after the task
    bad = Column(
        "ctl", "HEAD", [Edit(kind="replace", path="pkg/m.py", old="nope", new="x")], role="control"
    )
    packed = pack_tree(TreeSpec(repo, bad, tmp_path / "work"))
    assert packed.error and not packed.data


def test_input_files_move_with_the_probe(tmp_path: Path) -> None:
    (tmp_path / "scen").mkdir()
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "p.py").write_text("def run(): return 1\n")
    files = InputFiles.of(tmp_path / "scen", [tmp_path / "probes" / "p.py"])
    base = files.place(tmp_path / "elsewhere", tmp_path / "scen")
    assert (base / "../probes/p.py").resolve().read_text() == "def run(): return 1\n"


def _m_probe(builder, tmp_path: Path, rows: list[int]):
    """A commit holding ``m.X = 41`` and a scenario whose python probe returns ``m.X + n``."""
    from harness.inputs.scenario import load_scenario

    builder.commit("one", {"m.py": "X = 41\n"})
    (tmp_path / "p.py").write_text("def run(n):\n    import m\n    return m.X + n\n")
    scen = tmp_path / "s.yaml"
    scen.write_text(
        "refs: {head: HEAD}\nprobes:\n  - {id: p, kind: python, file: p.py, function: run, "
        f"rows: {{n: {rows}}}}}\n"
    )
    return load_scenario(str(scen))


def test_a_remote_column_on_a_different_interpreter_is_error_cells_not_results(
    builder, tmp_path: Path
) -> None:
    """What a worker runs is checked against the driver's interpreter fingerprint (part of every key):
    a mismatch is said in the cells, and a match runs the probe from the shipped probe file."""
    from harness.columns.trees import Column
    from harness.probes.column_task import ColumnJob, run_column, runtime_fingerprint, shippable

    scenario = _m_probe(builder, tmp_path, [1])
    probe = scenario.probes[0]
    repo = GitRepo(builder.path)
    column = Column("head", "HEAD")
    packed = pack_tree(TreeSpec(repo, column, tmp_path / "work"))
    job = ColumnJob(shippable(probe), [0], InputFiles.of(probe.base_dir, [tmp_path / "p.py"]))
    (tmp_path / "p.py").unlink()  # the worker reads the shipped copy, not this one
    ok = run_column(packed, column, [job], sys.executable, runtime_fingerprint(sys.executable))
    assert [(i, c.status, c.value) for i, c in ok.cells["p"]] == [(0, "ok", 42)]
    bad = run_column(packed, column, [job], sys.executable, "another interpreter")
    [(_, cell)] = bad.cells["p"]
    assert cell.status == "error" and "differs from the driver's" in cell.detail


class _PackingExecutor:
    """A stand-in for a Ray worker on another machine (none exists here): each task runs in this
    process on its tree packed and unpacked as the Ray executor ships it (``tree.remote``)."""

    name = "packing"

    def run(self, tasks, jobs=None):
        from harness.executors.base import TaskResult

        out = []
        for task in tasks:
            packed = pack_tree(task.tree)
            meta = packed.meta()
            meta.data = packed.data
            out.append(TaskResult("ok", task.fn(meta, *task.args)))
        return out

    def slots(self) -> int:
        return 1

    def close(self) -> None:
        pass


def test_a_worker_s_own_failure_is_shown_and_never_cached(
    builder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cells a worker could not run (its interpreter differs from the driver's) are its outcome,
    not the probe's: the next run, local, runs them instead of serving the error."""
    from harness.infra.cache import Cache
    from harness.probes import engine

    scenario = _m_probe(builder, tmp_path, [1, 2])
    repo = GitRepo(builder.path)
    cache = Cache(tmp_path / "cache", namespace="probes")
    # the driver's interpreter as another machine's worker would not see it
    monkeypatch.setattr(engine, "runtime_fingerprint", lambda python: "the driver's, elsewhere")
    remote = engine.run_probes(
        repo, scenario, scenario.probes, cache=cache, executor=_PackingExecutor()
    )
    cells = remote.cells[("p", "head")]
    assert [c.status for c in cells] == ["error", "error"]
    assert all("differs from the driver's" in c.detail for c in cells)
    monkeypatch.undo()
    local = engine.run_probes(repo, scenario, scenario.probes, cache=cache)
    assert (local.from_cache, local.ran) == (0, 2)
    assert [(c.status, c.value) for c in local.cells[("p", "head")]] == [("ok", 42), ("ok", 43)]


def test_a_worker_s_folder_is_private_whatever_its_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's temporary trees live in the work area of the machine it runs on, made 0700 as the
    rest of it (before: ``$TMPDIR/harness-<uid>/worker`` made with the umask, 0775 under 002)."""
    import os
    import stat

    from harness.executors.trees import worker_dir, worker_root

    monkeypatch.setenv("HARNESS_WORK_DIR", str(tmp_path / "w"))
    old = os.umask(0o002)
    try:
        made = worker_dir("harness-probe-")
    finally:
        os.umask(old)
    root = worker_root()
    assert made.parent == root == tmp_path / "w" / "worker"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "w").stat().st_mode) == 0o700


def test_a_tests_column_on_a_machine_without_the_interpreter_is_its_problem(
    builder, tmp_path: Path
) -> None:
    """The tests section may name an environment built in the driver's cache: a worker that lacks
    it says so in the column, where the whole run used to end with a FileNotFoundError."""
    from harness.checks.fix_tests.cells import Options, column_task

    builder.commit("one", {"test_a.py": "def test_a():\n    pass\n"})
    repo = GitRepo(builder.path)
    packed = pack_tree(TreeSpec(repo, Column("head", "HEAD"), tmp_path / "work"))
    missing = str(tmp_path / "driver-cache" / "envs" / "k" / "bin" / "python")
    plan = [("pytest", ["test_a.py"], None)]
    run = column_task(packed, "head", plan, Options(missing, "k", 60.0))
    assert run.problem.startswith(f"the interpreter {missing} is not on the machine")
    assert run.cells == {}
    ran = column_task(packed, "head", plan, Options(sys.executable, "k", 60.0))
    assert not ran.problem and ran.cells["pytest"].outcomes == {"test_a.py::test_a": "passed"}


def test_mutation_rows_and_collections_on_another_interpreter_are_problems_not_results(
    builder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As probe columns: a remote worker whose interpreter is not the driver's runs no mutation
    row and no collection; they say so and are not cached (the next run, local, measures them)."""
    from harness.checks.tests_as_evidence import mutation, selection
    from harness.infra.cache import Cache

    builder.commit(
        "one", {"m.py": "X = 1\n", "test_m.py": "import m\n\ndef test_x():\n    assert m.X == 1\n"}
    )
    repo = GitRepo(builder.path)
    # the driver's interpreter as another machine's worker would not see it
    monkeypatch.setattr(mutation, "runtime_fingerprint", lambda python: "the driver's, elsewhere")
    monkeypatch.setattr(selection, "runtime_fingerprint", lambda python: "the driver's, elsewhere")
    mcache = Cache(tmp_path / "m", namespace="mutations")
    remote = mutation.run_mutations(
        repo, "HEAD", [], ["test_m.py"], cache=mcache, executor=_PackingExecutor()
    )
    assert [r.outcome.problem for r in remote.rows] == [
        f"this worker's interpreter {sys.executable} differs from the driver's "
        "(version or installed distributions): not run"
    ]
    scache = Cache(tmp_path / "s", namespace="collections")
    lanes = [selection.Lane("all", "")]
    (col,) = selection.collect_refs(
        repo, ["HEAD"], lanes, cache=scache, executor=_PackingExecutor()
    )
    assert col.errors and "differs from the driver's" in col.errors[0]["message"]
    monkeypatch.undo()
    local = mutation.run_mutations(repo, "HEAD", [], ["test_m.py"], cache=mcache)
    assert [r.outcome.outcomes for r in local.rows] == [{"test_m.py::test_x": "passed"}]
    assert not local.rows[0].cached  # measured now: the worker's problem row was not kept
    (again,) = selection.collect_refs(repo, ["HEAD"], lanes, cache=scache)
    assert again.total == 1 and not again.errors
