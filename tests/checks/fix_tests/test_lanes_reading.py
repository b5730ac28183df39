"""How the tests section reads a lane's own test paths from its workflow step (aiohttp's
cython-coverage lane names six files; a plain lane names none)."""

from __future__ import annotations

from harness.checks.fix_tests.lanes import _command_at, _named_paths

WORKFLOW = """jobs:
  test:
    steps:
    - name: Run unittests
      run: >-
        PATH="${HOME}/.local/bin:${PATH}"
        pytest --junitxml=junit.xml --numprocesses=auto --cov
        -m 'not dev_mode and not autobahn'
      shell: bash
  cython:
    steps:
    - name: Run tests with Cython tracing
      run: >-
        pytest tests/test_client_functional.py tests/test_http_parser.py
        --cov-report=xml
        -m 'not dev_mode'
      shell: bash
    - run: python -m pytest -m "not slow" tests --timeout 300
""".splitlines()


def test_a_lane_reads_the_paths_its_own_pytest_call_names():
    plain = _command_at(WORKFLOW, 8)
    assert "shell:" not in plain and _named_paths(plain) == []
    named = _command_at(WORKFLOW, 16)
    assert _named_paths(named) == ["tests/test_client_functional.py", "tests/test_http_parser.py"]
    # a bare word is kept here and judged against the collected files (``300`` never matches)
    assert _named_paths(_command_at(WORKFLOW, 18)) == ["tests", "300"]
