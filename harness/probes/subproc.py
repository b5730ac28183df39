"""Subprocesses for probe cells: one process runs all rows of a column; timeouts, crashes and
output floods become the outcome of the row in flight, and the remaining rows run in a fresh process.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.infra import process
from harness.infra.resources import PROBES_DIR
from harness.probes.kinds import CellResult

FLOOD_BYTES = 4 * 1024 * 1024
RUNNER = PROBES_DIR / "_runner.py"
POLL = 0.02


def probe_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = process.child_env(
        {
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONUNBUFFERED": "1",
            "LC_ALL": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
        }
    )
    env.update(extra or {})
    return env


def _kill(proc: process.Popen[bytes]) -> None:
    process.kill_group(proc)


def _size(*paths: Path) -> int:
    return sum(p.stat().st_size for p in paths if p.exists())


def _tail(path: Path, n: int = 300) -> str:
    if not path.exists():
        return ""
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - n))
        return fh.read().decode("utf-8", "replace").strip()


STOP = (
    threading.Event()
)  # set when the run is interrupted: every poll loop kills its child and stops


class Stopped(BaseException):
    """Raised in a worker's poll loop once STOP is set (a BaseException: never a cached cell)."""


@contextmanager
def _reaped(proc: process.Popen) -> Iterator[None]:
    """Interrupted or terminated while watching ``proc``: never leave the child behind."""
    try:
        yield
    except BaseException:
        _kill(proc)
        raise
    finally:
        process.unregister(proc.pid)


def _check_stop() -> None:
    if STOP.is_set():
        raise Stopped("interrupted")


def run_once(
    argv: list[str],
    cwd: Path,
    scratch: Path,
    timeout: float,
    env: dict[str, str],
    flood: int = FLOOD_BYTES,
) -> tuple[str, int | None, bytes, str]:
    """Run one process; returns (status ok|timeout|flood, exit code, output head, detail)."""
    out = scratch / f"out-{time.monotonic_ns()}.log"
    with open(out, "wb") as fh:
        proc = process.popen(
            argv,
            reap_tree=True,  # what the probe starts (setsid, in the background) ends with it
            cwd=str(cwd),
            stdout=fh,
            stderr=process.STDOUT,
            stdin=process.DEVNULL,
            env=env,
        )
        deadline = time.monotonic() + timeout
        status = "ok"
        with _reaped(proc):
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    status = "timeout"
                elif _size(out) > flood:
                    status = "flood"
                if status != "ok":
                    _kill(proc)
                    break
                _check_stop()
                time.sleep(POLL)
    data = out.read_bytes()[:flood]
    out.unlink(missing_ok=True)
    detail = {
        "timeout": f"timed out after {timeout:g}s",
        "flood": f"output flood (> {flood} bytes)",
    }.get(status, "")
    return status, proc.returncode, data, detail


def run_rows(
    python: str,
    spec: dict[str, Any],
    rows: list[dict[str, Any]],
    tree: Path,
    scratch: Path,
    timeout: float,
    env: dict[str, str],
    flood: int = FLOOD_BYTES,
) -> list[CellResult]:
    """Run ``rows`` through probes/_runner.py; restart after a timeout, crash or flood."""
    results: list[CellResult | None] = [None] * len(rows)
    start = 0
    attempt = 0
    while start < len(rows):
        attempt += 1
        spec_path = scratch / f"spec-{attempt}.json"
        res_path = scratch / f"results-{attempt}.jsonl"
        out_path = scratch / f"output-{attempt}.log"
        spec_path.write_text(json.dumps({**spec, "tree": str(tree), "rows": rows, "start": start}))
        res_path.write_bytes(b"")
        with open(out_path, "wb") as out:
            proc = process.popen(
                [python, str(RUNNER), str(spec_path), str(res_path)],
                reap_tree=True,  # what the probe starts (setsid, in the background) ends with it
                cwd=str(tree),
                stdout=out,
                stderr=process.STDOUT,
                stdin=process.DEVNULL,
                env=env,
            )
            done, last_progress, failure = start, time.monotonic(), None
            with _reaped(proc):
                while True:
                    recs = _read_results(res_path)
                    for rec in recs[done - start :]:
                        results[rec["i"]] = _cell(rec, tree)
                    if len(recs) > done - start:
                        done, last_progress = start + len(recs), time.monotonic()
                    if done >= len(rows):
                        break
                    code = proc.poll()
                    if code is not None:
                        recs = _read_results(res_path)
                        if start + len(recs) > done:
                            continue
                        why = f"signal {-code}" if code < 0 else f"exit code {code}"
                        failure = CellResult(
                            None, "crash", f"process died ({why}): {_tail(out_path)}"[:400]
                        )
                        break
                    if time.monotonic() - last_progress > timeout:
                        failure = CellResult(None, "timeout", f"timed out after {timeout:g}s")
                    elif _size(out_path) > flood:
                        failure = CellResult(None, "error", f"output flood (> {flood} bytes)")
                    if failure:
                        _kill(proc)
                        break
                    _check_stop()
                    time.sleep(POLL)
            if proc.poll() is None:
                try:
                    proc.wait(timeout=5)
                except process.TimeoutExpired:
                    _kill(proc)
        if failure is not None:
            results[done] = failure
            done += 1
        start = done
    return [r if r is not None else CellResult(None, "crash", "no result") for r in results]


def _read_results(path: Path) -> list[dict[str, Any]]:
    recs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            recs.append(json.loads(line))
        except ValueError:
            break  # a half-written line: read it next time
    return recs


def _cell(rec: dict[str, Any], tree: Path) -> CellResult:
    """Turn a runner record into a cell, checking module path proofs lie inside the tree."""
    cell = CellResult(rec.get("value"), rec.get("status", "ok"), rec.get("detail", ""))
    root = os.path.realpath(tree)
    for name, value in (rec.get("proof") or {}).items():
        if not name.startswith("module "):
            cell.proof[name] = value
            continue
        if value.startswith("!"):
            cell.proof[name] = value[1:]
            cell.status, cell.detail = "error", f"{name}: {value[1:]}"
            continue
        real = os.path.realpath(value)
        if os.path.commonpath([real, root]) != root:
            cell.proof[name] = real
            cell.status = "error"
            cell.detail = f"{name[7:]} was loaded from {real}, outside the column's tree"
        else:
            cell.proof[name] = os.path.relpath(real, root)
    if rec.get("writes"):
        w = rec["writes"]
        cell.status = "error"
        cell.detail = f"wrote into the tree: {', '.join(w[:3])}{' …' if len(w) > 3 else ''}"
    return cell
