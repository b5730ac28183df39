"""Poetry's own tables as requirement lines (a ``pyproject.toml`` with ``[tool.poetry]`` and no
``[project]``: poetry before 2.0).

``[tool.poetry.dependencies]`` (the project's; ``python`` is the interpreter's range, not a
package) and the groups named test/tests/testing/dev (``[tool.poetry.group.<g>.dependencies]``,
or the older ``[tool.poetry.dev-dependencies]``). Poetry's version constraints become PEP 440
specifiers as poetry reads them: ``^1.2.3`` is ``>=1.2.3,<2.0.0`` (the first non-zero part
bumped), ``~1.2`` is ``>=1.2,<1.3``, a bare version is ``==``, ``*`` is any, ``,`` and spaces
join, ``||`` (no PEP 440 form) takes any version. A table's ``extras``, ``python`` and
``markers`` become the line's extras and markers; an optional dependency (installed through an
extra) is left out, and a ``git``/``path``/``url`` one is named as not from the index.
"""

from __future__ import annotations

import re
from typing import Any

_PART = re.compile(r"(\^|~=|~|>=|<=|!=|==|>|<|=)?\s*([0-9][0-9A-Za-z.*+!-]*|\*)")
_RELEASE = re.compile(r"\d+(?:\.\d+)*")


def requirement_lines(
    poetry: dict[str, Any], groups: tuple[str, ...]
) -> tuple[list[tuple[str, str]], list[str]]:
    """(requirement line, where it came from) for the project's dependencies and the named
    groups; and what was left out, with why."""
    out: list[tuple[str, str]] = []
    dropped: list[str] = []
    tables: list[tuple[str, Any]] = [("[tool.poetry.dependencies]", poetry.get("dependencies"))]
    group = poetry.get("group")
    for g in groups:
        entry = group.get(g) if isinstance(group, dict) else None
        if isinstance(entry, dict):
            tables.append((f"[tool.poetry.group.{g}.dependencies]", entry.get("dependencies")))
    if "dev" in groups:
        tables.append(("[tool.poetry.dev-dependencies]", poetry.get("dev-dependencies")))
    for where, table in tables:
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            if not isinstance(name, str) or name.lower() == "python":
                continue
            for one in value if isinstance(value, list) else [value]:
                line, why = _line(name, one)
                if line:
                    out.append((line, where))
                elif why:
                    dropped.append(f"pyproject.toml {where}: {name[:80]!r} ({why})")
    return out, dropped


def _line(name: str, value: Any) -> tuple[str | None, str]:
    """One dependency as a requirement line, or (None, why not)."""
    if isinstance(value, str):
        return name + specifier(value), ""
    if not isinstance(value, dict):
        return None, "not a version or a table"
    if value.get("optional") is True:
        return None, ""  # installed only through one of the project's extras
    if any(k in value for k in ("git", "path", "url", "file")):
        return None, "not a distribution from the package index"
    listed = value.get("extras")
    extras = [e for e in listed if isinstance(e, str)] if isinstance(listed, list) else []
    line = name + (f"[{','.join(extras)}]" if extras else "")
    version = value.get("version")
    line += specifier(version) if isinstance(version, str) else ""
    markers = []
    python = value.get("python")
    if isinstance(python, str):
        markers += _python_markers(specifier(python))
    if isinstance(value.get("markers"), str):
        markers.append(f"({value['markers']})")
    return line + (" ; " + " and ".join(markers) if markers else ""), ""


def _python_markers(spec: str) -> list[str]:
    """A ``python`` range as markers: ``python_version`` for a version of two parts or fewer
    (``<3.10``: 3.9.18 is below it), ``python_full_version`` for three."""
    out = []
    for part in filter(None, spec.split(",")):
        m = re.match(r"(~=|>=|<=|!=|==|>|<)(.*)$", part.strip())
        if m:
            op, version = m.groups()
            var = "python_full_version" if version.count(".") >= 2 else "python_version"
            out.append(f'{var} {op} "{version}"')
    return out


def specifier(constraint: str) -> str:
    """Poetry's constraint as a PEP 440 specifier set ("" for any version)."""
    text = constraint.strip()
    if not text or text == "*" or "||" in text:
        return ""
    out: list[str] = []
    for op, version in _PART.findall(text.replace(",", " ")):
        if version == "*":
            continue
        if op == "^":
            out += [f">={version}", f"<{_bump(version, caret=True)}"]
        elif op == "~":
            out += [f">={version}", f"<{_bump(version, caret=False)}"]
        elif op in ("", "="):
            out.append(f"=={version}")
        else:
            out.append(f"{op}{version}")
    return ",".join(out)


def _bump(version: str, *, caret: bool) -> str:
    """The upper bound: caret bumps the first non-zero release part (the last given where all are
    zero), tilde the minor where one is given, else the major."""
    m = _RELEASE.match(version)
    parts = [int(p) for p in (m.group(0) if m else "0").split(".")]
    if caret:
        at = next((i for i, p in enumerate(parts) if p != 0), len(parts) - 1)
    else:
        at = 1 if len(parts) > 1 else 0
    bumped = parts[:at] + [parts[at] + 1] + [0] * (len(parts) - at - 1)
    return ".".join(map(str, bumped))
