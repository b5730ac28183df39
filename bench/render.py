"""Rendering cost against report size: each format at 1×, 10× and 50× a base report, as time per
row relative to the smallest size measured in the same run (linear rendering keeps it near 1.0).

    python bench/render.py [--rows 400]

The reports are synthetic but shaped like real ones: fidelity-style sections of picks, each a
table with SHA and code cells, findings with ids, controls and not-verified notes.
"""

from __future__ import annotations

import argparse
import time

from harness.report import render
from harness.report.model import Code, Control, Finding, Report, Section, Sha, Table


def report(rows: int) -> Report:
    sections = []
    per = 50
    for s in range(max(1, rows // per)):
        table = Table(
            f"pick {s}",
            ["file", "status", "+", "-", "sha"],
            [
                [Code(f"src/pkg/mod_{s}_{i}.py"), "identical", i, i % 7, Sha(f"{s:08x}{i:032x}")]
                for i in range(per)
            ],
            legend="legend text " * 5,
            control="da39a3ee",
        )
        findings = [
            Finding(
                "pick-subset",
                "P2",
                f"pick {s} finding {j}",
                "detail " * 8,
                key=f"{s}:{j}",
                id=f"pick-subset-{s:04x}{j:04x}",
            )
            for j in range(3)
        ]
        sections.append(
            Section(
                f"s{s}",
                f"Section {s}",
                "summary",
                [table],
                findings,
                [Control("control", "held", True)],
                ["a limit"],
                data={"rows": s},
            )
        )
    return Report(
        "bench", "harness compare a b", sections, generated="2026-01-01 00:00:00Z", verdict="PASS"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=400)
    base = ap.parse_args().rows
    for fmt in ("md", "json", "html", "term"):
        per_row = []
        for mult in (1, 10, 50):
            r = report(base * mult)
            start = time.perf_counter()
            text = render(r, fmt)
            took = time.perf_counter() - start
            per_row.append(took / (base * mult))
            print(
                f"{fmt:5s} {base * mult:7d} rows {len(text) / 1e6:7.2f} MB {took:7.3f} s "
                f"per-row ratio vs 1x: {per_row[-1] / per_row[0]:.2f}"
            )


if __name__ == "__main__":
    main()
