"""Runs a composite action's steps locally, as a GitHub runner would, for tests.

``action.yml`` is read with PyYAML; ``${{ … }}`` in ``if:``, ``env:``, ``with:`` and ``run:`` is
evaluated over a context the test gives (``github``, ``inputs``, ``runner``, ``steps``) by a small
evaluator (paths, string literals, ``== != && || !``, ``always() success() failure()``); each
``run:`` step is ``bash --noprofile --norc -eo pipefail`` in the workspace with ``GITHUB_OUTPUT``,
``GITHUB_STEP_SUMMARY`` and the event file, as on a runner. ``uses:`` steps are answered by the
test's stand-ins (``uses={"actions/upload-artifact": fn}``); ``replace`` answers a step with fixed
outputs instead of running it (the install step: the tests' own environment already has harness).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.infra import process

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))|(?P<num>\d+)"
    r"|(?P<path>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_*][A-Za-z0-9_-]*)*(?:\(\))?))"
)


def _tokens(expr: str) -> list[tuple[str, str]]:
    out, pos, expr = [], 0, expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read expression {expr!r} at {pos}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Eval:
    def __init__(self, tokens: list[tuple[str, str]], ctx: Mapping[str, Any], failed: bool) -> None:
        self.t, self.i, self.ctx, self.failed = tokens, 0, ctx, failed

    def peek(self) -> str:
        return self.t[self.i][1] if self.i < len(self.t) else ""

    def take(self) -> tuple[str, str]:
        self.i += 1
        return self.t[self.i - 1]

    def or_(self) -> Any:
        v = self.and_()
        while self.peek() == "||":
            self.take()
            r = self.and_()
            v = v if truthy(v) else r
        return v

    def and_(self) -> Any:
        v = self.unary()
        while self.peek() == "&&":
            self.take()
            r = self.unary()
            v = r if truthy(v) else v
        return v

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not truthy(self.unary())
        v = self.primary()
        if self.peek() in ("==", "!="):
            op = self.take()[1]
            r = self.primary()
            same = (
                str(v if v is not None else "").lower() == str(r if r is not None else "").lower()
            )
            return same if op == "==" else not same
        return v

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            v = self.or_()
            self.take()
            return v
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return int(text)
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if text.endswith("()"):
            return {"always()": True, "success()": not self.failed, "failure()": self.failed}[text]
        found: Any = self.ctx
        for part in text.split("."):
            found = found.get(part) if isinstance(found, Mapping) else None
        return "" if found is None else found


def truthy(v: Any) -> bool:
    return v not in (None, "", False, 0)


def evaluate(expr: str, ctx: Mapping[str, Any], failed: bool = False) -> Any:
    return _Eval(_tokens(expr), ctx, failed).or_()


def render(text: Any, ctx: Mapping[str, Any]) -> str:
    """A template with ``${{ }}`` segments, each replaced by its value as text."""

    def one(m: re.Match[str]) -> str:
        v = evaluate(m.group(1), ctx)
        return json.dumps(v) if isinstance(v, (dict, list)) else ("" if v is None else str(v))

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(text), flags=re.S)


def should_run(cond: Any, ctx: Mapping[str, Any], failed: bool) -> bool:
    if cond is None:
        return not failed
    text = str(cond).strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    if not re.search(r"\b(always|success|failure)\(\)", text):
        text = f"success() && ({text})"
    return truthy(evaluate(text, ctx, failed))


@dataclass
class StepRun:
    id: str
    ran: bool
    code: int = 0
    log: str = ""
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class ActionRun:
    steps: list[StepRun]
    summary: str
    failed: bool

    def step(self, step_id: str) -> StepRun:
        return next(s for s in self.steps if s.id == step_id)

    @property
    def code(self) -> int:
        return next((s.code for s in self.steps if s.ran and s.code), 0)


def _outputs(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[key] = "\n".join(lines[i + 1 : j])
            i = j + 1
            continue
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
        i += 1
    return out


def run_action(
    action: Path,
    inputs: Mapping[str, str],
    github: Mapping[str, Any],
    *,
    workspace: Path,
    temp: Path,
    uses: Mapping[str, Callable[[dict[str, str]], dict[str, str]]] | None = None,
    replace: Mapping[str, dict[str, str]] | None = None,
) -> ActionRun:
    """Every step of ``action`` (an ``action.yml``) in order, as a runner runs a composite action."""
    doc = yaml.safe_load(action.read_text(encoding="utf-8"))
    temp.mkdir(parents=True, exist_ok=True)
    event_path = temp / "event.json"
    event_path.write_text(json.dumps(github.get("event", {})), encoding="utf-8")
    summary = temp / "step_summary.md"
    summary.write_text("", encoding="utf-8")
    ctx: dict[str, Any] = {
        "github": {**github, "action_path": str(action.parent)},
        "runner": {"temp": str(temp)},
        "steps": {},
        "env": {},
    }
    given = dict(inputs)
    ctx["inputs"] = {
        name: given[name] if name in given else render(spec.get("default", ""), ctx)
        for name, spec in (doc.get("inputs") or {}).items()
    }
    unknown = set(given) - set(ctx["inputs"])
    if unknown:
        raise ValueError(f"inputs the action does not declare: {sorted(unknown)}")
    base_env = _runner_env(github, action, workspace, event_path, summary, temp)
    runs, failed = [], False
    for n, step in enumerate(doc["runs"]["steps"]):
        sid = str(step.get("id") or f"step{n}")
        if not should_run(step.get("if"), ctx, failed):
            runs.append(StepRun(sid, ran=False))
            ctx["steps"][sid] = {"outputs": {}, "outcome": "skipped"}
            continue
        if replace and sid in replace:
            result = StepRun(
                sid, ran=True, outputs=dict(replace[sid]), log="(replaced by the test)"
            )
        elif "uses" in step:
            name = str(step["uses"]).split("@", 1)[0]
            with_ = {k: render(v, ctx) for k, v in (step.get("with") or {}).items()}
            if not uses or name not in uses:
                raise ValueError(f"no stand-in for uses: {step['uses']}")
            result = StepRun(sid, ran=True, outputs=uses[name](with_), log=f"(stand-in for {name})")
        else:
            result = _run_step(sid, n, step, ctx, base_env, workspace, temp)
        failed = failed or result.code != 0
        ctx["steps"][sid] = {
            "outputs": result.outputs,
            "outcome": "failure" if result.code else "success",
        }
        runs.append(result)
    return ActionRun(runs, summary.read_text(encoding="utf-8"), failed)


def _runner_env(
    github: Mapping[str, Any],
    action: Path,
    workspace: Path,
    event_path: Path,
    summary: Path,
    temp: Path,
) -> dict[str, str]:
    """The environment a runner gives every ``run:`` step (this process's, without its own
    ``GITHUB_*``/``RUNNER_*``/``INPUT_*``)."""
    base_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "INPUT_"))
    }
    base_env.update(
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_EVENT_PATH=str(event_path),
        GITHUB_EVENT_NAME=str(github.get("event_name", "")),
        GITHUB_REPOSITORY=str(github.get("repository", "")),
        GITHUB_RUN_ID=str(github.get("run_id", "")),
        GITHUB_SERVER_URL=str(github.get("server_url", "https://github.com")),
        GITHUB_API_URL=str(github.get("api_url", "")),
        GITHUB_ACTION_PATH=str(action.parent),
        GITHUB_STEP_SUMMARY=str(summary),
        RUNNER_TEMP=str(temp),
    )
    return base_env


def _run_step(
    sid: str,
    n: int,
    step: Mapping[str, Any],
    ctx: dict[str, Any],
    base_env: dict[str, str],
    workspace: Path,
    temp: Path,
) -> StepRun:
    """A ``run:`` step in bash, its ``${{ }}`` rendered, its outputs read from ``GITHUB_OUTPUT``."""
    out_file = temp / f"output-{n}"
    out_file.write_text("", encoding="utf-8")
    env = dict(base_env, GITHUB_OUTPUT=str(out_file))
    env.update({k: render(v, ctx) for k, v in (step.get("env") or {}).items()})
    script = temp / f"step-{n}.sh"
    script.write_text(render(step["run"], ctx), encoding="utf-8")
    proc = process.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=str(workspace),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return StepRun(sid, True, proc.returncode, proc.stdout + proc.stderr, _outputs(out_file))
