"""End state: each file a pick touches, at HEAD, against the same file right after the source.

The two blobs are diffed in order (a moved line is a difference: an increment above a read is not
the same code as below it). Each differing line is classed as pre-existing (the same ordered
difference already separated the fork point from the source's parent), other picks (a line another
pick of the range adds or removes in that file) or introduced (the rest); the lines are kept so a
row that is not "same" always shows what differs.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Sequence

from harness.checks.fidelity_compare import FileResult
from harness.git import GitRepo
from harness.git.picks import object_ids

SHOWN_LINES = 20  # differing lines kept per file (the counts cover all of them)


@dataclass
class EndState:
    path: str
    status: str  # same, pre-existing, other-picks, introduced, binary-differs, newline-differs
    pre_existing: int = 0
    other_picks: int = 0
    introduced: int = 0
    head_blob: str | None = None
    source_blob: str | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)  # (class, signed line), in file order

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _lines(data: bytes | None) -> list[bytes]:
    if not data:
        return []
    out = data.split(b"\n")
    return out[:-1] if out[-1] == b"" else out


def _binary(data: bytes | None) -> bool:
    return data is not None and b"\0" in data[:8000]


def ordered_diff(old: Sequence[bytes], new: Sequence[bytes]) -> list[bytes]:
    """Signed lines (b"-x" in ``old`` only, b"+y" in ``new`` only) of an ordered line diff."""
    lo = 0
    while lo < len(old) and lo < len(new) and old[lo] == new[lo]:
        lo += 1
    hi = 0
    while hi < len(old) - lo and hi < len(new) - lo and old[-1 - hi] == new[-1 - hi]:
        hi += 1
    a, b = old[lo:len(old) - hi], new[lo:len(new) - hi]
    out: list[bytes] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out += [b"-" + x for x in a[i1:i2]] + [b"+" + x for x in b[j1:j2]]
    return out


def pick_lines(patches: dict[str, list]) -> dict[str, dict[str, Counter[bytes]]]:
    """Per pick, per path: the signed lines it changes (b"+x"/b"-y")."""
    out: dict[str, dict[str, Counter[bytes]]] = {}
    for pick, files in patches.items():
        per: dict[str, Counter[bytes]] = {}
        for f in files:
            c = per.setdefault(f.path, Counter())
            c.update(b"+" + x for x in f.added)
            c.update(b"-" + x for x in f.removed)
        out[pick] = per
    return out


def end_states(repo: GitRepo, fork: str, head: str,
               items: Sequence[tuple[str, Sequence[FileResult], Sequence[str]]],
               lines_by_pick: dict[str, dict[str, Counter[bytes]]]) -> dict[str, list[EndState]]:
    """``items``: (pick, file results, sources in history order); picks without source are skipped.

    ``fork`` is where the range starts on the pick's own line (the merge base when BASE is the
    source tip), so both ways of naming the range give the same verdicts.
    """
    plan: list[tuple[str, str, list[str]]] = []
    for pick, results, sources in items:
        if not sources:
            continue
        for r in results:
            side = r.pick or r.source
            assert side is not None
            hp = side.path
            sp = r.source.path if r.source else hp
            pp = (r.source.old_path or sp) if r.source else hp
            bp = (r.pick.old_path or hp) if r.pick else hp
            plan.append((pick, hp, [f"{head}:{hp}", f"{sources[-1]}:{sp}", f"{sources[0]}^:{pp}",
                                    f"{fork}:{bp}"]))
    ids = object_ids(repo, [s for _, _, specs in plan for s in specs])
    quads = [ids[i * 4:i * 4 + 4] for i in range(len(plan))]
    need = sorted({x for q in quads if q[0] != q[1] for x in q if x})
    blobs = {oid: data for oid, data in zip(need, repo.read_blobs(need)) if data is not None}
    totals: dict[str, Counter[bytes]] = {}
    for per in lines_by_pick.values():
        for path, c in per.items():
            totals.setdefault(path, Counter()).update(c)
    pre_cache: dict[tuple[str | None, str | None], Counter[bytes]] = {}
    out: dict[str, list[EndState]] = {}
    for (pick, path, _), (h, a, par, b) in zip(plan, quads):
        st = EndState(path, "same", head_blob=h, source_blob=a)
        out.setdefault(pick, []).append(st)
        if h == a:
            continue
        hb, ab = blobs.get(h) if h else None, blobs.get(a) if a else None
        if _binary(hb) or _binary(ab):
            st.status = "binary-differs"
            continue
        if (par, b) not in pre_cache:  # what already separated the fork point from the source's parent
            pre_cache[(par, b)] = Counter(ordered_diff(_lines(blobs.get(par) if par else None),
                                                       _lines(blobs.get(b) if b else None)))
        pre = pre_cache[(par, b)].copy()
        others = totals.get(path, Counter()) - lines_by_pick.get(pick, {}).get(path, Counter())
        for line in ordered_diff(_lines(ab), _lines(hb)):
            if pre[line] > 0:
                pre[line] -= 1
                st.pre_existing += 1
                cls = "pre-existing"
            elif others[line] > 0:
                others[line] -= 1
                st.other_picks += 1
                cls = "other-picks"
            else:
                st.introduced += 1
                cls = "introduced"
            if len(st.lines) < SHOWN_LINES:
                st.lines.append((cls, line.decode("utf-8", "replace")))
        st.status = "introduced" if st.introduced else "other-picks" if st.other_picks else \
            "pre-existing" if st.pre_existing else "newline-differs"
    return out
