"""What the tests section computed, handed to its section and to later steps."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.checks.fix_tests.cells import ColumnRun
from harness.checks.fix_tests.files import Selection, Sources
from harness.checks.fix_tests.gaps import Pin
from harness.checks.fix_tests.hunks import Hunk
from harness.checks.fix_tests.lanes import TestLanes
from harness.checks.fix_tests.strings import RemovedString
from harness.checks.fix_tests.verdicts import Row


@dataclass
class TestsRun:
    base: str
    head: str
    sources: Sources
    selection: Selection
    rows: list[Row] = field(default_factory=list)
    runs: list[ColumnRun] = field(default_factory=list)
    reruns: list[ColumnRun] = field(default_factory=list)
    gaps: list[Pin] = field(default_factory=list)  # the commits the pick lacks, applied to HEAD
    pin_scope: str = ""
    pins_left_out: int = 0  # commits the pick lacks past the cap, not tried
    hunks: list[Hunk] = field(default_factory=list)
    hunks_left_out: int = 0
    strings: list[RemovedString] = field(default_factory=list)
    strings_left_out: int = 0
    lanes: TestLanes | None = None
    env: str = ""  # how the environment was obtained, one line
    env_error: str = ""  # the environment could not be built: the installer's last line
    env_notes: list[str] = field(default_factory=list)
    proof_paths: list[str] = field(default_factory=list)
    no_source: bool = False  # fidelity found no source for any pick
    # files whose ± lines fidelity found the picks carry as their sources made them
    same_files: frozenset[str] = frozenset()
