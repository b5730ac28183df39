"""The GitHub Action (action.yml) end to end, with the workflows of docs/ci.md, on built repositories.

Each test runs every step of the action as a runner would (``harness/testing/action_runner.py``:
bash for ``run:`` steps, ``${{ }}`` evaluated over the event), against a project whose default
branch is ``main`` or ``master``, with a STAND-IN for the GitHub REST API
(``harness/testing/github_standin.py``: comments, pull requests, artifacts; it also stands in for
``actions/upload-artifact``). The install step is answered with this interpreter, which already has
harness. No network is used.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git
import pytest
import yaml

from harness.ci.steps import STATE
from harness.infra import process
from harness.report.comment import MARKER
from harness.testing.action_runner import ActionRun, evaluate, run_action
from harness.testing.github_standin import StandInGitHub
from harness.testing.repos import RepoBuilder

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
REPO = "acme/widget"

CORE = "def count(xs):\n    n = 0\n    for _ in xs:\n        n += 1\n    return n - 1\n"
CORE_FIXED = CORE.replace("return n - 1", "return n")
GUARD = "def first(xs):\n    if not xs:\n        return None\n    return xs[0]\n"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, re.S)


def workflows() -> list[tuple[str, dict[str, Any]]]:
    """docs/ci.md's workflows: (file name from the first comment line, parsed YAML)."""
    out = []
    for text in blocks("yaml"):
        name = text.splitlines()[0].lstrip("# ").strip()
        if name.startswith(".github/workflows/"):
            out.append((name, yaml.safe_load(text)))
    return out


def harness_step(wf: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The job that uses the action and the action step's ``with:``."""
    for job in wf["jobs"].values():
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("OWNER/harness@"):
                return job, {k: str(v) for k, v in (step.get("with") or {}).items()}
    raise AssertionError("no step uses OWNER/harness")


@dataclass
class Project:
    default: str
    origin: Path
    shas: dict[str, str]


@pytest.fixture(scope="module", params=["main", "master"])
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A project on ``main`` or ``master`` with a release branch and three backports of its fixes:
    a faithful one, a partial one (a source line missing: P1), and the partial one redone."""
    default = request.param
    tmp = tmp_path_factory.mktemp(f"project-{default}")
    b = RepoBuilder(tmp / "dev", initial_branch=default)
    b.commit("Initial layout", {"app/core.py": CORE, "app/util.py": "U = 1\n", "README.md": "w\n"})
    b.branch("release/1.0")
    fix_a = b.commit("Fix off-by-one in count (#10)", {"app/core.py": CORE_FIXED})
    fix_b = b.commit(
        "Guard empty input (#11)", {"app/guard.py": GUARD, "app/util.py": "U = 1\nV = 2\n"}
    )
    b.branch(
        "pr/10", "HEAD~2"
    )  # the source PR's branch: squash-merged as fix_a, then one more commit
    b.checkout("pr/10")
    b.commit("Fix off-by-one in count", {"app/core.py": CORE_FIXED})
    b.commit("count: say why in a comment", {"app/core.py": "# counts items\n" + CORE_FIXED})
    b.checkout(default)
    shas = {}
    for branch, picks in (("backport/good", [fix_a]), ("backport/fixed", [fix_b])):
        b.checkout("release/1.0")
        b.branch(branch)
        b.checkout(branch)
        for sha in picks:
            shas[branch] = b.cherry_pick(sha, "-x")
    b.checkout("release/1.0")
    b.branch("backport/partial")
    b.checkout("backport/partial")
    shas["backport/partial"] = b.commit("Guard empty input (#11)", {"app/guard.py": GUARD})
    b.checkout(default)
    origin = tmp / "origin.git"
    git.Repo.clone_from(str(b.path), str(origin), bare=True)
    return Project(default, origin, shas)


def checkout(project: Project, where: Path, sha: str) -> Path:
    """What actions/checkout with fetch-depth: 0 leaves: every branch of origin, HEAD detached."""
    repo = git.Repo.clone_from(str(project.origin), str(where))
    repo.git.checkout("-q", "--detach", sha)
    return where


def pr_event(project: Project, number: int, head: str, fork: bool = False) -> dict[str, Any]:
    return {
        "pull_request": {
            "number": number,
            "head": {
                "sha": project.shas[head],
                "ref": head,
                "repo": {"full_name": "someone/widget" if fork else REPO},
            },
            "base": {"ref": "release/1.0", "repo": {"full_name": REPO}},
        },
        "repository": {"full_name": REPO, "default_branch": project.default},
    }


def run(
    gh: StandInGitHub,
    workspace: Path,
    inputs: dict[str, str],
    event: dict[str, Any],
    run_id: int,
    event_name: str = "pull_request",
) -> ActionRun:
    head_sha = str((event.get("pull_request") or {}).get("head", {}).get("sha", ""))

    def upload(with_: dict[str, str]) -> dict[str, str]:  # the stand-in for actions/upload-artifact
        gh.add_artifact(with_["name"], workspace / with_["path"], run_id, head_sha)
        return {}

    workspace.mkdir(parents=True, exist_ok=True)
    return run_action(
        ACTION,
        inputs,
        {
            "event": event,
            "event_name": event_name,
            "repository": REPO,
            "run_id": run_id,
            "server_url": "https://github.example",
            "api_url": gh.url,
            "token": gh.token,
        },
        workspace=workspace,
        temp=workspace.parent / f"runner-{run_id}",
        uses={"actions/upload-artifact": upload},
        replace={"install": {"python": sys.executable}},
    )


def report_dir(got: ActionRun) -> Path:
    """The report folder the action used (its prepare step says; outside the checkout)."""
    return Path(got.step("prepare").outputs["output_dir"])


def marker_comments(gh: StandInGitHub, pr: int) -> list[dict[str, Any]]:
    return [c for c in gh.comments.get(pr, []) if c["body"].startswith(MARKER)]


def artifact_files(gh: StandInGitHub, name: str) -> dict[str, bytes]:
    art = [a for a in gh.artifacts if a["name"] == name][-1]
    with zipfile.ZipFile(io.BytesIO(gh.zips[art["id"]])) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def main_workflow() -> dict[str, str]:
    name, wf = workflows()[0]
    assert name == ".github/workflows/backport-review.yml"
    job, with_ = harness_step(wf)
    checkout_step = next(
        s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout")
    )
    assert checkout_step["with"]["fetch-depth"] == 0
    assert wf["permissions"]["pull-requests"] == "write" and wf["permissions"]["actions"] == "read"
    return with_


def test_blocked_then_fixed_round_with_one_sticky_comment(project: Project, tmp_path: Path) -> None:
    with_ = main_workflow()
    with StandInGitHub() as gh:
        gh.add_comment(7, "Looks right to me")
        gh.add_comment(7, "ci bot: tests passed")
        gh.add_comment(7, "one more, so the comment listing takes two pages")
        ws = checkout(project, tmp_path / "r1" / "ws", project.shas["backport/partial"])
        # The checkout is the code under review, and every step runs in it: look-alikes of what
        # the steps import lie there (a pull request may add them); none of them may run.
        planted = tmp_path / "planted-code-ran"
        for rel in ("harness/__init__.py", "harness/ci/__init__.py", "json.py", "venv/__init__.py"):
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(f"open({str(planted)!r}, 'a').write({rel!r})\n")
        first = run(gh, ws, with_, pr_event(project, 7, "backport/partial"), run_id=101)
        assert not planted.exists(), planted.read_text()
        assert first.step("gate").code == 1, first.step("compare").log
        doc = json.loads((report_dir(first) / "report.json").read_text())
        assert f"--source origin/{project.default}" in doc["command"]
        assert doc["verdict"].startswith("BLOCKED")
        assert "BLOCKED" in first.summary and "Guard empty input" in first.summary
        (posted,) = marker_comments(gh, 7)
        assert "BLOCKED" in posted["body"] and "harness exit 1 (blocked)" in posted["body"]
        comment_md = (report_dir(first) / "comment.md").read_text()
        assert comment_md.removeprefix(MARKER).strip() in posted["body"]
        files = artifact_files(gh, "harness-report-pr-7")
        assert {"report.json", "report.md", "report.html", "comment.md", STATE} <= set(files)
        assert json.loads(files[STATE])["code"] == 1

        # A round that could not judge (a policy file named but missing) leaves no report behind.
        ws_bad = checkout(project, tmp_path / "r15" / "ws", project.shas["backport/partial"])
        bad = run(
            gh,
            ws_bad,
            {**with_, "policy": "nope.yaml"},
            pr_event(project, 7, "backport/partial"),
            150,
        )
        assert bad.step("gate").code == 2 and "nope.yaml" in marker_comments(gh, 7)[0]["body"]

        # The author redoes the pick: the next round reads the last report and edits the comment.
        ws2 = checkout(project, tmp_path / "r2" / "ws", project.shas["backport/fixed"])
        second = run(gh, ws2, with_, pr_event(project, 7, "backport/fixed"), run_id=102)
        assert second.step("gate").code == 0, second.step("compare").log
        (edited,) = marker_comments(gh, 7)
        assert edited["id"] == posted["id"] and "PASS" in edited["body"]
        assert len(gh.comments[7]) == 4 and len(gh.posted("PATCH")) == 2
        storage = [r for r in gh.requests if r.path.startswith("/_storage/")]
        assert storage and not storage[0].authorized  # the token is not sent past the redirect
        doc2 = json.loads((report_dir(second) / "report.json").read_text())
        assert "--previous" in doc2["command"]
        ledger = json.dumps([s for s in doc2["sections"] if s["id"] == "ledger"])
        assert "resolved" in ledger
        assert "PASS" in second.summary and "previous round: run 101" in second.summary


def test_input_errors_replace_the_comment_with_the_reason(project: Project, tmp_path: Path) -> None:
    with_ = main_workflow()
    with StandInGitHub() as gh:
        old = gh.add_comment(8, f"{MARKER}\n**Verdict:** PASS at --fail-on p1 (an earlier round)")
        ws = checkout(project, tmp_path / "a" / "ws", project.shas["backport/good"])
        bad_policy = run(
            gh,
            ws,
            {**with_, "policy": ".github/missing.yaml"},
            pr_event(project, 8, "backport/good"),
            201,
        )
        assert bad_policy.step("gate").code == 2
        assert not bad_policy.step("compare").log.count("+ compare")  # compare did not run
        for text in (bad_policy.summary, marker_comments(gh, 8)[0]["body"]):
            assert "policy file .github/missing.yaml does not exist" in text
            assert "exit 2" in text and "PASS" not in text and "jq" not in text
        assert marker_comments(gh, 8)[0]["id"] == old
        assert json.loads(artifact_files(gh, "harness-report-pr-8")[STATE])["code"] == 2

        ws2 = checkout(project, tmp_path / "b" / "ws", project.shas["backport/good"])
        bad_ref = run(
            gh,
            ws2,
            {**with_, "base": "origin/release/9.9"},
            pr_event(project, 8, "backport/good"),
            202,
        )
        assert bad_ref.step("gate").code == 2
        body = marker_comments(gh, 8)[0]["body"]
        assert "release/9.9" in body and "release/9.9" in bad_ref.summary
        assert "could not judge" in body and len(marker_comments(gh, 8)) == 1


def test_fork_pull_request_two_workflows(project: Project, tmp_path: Path) -> None:
    (review_name, review), (comment_name, commenter) = workflows()[1:3]
    assert review_name == ".github/workflows/backport-review.yml"
    assert comment_name == ".github/workflows/backport-comment.yml"
    _, review_with = harness_step(review)
    job, comment_with = harness_step(commenter)
    assert review["permissions"].get("pull-requests") is None  # the fork's token cannot write
    on = commenter.get("on", commenter.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["workflow_run"]["workflows"] == [review["name"]]
    with StandInGitHub() as gh:
        ws = checkout(project, tmp_path / "pr" / "ws", project.shas["backport/partial"])
        event = pr_event(project, 9, "backport/partial", fork=True)
        first = run(gh, ws, review_with, event, run_id=301)
        assert first.step("gate").code == 1
        assert not gh.posted("POST") and not gh.posted("PATCH")
        assert "harness-report-pr-9" in [a["name"] for a in gh.artifacts]

        head = project.shas["backport/partial"]
        wr = {
            "workflow_run": {"id": 301, "head_sha": head, "event": "pull_request", "html_url": "u"}
        }
        assert evaluate(job["if"].removeprefix("${{").removesuffix("}}"), {"github": {"event": wr}})
        gh.pulls[9] = {"number": 9, "head": {"sha": head}}
        second = run(gh, tmp_path / "wr" / "ws", comment_with, wr, 302, "workflow_run")
        assert second.step("fetch-run").code == 0 and not second.step("gate").ran
        assert not second.step("compare").ran and not second.step("upload").ran
        (posted,) = marker_comments(gh, 9)
        assert "BLOCKED" in posted["body"] and "BLOCKED" in second.summary

        # An artifact naming a pull request whose head is another commit is not commented on.
        gh.pulls[9] = {"number": 9, "head": {"sha": project.shas["backport/good"]}}
        before = len(gh.requests)
        third = run(gh, tmp_path / "wr2" / "ws", comment_with, wr, 303, "workflow_run")
        assert third.step("fetch-run").code == 1 and "not commenting" in third.summary
        assert not [r for r in gh.requests[before:] if r.method in ("POST", "PATCH")]


def test_outside_a_pull_request_the_source_is_origin_head(project: Project, tmp_path: Path) -> None:
    ws = checkout(project, tmp_path / "ws", project.shas["backport/good"])
    with StandInGitHub() as gh:
        got = run(
            gh,
            ws,
            {"base": "origin/release/1.0", "head": "origin/backport/good"},
            {},  # a push or schedule event: no pull request, no default branch named
            run_id=401,
            event_name="push",
        )
        assert got.step("gate").code == 0, got.step("compare").log
        doc = json.loads((report_dir(got) / "report.json").read_text())
        assert f"--source origin/{project.default}" in doc["command"]
        assert not gh.posted("POST") and "harness-report-origin-backport-good" in [
            a["name"] for a in gh.artifacts
        ]

        # The source PR's branch, not in the clone: fetched, passed, and its later commit is missing.
        git.Repo(ws).git.update_ref("-d", "refs/remotes/origin/pr/10")
        more = run(
            gh,
            ws,
            {
                "base": "origin/release/1.0",
                "head": "origin/backport/good",
                "source-branch": "pr/10",
            },
            {},
            run_id=402,
            event_name="push",
        )
        assert more.step("gate").code == 1, more.step("compare").log
        doc = json.loads((report_dir(more) / "report.json").read_text())
        assert "--source-branch origin/pr/10" in doc["command"]
        kinds = [f["kind"] for s in doc["sections"] for f in s["findings"]]
        assert "missing-commit" in kinds and "count: say why" in more.summary


def test_policy_snippet_is_a_valid_policy(tmp_path: Path) -> None:
    from harness.inputs import policy

    (text,) = [b for b in blocks("yaml") if b.startswith("# .github/harness-policy.yaml")]
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    pol = policy.load(str(path))
    assert pol.fail_on == "p1" and pol.waivers and pol.waivers[0].expires.year == 2027
    path.write_text(text.replace("    expires: 2027-01-31", ""), encoding="utf-8")
    with pytest.raises(Exception, match="expires"):
        policy.load(str(path))


def test_other_ci_snippet(project: Project, tmp_path: Path) -> None:
    (script,) = blocks("bash")
    ws = git.Repo.clone_from(str(project.origin), str(tmp_path / "ws"))
    ws.git.checkout("-q", "--detach", project.shas["backport/partial"])
    env = dict(os.environ, TARGET_BRANCH="release/1.0", DEFAULT_BRANCH=project.default)
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    proc = process.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=str(tmp_path / "ws"),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "harness exit 1" in proc.stdout
    assert (tmp_path / "tmp" / "harness-report" / "comment.md").read_text().startswith(MARKER)
    assert not (tmp_path / "ws" / "harness-report").exists()


def test_the_forks_handed_state_is_data_not_trusted() -> None:
    from harness.ci.steps import _handed

    got = _handed({"pr": "9", "code": "0", "reason": "x" * 5000, "notes": ["n"] * 100})
    assert got.pr is None and got.code == 2 and len(got.reason) == 1000 and len(got.notes) == 20
    assert _handed({"pr": True, "code": True}).pr is None
    ok = _handed({"pr": 9, "code": 1, "reason": "", "notes": []})
    assert (ok.pr, ok.code) == (9, 1)
    with pytest.raises(ValueError):
        _handed([9])


def test_action_references_only_what_it_declares() -> None:
    doc = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    text = ACTION.read_text(encoding="utf-8")
    declared = set(doc["inputs"])
    used = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", text))
    assert used <= declared, used - declared
    ids: list[str] = []
    for step in doc["runs"]["steps"]:
        blob = json.dumps(step)
        for ref in re.findall(r"steps\.([A-Za-z0-9_-]+)\.outputs", blob):
            assert ref in ids, f"step {step['id']} reads steps.{ref} before it runs"
        assert ("run" in step) == ("shell" in step), step["id"]
        ids.append(step["id"])
    assert len(ids) == len(set(ids))
    for out in doc["outputs"].values():
        assert set(re.findall(r"steps\.([A-Za-z0-9_-]+)", out["value"])) <= set(ids)
    assert len(doc["description"]) < 125  # the Marketplace refuses longer ones
