"""SHA-256 object-format repositories: 64-hex cherry-pick trailers are matched, reports are whole."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
        "GIT_AUTHOR_DATE": "1700000000 +0000",
        "GIT_COMMITTER_DATE": "1700000000 +0000",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


@pytest.fixture
def sha256_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    try:
        subprocess.run(
            ["git", "init", "-q", "--object-format=sha256", "-b", "main", str(repo)],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError:
        pytest.skip("this git cannot make SHA-256 repositories")
    (repo / "a.py").write_text("x = 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "branch", "release")
    (repo / "a.py").write_text("x = 1\nvalidate()\n")
    _git(repo, "commit", "-q", "-am", "fix: validate")
    _git(repo, "checkout", "-q", "release")
    (repo / "b.py").write_text("y = 1\n")
    _git(repo, "add", "-A")
    _git(
        repo, "commit", "-q", "-m", "release-only change"
    )  # makes the pick's patch id differ in position
    _git(repo, "cherry-pick", "-x", "main")
    return repo


def test_a_sha256_repository_is_sha256(sha256_repo: Path) -> None:
    assert len(_git(sha256_repo, "rev-parse", "HEAD")) == 64
    assert "cherry picked from commit " + _git(sha256_repo, "rev-parse", "main") in _git(
        sha256_repo, "log", "-1", "--format=%B"
    )


def test_fidelity_matches_a_64_hex_trailer(sha256_repo: Path, run_cli) -> None:
    code, out, err = run_cli(
        "fidelity",
        "main~1..release",
        "--source",
        "main",
        "--repo",
        str(sha256_repo),
        "--format",
        "json",
        "--fail-on",
        "never",
    )
    assert code == 0, err
    picks = json.loads(out)["sections"][0]["data"]["picks"]
    pick = next(p for p in picks if "validate" in json.dumps(p))
    assert pick["source_via"] == "trailer", pick
    assert pick["source"] == _git(sha256_repo, "rev-parse", "main")
    assert pick["status"] == "identical"


def test_compare_on_a_sha256_repository_writes_a_whole_report(
    sha256_repo: Path, run_cli, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(
        "compare",
        "main~1",
        "release",
        "--source",
        "main",
        "--repo",
        str(sha256_repo),
        "--output",
        str(out),
        "--format",
        "none",
        "--fail-on",
        "never",
    )
    assert code == 0, err
    doc = json.loads((out / "report.json").read_text())
    assert not [f for s in doc["sections"] for f in s["findings"] if f["kind"] == "harness-error"]
    assert len(doc["inputs"]["release"]) == 64 if "release" in doc.get("inputs", {}) else True
