"""Where a fixed string occurs at each ref (count and file:line), and which commits added or removed it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.checks.result import Checked
from harness.git.evidence import GrepHit, count_merges, grep_at, grep_counts, ls_tree, pickaxe
from harness.git.repo import GitRepo
from harness.report.model import Cell, Code, Control, Finding, Section, Severity, Sha, Table

_CELL_HITS = 8  # hits shown inline per ref; the rest are in the folded table
_READBACK_FILES = 50


@dataclass
class TraceRow:
    """Occurrences at one ref: ``count`` is the number of matching lines (one hit per line)."""

    ref: str
    sha: str
    hits: list[GrepHit] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.hits)

    def as_json(self) -> dict[str, object]:
        return {
            "ref": self.ref,
            "sha": self.sha,
            "count": self.count,
            "hits": [{"path": h.path, "line": h.line} for h in self.hits],
        }


@dataclass
class RangeChange:
    """A commit in the range that changed the number of matching lines (or moved them)."""

    sha: str
    subject: str
    before: int
    after: int
    is_merge: bool = False

    @property
    def change(self) -> str:
        if self.after > self.before:
            return "added"
        if self.after < self.before:
            return "removed"
        return "changed in place"


@dataclass
class RangeTrace:
    base: str
    head: str
    count_base: int
    count_head: int
    changes: list[RangeChange]
    merges: int


def trace_refs(
    repo: GitRepo, needle: str, refs: Sequence[str], under: str | None = None
) -> list[TraceRow]:
    """Occurrences of ``needle`` at each ref, in one ``git grep`` (unknown ref → UsageError)."""
    shas = [(r, repo.resolve(r)) for r in refs]
    found = grep_at(repo, needle, [s for _, s in shas], under)
    return [
        TraceRow(r, s, sorted(found.get(s, []), key=lambda h: (h.path, h.line))) for r, s in shas
    ]


def trace_range(repo: GitRepo, needle: str, range_: str, under: str | None = None) -> RangeTrace:
    """Commits in ``A..B`` that add or remove ``needle`` (``log -S``), with line counts before/after."""
    base, head = repo.parse_range(range_)
    picked = pickaxe(repo, needle, base, head, under)
    revs = [base, head] + [c.sha for c in picked] + [c.parents[0] for c in picked if c.parents]
    counts = grep_counts(repo, needle, revs, under)
    changes = [
        RangeChange(
            c.sha,
            c.subject,
            counts.get(c.parents[0], 0) if c.parents else 0,
            counts.get(c.sha, 0),
            len(c.parents) > 1,
        )
        for c in picked
    ]
    return RangeTrace(
        base, head, counts[base], counts[head], changes, count_merges(repo, base, head)
    )


def _readback(repo: GitRepo, needle: str, rows: list[TraceRow]) -> Control:
    """Count matching lines per file with Python over the blob, independently of git grep."""
    pattern = needle.encode("utf-8", "surrogateescape")
    per_file: dict[tuple[str, str], int] = {}
    for row in rows:
        for h in row.hits:
            per_file[(row.sha, h.path)] = per_file.get((row.sha, h.path), 0) + 1
    wanted = list(per_file.items())[:_READBACK_FILES]
    # A file over the size limit is not read back (only its first bytes are fetched, to tell).
    blobs = repo.read_blobs([f"{sha}:{path}" for (sha, path), _ in wanted], limit=repo.big_file)
    big = sum(1 for blob in blobs if blob is not None and len(blob) > repo.big_file)
    checked = len(wanted) - big
    agree = sum(
        blob is not None
        and len(blob) <= repo.big_file
        and sum(pattern in ln for ln in blob.split(b"\n")) == n
        for (_, n), blob in zip(wanted, blobs, strict=False)
    )
    skipped = f"; {big} file(s) over {repo.big_file >> 20} MiB not read back" if big else ""
    if not checked:
        return Control("hits read back from the blobs", f"no hits to read back{skipped}", None)
    return Control(
        "hits read back from the blobs",
        f"{agree} of {checked} file(s) with hits: the line count read from the blob equals git "
        f"grep's{skipped}",
        agree == checked,
    )


def _probe_string(repo: GitRepo, sha: str, under: str | None) -> str | None:
    """A line that exists at ``sha`` under the path: grep must find it (positive control)."""
    entries = [e for e in ls_tree(repo, sha, under) if e.type == "blob"][:40]
    for blob in repo.read_blobs([e.sha for e in entries], limit=repo.big_file):
        blob = blob or b""
        if b"\0" in blob[:8000] or len(blob) > repo.big_file:
            continue
        for line in blob.split(b"\n"):
            text = line.strip()[:60]
            if len(text) >= 4:
                try:
                    return text.decode("utf-8")
                except UnicodeDecodeError:
                    continue
    return None


def _zero_control(repo: GitRepo, rows: list[TraceRow], under: str | None) -> Control | None:
    zero = [r for r in rows if r.count == 0][:5]
    if not zero:
        return None
    parts, oks = [], []
    for row in zero:
        probe = _probe_string(repo, row.sha, under)
        if probe is None:
            parts.append(f"{row.ref}: no text file under {under or 'the tree'}")
            continue
        n = grep_counts(repo, probe, [row.sha], under)[row.sha]
        oks.append(n > 0)
        parts.append(f"{row.ref}: a line read from a file there is found {n} time(s)")
    return Control(
        "zero rows: grep finds a string known to exist at that ref",
        "; ".join(parts),
        all(oks) if oks else None,
    )


def _hits_cell(row: TraceRow) -> str:
    shown = ", ".join(f"{h.path}:{h.line}" for h in row.hits[:_CELL_HITS])
    more = row.count - _CELL_HITS
    return shown + (f" … +{more} more" if more > 0 else "")


@dataclass(frozen=True)
class TraceResult:
    """Occurrences per ref, and the range's changes when a range was asked for."""

    rows: list[TraceRow]
    range: RangeTrace | None


def trace_check(
    repo: GitRepo,
    needle: str,
    refs: Sequence[str],
    under: str | None = None,
    range_: str | None = None,
) -> Checked[TraceResult]:
    """Report section: occurrences per ref (+ the commits of a range that changed them)."""
    rows = trace_refs(repo, needle, refs, under)
    rng = trace_range(repo, needle, range_, under) if range_ else None
    where = f" under {under}" if under else ""
    tables = _ref_tables(needle, where, rows)
    controls = [_readback(repo, needle, rows)]
    zc = _zero_control(repo, rows, under)
    if zc:
        controls.append(zc)
    findings: list[Finding] = []
    present = [r.ref for r in rows if r.count]
    absent = [r.ref for r in rows if not r.count]
    if present and absent:
        findings.append(
            Finding(
                "trace-split",
                "info",
                f"{needle!r} present at {', '.join(present)}, absent at {', '.join(absent)}",
                key=f"{needle}\0{under}\0split",
            )
        )
    data: dict[str, object] = {
        "needle": needle,
        "under": under,
        "rows": [r.as_json() for r in rows],
    }
    if rng:
        tables.append(_range_table(needle, range_ or "", rng))
        controls.append(_arithmetic_control(rng))
        still = _still_present(needle, under, range_, rng)
        if still is not None:
            findings.append(still)
        data["range"] = _range_data(range_, rng)
    summary = "; ".join(f"{r.ref}: {r.count}" for r in rows)
    section = Section(
        id="trace",
        title=f"Trace of {needle!r}{where}",
        summary=summary,
        tables=tables,
        findings=findings,
        controls=controls,
        not_verified=[
            "matches in binary files and in submodules are not counted",
            "a string split across lines, or written differently (escaped, concatenated), is not found",
        ],
        data=data,
    )
    return Checked(TraceResult(rows, rng), section)


def _ref_tables(needle: str, where: str, rows: Sequence[TraceRow]) -> list[Table]:
    """Occurrences per ref, and every hit (folded) when there is one."""
    tables = [
        Table(
            title=f"{needle!r}{where} per ref",
            columns=["ref", "commit", "lines", "where (file:line)"],
            rows=[
                [Code(r.ref), Sha(r.sha), r.count, Code(_hits_cell(r)) if r.hits else "(none)"]
                for r in rows
            ],
            legend="fixed-string match, one hit per matching line; binary files skipped; "
            "a zero is a result, not an error",
            control="each file's hits re-counted from the blob; zero rows re-checked with a string known to be there",
        )
    ]
    all_hits: list[list[Cell]] = [
        [Code(r.ref), Code(h.path), h.line, Code(h.text.decode("utf-8", "replace").strip()[:160])]
        for r in rows
        for h in r.hits
    ]
    if all_hits:
        tables.append(
            Table(
                "all hits",
                ["ref", "path", "line", "text"],
                all_hits,
                collapsed=True,
                control="same git grep as above; text decoded as UTF-8 with U+FFFD for other bytes",
            )
        )
    return tables


def _arithmetic_control(rng: RangeTrace) -> Control:
    """The per-commit changes add up to the counts at the range's ends (exact without merges)."""
    net = sum(c.after - c.before for c in rng.changes if not c.is_merge)
    expected = rng.count_head - rng.count_base
    return Control(
        "range arithmetic",
        f"sum of per-commit changes {net:+d} vs count at B minus count at A {expected:+d}"
        + (f" ({rng.merges} merge(s) in range: not exact)" if rng.merges else ""),
        None if rng.merges else net == expected,
    )


def _still_present(
    needle: str, under: str | None, range_: str | None, rng: RangeTrace
) -> Finding | None:
    removals = [c for c in rng.changes if c.change == "removed"]
    if removals and rng.count_head > 0:
        sev: Severity = "P2" if rng.count_head < rng.count_base else "info"
        by = ", ".join(c.sha[:12] for c in removals)
        return Finding(
            "trace-still-present",
            sev,
            f"{needle!r} removed by {by} but still present at the range end ({rng.count_head} line(s))",
            "other occurrences may need the same change",
            key=f"{needle}\0{under}\0{range_}\0still",
        )
    return None


def _range_data(range_: str | None, rng: RangeTrace) -> dict[str, object]:
    return {
        "spec": range_,
        "base": rng.base,
        "head": rng.head,
        "count_base": rng.count_base,
        "count_head": rng.count_head,
        "merges": rng.merges,
        "commits": [
            {
                "sha": c.sha,
                "subject": c.subject,
                "before": c.before,
                "after": c.after,
                "change": c.change,
            }
            for c in rng.changes
        ],
    }


def trace_section(
    repo: GitRepo,
    needle: str,
    refs: Sequence[str],
    under: str | None = None,
    range_: str | None = None,
) -> Section:
    """The section of ``trace_check``."""
    return trace_check(repo, needle, refs, under, range_).section


def _range_table(needle: str, spec: str, rng: RangeTrace) -> Table:
    rows: list[list[Cell]] = [
        [Sha(c.sha), c.subject, c.before, c.after, c.change + (" (merge)" if c.is_merge else "")]
        for c in rng.changes
    ]
    return Table(
        title=f"commits in {spec} that add or remove {needle!r}",
        columns=["commit", "subject", "lines before", "lines after", "change"],
        rows=rows,
        legend=f"count at A = {rng.count_base}, at B = {rng.count_head}; commits picked by git log -S "
        "(number of occurrences changed), counted at the commit and its first parent",
        control="range arithmetic: per-commit changes add up to B minus A when the range has no merges",
    )
