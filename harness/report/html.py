"""One self-contained HTML file (inline CSS, no scripts, no external assets)."""

from __future__ import annotations

import re
from html import escape as _escape

from harness.report.model import Cell, Code, Finding, Report, Sha, Table, open_findings
from harness.report.safe import clean, shown


def escape(text: str) -> str:
    """Repository data as HTML text: no control characters or terminal escapes, no live @mentions."""
    return _escape(shown(text))


# Status words a cell may hold, and the tone its colour takes (layout: the check decided the word).
STATUS_TONE: dict[str, str] = {
    **dict.fromkeys(
        ("identical", "same", "killed", "pinned", "ok", "pass", "carried", "clean", "unchanged"),
        "good",
    ),
    **dict.fromkeys(
        ("adapted", "superset", "renamed", "forward-merged", "differs", "changed", "p2"), "warn"
    ),
    **dict.fromkeys(
        ("subset", "no-source", "missing", "missing-from-pick", "not-pinned", "survived", "fail")
        + ("failed", "conflict", "p1", "error", "crashed", "timeout"),
        "bad",
    ),
    **dict.fromkeys(("info", "baseline", "later-copy", "merged-back", "contained"), "info"),
}
_TONES = {
    "good": "background:#dafbe1;color:#116329",
    "warn": "background:#fff8c5;color:#7d4e00",
    "bad": "background:#ffebe9;color:#a40e26",
    "info": "background:#ddf4ff;color:#0550ae",
}
LONG_WORD = 30  # a cell with an unbroken run longer than this may break anywhere (paths, commands)
_VERDICT = re.compile(r"^(PASS|BLOCKED|HARNESS ERROR|NOT GATED)\b")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


_STATUS_SLUGS = frozenset(_slug(w) for w in STATUS_TONE)
_CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;padding:0 1em;max-width:1200px;
color:#1f2328;overflow-wrap:break-word}
.tw{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top;
word-break:normal;overflow-wrap:normal}
th{background:#f6f8fa;white-space:nowrap}code{background:#f6f8fa;padding:0 3px;border-radius:3px;font-size:90%}
td code{white-space:pre-wrap}
td.long{overflow-wrap:anywhere;min-width:16em}td.sha,td.st,td.num,td.word,td.sha code,td.word code{white-space:nowrap}
td.st{font-weight:600;font-size:90%}
.P1{color:#b00;font-weight:bold}.P2{color:#9a6700;font-weight:bold}.info{color:#0969da}
.mark{display:inline-block;min-width:3.2em;padding:0 4px;border-radius:3px;font-weight:bold;font-size:85%;
text-align:center}
.PASS{background:#dafbe1;color:#116329}.FAIL{background:#ffebe9;color:#a40e26}.INFO{background:#ddf4ff;color:#0550ae}
.badge{display:inline-block;padding:1px 10px;border-radius:1em;font-weight:bold;white-space:nowrap}
.verdict-pass{background:#1a7f37;color:#fff}.verdict-blocked{background:#cf222e;color:#fff}
.verdict-harness-error{background:#8250df;color:#fff}.verdict-not-gated{background:#6e7781;color:#fff}
.action{font-family:monospace;background:#fff8c5;padding:1px 4px;border-radius:3px}
.legend{color:#57606a;font-size:90%}pre{background:#f6f8fa;padding:8px;overflow:auto;white-space:pre-wrap}
""" + "".join(
    ",".join(f"td.st-{_slug(w)}" for w, t in STATUS_TONE.items() if t == tone) + "{" + css + "}\n"
    for tone, css in _TONES.items()
)
_MARK = {True: "PASS", False: "FAIL", None: "INFO"}


def _anchor(finding_id: str) -> str:
    """The in-page id of a finding (ids may hold any character; anchors keep a safe subset)."""
    return "finding-" + "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in finding_id)


def _cell(c: Cell) -> str:
    if c is None:
        return ""
    if isinstance(c, Sha):
        return f'<code title="{escape(c.sha)}">{escape(c.short)}</code>'
    if isinstance(c, Code):
        return f"<code>{escape(c.text)}</code>"
    return escape(str(c))


def _td(c: Cell) -> str:
    """A cell with the classes its layout needs: a SHA, a number, a status word (coloured by its
    tone) or any one word on one line, a long run of text free to break anywhere, the rest by words."""
    text = c.text if isinstance(c, Code) else "" if c is None else str(c)
    classes = []
    if isinstance(c, Sha):
        classes.append("sha")
    elif isinstance(c, (int, float)):
        classes.append("num")
    elif not isinstance(c, Code) and _slug(text) in _STATUS_SLUGS:
        classes += ["st", f"st-{_slug(text)}"]
    elif any(len(w) > LONG_WORD for w in text.split()):
        classes.append("long")
    elif text and len(text.split()) == 1:
        classes.append("word")  # one word (e.g. pr-number): never broken at its hyphen
    attr = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{attr}>{_cell(c)}</td>"


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in t.columns)
    rows = "".join("<tr>" + "".join(_td(c) for c in r) + "</tr>" for r in t.rows)
    body = (
        f'<div class="tw"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
    )
    title = f"<h3>{escape(t.title)}</h3>" if t.title else ""
    if t.collapsed:
        body = f"<details><summary>{escape(t.title)} ({len(t.rows)} rows)</summary>{body}</details>"
    notes = "".join(
        f'<p class="legend">{escape(x)}</p>'
        for x in (t.legend, f"Control: {t.control}" if t.control else "")
        if x
    )
    return title + body + notes


def _verdict(verdict: str) -> str:
    """The verdict as a badge (its opening word: PASS, BLOCKED, …) and the rest of its line."""
    m = _VERDICT.match(verdict)
    word = m.group(1) if m else "NOT GATED"
    rest = verdict[m.end() :].lstrip(":").strip() if m else verdict
    badge = f'<span class="badge verdict-{_slug(word)}">{escape(word)}</span>'
    return f'<p class="verdict"><b>Verdict:</b> {badge} {escape(rest)}</p>'


def _finding_item(f: Finding) -> str:
    return (
        f'<li><span class="{f.severity}">{f.severity}</span> {escape(f.title)} '
        f'<a href="#{_anchor(f.id)}"><code>{escape(f.id)}</code></a></li>'
    )


def _causes(report: Report) -> list[str]:
    """Open findings grouped by root cause, each with its action (the flat list when ungrouped)."""
    live = open_findings(report)
    if not report.causes:
        return ["<ul>", *(_finding_item(f) for f in live), "</ul>"]
    by_id: dict[str, Finding] = {f.id: f for f in report.findings}
    out = [
        f"<p><b>{len(live)} open finding(s) from {len(report.causes)} cause(s) — what to do:</b></p><ol>"
    ]
    for c in report.causes:
        members = "".join(_finding_item(by_id[i]) for i in c.findings if i in by_id)
        out.append(
            f'<li><span class="{c.severity}">{c.severity}</span> {escape(c.title)}<br>'
            f'<b>Action:</b> <span class="action">{escape(c.action)}</span><ul>{members}</ul></li>'
        )
    out.append("</ol>")
    return out


def render(report: Report) -> str:
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(report.title)}</title>",
        f"<style>{_CSS}</style></head><body><h1>{escape(report.title)}</h1>",
    ]
    if report.command or report.generated:
        parts.append(
            f'<p class="legend">{escape(report.generated)} <code>{escape(report.command)}</code></p>'
        )
    parts.append(_verdict(report.verdict or "not gated"))
    parts += _causes(report)
    for s in report.sections:
        parts.append(f"<section><h2>{escape(s.title)}</h2>")
        if s.summary:
            parts.append(f"<p>{escape(s.summary)}</p>")
        parts += [_table(t) for t in s.tables]
        if s.findings:
            parts.append("<h4>Findings</h4><ul>")
            for f in s.findings:
                extra = f" (waived: {escape(f.waived)})" if f.waived else ""
                status = f" [{escape(f.status)}]" if f.status else ""
                parts.append(
                    f'<li id="{_anchor(f.id)}"><span class="{f.severity}">{f.severity}</span> '
                    f"<code>{escape(f.id)}</code>"
                    f"{status} {escape(f.title)}{' — ' + escape(f.detail) if f.detail else ''}{extra}</li>"
                )
            parts.append("</ul>")
        if s.controls:
            parts.append("<h4>Controls</h4><ul>")
            parts += [
                f'<li><span class="mark {_MARK[c.ok]}">{_MARK[c.ok]}</span> {escape(c.name)}: '
                f"{escape(c.result)}</li>"
                for c in s.controls
            ]
            parts.append("</ul>")
        for d in s.details:
            parts.append(
                f"<details><summary>{escape(d.summary)}</summary><pre>{_escape(clean(d.body))}</pre></details>"
            )
        if s.not_verified:
            parts.append(
                f'<p class="legend">Not verified here: {escape("; ".join(s.not_verified))}</p>'
            )
        parts.append("</section>")
    parts.append("<h2>Not verified</h2><ul>")
    parts += [f"<li>{escape(n)}</li>" for n in report.all_not_verified()]
    parts.append("</ul></body></html>\n")
    return "\n".join(parts)
