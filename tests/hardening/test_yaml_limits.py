"""YAML read with limits: alias and merge-key bombs, deep nesting and recursive aliases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.inputs import yamlpath

BOMB = (
    "\n".join(
        ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        + [
            f"{b}: &{b} [{', '.join(['*' + a] * 9)}]"
            for a, b in zip("abcdefgh", "bcdefghi", strict=False)
        ]
    )
    + "\n"
)
MERGE_BOMB = (
    "\n".join(
        ["k0: &k0 {x0: 1, x1: 2}"]
        + [
            f"k{i}: &k{i} {{<<: [{', '.join(['*k' + str(i - 1)] * 8)}], y{i}: 1}}"
            for i in range(1, 12)
        ]
    )
    + "\n"
)
WORKFLOW_BOMB = (
    BOMB.replace("a: &a", "defs: &a")
    + """on: push
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        markers: *i
    steps:
      - run: pytest -m "${{ matrix.markers }}"
"""
)


def test_the_bombs_are_small() -> None:
    assert len(BOMB.encode()) < 600 and len(MERGE_BOMB.encode()) < 900


@pytest.mark.parametrize(
    "text,why",
    [
        (BOMB, "alias expansion over"),
        (MERGE_BOMB, "alias expansion over"),
        ("a: " + "[" * 150 + "]" * 150 + "\n", "nesting deeper than"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nesting deeper than"),
        ("a: &r [1, *r]\n", "recursive alias"),
    ],
)
def test_compose_refuses_past_the_limits(text: str, why: str) -> None:
    with pytest.raises(yamlpath.YamlError, match=why):
        yamlpath.compose(text)


def test_ordinary_anchors_and_merge_keys_still_read() -> None:
    root = yamlpath.compose("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\nlist: [*b, *b]\n")
    assert yamlpath.value_text(yamlpath.get(root, "other")) == '{"x": 1, "y": 3}'


def _measured(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, float, int]:
    """Exit code, stdout, seconds and peak RSS (KiB) of one harness run in a fresh process."""
    code = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.monotonic()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(json.dumps([p.returncode, p.stdout, time.monotonic() - t,"
        " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.stderr]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "harness", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    rc, stdout, seconds, rss, stderr = json.loads(out.stdout)
    assert "Traceback" not in stderr, stderr
    return rc, stdout, seconds, rss


@pytest.mark.parametrize("verb", ["lanes", "pin", "pin-merge", "compare", "select"])
def test_alias_bombs_in_the_reviewed_repository_are_findings_within_10s_and_500mb(
    builder, tmp_path: Path, verb: str
) -> None:
    builder.commit("base", {"a.py": "x = 1\n", "conf.yaml": "ok: 1\n"})
    builder.commit(
        "bombs",
        {
            ".github/workflows/ci.yml": WORKFLOW_BOMB,
            "conf.yaml": BOMB,
            "merge.yaml": MERGE_BOMB,
            "a.py": "x = 2\n",
        },
    )
    env = {**os.environ}
    argv = {
        "lanes": ["lanes", "--format", "json"],
        "pin": ["pin", "conf.yaml", "i", "--refs", "HEAD", "--format", "json"],
        "pin-merge": ["pin", "merge.yaml", "k11", "--refs", "HEAD", "--format", "json"],
        "compare": [
            "compare",
            "--no-fidelity",
            "HEAD~1",
            "HEAD",
            "--format",
            "json",
            "--output",
            str(tmp_path / "out"),
        ],
        "select": ["select", "--lanes-from-workflows", "--lane", "all=", "--format", "json"],
    }[verb]
    rc, stdout, seconds, rss = _measured(
        [*argv, "--repo", str(builder.path), "--fail-on", "never"], env, tmp_path
    )
    # a bomb expanded would run for minutes: 30 s leaves a slow, loaded machine its start-ups
    assert rc == 0 and seconds <= 30 and rss <= 500 * 1024, (rc, seconds, rss)
    text = stdout if verb != "compare" else (tmp_path / "out" / "report.json").read_text()
    assert "not read: alias expansion over" in text


def test_a_huge_yaml_file_is_not_read_whole(builder, tmp_path: Path, run_cli) -> None:
    """A workflow or pin file past the YAML limit: the git layer hands over only the first
    MAX_BYTES + 1 bytes (never the whole blob), and lanes and pin say it was not read."""
    big = "jobs:\n" + "  # padding line of a workflow nobody should read\n" * 100_000
    assert len(big) > yamlpath.MAX_BYTES
    builder.commit(
        "big", {".github/workflows/ci.yml": big, "pins.yaml": "pin: " + "x" * 5_000_000 + "\n"}
    )
    from harness.git import GitRepo

    repo = GitRepo(builder.path)
    (whole,) = repo.read_blobs(["HEAD:.github/workflows/ci.yml"], limit=len(big))
    assert whole == big.encode()  # at the limit: read whole
    cut, missing = repo.read_blobs(
        ["HEAD:.github/workflows/ci.yml", "HEAD:missing.yml"], limit=yamlpath.MAX_BYTES
    )
    assert cut == big.encode()[: yamlpath.MAX_BYTES + 1] and missing is None

    code, out, _ = run_cli("lanes", "--repo", str(builder.path), "--format", "json")
    assert code in (0, 1) and f"not read: over {yamlpath.MAX_BYTES} bytes" in out
    code, out, _ = run_cli(
        "pin", "pins.yaml", "pin", "--refs", "HEAD", "--repo", str(builder.path), "--format", "json"
    )
    assert f"not read: over {yamlpath.MAX_BYTES} bytes" in out
