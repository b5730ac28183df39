"""Pinned values per ref: a YAML key path, a TOML key, or a package pin (``sglang==X``), with its line."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath

from harness.checks.result import Checked
from harness.git.repo import GitRepo
from harness.inputs import yamlpath
from harness.report.model import Anchors, Code, Control, Finding, Location, Section, Sha, Table

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - 3.10 without tomli: values come from the line scan
    _toml = None  # type: ignore[assignment]

_OPS = r"(?:===|==|~=|!=|>=|<=|>|<)"
_SPEC = rf"{_OPS}\s*[^\s\"',;#]+(?:\s*,\s*{_OPS}\s*[^\s\"',;#]+)*"


@dataclass
class PinRow:
    """The value at one ref. ``status``: found, null, missing file, missing key, unreadable."""

    ref: str
    sha: str
    value: str | None
    line: int | None
    status: str
    raw: str | None = None  # the file's text on ``line``, read back independently of the parser
    note: str = ""
    kind: str = ""  # yaml, toml, requirement

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def _is_requirements(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    return name.endswith((".txt", ".in")) and ("requirement" in name or "constraint" in name)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_pins(text: str, package: str, in_quotes: bool) -> list[tuple[int, str]]:
    """``(line, value)`` for every requirement of ``package``; value is the version for a single ``==``."""
    name_re = r"[-_.]+".join(re.escape(p) for p in re.split(r"[-_.]+", package))
    pat = re.compile(
        rf"(?<![\w.-]){name_re}(?![\w.-])\s*(\[[^\]]*\])?\s*({_SPEC}|@\s*[^\s\"',;#]+)?", re.I
    )
    found = []
    for no, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0] if not in_quotes else line
        if in_quotes:
            # Only requirement strings count in TOML (skips `name = "sglang"` is handled below).
            strings = re.findall(r"\"([^\"]*)\"|'([^']*)'", body)
            candidates = [a or b for a, b in strings]
            if re.match(r"\s*name\s*=", body):
                continue
        else:
            candidates = [body.strip()]
        for cand in candidates:
            m = pat.match(cand.strip())
            if m:
                spec = re.sub(r"\s+", "", m.group(2) or "")
                if re.fullmatch(r"===?[^,]+", spec):
                    value = spec.lstrip("=")
                else:
                    value = (m.group(1) or "") + spec if spec else "(unpinned)"
                found.append((no, value))
    return found


def _toml_line(lines: list[str], segs: list[str]) -> int | None:
    """Line of ``segs`` in TOML text: the longest matching table header, then ``key =`` below it."""
    current: list[str] = []
    best: int | None = None
    for no, line in enumerate(lines, 1):
        name = toml_header(line)
        if name is not None:
            current = [p.strip().strip("\"'") for p in name.split(".")]
            if current == segs:
                best = best or no
            continue
        rest = segs[len(current) :]
        if segs[: len(current)] == current and rest:
            key = toml_key(line)
            if key is not None and [p.strip().strip("\"'") for p in key.split(".")] == rest:
                return no
    return best


# The two line readers below find what ``^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$`` and
# ``^\s*([A-Za-z0-9_\-"'. ]+?)\s*=`` found (up to whitespace around the name), with string
# operations: those patterns backtracked in cubic and quadratic time over a long line of spaces in
# the reviewed repository's TOML.
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-\"'. ")


def toml_header(line: str) -> str | None:
    """The name of a ``[table]`` or ``[[array]]`` header line (stripped), else None."""
    s = line.lstrip()
    if not s.startswith("["):
        return None
    for opening in (2, 1) if s.startswith("[[") else (1,):
        body = s[opening:]
        end = body.find("]")
        if end <= 0:  # no closing bracket, or an empty name
            continue
        tail = body[end + 1 :]
        tail = (tail[1:] if tail.startswith("]") else tail).lstrip()
        if not tail or tail.startswith("#"):
            return body[:end].strip()
    return None


def toml_key(line: str) -> str | None:
    """The key of a ``key = value`` line (stripped), else None."""
    prefix, eq, _ = line.partition("=")
    core = prefix.strip()
    if not eq or not (core or " " in prefix) or not _KEY_CHARS.issuperset(core):
        return None
    return core


def _toml_value(text: str, segs: list[str], lines: list[str]) -> tuple[str | None, int | None, str]:
    line = _toml_line(lines, segs)
    if _toml is None:
        if line is None:
            return None, None, "missing key"
        rhs = lines[line - 1].split("=", 1)[1].split("#", 1)[0].strip().strip("\"'")
        return rhs, line, "found"
    try:
        data: object = _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        return None, None, f"unreadable: {exc}"
    for seg in segs:
        if not isinstance(data, dict) or seg not in data:
            return None, None, "missing key"
        data = data[seg]
    if isinstance(data, str):
        value = data
    elif not isinstance(data, (list, dict)) and line is not None:
        # a number, boolean or date as the file writes it (``inf``, ``2024-01-01T00:00:00Z``):
        # JSON's ``Infinity`` or Python's ``2024-01-01 00:00:00+00:00`` failed the read-back control
        value = lines[line - 1].split("=", 1)[1].split("#", 1)[0].strip()
    else:
        value = json.dumps(data, default=str, sort_keys=True)
    return value, line, "found"


def _read_one(ref: str, sha: str, path: str, keypath: str, blob: bytes | None) -> PinRow:
    if blob is None:
        return PinRow(ref, sha, None, None, "missing file", note=f"{path} does not exist at {ref}")
    if len(blob) > yamlpath.MAX_BYTES:
        return PinRow(
            ref, sha, None, None, "unreadable", note=f"not read: over {yamlpath.MAX_BYTES} bytes"
        )
    text, replaced = yamlpath.decode(blob)
    note = "non-UTF-8 bytes shown as U+FFFD" if replaced else ""
    lines = text.splitlines()
    name = PurePosixPath(path).name.lower()
    if _is_requirements(path):
        hits = _requirement_pins(text, keypath, in_quotes=False)
        return _from_hits(ref, sha, keypath, hits, lines, note, "requirement")
    if name.endswith(".toml"):
        segs = [str(s) for s in yamlpath.parse_keypath(keypath)]
        value, line, status = _toml_value(text, segs, lines)
        if status == "found":
            return PinRow(ref, sha, value, line, "found", _raw(lines, line), note, "toml")
        if len(segs) == 1 and not status.startswith("unreadable"):
            hits = _requirement_pins(text, keypath, in_quotes=True)
            if hits:
                return _from_hits(ref, sha, keypath, hits, lines, note, "requirement")
        status = status if status.startswith("unreadable") else "missing key"
        return PinRow(
            ref,
            sha,
            None,
            None,
            status.split(":")[0],
            note=_join(note, status if ":" in status else f"no key or requirement {keypath!r}"),
            kind="toml",
        )
    try:
        root = yamlpath.compose(text)
    except yamlpath.YamlError as exc:
        why = str(exc) if str(exc).startswith("not read") else f"not YAML: {exc}"
        return PinRow(ref, sha, None, None, "unreadable", note=_join(note, why), kind="yaml")
    found = yamlpath.lookup(root, yamlpath.parse_keypath(keypath))
    if found.node is None:
        return PinRow(
            ref, sha, None, None, "missing key", note=_join(note, found.reason), kind="yaml"
        )
    line = yamlpath.line_of(found.node)
    try:
        value = yamlpath.value_text(found.node)
    except yamlpath.YamlError as exc:
        return PinRow(
            ref, sha, None, line, "unreadable", _raw(lines, line), _join(note, str(exc)), "yaml"
        )
    status = "null" if value is None else "found"
    return PinRow(ref, sha, value, line, status, _raw(lines, line), note, "yaml")


def _from_hits(
    ref: str,
    sha: str,
    package: str,
    hits: list[tuple[int, str]],
    lines: list[str],
    note: str,
    kind: str,
) -> PinRow:
    if not hits:
        return PinRow(
            ref,
            sha,
            None,
            None,
            "missing key",
            note=_join(note, f"no requirement for {package!r}"),
            kind=kind,
        )
    pinned = [h for h in hits if h[1] != "(unpinned)"] or hits
    line, value = pinned[0]
    others = sorted({f"{v} (line {n})" for n, v in hits if n != line})
    extra = ("also: " + ", ".join(others)) if others else ""
    return PinRow(ref, sha, value, line, "found", _raw(lines, line), _join(note, extra), kind)


def _raw(lines: list[str], line: int | None) -> str | None:
    return lines[line - 1] if line and 0 < line <= len(lines) else None


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def read_pins(repo: GitRepo, path: str, keypath: str, refs: Sequence[str]) -> list[PinRow]:
    """The value of ``keypath`` in ``path`` at each ref (refs resolved first: unknown → UsageError)."""
    yamlpath.parse_keypath(keypath)  # reject a malformed key path before any work
    shas = [(r, repo.resolve(r)) for r in refs]
    blobs = repo.read_blobs([f"{s}:{path}" for _, s in shas], limit=yamlpath.MAX_BYTES)
    return [_read_one(r, s, path, keypath, blob) for (r, s), blob in zip(shas, blobs, strict=False)]


def _raw_line_control(rows: list[PinRow]) -> Control:
    checked = [
        r
        for r in rows
        if r.status == "found"
        and r.value
        and "\n" not in r.value
        and not r.value.startswith(("{", "["))
    ]
    agree = [
        r
        for r in checked
        if r.raw is not None
        and r.value is not None
        and (r.value in r.raw or r.value.replace("(unpinned)", "") in r.raw)
    ]
    ok = None if not checked else len(agree) == len(checked)
    return Control(
        "raw line read back",
        f"{len(agree)} of {len(checked)} scalar values appear verbatim on the line reported",
        ok,
    )


def pin_check(repo: GitRepo, path: str, keypath: str, refs: Sequence[str]) -> Checked[list[PinRow]]:
    """Report section: one row per ref with value, line and the raw line as its control."""
    rows = read_pins(repo, path, keypath, refs)
    table = Table(
        title=f"{keypath} in {path}",
        columns=["ref", "commit", "value", "line", "status", "raw line", "note"],
        rows=[
            [
                Code(r.ref),
                Sha(r.sha),
                Code(r.value) if r.value is not None else None,
                r.line,
                r.status,
                Code(r.raw.strip()) if r.raw is not None else None,
                r.note,
            ]
            for r in rows
        ],
        legend="value: the scalar as written (lists/mappings as JSON); for a package, the version when pinned "
        "with ==, else the specifier; missing file/key are cells, not errors",
        control="raw line: the file's own text at the reported line, read without the parser",
    )
    findings = []
    values = {r.value for r in rows if r.status == "found"}
    if len(values) > 1:
        per = ", ".join(f"{r.ref}={r.value}" for r in rows if r.status == "found")
        findings.append(
            Finding(
                "pin-differs",
                "info",
                f"{keypath} differs across refs",
                per,
                key=f"{path}\0{keypath}",
                # the line it is on at each ref that has it (one place when they agree)
                anchors=Anchors(
                    where=tuple(
                        Location(path=path, line=line)
                        for line in dict.fromkeys(r.line for r in rows if r.status == "found")
                    )
                ),
            )
        )
    missing = [r for r in rows if r.status in ("missing file", "missing key", "unreadable")]
    if missing and values:
        findings.append(
            Finding(
                "pin-missing",
                "info",
                f"{keypath} is absent at {len(missing)} ref(s)",
                ", ".join(f"{r.ref}: {r.status}" for r in missing),
                key=f"{path}\0{keypath}\0missing",
            )
        )
    summary = ", ".join(f"{r.ref}: {r.value if r.value is not None else r.status}" for r in rows)
    section = Section(
        id="pin",
        title=f"Pinned value: {keypath}",
        summary=summary,
        tables=[table],
        findings=findings,
        controls=[_raw_line_control(rows)],
        not_verified=[
            "whether the pinned value is what CI or the image build actually uses",
            "environment markers and includes (-r, -c) in requirements files are not followed",
        ],
        data={
            "path": path,
            "keypath": keypath,
            "rows": [
                {
                    "ref": r.ref,
                    "sha": r.sha,
                    "value": r.value,
                    "line": r.line,
                    "status": r.status,
                    "raw": r.raw,
                    "note": r.note,
                    "kind": r.kind,
                }
                for r in rows
            ],
        },
    )
    return Checked(rows, section)


def pin_section(repo: GitRepo, path: str, keypath: str, refs: Sequence[str]) -> Section:
    """The section of ``pin_check``."""
    return pin_check(repo, path, keypath, refs).section
