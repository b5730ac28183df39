"""docs/ci.md's GitLab, Zuul and Jenkins recipes: their harness steps, run as each CI lays out the
checkout, on a built repository whose backport commits conflict markers (compare exits 1).

What is run: the GitLab component's ``script:`` (its ``variables:`` exported, ``$[[ inputs ]]`` at
their defaults) in a clone as deep as ``GIT_DEPTH`` says, the note posted to a stand-in for GitLab's
notes API; the Zuul run playbook's shell (``{{ }}`` filled from the job's vars and Zuul's
variables) in a repository prepared as Zuul prepares one; the Jenkinsfile's ``sh`` script in a
shallow one-branch clone. Not run: the CI services and the install steps (this interpreter already
has harness).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from harness.infra import process
from harness.report.comment import MARKER
from harness.testing.located_repo import Located, build

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent  # where this environment's harness is


def block(first_line: str) -> str:
    """The fenced block of docs/ci.md that opens with ``first_line``."""
    found = [b for b in re.findall(r"```\w+\n(.*?)```", DOC, re.S) if b.startswith(first_line)]
    assert len(found) == 1, first_line
    return found[0]


def sh(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return process.run(argv, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=300)


def git(*args: str, cwd: Path | None = None) -> None:
    sh(["git", *args], cwd or Path.cwd(), dict(os.environ)).check_returncode()


def base_env(tmp: Path) -> dict[str, str]:
    (tmp / "tmp").mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(tmp / "tmp"), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    env.pop("HARNESS_NOTE_TOKEN", None)
    return env


def failures(path: Path) -> set[str]:
    """The finding kinds of the failing cases, read back with junitparser."""
    from junitparser import Failure, JUnitXml

    return {
        r.type
        for s in JUnitXml.fromfile(str(path))
        for c in s
        for r in c.result
        if isinstance(r, Failure)
    }


@pytest.fixture(scope="module")
def located(tmp_path_factory: pytest.TempPathFactory) -> Located:
    return build(tmp_path_factory.mktemp("recipes"))


def head(repo: Path, ref: str) -> str:
    out = sh(["git", "rev-parse", ref], repo, dict(os.environ))
    return out.stdout.strip()


# -- GitLab ---------------------------------------------------------------------------------------


class Notes(BaseHTTPRequestHandler):
    """GitLab's merge request notes: list, create, edit (what the component's note step calls)."""

    notes: list[dict[str, Any]] = []
    seen: list[tuple[str, str, str]] = []  # (method, path, auth header)

    def _auth(self) -> str:
        return self.headers.get("PRIVATE-TOKEN") or ""

    def _send(self, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self.seen.append(("GET", urlsplit(self.path).path, self._auth()))
        self._send(self.notes)

    def _form(self) -> str:
        data = self.rfile.read(int(self.headers["Content-Length"])).decode()
        return parse_qs(data)["body"][0]

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append(("POST", urlsplit(self.path).path, self._auth()))
        note = {"id": len(self.notes) + 100, "body": self._form()}
        self.notes.append(note)
        self._send(note)

    def do_PUT(self) -> None:  # noqa: N802
        self.seen.append(("PUT", urlsplit(self.path).path, self._auth()))
        note = next(n for n in self.notes if self.path.endswith(f"/{n['id']}"))
        note["body"] = self._form()
        self._send(note)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def gitlab_api() -> Iterator[str]:
    Notes.notes, Notes.seen = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Notes)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    finally:
        server.shutdown()
        server.server_close()


def gitlab_job() -> tuple[dict[str, Any], dict[str, Any]]:
    spec, jobs = yaml.safe_load_all(block("# templates/harness.yml"))
    return spec["spec"]["inputs"], jobs["harness"]


def gitlab_script(job: dict[str, Any], inputs: dict[str, Any], depth: int | None = None) -> str:
    """The job's variables exported (as GitLab expands them) and its script, inputs at defaults."""
    variables = dict(job["variables"])
    if depth is not None:
        variables["GIT_DEPTH"] = depth
    lines = [f'export {k}="{v}"' for k, v in variables.items()] + list(job["script"])
    text = "\n".join(lines)
    return re.sub(r"\$\[\[ inputs\.([\w-]+) \]\]", lambda m: str(inputs[m[1]]["default"]), text)


def gitlab_checkout(located: Located, dest: Path, depth: int) -> None:
    """The runner's clone: every branch as origin/<branch>, ``depth`` deep (0: all), the merge
    request's head checked out."""
    url = f"file://{located.repo}"
    git(
        "clone",
        "-q",
        "--no-checkout",
        *(["--depth", str(depth), "--no-single-branch"] if depth else []),
        url,
        str(dest),
    )
    git("checkout", "-q", "--detach", head(located.repo, "backport"), cwd=dest)


def run_gitlab(
    located: Located, tmp: Path, api: str, depth: int | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    inputs, job = gitlab_job()
    ws = tmp / f"project-{depth}"
    gitlab_checkout(located, ws, int(job["variables"]["GIT_DEPTH"] if depth is None else depth))
    env = base_env(tmp)
    env.update(
        CI_MERGE_REQUEST_TARGET_BRANCH_NAME="release",
        CI_DEFAULT_BRANCH="main",
        CI_JOB_URL="https://gitlab.example/acme/widget/-/jobs/9",
        CI_API_V4_URL=api,
        CI_PROJECT_ID="7",
        CI_MERGE_REQUEST_IID="3",
        CI_PROJECT_DIR=str(ws),
        HARNESS_NOTE_TOKEN="project-token",
    )
    script = gitlab_script(job, inputs, depth)
    return sh(["bash", "-eo", "pipefail", "-c", script], ws, env), ws


def test_gitlab_component_gates_publishes_junit_and_keeps_one_note(located, tmp_path, gitlab_api):
    inputs, job = gitlab_job()
    assert job["variables"]["GIT_DEPTH"] == 0
    assert job["artifacts"]["when"] == "always"
    junit = job["artifacts"]["reports"]["junit"]
    for round_ in (1, 2):
        proc, ws = run_gitlab(located, tmp_path / f"round{round_}", gitlab_api)
        assert proc.returncode == 1, proc.stderr  # compare's exit code: blocked
        assert "harness exit 1" in proc.stdout
        assert failures(ws / junit) == {"conflict-markers"}
        assert (ws / "harness-report" / "report.sarif").is_file()
    # one note, created then edited, found by its marker, with the project token
    assert [m for m, _, _ in Notes.seen] == ["GET", "POST", "GET", "PUT"]
    assert {a for _, _, a in Notes.seen} == {"project-token"}
    assert Notes.seen[1][1] == "/api/v4/projects/7/merge_requests/3/notes"
    [note] = Notes.notes
    assert note["body"].startswith(MARKER)
    assert (
        "https://gitlab.example/acme/widget/-/jobs/9/artifacts/browse/harness-report"
        in note["body"]
    )
    assert yaml.safe_load(block("# .gitlab-ci.yml"))["include"][0]["inputs"].keys() <= inputs.keys()


def test_gitlab_without_the_depth_fix_exits_2_and_posts_nothing(located, tmp_path, gitlab_api):
    proc, ws = run_gitlab(located, tmp_path, gitlab_api, depth=1)
    assert proc.returncode == 2, proc.stderr
    assert "shallow" in proc.stderr and "harness exit 2" in proc.stdout
    assert not (ws / "harness-report").exists() and Notes.seen == []


# -- Zuul -----------------------------------------------------------------------------------------


def render(text: str, values: dict[str, str]) -> str:
    """Ansible's ``{{ name.path }}`` (the only templating the playbooks use)."""
    return re.sub(r"\{\{ ([\w.]+) \}\}", lambda m: values[m[1]], text)


def zuul_prepared(located: Located, work: Path, src_dir: str) -> Path:
    """A repository as Zuul's executor prepares one: the whole history, every branch local, the
    change's branch holding the change, ``origin/<branch>`` the branch before it, origin's URL bogus."""
    repo = work / src_dir
    git("clone", "-q", str(located.repo), str(repo))
    git("checkout", "-q", "-B", "release", head(located.repo, "backport"), cwd=repo)
    git("remote", "set-url", "origin", "file:///dev/null", cwd=repo)
    return repo


def test_zuul_job_runs_compare_on_the_prepared_repository(located, tmp_path):
    [job_entry, project] = yaml.safe_load(block("# zuul.d/harness.yaml"))
    job = job_entry["job"]
    assert project["project"]["check"]["jobs"][0].keys() == {job["name"]}
    [run_play] = yaml.safe_load(block(f"# {job['run']}"))
    [task] = run_play["tasks"]
    work = tmp_path / "home"
    src_dir = "src/review.example.org/acme/widget"
    zuul_prepared(located, work, src_dir)
    venv = work / "harness-venv" / "bin"  # what the pre-run playbook installs
    venv.mkdir(parents=True)
    (venv / "harness").symlink_to(BIN / "harness")
    values = {
        "ansible_user_dir": str(work),
        "zuul.branch": "release",
        "zuul.project.src_dir": src_dir,
        **{k: str(v) for k, v in job["vars"].items()},
        "harness_source": "main",  # this project's picks come from main (the job's var, overridden)
    }
    script = render(task["ansible.builtin.shell"], values)
    cwd = work / render(task["args"]["chdir"], values)
    proc = sh([task["args"]["executable"], "-c", script], cwd, base_env(tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert "harness exit 1" in proc.stdout
    # the post-run playbook's source folder holds what the build page links
    post = yaml.safe_load(block(f"# {job['post-run']}"))
    folder = Path(render(post[0]["tasks"][0]["ansible.posix.synchronize"]["src"], values))
    links = post[1]["tasks"][0]["zuul_return"]["data"]["zuul"]["artifacts"]
    assert all((folder / link["url"].removeprefix("harness-report/")).is_file() for link in links)
    assert failures(folder / "report.junit.xml") == {"conflict-markers"}


# -- Jenkins --------------------------------------------------------------------------------------


def test_jenkins_stage_fixes_the_shallow_checkout_and_publishes_junit(located, tmp_path):
    jenkinsfile = block("// Jenkinsfile")
    [script] = re.findall(r"script: '''\n(.*?)'''", jenkinsfile, re.S)
    environment = dict(re.findall(r"(\w+) = '([^']*)'", jenkinsfile))
    [junit] = re.findall(r"junit testResults: '([^']+)'", jenkinsfile)
    ws = tmp_path / "workspace"
    url = f"file://{located.repo}"
    git("clone", "-q", "--depth", "1", "--single-branch", "--branch", "backport", url, str(ws))
    env = base_env(tmp_path)
    env.update(
        environment,
        CHANGE_TARGET="release",
        WORKSPACE=str(ws),
        WORKSPACE_TMP=str(tmp_path / "workspace@tmp"),
        BUILD_URL="https://jenkins.example/job/widget/PR-3/1/",
    )
    proc = sh(["sh", "-e", "-c", script], ws, env)
    assert proc.returncode == 1, proc.stderr
    assert "harness exit 1" in proc.stdout
    assert failures(ws / junit) == {"conflict-markers"}
    assert (tmp_path / "workspace@tmp" / "harness-report" / "report.sarif").is_file()
