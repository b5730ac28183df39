"""What a task runner's config at the same ref says a task or environment runs: tox's commands per
environment (``tox.ini``, pyproject.toml's ``legacy_tox_ini`` or ``[tool.tox]``) and pixi's tasks
(``pixi.toml``, or ``[tool.pixi]``); the shell reading (gha_shell.py) follows ``tox -e ENV`` and
``pixi run TASK`` through them. A file that cannot be read gives nothing."""

from __future__ import annotations

import configparser
import shlex
from typing import Any


def split_words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return []


def _tox_commands(value: str) -> list[list[str]]:
    """An ini ``commands`` value: one command per line (``\\`` continues it; a leading ``-`` only
    says its failure is ignored)."""
    out: list[list[str]] = []
    pending = ""
    for line in value.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if line and not line.startswith("#"):
            tokens = split_words(line.lstrip("-").strip())
            if tokens:
                out.append(tokens)
    return out


def tox_ini(text: str) -> dict[str, list[list[str]]]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    out: dict[str, list[list[str]]] = {}
    for section in parser.sections():
        name = "" if section == "testenv" else section.removeprefix("testenv:")
        if (section == "testenv" or section.startswith("testenv:")) and parser.has_option(
            section, "commands"
        ):
            out[name] = _tox_commands(parser.get(section, "commands"))
    return out


def _toml(text: str) -> dict[str, Any]:
    """A TOML file of the repository as data; empty when it cannot be read (a broken file, or
    Python 3.10, which has no tomllib)."""
    try:
        import tomllib
    except ImportError:
        return {}
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return {}


def tox_pyproject(text: str) -> dict[str, list[list[str]]]:
    data: Any = _toml(text)
    tox = data.get("tool", {}).get("tox") if isinstance(data.get("tool"), dict) else None
    if not isinstance(tox, dict):
        return {}
    if isinstance(tox.get("legacy_tox_ini"), str):
        return tox_ini(tox["legacy_tox_ini"])
    out: dict[str, list[list[str]]] = {}
    envs: dict[str, Any] = tox["env"] if isinstance(tox.get("env"), dict) else {}
    tables = [("", tox.get("env_run_base")), *((str(k), v) for k, v in envs.items())]
    for name, table in tables:
        commands = table.get("commands") if isinstance(table, dict) else None
        if isinstance(commands, list):
            out[name] = [
                [
                    t
                    if isinstance(t, str)
                    else (
                        "{posargs}" if isinstance(t, dict) and t.get("replace") == "posargs" else ""
                    )
                    for t in c
                ]
                for c in commands
                if isinstance(c, list)
            ]
    return out


def pixi_tasks_in(text: str, prefix: tuple[str, ...]) -> dict[str, str | None]:
    """Task name → command from a pixi manifest's ``tasks``, ``feature.*.tasks`` and
    ``target.*.tasks`` tables (under ``prefix`` in pyproject.toml)."""
    data: Any = _toml(text)
    for key in prefix:
        data = data.get(key) if isinstance(data, dict) else None
    if not isinstance(data, dict):
        return {}
    tables = [data.get("tasks")]
    for group in ("feature", "target"):
        for sub in (data.get(group) or {}).values() if isinstance(data.get(group), dict) else []:
            if isinstance(sub, dict):
                tables.append(sub.get("tasks"))
    out: dict[str, str | None] = {}
    for table in tables:
        for name, spec in table.items() if isinstance(table, dict) else []:
            cmd = spec.get("cmd") if isinstance(spec, dict) else spec
            if isinstance(cmd, list) and all(isinstance(c, str) for c in cmd):
                cmd = shlex.join(cmd)
            out.setdefault(str(name), cmd if isinstance(cmd, str) else None)
    return out
