"""bashlex's parse tables kept in the work area (harness/checks/lanes/bashlex_tables.py): an import
served the kept tables parses every script as a plain ``import bashlex`` does; a damaged table is
built again. Each case runs in a fresh interpreter (bashlex is imported once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = [
    'docker run --rm -e M="$M" img bash -c "pytest -m \\"$M\\" tests/"',
    'set -euo pipefail; for f in a b; do pytest -k "$f and not slow" -x || exit 1; done',
    "if [ -n \"$X\" ]; then python -m pytest -m 'gpu and not e2e' $(cat files.txt); fi",
    "cat <<EOF | sh\npytest -q\nEOF\n(cd sub && tox -e py311) && echo ${A:-b} `date`",
]

DUMP = """import json, sys
sys.path.insert(0, {root!r})
from harness.checks.lanes.bashlex_tables import load
{how}
print(json.dumps([[n.dump() for n in bashlex.parse(s)] for s in {scripts!r}]))
"""


def _parse(tmp_path: Path, kept: bool) -> list[list[str]]:
    how = "bashlex = load()" if kept else "import bashlex"
    root = str(Path(__file__).resolve().parents[3])
    code = DUMP.format(root=root, how=how, scripts=SCRIPTS)
    env = {**os.environ, "HARNESS_WORK_DIR": str(tmp_path / "work")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _table(tmp_path: Path) -> Path:
    found = list((tmp_path / "work" / "parsers").glob("bashlex-*.json"))
    assert len(found) == 1, found
    return found[0]


def test_kept_tables_parse_as_built_ones(tmp_path: Path) -> None:
    plain = _parse(tmp_path, kept=False)
    assert not (tmp_path / "work" / "parsers").exists()  # a plain import keeps nothing
    first = _parse(tmp_path, kept=True)  # builds the tables and keeps them
    table = _table(tmp_path)
    assert oct(table.stat().st_mode & 0o777) == "0o600"
    stamp = table.stat().st_mtime_ns
    second = _parse(tmp_path, kept=True)  # served them
    assert table.stat().st_mtime_ns == stamp
    assert first == second == plain
    assert "CommandNode" in plain[0][0] or "command" in plain[0][0]


def test_a_damaged_table_is_built_again(tmp_path: Path) -> None:
    plain = _parse(tmp_path, kept=False)
    _parse(tmp_path, kept=True)
    table = _table(tmp_path)
    data = json.loads(table.read_text())
    state = next(iter(data["action"]))
    token = next(iter(data["action"][state]))
    data["action"][state][token] = 10**6  # a shift to a state that does not exist
    table.write_text(json.dumps(data))
    assert _parse(tmp_path, kept=True) == plain
    assert json.loads(table.read_text())["action"][state][token] != 10**6  # kept again, whole


RACE = """import sys, threading
sys.path.insert(0, {root!r})
from harness.checks.lanes.bashlex_tables import load
start, got = threading.Barrier(4), []
def one():
    start.wait()
    try:
        got.append(hasattr(load(), "parse"))
    except Exception as exc:
        got.append(repr(exc))
threads = [threading.Thread(target=one) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print(got)
"""


def test_threads_loading_bashlex_at_once_each_get_the_parser(tmp_path: Path) -> None:
    """compare's steps run in two threads (the tests section's lanes beside a section ahead):
    while one builds the package, another must not be handed its stub or a half-run package."""
    root = str(Path(__file__).resolve().parents[3])
    for i in range(3):  # each in a fresh interpreter, the first with no kept table
        env = {**os.environ, "HARNESS_WORK_DIR": str(tmp_path / f"work{i % 2}")}
        out = subprocess.run(
            [sys.executable, "-c", RACE.format(root=root)], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "[True, True, True, True]", out.stdout
