"""``--executor ray`` on a real local Ray cluster: the demo's compare gives the local bytes, also
when a worker dies mid-run; a warm re-run schedules nothing remote."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import demo
from harness.executors import EXECUTORS
from harness.executors.trees import worker_root

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install 'harness[ray]')",
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "demo.yaml"
REFS = ["release/1.0", "backport/42"]
SOURCE = ["--source", "main", "--source-branch", "pr/42"]
NAMES = ("report.md", "report.json", "report.html", "comment.md")
DATED = re.compile(
    r"Generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ|\"generated\": \"[^\"]*\"|"
    r"<p class=\"legend\">[^<]*<code>"
)

KILLER = '''import os, signal
MARK = {mark!r}


def _ray_worker():
    """The Ray worker above this probe process (its parent is the harness's reaper), or None. The
    walk ends where the ancestry does: init's parent is 0 (no /proc/0), and a test run started in
    the background is init's child, two steps above the reaper; an ancestor may also end mid-walk.
    Raising there made the local run's cell an error: a finding the Ray run had not."""
    pid = os.getppid()
    for _ in range(4):
        if pid <= 1:
            return None
        try:
            with open(f"/proc/{{pid}}/cmdline", "rb") as fh:
                if fh.read().startswith(b"ray::"):
                    return pid
            with open(f"/proc/{{pid}}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        pid = int(data[data.rindex(b")") + 2 :].split()[1])
    return None


def run(n):
    """Row n=2 kills the Ray worker running its column, once; everywhere else a plain value."""
    if n == 2 and not os.path.exists(MARK):
        worker = _ray_worker()
        if worker is not None:
            with open(MARK, "w") as fh:
                fh.write(str(worker))
            os.kill(worker, signal.SIGKILL)
    return n * 10
'''

# Runs the killer's row n=2 in a process whose parent has ended: it is left to init (or the nearest
# subreaper), so its ancestry ends one step up; writes {"value": ...} or {"error": ...} to argv[2].
ORPHAN = """import importlib.util, json, os, sys, time
probe, result = sys.argv[1], sys.argv[2]
middle = os.getpid()
if os.fork():
    os._exit(0)
while os.getppid() == middle:
    time.sleep(0.01)
try:
    spec = importlib.util.spec_from_file_location("killer", probe)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got = {"value": module.run(2)}
except Exception as exc:
    got = {"error": f"{type(exc).__name__}: {exc}"}
with open(result + ".tmp", "w") as fh:
    json.dump(got, fh)
os.rename(result + ".tmp", result)
"""

KILL_SCENARIO = """refs: {{base: release/1.0, head: backport/42}}
probes:
  - id: survives-a-lost-worker
    kind: python
    file: {probe}
    function: run
    rows: {{n: [1, 2, 3]}}
"""


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("ray-demo") / "repo"
    demo.build(repo)
    return repo


@pytest.fixture
def ray_made(monkeypatch: pytest.MonkeyPatch) -> list:
    """The RayExecutor instances the commands create (to count what they submitted)."""
    made: list = []
    orig = EXECUTORS["ray"]
    monkeypatch.setitem(EXECUTORS, "ray", lambda address: made.append(orig(address)) or made[-1])
    return made


def _compare(
    repo: Path, out: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> tuple[int, dict]:
    from harness.cli import main

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    code = main(
        [
            "compare",
            *REFS,
            "--repo",
            str(repo),
            *SOURCE,
            "--scenario",
            str(SCENARIO),
            "--output-dir",
            str(out),
            "--format",
            "none",
            *extra,
        ]
    )
    return code, {n: DATED.sub("", (out / n).read_text()) for n in NAMES}


def test_compare_on_ray_gives_the_local_bytes(
    ray_cluster: str,
    demo_repo: Path,
    tmp_path: Path,
    ray_made: list,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "out"
    code_local, local = _compare(demo_repo, out, tmp_path / "c-local", monkeypatch)
    code_ray, remote = _compare(
        demo_repo,
        out,
        tmp_path / "c-ray",
        monkeypatch,
        "--executor",
        "ray",
        "--ray-address",
        ray_cluster,
    )
    assert code_local == code_ray == 1
    for name in NAMES:
        assert remote[name] == local[name], name
    # it really ran there: one task per probe column (base, head, control, cancel-all), one per
    # collection pass (base, head), one per mutation row (none, liveness, the gaps), and the tests
    # section's: its columns, HEAD alone and + each missing commit, each hunk reverted, the lanes'
    # collection at HEAD
    doc = json.loads((out / "report.json").read_text())
    mutation = next(s for s in doc["sections"] if s["id"].startswith("mutation"))
    tests = next(s for s in doc["sections"] if s["id"] == "tests")["data"]
    section_tasks = (
        len(tests["columns"])
        + (1 + len(tests["pins"]) if tests["pins"] else 0)
        + len(tests["hunks"])
        + (1 if "lanes" in tests else 0)
    )
    assert (
        len(ray_made) == 1
        and ray_made[0].submitted == 4 + 2 + len(mutation["tables"][0]["rows"]) + section_tasks
    )
    assert "measured: " in remote["report.md"]


def test_a_worker_killed_mid_run_is_retried_and_the_bytes_match(
    ray_cluster: str,
    demo_repo: Path,
    tmp_path: Path,
    ray_made: list,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mark = tmp_path / "killed"
    probe = tmp_path / "killer.py"
    probe.write_text(KILLER.format(mark=str(mark)))
    scen = tmp_path / "kill.yaml"
    scen.write_text(KILL_SCENARIO.format(probe=probe))
    out = tmp_path / "out"
    code_local, local = _compare(
        demo_repo, out, tmp_path / "c-local", monkeypatch, "--scenario", str(scen)
    )
    assert not mark.exists()  # locally nothing is killed
    code_ray, remote = _compare(
        demo_repo,
        out,
        tmp_path / "c-ray",
        monkeypatch,
        "--scenario",
        str(scen),
        "--executor",
        "ray",
        "--ray-address",
        ray_cluster,
    )
    killed = int(mark.read_text())  # a Ray worker really died mid-task
    with pytest.raises(ProcessLookupError):
        os.kill(killed, 0)
    # what the killed worker left in its temporary directory went with the next task there
    left = [
        p
        for prefix in ("harness-rtree-", "harness-column-", "harness-probe-")
        for p in worker_root().glob(f"{prefix}{killed}-*")
    ]
    assert left == []
    assert code_local == code_ray
    for name in NAMES:
        assert remote[name] == local[name], name
    doc = json.loads((out / "report.json").read_text())
    table = next(s for s in doc["sections"] if s["id"] == "probe-survives-a-lost-worker")
    assert "crash" not in json.dumps(table["data"]) and "30" in json.dumps(table["data"])


def test_the_killer_outside_ray_is_a_plain_value_whatever_its_ancestry(tmp_path: Path) -> None:
    """Outside Ray the killer kills nothing and row n=2 is 20, also where the ancestry ends within
    the walk: a suite started in the background runs as init's child (reaper, pytest, init, then
    0). The walk read /proc/0 there and raised, so only the local report had a failed cell (the
    full-suite failure of the kill test: 10 findings from 5 causes against Ray's 9 from 4)."""
    mark = tmp_path / "killed"
    probe = tmp_path / "killer.py"
    probe.write_text(KILLER.format(mark=str(mark)))
    result = tmp_path / "result.json"
    quiet = subprocess.DEVNULL
    subprocess.run(
        [sys.executable, "-c", ORPHAN, str(probe), str(result)],
        check=True,
        stdin=quiet,
        stdout=quiet,
        stderr=quiet,
        timeout=30,
    )
    deadline = time.monotonic() + 30
    while not result.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert json.loads(result.read_text()) == {"value": 20}
    assert not mark.exists()


def test_a_warm_rerun_schedules_nothing_remote(
    ray_cluster: str, demo_repo: Path, tmp_path: Path
) -> None:
    from harness.checks.probe_table import probe_sections
    from harness.executors.ray_executor import RayExecutor
    from harness.git import GitRepo
    from harness.infra.cache import Cache
    from harness.inputs.scenario import load_scenario

    repo = GitRepo(demo_repo)
    cache = Cache(root=tmp_path / "cache")
    rounds = []
    for _ in range(2):
        ex = RayExecutor(ray_cluster)
        sections = probe_sections(repo, load_scenario(str(SCENARIO)), cache=cache, executor=ex)
        rounds.append((ex.submitted, [s.data for s in sections]))
        ex.close()
    (cold, cold_data), (warm, warm_data) = rounds
    assert cold == 4 and warm == 0
    strip = re.compile(r"'from': '(run|cache)'")
    assert strip.sub("", repr(cold_data)) == strip.sub("", repr(warm_data))
