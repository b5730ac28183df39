"""What a column task asks of a Ray cluster: a label per engine version it resolves to, a GPU for
the gpu runtime; plain probe columns ask for nothing (no ray needed)."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.columns.trees import identify
from harness.engines.remote import check_task, engine_label
from harness.executors import Resources
from harness.git import GitRepo
from harness.inputs.scenario import load_scenario
from harness.probes.column_task import ColumnJob
from harness.probes.engine import ColumnRun, column_resources, column_timeout

SCENARIO = """refs: {{old: {ref}, new: {ref}}}
probes:
  - id: n
    kind: sglang_n
    engine: {{old: sglang==0.5.18, new: "0.5.22"}}
    runtime: {runtime}
    timeout: 900
    rows: {{question: [distinct_ids, abort_caller]}}
  - id: plain
    kind: command
    argv: ["{{python}}", "-c", "print(1)"]
    rows: [{{}}]
"""


def _resources(builder, tmp_path: Path, runtime: str) -> dict[str, tuple[Resources, float]]:  # type: ignore[no-untyped-def]
    builder.commit("one", {"a.py": "x = 1\n"})
    repo = GitRepo(builder.path)
    path = tmp_path / f"s-{runtime}.yaml"
    path.write_text(SCENARIO.format(ref=repo.resolve("HEAD"), runtime=runtime))
    scenario = load_scenario(str(path))
    out = {}
    for col in scenario.columns:
        cr = ColumnRun(col, identify(repo, col))
        engine_job = [ColumnJob(scenario.probes[0], [0, 1])]
        plain_job = [ColumnJob(scenario.probes[1], [0])]
        out[col.name] = (
            column_resources(repo, sys.executable, cr, engine_job),
            column_resources(repo, sys.executable, cr, plain_job),
            column_timeout(engine_job),
        )
    return out


def test_engine_columns_ask_for_their_version_label(builder, tmp_path: Path) -> None:
    got = _resources(builder, tmp_path, "cpu")
    assert got["old"][0] == Resources(0, (("sglang-0.5.18", 1.0),))
    assert got["new"][0] == Resources(0, (("sglang-0.5.22", 1.0),))
    assert got["old"][1] == Resources()  # a command probe asks for nothing
    assert got["old"][2] == 120 + 2 * 2 * 900 + 1800  # two rows, and time to build the environment


def test_the_gpu_runtime_asks_for_a_gpu(builder, tmp_path: Path) -> None:
    got = _resources(builder, tmp_path, "gpu")
    assert got["new"][0] == Resources(1, (("sglang-0.5.22", 1.0),))


def test_an_engine_check_is_a_task_on_its_version_label() -> None:
    task = check_task("0.5.18", [{"min_new_tokens": 8}], 32000)
    assert task.resources == Resources(0, ((engine_label("0.5.18"), 1.0),)) and task.tree is None
    assert (
        task.key
        == check_task("0.5.18", [{"min_new_tokens": 8}], 32000).key
        != check_task("0.5.22", [], 1).key
    )
