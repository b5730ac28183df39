"""What a repository path is, read from its name alone: one answer for every check."""

from __future__ import annotations

import re

_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs)/|(^|/)test_[^/]*$|_test\.[^/.]+$"
    r"|\.(test|spec)\.[^/]+$|Tests?\.(java|kt|cs|scala)$|_spec\.rb$|(^|/)conftest\.py$"
)


def is_test_path(path: str) -> bool:
    """Test code: a tests/test/testing/__tests__/spec folder, ``test_*``, ``*_test.*``,
    ``*.test.*``/``*.spec.*``, ``*Test(s).java`` and kin, ``*_spec.rb``, and pytest's
    ``conftest.py`` (fixtures are test code: fidelity grades them as tests, sweep never mutates them)."""
    return bool(_TEST_PATH.search(path))
