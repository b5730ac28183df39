"""GitHub-flavoured Markdown, ready to paste into a pull request comment."""

from __future__ import annotations

import re

from harness.report.model import (
    Cell,
    Code,
    Details,
    Finding,
    Report,
    Section,
    Sha,
    Table,
    open_findings,
)
from harness.report.safe import clean, shown

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")


def _text(s: str) -> str:
    """Escape plain text for a table cell or a line of prose (no control characters, no live @mentions)."""
    s = shown(s).replace("&", "&amp;")
    s = _MD_SPECIAL.sub(
        lambda m: {"<": "&lt;", ">": "&gt;", "|": "\\|"}.get(m.group(1), "\\" + m.group(1)), s
    )
    return s.replace("\r", "").replace("\n", "<br>")


def _code(s: str) -> str:
    """Inline code that survives a table cell: pipes escaped, backticks fenced."""
    s = clean(s)
    if not s:
        return "∅"
    s = s.replace("|", "\\|").replace("\r", "").replace("\n", "↵")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = (
        " "
        if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" "))
        else ""
    )
    return f"{fence}{pad}{s}{pad}{fence}"


def cell(c: Cell) -> str:
    if c is None:
        return ""
    if isinstance(c, Sha):
        return _code(c.short)
    if isinstance(c, Code):
        return _code(c.text)
    return _text(str(c))


def _table(t: Table) -> list[str]:
    out = []
    if t.title and not t.collapsed:  # a folded table names itself in its <summary>
        out.append(f"**{_text(t.title)}**")
        out.append("")
    head = [
        "| " + " | ".join(_text(c) for c in t.columns) + " |",
        "|" + "|".join("---" for _ in t.columns) + "|",
    ]
    body = ["| " + " | ".join(cell(c) for c in row) + " |" for row in t.rows]
    if not t.rows:
        body = ["| " + " | ".join(["_(no rows)_"] + [""] * (len(t.columns) - 1)) + " |"]
    lines = head + body
    if t.collapsed:
        out += [
            f"<details><summary>{_text(t.title or 'table')} ({len(t.rows)} rows)</summary>",
            "",
            *lines,
            "",
            "</details>",
        ]
    else:
        out += lines
    if t.legend:
        out += ["", f"<sub>{_text(t.legend)}</sub>"]
    if t.control:
        out += ["", f"<sub>Control: {_text(t.control)}</sub>"]
    out.append("")
    return out


def _details(d: Details) -> list[str]:
    body = clean(d.body)
    longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    fence = "`" * (longest + 1)
    return [
        f"<details><summary>{_text(d.summary)}</summary>",
        "",
        fence,
        body.rstrip("\n"),
        fence,
        "",
        "</details>",
        "",
    ]


def causes(report: Report, *, members: bool = True, first: int | None = None) -> list[str]:
    """The open findings grouped by root cause, each with its action (the flat list when ungrouped).

    ``members=False`` leaves out each cause's finding lines; ``first`` keeps only the first causes and
    says how many more there are (both used by comment.md to stay within its limit)."""
    live = open_findings(report)
    if not report.causes:
        return [
            *(f"- **{f.severity}** {_text(f.title)} ({_code(f.id)})" for f in live),
            *([""] if live else []),
        ]
    by_id: dict[str, Finding] = {f.id: f for f in report.findings}
    shown_causes = report.causes if first is None else report.causes[:first]
    out = [f"**{len(live)} open finding(s) from {len(report.causes)} cause(s) — what to do:**", ""]
    for n, c in enumerate(shown_causes, 1):
        out.append(f"{n}. **{c.severity}** {_text(c.title)}  ")
        out.append(
            f"   **Action:** {_code(c.action)}"
            + ("" if members else f" · findings: {', '.join(_code(i) for i in c.findings)}")
        )
        for fid in c.findings if members else []:
            f = by_id.get(fid)
            if f is not None:
                out.append(f"   - {f.severity} {_text(f.title)} ({_code(f.id)})")
    rest = report.causes[len(shown_causes) :]
    if rest:
        out.append(
            f"\n… {len(rest)} more cause(s) ({sum(len(c.findings) for c in rest)} finding(s)) in the full report"
        )
    out.append("")
    return out


def _section(s: Section) -> list[str]:
    out = [f"## {_text(s.title)}", ""]
    if s.summary:
        out += [_text(s.summary), ""]
    for t in s.tables:
        out += _table(t)
    if s.findings:
        out += ["**Findings**", ""]
        for f in s.findings:
            extra = f" _(waived: {_text(f.waived)})_" if f.waived else ""
            status = f" [{_text(f.status)}]" if f.status else ""
            detail = f" — {_text(f.detail)}" if f.detail else ""
            out.append(f"- **{f.severity}** {_code(f.id)}{status} {_text(f.title)}{detail}{extra}")
        out.append("")
    if s.controls:
        out += ["**Controls**", ""]
        for c in s.controls:
            mark = {True: "✅", False: "❌", None: "ℹ️"}[c.ok]
            out.append(f"- {mark} {_text(c.name)}: {_text(c.result)}")
        out.append("")
    for d in s.details:
        out += _details(d)
    if s.not_verified:
        out += ["<sub>Not verified here: " + _text("; ".join(s.not_verified)) + "</sub>", ""]
    return out


class Sections:
    """Each section's Markdown lines, made once for the files written from one report (report.md
    and comment.md show the same sections: on a long report ~15 ms each). A section is known by
    its identity, checked: a copy made meanwhile (comment.md's trimmed forms) is made anew."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[Section, list[str]]] = {}

    def __call__(self, s: Section) -> list[str]:
        made = self._made.get(id(s))
        if made is not None and made[0] is s:
            return made[1]
        lines = _section(s)
        self._made[id(s)] = (s, lines)
        return lines


def render(report: Report, sections: Sections | None = None) -> str:
    """report.md (``sections``: the lines of sections made for another file of this report)."""
    section_lines = sections or _section
    out = [f"# {_text(report.title)}", ""]
    meta = _code(report.command) if report.command else ""
    if report.generated:
        meta = f"Generated {report.generated} · {meta}"
    if meta:
        out += [f"<sub>{meta}</sub>", ""]
    verdict = report.verdict or "not gated"
    out += [f"**Verdict:** {_text(verdict)}", ""]
    out += causes(report)
    if report.inputs:
        out += ["| input | value |", "|---|---|"]
        out += [f"| {_text(k)} | {_code(v)} |" for k, v in report.inputs.items()]
        out.append("")
    for s in report.sections:
        out += section_lines(s)
    nv = report.all_not_verified()
    out += ["## Not verified", ""]
    out += [f"- {_text(n)}" for n in nv] or ["- (nothing listed)"]
    out.append("")
    return "\n".join(out)


# Public names for the layouts built on this one (comment.md).
text = _text
code = _code
section = _section
