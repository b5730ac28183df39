"""Runs a probe's rows inside a column's subprocess. Never imports harness internals.

Usage: python _runner.py SPEC.json RESULTS.jsonl

SPEC: {"tree": dir, "mode": "python"|"extract", "rows": [...], "start": i, "under_test": [modules],
       python mode: "module": dotted name in the tree | "file": path, "function": name;
       extract mode: "file": path in tree, "functions": [...], "prelude": source, "call": name}
Each finished row appends one JSON line {"i", "status", "value", "detail", "proof", "writes"}.
The parent handles timeouts, crashes and output floods (it watches this file and the process).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = {"__pycache__", ".pytest_cache"}


def listing(root: str) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP]
        for name in filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


def jsonable(v):
    try:
        json.dumps(v, allow_nan=False)
        return v
    except (TypeError, ValueError):
        return repr(v)


def load_file(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def module_files(names) -> dict:
    proof = {}
    for name in names:
        try:
            mod = importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - reported as the proof
            proof[name] = f"!import failed: {type(exc).__name__}: {exc}"
            continue
        f = getattr(mod, "__file__", None)
        proof[name] = os.path.realpath(f) if f else "!no __file__ (built-in or namespace)"
    return proof


def target(spec: dict):
    """The callable under probe, plus module names whose files prove what was tested."""
    under = list(spec.get("under_test") or [])
    if spec["mode"] == "extract":
        ext = load_file(os.path.join(_HERE, "extract_runner.py"), "_harness_extract_runner")
        fn, proof = ext.build(spec)
        return fn, under, proof
    if spec.get("file"):
        mod = load_file(spec["file"], "_harness_probe")
        under = under or list(getattr(mod, "UNDER_TEST", []))
    else:
        mod = importlib.import_module(spec["module"])
        under = under or [spec["module"]]
    return getattr(mod, spec["function"]), under, {}


def main() -> int:
    spec_path, out_path = sys.argv[1], sys.argv[2]
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    tree = spec["tree"]
    # The column's tree comes first; the runner's own folder must not shadow anything.
    sys.path[:] = [tree] + [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    os.chdir(tree)
    out = open(out_path, "a", encoding="utf-8")

    def emit(rec: dict) -> None:
        out.write(json.dumps(rec) + "\n")
        out.flush()

    rows, start = spec["rows"], spec.get("start", 0)
    try:
        fn, under, extra_proof = target(spec)
        setup_error = None
    except BaseException as exc:  # noqa: BLE001 - a probe that cannot load fails its cells
        fn, under, extra_proof = None, [], {}
        setup_error = f"{type(exc).__name__}: {exc}"
    for i in range(start, len(rows)):
        if setup_error:
            emit(
                {
                    "i": i,
                    "status": "error",
                    "value": None,
                    "detail": f"setup: {setup_error}",
                    "proof": {},
                }
            )
            continue
        before = listing(tree)
        rec = {"i": i, "status": "ok", "value": None, "detail": "", "proof": {}}
        try:
            rec["value"] = jsonable(fn(**rows[i]))
        except BaseException as exc:  # noqa: BLE001 - SystemExit from code under test is an outcome too
            tb = traceback.extract_tb(exc.__traceback__)
            at = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
            rec.update(status="error", detail=f"{type(exc).__name__}: {exc}{at}"[:500])
        rec["proof"] = {**extra_proof, **{f"module {k}": v for k, v in module_files(under).items()}}
        after = listing(tree)
        rec["writes"] = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        emit(rec)
    out.close()
    sys.stdout.flush()
    os._exit(0)  # skip atexit/threads of code under test


if __name__ == "__main__":
    main()
