"""A stand-in for a target image's site-packages, made of links into an environment on this machine.

The CPU half of ``bench/gpu_engine.sh`` has no H200 image; it links, from an existing engine
environment (the ``cpu`` runtime's, with its CPU torch), the distributions the target list names
into one folder, and writes the matching ``--target-has`` list (this machine's versions). An
environment built with ``$HARNESS_ENGINE_BASE_SITE`` pointing there sees exactly those packages
under it, as the image's system site-packages would be seen on the device.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from harness.engines.target import norm, parse_target_has
from harness.infra import process

_LIST = (
    "import importlib.metadata as m, json, sysconfig;"
    "print(json.dumps({'site': sysconfig.get_paths()['purelib'], 'dists': ["
    "[d.metadata['Name'], d.version, str(d._path)] for d in m.distributions()]}))"
)


def link_base_site(python: Path, wanted: Path, out: Path) -> tuple[Path, Path]:
    """Link into ``out/site`` every distribution of ``python``'s environment named in the target
    list ``wanted``; write ``out/target-has.txt`` (name==version as installed). Return both paths."""
    names = set(parse_target_has(wanted.read_text(), str(wanted)))
    data = json.loads(
        process.run(
            [str(python), "-I", "-c", _LIST],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
    )
    site, tops, has = Path(data["site"]), set(), []
    for name, version, info in data["dists"]:
        if norm(name) not in names or Path(info).parent != site:
            continue
        has.append(f"{norm(name)}=={version}")
        tops.add(Path(info).name)
        record = Path(info) / "RECORD"
        if record.is_file():
            with open(record, newline="") as fh:
                for row in csv.reader(fh):
                    first = Path(row[0]).parts[0] if row and row[0] else ""
                    if first and first not in ("..", "__pycache__") and (site / first).exists():
                        tops.add(first)
    base = out / "site"
    base.mkdir(parents=True, exist_ok=True)
    for top in sorted(tops):
        link = base / top
        if not link.exists():
            os.symlink(site / top, link)
    has_file = out / "target-has.txt"
    has_file.write_text("# linked from " + str(site) + "\n" + "\n".join(sorted(has)) + "\n")
    return base, has_file
