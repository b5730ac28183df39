"""How a run ends: a crashing section (exit 3), SIGTERM (cleaned up), and the ledger's "new"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.compare import Plan, run_plan
from harness.errors import EXIT_INTERNAL
from harness.report.model import Report, Section
from harness.verdict import gate


def _boom() -> Section:
    raise RuntimeError("section exploded")


def test_a_crashing_section_becomes_a_harness_error_section_and_the_others_stand() -> None:
    plan = Plan()
    plan.add("ok", "fine", lambda: Section("ok", "fine", not_verified=["x"]))
    plan.add("bad", "broken", _boom)
    plan.add("after", "later", lambda: Section("after", "later", not_verified=["y"]))
    said: list[str] = []
    sections, crashed = run_plan(plan, progress=said.append)
    assert crashed and [s.id for s in sections] == ["ok", "bad", "after"]
    finding = sections[1].findings[0]
    assert (
        finding.kind == "harness-error"
        and finding.severity == "P1"
        and "section exploded" in finding.title
    )
    assert said == ["[1/3] fine …", "[2/3] broken …", "[3/3] later …"]
    verdict, _ = gate.verdict(Report("t", "c", sections), "never", crashed=True)
    assert verdict.startswith("HARNESS ERROR") and EXIT_INTERNAL == 3


def test_steps_marked_ahead_run_beside_the_others_and_keep_their_place() -> None:
    """A git-only step runs in a thread from the start (the first step here finishes only because
    the third already ran); sections, progress lines and a crash stay where the plan put them."""
    import threading

    from harness.errors import UsageError

    ran = threading.Event()

    def first() -> Section:
        assert ran.wait(10), "the step marked ahead did not run beside this one"
        return Section("first", "one")

    def third() -> Section:
        ran.set()
        return Section("third", "three")

    plan = Plan()
    plan.add("first", "one", first)
    plan.add("bad", "broken", _boom, ahead=True)
    plan.add("third", "three", third, ahead=True)
    said: list[str] = []
    sections, crashed = run_plan(plan, progress=said.append)
    assert [s.id for s in sections] == ["first", "bad", "third"] and crashed
    assert "section exploded" in sections[1].findings[0].title
    assert said == ["[1/3] one …", "[2/3] broken …", "[3/3] three …"]

    # Bad input met by an earlier step ends the run: a step ahead that has not started never does.
    started: list[str] = []
    gate = threading.Event()

    def slow() -> Section:
        started.append("slow")
        gate.wait(10)
        return Section("slow", "slow")

    def refused() -> Section:
        raise UsageError("no such ref")

    plan = Plan()
    plan.add("refused", "refused", refused)
    plan.add("slow", "slow", slow, ahead=True)
    plan.add("never", "never", lambda: started.append("never") or Section("n", "n"), ahead=True)
    with pytest.raises(UsageError, match="no such ref"):
        run_plan(plan, progress=lambda _: None)
    gate.set()
    for thread in threading.enumerate():  # the thread ends with the step it was running
        if thread.name == "harness-ahead":
            thread.join(10)
            assert not thread.is_alive()
    assert "never" not in started


def test_a_run_that_ends_does_not_wait_for_the_step_ahead_it_is_running(tmp_path: Path) -> None:
    """SIGTERM while a step ahead runs: the run exits at once (the step's thread is a daemon),
    as a step in line would have been given up."""
    script = tmp_path / "run.py"
    script.write_text(
        "import time, sys\n"
        "from harness.cli import _terminate\n"
        "import signal\n"
        "signal.signal(signal.SIGTERM, _terminate)\n"
        "from harness.compare import Plan, run_plan\n"
        "from harness.report.model import Section\n"
        "def slow():\n"
        "    time.sleep(30)\n"
        "    return Section('slow', 'slow')\n"
        "def first():\n"
        "    print('ready', flush=True)\n"
        "    time.sleep(30)\n"
        "    return Section('first', 'first')\n"
        "plan = Plan()\n"
        "plan.add('first', 'first', first)\n"
        "plan.add('slow', 'slow', slow, ahead=True)\n"
        "run_plan(plan, progress=lambda _: None)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    assert time.monotonic() - began < 10 and proc.returncode == 128 + signal.SIGTERM


def test_output_under_a_file_is_a_usage_error(builder, run_cli, tmp_path: Path) -> None:
    builder.commit("one", {"a": "1\n"})
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(
        "compare",
        "--no-fidelity",
        "HEAD",
        "HEAD",
        "--repo",
        str(builder.path),
        "--output",
        str(tmp_path / "file" / "out"),
    )
    assert code == 2 and err.count("\n") == 1 and "is not a directory" in err


SLOW = """refs: {{base: main, head: main}}
controls:
  ctl:
    ref: main
    edits: [{{replace: "x = 1", new: "x = 2", path: m.py}}]
probes:
  - id: slow
    kind: python
    file: {probe}
    function: run
    timeout: 120
    rows: {{n: [1, 2]}}
"""

PROBE = """import os, time
UNDER_TEST = ["m"]
def run(n):
    import m
    with open(os.environ["PIDS"], "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    time.sleep(60)
    return n
"""


def test_sigterm_kills_probe_processes_and_leaves_no_lock_or_scratch(
    builder, tmp_path: Path
) -> None:
    builder.commit("one", {"m.py": "x = 1\n"})
    (tmp_path / "p.py").write_text(PROBE)
    scen = tmp_path / "s.yaml"
    scen.write_text(SLOW.format(probe=tmp_path / "p.py"))
    pids = tmp_path / "pids"
    work, scratch = tmp_path / "work", tmp_path / "tmp"
    scratch.mkdir()
    env = {
        **os.environ,
        "PIDS": str(pids),
        "HARNESS_WORK_DIR": str(work),
        "TMPDIR": str(scratch),
        "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "probe", str(scen), "--repo", str(builder.path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not pids.exists() or len(pids.read_text().split()) < 3):
        time.sleep(0.2)
    assert pids.exists() and len(pids.read_text().split()) == 3, (
        "all three columns should be running"
    )
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    from harness.testing.processes import alive, wait_for

    started = [int(p) for p in pids.read_text().split()]
    assert wait_for(lambda: not any(alive(p) for p in started), 10), (
        f"probe processes survived SIGTERM: {[p for p in started if alive(p)]}"
    )
    trees = work / "trees"
    assert (
        not list(trees.glob("*.lock"))
        and not list(trees.glob("*.tmp-*"))
        and not list(trees.glob("*-p*"))
    )
    assert list(trees.glob("*.json")), "the trees should have been made under <work>/trees"
    assert not list((work / "runs").iterdir()), "the run folder is removed on SIGTERM"
    assert not list(scratch.iterdir())


def test_ledger_marks_findings_new_against_a_round_that_lacked_them(
    builder, run_cli, tmp_path: Path
) -> None:
    builder.commit("base", {"a.py": "x = 1\n"})
    builder.branch("release")
    builder.commit("fix on main", {"a.py": "x = 1\nvalidate_inputs()\n"})
    builder.checkout("release")
    builder.commit(
        "docs", {"README": "x\n"}
    )  # round one judges this alone (an empty range is refused)
    builder.commit("the same fix again", {"a.py": "x = 1\nvalidate_inputs()\n"})  # redundant: P2
    first = tmp_path / "r1"
    code, _, _ = run_cli(
        "compare",
        "--no-fidelity",
        "main",
        "release~1",
        "--repo",
        str(builder.path),
        "--output",
        str(first),
        "--format",
        "none",
        "--fail-on",
        "never",
    )
    assert code == 0
    second = tmp_path / "r2"
    code, _, _ = run_cli(
        "compare",
        "--no-fidelity",
        "main",
        "release",
        "--repo",
        str(builder.path),
        "--output",
        str(second),
        "--format",
        "none",
        "--fail-on",
        "never",
        "--previous",
        str(first / "report.json"),
    )
    doc = json.loads((second / "report.json").read_text())
    statuses = {f["status"] for s in doc["sections"] if s["id"] != "ledger" for f in s["findings"]}
    ledger = next(s for s in doc["sections"] if s["id"] == "ledger")
    assert ledger["data"]["counts"]["new"] >= 1 and "new" in statuses


def test_a_control_that_no_longer_applies_is_its_cells_outcome(
    builder, run_cli, tmp_path: Path
) -> None:
    """The head already carries the fix the control would make: the run goes on and says why."""
    builder.commit("one", {"m.py": "x = 2\n"})
    (tmp_path / "p.py").write_text(
        "UNDER_TEST = ['m']\ndef run(n):\n    import m\n    return m.x * n\n"
    )
    scen = tmp_path / "s.yaml"
    scen.write_text(f"""refs: {{head: main}}
controls:
  ctl: {{ref: head, edits: [{{replace: "x = 1", new: "x = 2", path: m.py}}]}}
probes:
  - {{id: p, kind: python, file: {tmp_path / "p.py"}, function: run, rows: {{n: [1, 2]}}}}
""")
    code, out, err = run_cli(
        "probe", str(scen), "--repo", str(builder.path), "--format", "json", "--fail-on", "p2"
    )
    doc = json.loads(out)
    cells = doc["sections"][0]["data"]["cells"]
    assert [c["value"] for c in cells["head"]] == [2, 4]
    assert all(
        c["status"] == "error"
        and "control does not apply" in c["detail"]
        and "found 0" in c["detail"]
        for c in cells["ctl"]
    ), cells["ctl"]
    # #26: the control measured nothing, so the table is not evidence: a P1 naming the edit (it
    # was a P2 "cell(s) did not complete" before), and its cells are not counted again.
    findings = doc["sections"][0]["findings"]
    (broken,) = [f for f in findings if f["kind"] == "probe-control-broken"]
    assert broken["severity"] == "P1" and "x = 1" in broken["title"]
    assert not [f for f in findings if f["kind"] == "probe-cell-failed"]
    assert code == 1
    code, _, _ = run_cli("probe", str(scen), "--repo", str(builder.path), "--format", "json")
    assert code == 1  # blocks at the default p1 too


def test_compare_on_a_bare_repository_changes_nothing(builder, run_cli, tmp_path: Path) -> None:
    from harness.testing.repos import bare_snapshot

    builder.commit("base", {"a.py": "x = 1\n"})
    builder.branch("release")
    builder.commit("fix (#7)", {"a.py": "x = 2\n"})
    builder.checkout("release")
    builder.commit("[release] fix (#7) (#8)", {"a.py": "x = 2\n"})
    bare = builder.bare_clone(tmp_path / "bare.git")
    before = bare_snapshot(bare)
    code, _, err = run_cli(
        "compare",
        "main~1",
        "release",
        "--source",
        "main",
        "--repo",
        str(bare),
        "--output",
        str(tmp_path / "out"),
        "--format",
        "none",
    )
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert code == 0, (
        err
    )  # an identical pick found by PR number; the trial merge ran in a temp object dir
    assert doc["sections"][0]["data"]["picks"][0]["status"] == "identical"
    assert bare_snapshot(bare) == before


def test_compare_says_in_one_line_what_it_overrode_in_the_scenario(
    builder, run_cli, tmp_path: Path
) -> None:
    """#26: the command line's range replaces the scenario's refs (and then its title, which named
    them): the report says so in one line instead of silently."""
    builder.commit("one", {"m.py": "x = 1\n"})
    builder.branch("old-release")
    builder.commit("two", {"m.py": "x = 2\n"})
    (tmp_path / "p.py").write_text(
        "UNDER_TEST = ['m']\ndef run(n):\n    import m\n    return m.x * n\n"
    )

    def scenario(head: str) -> Path:
        scen = tmp_path / f"s-{head}.yaml"
        scen.write_text(f"""title: Review of {head}
refs: {{base: main~1, head: {head}}}
probes:
  - {{id: p, kind: python, file: {tmp_path / "p.py"}, function: run, rows: {{n: [1]}}}}
""")
        return scen

    def report(scen: Path, out: Path) -> dict:
        args = ["--repo", str(builder.path), "--scenario", str(scen), "--format", "none"]
        run_cli("compare", "main~1", "main", *args, "--no-fidelity", "--output-dir", str(out))
        return json.loads((out / "report.json").read_text())

    doc = report(scenario("old-release"), tmp_path / "out")
    assert doc["inputs"]["overridden"] == (
        "the command line replaced the scenario's refs (s-old-release.yaml: head old-release → "
        "main) and its title 'Review of old-release'"
    )
    assert doc["title"] == "Backport review: main~1 → main"
    # The scenario's own refs: nothing overridden, its title stands.
    same = report(scenario("main"), tmp_path / "out2")
    assert "overridden" not in same["inputs"] and same["title"] == "Review of main"
