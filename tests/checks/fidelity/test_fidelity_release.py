"""#26: release-only picks (version bumps, release notes, what's-new, empty ``[wheel build]``
commits) are recognised from what they touch and are info with the reason, consistently."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checks.fidelity.check import fidelity_section
from harness.errors import UsageError
from harness.git.repo import GitRepo
from harness.inputs import policy

CODE = "".join(f"def f_{i}():\n    return {i}\n" for i in range(6))


def _release_branch(builder):
    builder.commit(
        "base",
        {
            "core.py": CODE,
            "doc/release/1.17.0-notes.rst": "1.17.0\n======\n",
            "docs/whatsnew/version1.rst": "1.17\n",
            "tools/ci/matrix.txt": "py312\n",
        },
    )
    builder.branch("release")
    builder.commit("Main moves (#1)", {"core.py": CODE.replace("return 5", "return 55")})
    builder.checkout("release")
    return builder.rev("HEAD")


def _kinds(section, sha):
    return [(f.kind, f.severity) for f in section.findings if f.key.startswith(sha)]


def test_release_only_picks_are_info_whatever_their_subject(builder):
    base = _release_branch(builder)
    rel = builder.commit(
        "REL: improve release notes", {"doc/release/1.17.0-notes.rst": "1.17.0\n======\nfixed a\n"}
    )
    doc = builder.commit(
        "DOC: update 1.17.0 release notes",
        {"doc/release/1.17.0-notes.rst": "1.17.0\n======\nfixed a, b\n"},
    )
    new = builder.commit(
        "Add what's new for 1.17", {"docs/whatsnew/version1.rst": "1.17\nnew things\n"}
    )
    wheel = builder.commit("MAINT: trigger wheels [wheel build]", allow_empty=True)
    code = builder.commit("REL: also fix f_1", {"core.py": CODE.replace("return 1", "return 11")})
    # An empty commit that says it backports something: where did its change go? Not info.
    lost = builder.commit("Backport security fix to 1.x", allow_empty=True)
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    for sha in (rel, doc, new, wheel):
        assert _kinds(s, sha) == [("pick-release-commit", "info")], sha
    (wf,) = [f for f in s.findings if f.key.startswith(wheel)]
    assert "empty commit" in wf.detail and "triggers a build" in wf.detail
    (df,) = [f for f in s.findings if f.key.startswith(doc)]
    assert "release notes" in df.detail
    # A release subject over code is still a change nobody can trace: P2.
    assert _kinds(s, code) == [("pick-no-source", "P2")]
    assert _kinds(s, lost) and ("pick-release-commit", "info") not in _kinds(s, lost)


def test_a_policy_adds_release_paths(builder, tmp_path: Path):
    base = _release_branch(builder)
    ci = builder.commit("Drop py312 from the matrix", {"tools/ci/matrix.txt": "py313\n"})
    repo = GitRepo(builder.path)
    assert _kinds(fidelity_section(repo, base, "release", "main"), ci) == [("pick-no-source", "P2")]
    pol = tmp_path / "policy.yml"
    pol.write_text("release_paths: ['^tools/ci/']\n", encoding="utf-8")
    paths = policy.load(str(pol)).release_paths
    s = fidelity_section(repo, base, "release", "main", release_paths=paths)
    assert _kinds(s, ci) == [("pick-release-commit", "info")]


def test_a_bad_release_paths_pattern_is_a_usage_error(tmp_path: Path):
    pol = tmp_path / "policy.yml"
    pol.write_text("release_paths: ['(unclosed']\n", encoding="utf-8")
    with pytest.raises(UsageError, match="release_paths\\[0\\]"):
        policy.load(str(pol))
