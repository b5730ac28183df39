"""harness drift: BASE's movement since the merge base, overlap, trial merge, redundant backports."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from harness.checks.drift import drift, drift_section
from harness.git.repo import GitRepo


def _objects(git_dir: Path) -> list[str]:
    return sorted(str(p) for p in (git_dir / "objects").rglob("*") if p.is_file())


def _fork(builder):
    builder.commit("base", {"engine.py": "def run():\n    return 1\n", "other.py": "a = 1\n"})
    builder.branch("release")
    return builder


def test_conflicting_trial_merge_is_p1_and_nothing_is_written(builder, run_cli):
    _fork(builder)
    builder.commit("main moves", {"engine.py": "def run():\n    return 2\n"})
    builder.checkout("release")
    builder.branch("pr")
    builder.checkout("pr")
    builder.commit(
        "backport", {"engine.py": "def run():\n    return 3\n", "new.py": "flag = True\n"}
    )
    builder.checkout("main")
    snap, objs, merge_dirs = builder.snapshot(), _objects(builder.path / ".git"), _merge_dirs()
    code, out, err = run_cli("drift", "--repo", str(builder.path), "main", "pr", "--format", "json")
    assert code == 1, err
    sec = json.loads(out)["sections"][0]
    assert sec["data"]["merge"]["clean"] is False
    assert [c["path"] for c in sec["data"]["merge"]["conflicts"]] == ["engine.py"]
    assert sec["data"]["overlap"] == [
        {
            "path": "engine.py",
            "head_added": 1,
            "head_removed": 1,
            "base_added": 1,
            "base_removed": 1,
        }
    ]
    assert len(sec["data"]["base_commits"]) == 1 and sec["data"]["head_commits"] == 1
    assert [f["severity"] for f in sec["findings"] if f["kind"] == "drift-conflict"] == ["P1"]
    assert all(c["ok"] is not False for c in sec["controls"])
    assert builder.snapshot() == snap and _objects(builder.path / ".git") == objs
    assert _merge_dirs() <= merge_dirs  # the temporary object directory is removed


@pytest.fixture(autouse=True)
def _private_tmp(tmp_path, monkeypatch):
    """Temp dirs of this test only, so another harness run on the machine cannot disturb the count."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()


def _merge_dirs() -> set[str]:
    return {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("harness-merge-objects-")}


def test_redundant_backport_is_p2(builder):
    _fork(builder)
    builder.commit(
        "fix on main", {"engine.py": "def run():\n    validate_inputs()\n    return 1\n"}
    )
    builder.checkout("release")
    builder.commit(
        "same fix by another route",
        {"engine.py": "def run():\n    validate_inputs()\n    return 1\n"},
    )
    builder.checkout("main")
    d = drift(GitRepo(builder.path), "main", "release")
    assert d.merge.clean and [p.fraction for p in d.presence] == [1.0] and d.presence[0].identical
    section = drift_section(GitRepo(builder.path), "main", "release")
    assert [(f.kind, f.severity) for f in section.findings] == [
        ("drift-redundant", "P2"),
        ("drift-overlap", "info"),
    ]
    assert section.controls[2].ok is True  # presence test on HEAD's own tip finds every line


def test_partial_presence_and_no_drift(builder):
    _fork(builder)
    builder.checkout("release")
    builder.commit(
        "pr", {"other.py": "a = 1\nb = compute()\n}\n\n", "engine.py": "def run():\n    return 1\n"}
    )
    d = drift(GitRepo(builder.path), "main", "release")
    assert d.base_commits == [] and d.overlap == [] and d.merge.clean
    assert [(p.path, p.added, p.present) for p in d.presence] == [
        ("other.py", 1, 0)
    ]  # "}" and "" ignored
    section = drift_section(GitRepo(builder.path), "main", "release")
    assert section.tables[0].rows == [] and section.tables[0].control
    assert not [f for f in section.findings if f.severity != "info"]


def test_unknown_option_like_and_unrelated_refs(builder, run_cli, tmp_path):
    _fork(builder)
    out_file = tmp_path / "r.md"
    code, _, err = run_cli(
        "drift", "--repo", str(builder.path), "main", "nope", "--output", str(out_file)
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and not out_file.exists()
    builder.repo.git.update_ref("refs/heads/--upload-pack=x", "release")
    code, out, err = run_cli(
        "drift", "--repo", str(builder.path), "--format", "json", "--", "main", "--upload-pack=x"
    )
    assert code == 0, err
    assert json.loads(out)["sections"][0]["data"]["head"] == builder.rev("release")
    builder.repo.git.checkout("-q", "--orphan", "lonely")
    builder.commit("orphan", {"z": "z\n"})
    code, _, err = run_cli("drift", "--repo", str(builder.path), "main", "lonely")
    assert code == 2 and "no common history" in err


def test_bare_repository(builder, tmp_path):
    _fork(builder)
    builder.commit("main moves", {"engine.py": "def run():\n    return 2\n"})
    bare = builder.bare_clone(tmp_path / "bare.git")
    objs = _objects(bare)
    d = drift(GitRepo(bare), "release", "main")
    assert d.merge.clean and len(d.base_commits) == 0 and d.head_commits == 1
    assert _objects(bare) == objs


def _diverged(builder, release: str):
    """main and ``release`` both change engine.py after the fork: the trial merge conflicts."""
    _fork(builder)
    builder.repo.git.branch("-m", "release", release)
    builder.commit("main moves", {"engine.py": "def run():\n    return 2\n"})
    builder.checkout(release)
    builder.commit("release fix", {"engine.py": "def run():\n    return 3\n"})
    builder.checkout("main")


def test_audit_form_reports_how_far_behind_as_info(builder):
    """``main..release/1.x --source main``: main is never merged into a release, so its conflicting
    trial merge is no P1; the section says how far the release is behind."""
    _diverged(builder, "release/1.x")
    repo = GitRepo(builder.path)
    pr_form = drift_section(repo, "main", "release/1.x")  # release by name: audit form too
    audit = drift_section(repo, "main", "release/1.x", source="main")
    for section in (audit, pr_form):
        kinds = [(f.kind, f.severity) for f in section.findings]
        assert kinds == [("drift-behind", "info")], kinds
        assert "1 commit(s) behind main" in section.findings[0].title
        assert "conflicts in 1 file(s)" in section.findings[0].detail
    assert "--source main" in audit.findings[0].detail
    assert section.data["merge"]["clean"] is False  # the evidence is still there


def test_pull_request_form_keeps_the_conflict_p1(builder):
    """``release..backport``: the trial merge is the merge the PR makes; a conflict stays P1, even
    with --source given (BASE is not the source), and for a HEAD not named like a release."""
    _diverged(builder, "feature-x")
    section = drift_section(GitRepo(builder.path), "main", "feature-x", source="dev")
    assert [(f.kind, f.severity) for f in section.findings] == [("drift-conflict", "P1")]
    assert section.data["audit"] == ""


def test_presence_control_leaves_submodules_out(builder):
    """A submodule bump's diff line ("Subproject commit …") is in no file: the self-presence
    control used to miss it (numpy: 3092 of 3096 on a correct tree)."""
    _fork(builder)
    builder.checkout("release")
    builder.write("engine.py", "def run():\n    return 5\n")
    git = builder.repo.git
    git.add("engine.py")
    git.update_index("--add", "--cacheinfo", f"160000,{'2' * 40},vendored/lib")
    git.commit("-q", "-m", "bump the submodule and fix")  # `add -A` would drop the gitlink
    builder.checkout("main")
    d = drift(GitRepo(builder.path), "main", "release")
    assert d.submodules == ["vendored/lib"]
    assert d.self_presence[0] == d.self_presence[1] == 1
    section = drift_section(GitRepo(builder.path), "main", "release")
    assert section.controls[2].ok is True
    assert "vendored/lib" in section.tables[3].legend
