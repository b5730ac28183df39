"""The runtime registry and the engines package's import graph (no cycle, function-level imports
included: a cycle there is the one that bites when the import order changes)."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.engines import cpu_runtime, gpu_runtime, params_runtime, sglang
from harness.engines.runtimes import RUNTIMES, get_runtime

ENGINES = Path(sglang.__file__).parent


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "harness.engines":
                found |= {a.name for a in node.names}
            elif node.module.startswith("harness.engines."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {
                a.name.split(".")[2] for a in node.names if a.name.startswith("harness.engines.")
            }
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n) :] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_registry_names_the_three_runtimes_in_order() -> None:
    assert list(RUNTIMES) == ["params", "cpu", "gpu"]
    assert sglang.RUNTIMES == ("params", "cpu", "gpu")
    assert get_runtime("cpu") is cpu_runtime and get_runtime("gpu") is gpu_runtime
    assert get_runtime("params") is params_runtime and get_runtime("tpu") is None


def test_engines_package_has_no_import_cycle() -> None:
    graph = {p.stem: _imports(p) for p in ENGINES.glob("*.py")}
    assert "sglang" in graph["nprobe"]  # the graph is read (a check that can fail)
    assert _cycle(graph) is None


def test_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
