"""`harness cache [info|list|clear [--repo PATH]|gc]`: where the cache is, what it holds, and its
upkeep (harness/infra/cache_admin.py)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from harness.errors import UsageError

NAME = "cache"
HELP = (
    "the cache: info (path, size per part, bounds), list (repositories in the history index), "
    "clear [--repo PATH], gc (what no run would use again)"
)
ACTIONS = ("info", "list", "clear", "gc")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        nargs="?",
        choices=ACTIONS,
        default="info",
        help="info (default): path, size per part, bounds and what gc removes; list: the "
        "repositories the history index holds; clear: remove everything kept in the cache "
        "folder, or with --repo one repository's history index; gc: remove what no run would "
        "use again",
    )
    p.add_argument(
        "--format", choices=("term", "json", "none"), default="term", help="none: print nothing"
    )


def run(args: argparse.Namespace) -> int:
    from harness.infra import cache_admin
    from harness.infra.workarea import cache_area, work_area

    cache, work = cache_area(), work_area()
    key = _repo_key(args.repo) if args.repo else None
    if key is not None and args.action not in ("clear", "list"):
        raise UsageError(f"cache {args.action}: --repo goes with clear or list")
    from harness.infra.history_index import wait_for_writers

    wait_for_writers(cache)  # a run's detached writer still at work: counted or cleared whole
    if args.action == "info":
        got: Any = {
            "cache": str(cache),
            "work_area": str(work),
            "parts": cache_admin.as_json(cache_admin.parts(cache, work)),
            "gc_removes": cache_admin.GC_REMOVES,
        }
        got["bytes"] = sum(p["bytes"] for p in got["parts"])
    elif args.action == "list":
        kept = [k for k in cache_admin.listing(cache) if key is None or k.key == key]
        got = {"cache": str(cache), "repositories": cache_admin.as_json(kept)}
    else:
        done = cache_admin.clear(cache, key) if args.action == "clear" else cache_admin.gc(cache)
        got = {
            "cache": str(cache),
            "action": args.action,
            "removed": {k: {"files": v[0], "bytes": v[1]} for k, v in done.parts.items()},
        }
        if key is not None:
            got["repository"] = args.repo
    if args.format != "none":
        text = (
            json.dumps(got, indent=2) + "\n" if args.format == "json" else _text(args.action, got)
        )
        sys.stdout.write(text)
    return 0


def _repo_key(path: str) -> str:
    """The history index folder of the repository at ``path`` (a usage error where there is
    none: nothing is removed)."""
    from harness.git import GitError, GitRepo
    from harness.infra.history_index import repo_key

    try:
        return repo_key(GitRepo(path))
    except GitError as exc:
        raise UsageError(f"--repo {path}: not a git repository ({exc})") from None


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        size /= 1024
        if size < 1024 or unit == "GiB":
            break
    return f"{size:.1f} {unit}"


def _text(action: str, got: dict[str, Any]) -> str:
    lines = [f"cache: {got['cache']}"]
    if action == "info":
        lines.append(f"work area: {got['work_area']}")
        for p in got["parts"]:
            lines.append(f"  {p['name']:<16} {_size(p['bytes']):>10}  {p['files']} file(s)")
            lines.append(f"  {'':<16} {'':>10}  {', '.join(p['paths'])}")
            lines.append(f"  {'':<16} {'':>10}  bound: {p['bound']}")
        lines.append(f"  {'total':<16} {_size(got['bytes']):>10}")
        lines.append(f"gc removes: {got['gc_removes']}")
    elif action == "list":
        if not got["repositories"]:
            lines.append("  no repository in the history index")
        for k in got["repositories"]:
            gone = "" if k["exists"] else " (gone)"
            lines.append(
                f"  {k['key']}  {_size(k['bytes']):>10}  {k['answers']} answer(s)  "
                f"{k['last_used']}  {k['repository']}{gone}"
            )
    else:
        what = ", ".join(
            f"{name}: {v['files']} file(s), {_size(v['bytes'])}"
            for name, v in got["removed"].items()
            if v["files"]
        )
        lines.append(f"  {action}: removed {what or 'nothing'}")
    return "\n".join(lines) + "\n"
