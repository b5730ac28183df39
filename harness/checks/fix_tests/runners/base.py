"""The plug-in interface of a test runner (pytest, cargo test, go test): which changed files are its
tests, which node ids of a file a change touched, and one run of files (or node ids) in a tree."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

Reader = Callable[[str], bytes | None]  # tree-relative path → bytes at HEAD (None: absent)

STATUSES = ("passed", "failed", "error", "skipped")


@dataclass
class Cell:
    """One runner's run in one column: an outcome per node id, files that did not load (with the
    first error line), where the fix's modules were imported from, and what stopped the run."""

    outcomes: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # file → first error line
    skips: dict[str, str] = field(default_factory=dict)  # a skipped node id → why, where told
    lacks: dict[str, str] = field(default_factory=dict)  # node id → the fixture its setup lacked
    proofs: dict[str, dict[str, Any]] = field(default_factory=dict)  # module file → proof
    problem: str = ""  # the run gave no report: timeout, crash, environment
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class RunContext:
    """How a cell runs: the interpreter (Python runners), per-run timeout, the project's setup
    commands, the fix's modules to prove, and the cell's private HOME/TMPDIR folder."""

    python: str
    timeout: float
    setup: Sequence[str]
    proof_paths: Sequence[str]
    home: Path
    env: dict[str, str] = field(default_factory=dict)  # extra variables (a pretended version)


class TestRunner(Protocol):
    """A kind of test the section runs. Modules under ``runners/`` satisfy it at module level."""

    NAME: str
    USES_PYTHON: bool  # whether cells need the project's Python environment

    def configure(self, read: Reader, listing: Sequence[str]) -> Any:
        """What decides discovery, read from HEAD (pytest: testpaths, python_files)."""
        ...

    def is_test_file(self, path: str, config: Any) -> bool: ...

    def is_support_file(self, path: str) -> bool:
        """A file that changes how tests run without being one (pytest: conftest.py)."""
        ...

    def test_spans(self, path: str, data: bytes) -> dict[str, tuple[int, int]]:
        """Node-id suffix (``Class::test``) → first and last line of its code."""
        ...

    def run(
        self, tree: Path, files: Sequence[str], nodeids: Sequence[str] | None, ctx: RunContext
    ) -> Cell:
        """Run ``files`` (or only ``nodeids``) in ``tree``; never raises for the tree's behaviour."""
        ...
