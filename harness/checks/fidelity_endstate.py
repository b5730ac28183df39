"""End state: each file a pick touches, at HEAD, against the same file right after the source.

Lines that differ are split into: pre-existing (BASE already differed from the source's parent
there), other picks (lines another pick of the range adds or removes in that file) and introduced
(the rest). Lines are compared as multisets of bytes, so moved lines are not seen.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Sequence

from harness.checks.fidelity_compare import FileResult
from harness.git import GitRepo
from harness.git.picks import object_ids


@dataclass
class EndState:
    path: str
    status: str  # same, pre-existing, other-picks, introduced, binary-differs
    pre_existing: int = 0
    other_picks: int = 0
    introduced: int = 0
    head_blob: str | None = None
    source_blob: str | None = None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _lines(data: bytes | None) -> list[bytes]:
    if not data:
        return []
    out = data.split(b"\n")
    return out[:-1] if out[-1] == b"" else out


def _binary(data: bytes | None) -> bool:
    return data is not None and b"\0" in data[:8000]


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


def end_states(repo: GitRepo, base: str, head: str,
               items: Sequence[tuple[str, Sequence[FileResult], Sequence[str]]],
               lines_by_pick: dict[str, dict[str, Counter[bytes]]]) -> dict[str, list[EndState]]:
    """``items``: (pick, file results, sources in history order); picks without source are skipped."""
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
                                    f"{base}:{bp}"]))
    ids = object_ids(repo, [s for _, _, specs in plan for s in specs])
    quads = [ids[i * 4:i * 4 + 4] for i in range(len(plan))]
    need = [x for q in quads if q[0] != q[1] for x in q if x]
    blobs = {oid: data for oid, data in zip(need, repo.read_blobs(need)) if data is not None}
    totals: dict[str, Counter[bytes]] = {}
    for per in lines_by_pick.values():
        for path, c in per.items():
            totals.setdefault(path, Counter()).update(c)
    out: dict[str, list[EndState]] = {}
    for (pick, path, _), (h, a, par, b) in zip(plan, quads):
        st = EndState(path, "same", head_blob=h, source_blob=a)
        out.setdefault(pick, []).append(st)
        if h == a:
            continue
        hb, ab, pb, bb = (blobs.get(x) if x else None for x in (h, a, par, b))
        if _binary(hb) or _binary(ab):
            st.status = "binary-differs"
            continue
        head_l, after_l = Counter(_lines(hb)), Counter(_lines(ab))
        base_l, parent_l = Counter(_lines(bb)), Counter(_lines(pb))
        total, own = totals.get(path, Counter()), lines_by_pick.get(pick, {}).get(path, Counter())
        for sign, mine, had, lacked in ((b"+", head_l - after_l, base_l, parent_l),
                                        (b"-", after_l - head_l, parent_l, base_l)):
            for line, n in mine.items():
                k = min(n, max(0, had[line] - lacked[line]))  # BASE vs the source's parent already differed
                st.pre_existing += k
                n -= k
                key = sign + line
                k = min(n, max(0, total[key] - own[key]))
                st.other_picks += k
                st.introduced += n - k
        st.status = "introduced" if st.introduced else "other-picks" if st.other_picks else "pre-existing"
    return out
