"""The action's steps (``action.yml``): each reads the inputs from ``INPUT_*`` variables and GitHub's
own ``GITHUB_*`` variables, and hands state on through ``harness-ci.json`` in the report folder.

Every step after ``prepare`` runs also when an earlier one failed: a run that could not judge
anything (exit 2: a missing policy file, a ref that is not there) still writes the job summary and
updates the sticky comment with the reason, instead of leaving the last round's comment standing.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.ci.github import APIError, Artifact, GitHub, zip_members
from harness.errors import EXIT_USAGE, UsageError
from harness.report import markdown
from harness.report.comment import MARKER

STATE = "harness-ci.json"
MEANING = {
    0: "pass",
    1: "blocked",
    2: "input error: nothing was judged",
    3: "the harness itself failed",
}
COMMENT_LIMIT = 65_000  # GitHub refuses comments over 65,536 characters
_REPORT_FILES = (
    "report.md",
    "report.json",
    "report.html",
    "report.junit.xml",
    "report.sarif",
    "comment.md",
    STATE,
)


@dataclass
class State:
    mode: str = "review"
    repository: str = ""
    pr: int | None = None
    fork: bool = False
    base: str = ""
    head: str = ""
    head_sha: str = ""
    source: str = ""  # a branch of origin; compare reads origin/<source>
    source_branch: str = ""  # the source PR's branch on origin (--source-branch), optional
    policy: str = ""
    scenarios: list[str] = field(default_factory=list)
    fail_on: str = ""
    previous: str = ""
    report_url: str = ""
    artifact: str = ""
    notes: list[str] = field(default_factory=list)
    code: int | None = None
    reason: str = ""

    @classmethod
    def load(cls, folder: Path) -> State:
        try:
            doc = json.loads((folder / STATE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(code=EXIT_USAGE, reason="the action's prepare step did not run")
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in names})

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / STATE).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def _event() -> dict[str, Any]:
    path = _env("GITHUB_EVENT_PATH")
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _output(**values: str) -> None:
    path = _env("GITHUB_OUTPUT")
    lines = "".join(f"{k}={v.replace(chr(10), ' ')}\n" for k, v in values.items())
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(lines)
    else:
        sys.stdout.write(lines)


def _notice(kind: str, text: str) -> None:
    """A workflow command (``::notice::``/``::warning::``/``::error::``), one line."""
    sys.stdout.write(f"::{kind}::{text.replace(chr(10), ' ')}\n")
    sys.stdout.flush()


def output_dir() -> Path:
    """The report folder: the input, else ``$RUNNER_TEMP/harness-report`` (outside the checkout:
    harness never writes into the repository's work tree)."""
    given = _env("INPUT_OUTPUT_DIR")
    if given:
        return Path(given)
    return Path(_env("RUNNER_TEMP") or tempfile.gettempdir()) / "harness-report"


def default_branch(event: dict[str, Any], workspace: Path) -> str:
    """The repository's default branch: the event says it; else origin's HEAD as the clone knows it."""
    name = str((event.get("repository") or {}).get("default_branch") or "")
    if name:
        return name
    from harness.git import GitRepo
    from harness.git.repo import GitError

    try:
        repo = GitRepo(workspace)
        ref = repo.run(["symbolic-ref", "-q", "refs/remotes/origin/HEAD"]).decode().strip()
    except (GitError, UsageError, OSError):
        return ""
    return ref.removeprefix("refs/remotes/origin/")


def _is_repository(workspace: Path) -> bool:
    from harness.git import GitRepo

    try:
        GitRepo(workspace)
    except (UsageError, OSError):
        return False
    return True


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "head"


# -- prepare ---------------------------------------------------------------------------------------
def prepare() -> int:
    """Resolve the inputs against the event, check the policy file, fetch the previous report."""
    event = _event()
    workspace = Path(_env("GITHUB_WORKSPACE") or ".")
    pr = event.get("pull_request") or {}
    st = State(repository=_env("GITHUB_REPOSITORY"))
    st.pr = int(pr["number"]) if pr.get("number") else None
    head_repo = ((pr.get("head") or {}).get("repo") or {}).get("full_name")
    st.fork = bool(pr) and head_repo not in (None, st.repository)
    st.head_sha = str((pr.get("head") or {}).get("sha") or "")
    base_ref = str((pr.get("base") or {}).get("ref") or "")
    st.base = _env("INPUT_BASE") or (f"origin/{base_ref}" if base_ref else "")
    st.head = _env("INPUT_HEAD") or st.head_sha or "HEAD"
    st.source = _env("INPUT_SOURCE").removeprefix("origin/") or default_branch(event, workspace)
    st.source_branch = _env("INPUT_SOURCE_BRANCH").removeprefix("origin/")
    st.fail_on = _env("INPUT_FAIL_ON")
    st.scenarios = [s for s in re.split(r"[\n,]+", _env("INPUT_SCENARIOS")) if s.strip()]
    st.scenarios = [s.strip() for s in st.scenarios]
    server, run_id = _env("GITHUB_SERVER_URL", "https://github.com"), _env("GITHUB_RUN_ID")
    if st.repository and run_id:
        st.report_url = f"{server}/{st.repository}/actions/runs/{run_id}"
    prefix = _env("INPUT_ARTIFACT_NAME") or "harness-report"
    st.artifact = f"{prefix}-pr-{st.pr}" if st.pr else f"{prefix}-{_slug(st.head)}"

    if not _is_repository(workspace):
        st.code, st.reason = (
            EXIT_USAGE,
            "no git repository in the workspace: run actions/checkout (with fetch-depth: 0) "
            "before this action",
        )
    policy = _env("INPUT_POLICY")
    default_policy = ".github/harness-policy.yaml"
    if st.code is not None:
        pass
    elif policy and not (workspace / policy).is_file():
        st.code, st.reason = (
            EXIT_USAGE,
            f"the policy file {policy} does not exist in the checkout (the action's policy input "
            f"names it): add it, or leave the input empty to run without a policy",
        )
    elif policy:
        st.policy = policy
    elif (workspace / default_policy).is_file():
        st.policy = default_policy
    else:
        st.notes.append(f"no policy file ({default_policy}): default gate, no waivers")
    if st.code is None and not st.base:
        st.code, st.reason = (
            EXIT_USAGE,
            "no range: this is not a pull_request event, so set the action's base input "
            "(and head, default HEAD)",
        )
    if st.code is None and not st.source:
        st.code, st.reason = (
            EXIT_USAGE,
            "no source branch: the event names no default branch and origin/HEAD is not set; "
            "set the action's source input",
        )

    out = output_dir()
    for name in _REPORT_FILES:  # a persistent workspace keeps no earlier round's report
        (out / name).unlink(missing_ok=True)
    if st.code is None and _env("INPUT_PREVIOUS", "auto") != "off":
        st.previous = _previous(st, out.parent / "harness-previous")
    st.save(out)
    _output(
        source=st.source,
        source_branch=st.source_branch,
        base=st.base.removeprefix("origin/") if st.base.startswith("origin/") else "",
        artifact=st.artifact,
        output_dir=str(out),
        previous=st.previous,
    )
    for n in st.notes:
        _notice("notice", f"harness: {n}")
    return 0


def _previous(st: State, where: Path, tries: int = 5) -> str:
    """The report.json of the newest earlier artifact of this pull request (or head) that holds one
    (a round that could not judge wrote none), or ""."""
    if not (st.repository and _env("GITHUB_TOKEN")):
        st.notes.append("previous round: no token or repository, --previous not passed")
        return ""
    api, this_run = GitHub.from_env(), _env("GITHUB_RUN_ID")
    try:
        found = [
            a
            for a in api.artifacts(st.repository, name=st.artifact)
            if a.name == st.artifact and not a.expired and str(a.run_id) != this_run
        ]
        for art in sorted(found, key=lambda a: (a.created_at, a.id), reverse=True)[:tries]:
            doc = zip_members(api.artifact_zip(art), ("report.json",)).get("report.json")
            if doc is not None and _is_report(doc):
                where.mkdir(parents=True, exist_ok=True)
                path = where / "report.json"
                path.write_bytes(doc)
                st.notes.append(f"previous round: run {art.run_id} (artifact {art.id})")
                return str(path)
    except (APIError, ValueError, OSError, zipfile.BadZipFile) as exc:
        st.notes.append(f"previous round: not fetched ({exc})")
        return ""
    st.notes.append(
        "previous round: no earlier report of this pull request, every finding is new"
        if found
        else "previous round: none found, every finding is new"
    )
    return ""


def _is_report(raw: bytes) -> bool:
    try:
        doc = json.loads(raw)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("schema") == "harness.report/1"


# -- compare ---------------------------------------------------------------------------------------
def compare() -> int:
    """``harness compare`` with the prepared inputs; its exit code and, when it failed, why."""
    from harness.infra import process

    out = output_dir()
    st = State.load(out)
    if st.code is not None:
        _output(code=str(st.code))
        _notice("error", f"harness: {st.reason}")
        return 0
    argv = [
        *process.own_module("harness"),
        "compare",
        f"{st.base}..{st.head}",
        "--source",
        f"origin/{st.source}",
        "--output-dir",
        str(out),
        "--format",
        "none",
    ]
    if st.source_branch:
        argv += ["--source-branch", f"origin/{st.source_branch}"]
    for s in st.scenarios:
        argv += ["--scenario", s]
    if st.policy:
        argv += ["--policy", st.policy]
    if st.fail_on:
        argv += ["--fail-on", st.fail_on]
    if st.previous:
        argv += ["--previous", st.previous]
    if st.report_url:
        argv += ["--report-url", st.report_url]
    sys.stdout.write("+ " + " ".join(argv[2:]) + "\n")
    sys.stdout.flush()
    proc = process.run(argv, capture_output=True, text=True)
    sys.stdout.write(proc.stdout or "")
    sys.stdout.write(proc.stderr or "")
    st.code = proc.returncode
    err = [ln.strip() for ln in (proc.stderr or "").splitlines() if ln.strip()]
    if st.code == EXIT_USAGE:
        lines = [ln for ln in err if ln.startswith("harness:") and "wrote" not in ln]
        st.reason = (lines or err or ["harness compare exited 2 without a reason"])[-1]
        st.reason = st.reason.removeprefix("harness:").strip()
    elif st.code not in (0, 1):
        st.reason = (err or [f"harness compare exited {st.code}"])[-1]
    st.save(out)
    _output(code=str(st.code))
    if st.reason:
        _notice("error", f"harness: {st.reason}")
    return 0


# -- summary and comment ---------------------------------------------------------------------------
def body(st: State, out: Path) -> str:
    """The Markdown both the job summary and the comment show: the report's comment, or why not."""
    code = st.code if st.code is not None else EXIT_USAGE
    link = f" · [run and full report]({st.report_url})" if st.report_url else ""
    comment = out / "comment.md"
    if code in (0, 1, 3) and comment.is_file():
        text = comment.read_text(encoding="utf-8", errors="replace")
        text = text.removeprefix(MARKER).lstrip("\n")
        head = f"<sub>harness exit {code} ({MEANING.get(code, 'unknown')}){link}</sub>"
        return f"{MARKER}\n{head}\n\n{text}"
    reason = st.reason or "harness wrote no report"
    return "\n".join(
        [
            MARKER,
            f"### harness: could not judge this change (exit {code}: {MEANING.get(code, 'unknown')})",
            "",
            f"**Reason:** {markdown.text(reason)}",
            "",
            "Nothing was compared, so there is no verdict for this head (an earlier round's verdict"
            " no longer stands). Fix the input and run again" + (f"{link}." if link else "."),
            "",
        ]
    )


def _limited(text: str) -> str:
    if len(text) <= COMMENT_LIMIT:
        return text
    return (
        text[: COMMENT_LIMIT - 80]
        + "\n\n… cut to fit a GitHub comment; the artifact holds it all\n"
    )


def summary() -> int:
    out = output_dir()
    st = State.load(out)
    path = _env("GITHUB_STEP_SUMMARY")
    text = body(st, out).removeprefix(MARKER).lstrip("\n")
    notes = "".join(f"- {markdown.text(n)}\n" for n in st.notes)
    text += f"\n{notes}" if notes else ""
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


def comment() -> int:
    """Create or update the one comment that starts with the marker (skipped where the token cannot
    write: a pull request from a fork, which the ``workflow_run`` half comments on)."""
    out = output_dir()
    st = State.load(out)
    want = _env("INPUT_COMMENT", "auto")
    if want == "never" or st.pr is None:
        why = "comment: never" if want == "never" else "not a pull request"
        _notice("notice", f"harness: no pull request comment ({why})")
        return 0
    if st.mode == "review" and st.fork and want == "auto":
        _notice(
            "notice",
            "harness: a pull request from a fork has a read-only token: the workflow_run workflow "
            "comments (docs/ci.md, pull requests from forks)",
        )
        return 0
    try:
        action, cid = GitHub.from_env().upsert_comment(
            st.repository, st.pr, _limited(body(st, out)), MARKER
        )
    except APIError as exc:
        _notice("warning", f"harness: the pull request comment was not posted: {exc}")
        return 1 if want == "always" else 0
    sys.stdout.write(f"harness: comment {cid} {action} on #{st.pr}\n")
    return 0


# -- the workflow_run half ---------------------------------------------------------------------------
def _handed(doc: Any) -> State:
    """What the triggering run's ``harness-ci.json`` says, taken as untrusted data (a fork made it)."""
    if not isinstance(doc, dict):
        raise ValueError(f"{STATE} is not an object")
    pr, code = doc.get("pr"), doc.get("code")
    raw = doc.get("notes")
    notes: list[Any] = raw if isinstance(raw, list) else []
    return State(
        pr=pr if isinstance(pr, int) and not isinstance(pr, bool) and pr > 0 else None,
        code=code if code in MEANING and not isinstance(code, bool) else EXIT_USAGE,
        reason=str(doc.get("reason") or "")[:1000],
        notes=[str(n)[:500] for n in notes[:20]],
    )


def fetch_run() -> int:
    """In a ``workflow_run`` workflow: the triggering run's report artifact into the report folder,
    and its pull request, checked against the run's head commit (the artifact is the fork's)."""
    event = _event()
    run = event.get("workflow_run") or {}
    out = output_dir()
    repo = _env("GITHUB_REPOSITORY")
    st = State(mode="comment", repository=repo, report_url=str(run.get("html_url") or ""))
    prefix = _env("INPUT_ARTIFACT_NAME") or "harness-report"
    try:
        api = GitHub.from_env()
        arts: list[Artifact] = [
            a
            for a in api.artifacts(repo, run_id=int(run["id"]))
            if a.name.startswith(prefix) and not a.expired
        ]
        if not arts:
            raise APIError(f"run {run.get('id')} has no artifact named {prefix}*")
        files = zip_members(api.artifact_zip(arts[0]), _REPORT_FILES)
        got = _handed(json.loads(files.pop(STATE, b"{}")))
        pr_number = got.pr
        if pr_number is not None:
            pull = api.pull(repo, pr_number)
            head = str(run.get("head_sha") or "")
            if not head or str((pull.get("head") or {}).get("sha") or "") != head:
                raise APIError(
                    f"the artifact names pull request #{pr_number}, whose head is not the run's "
                    f"head {run.get('head_sha')}: not commenting"
                )
    except (APIError, KeyError, ValueError, TypeError, OSError, zipfile.BadZipFile) as exc:
        st.code, st.reason = EXIT_USAGE, f"the triggering run's report could not be read: {exc}"
        st.pr = None  # nothing to comment on: the job summary and this step's failure say why
        st.save(out)
        _notice("error", f"harness: {st.reason}")
        return 1
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (out / name).write_bytes(data)
    st.pr, st.code, st.reason, st.notes = pr_number, got.code, got.reason, got.notes
    st.save(out)
    return 0


def gate() -> int:
    st = State.load(output_dir())
    code = st.code if st.code is not None else EXIT_USAGE
    sys.stdout.write(f"harness: exit {code} ({MEANING.get(code, 'unknown')})\n")
    return code


STEPS = {
    "prepare": prepare,
    "compare": compare,
    "summary": summary,
    "comment": comment,
    "fetch-run": fetch_run,
    "gate": gate,
}
