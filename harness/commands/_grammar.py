"""One command-line grammar for every verb: ranges, several refs, old spellings.

- a verb that takes a range accepts ``BASE..HEAD`` or ``BASE HEAD`` (``add_range`` / ``range_of``);
- a verb that takes several refs takes a repeatable ``--ref`` with ``--refs R…`` kept as an alias
  (``add_refs`` / ``refs_of``);
- an old option spelling still works and earns a one-line note on stderr (``old_spelling``).
"""

from __future__ import annotations

import argparse
import sys

from harness.errors import UsageError

RANGE_METAVAR = "BASE..HEAD | BASE HEAD"


def add_range(p: argparse.ArgumentParser, help: str) -> None:
    """The range positional: ``BASE..HEAD`` as one word or ``BASE HEAD`` as two."""
    p.add_argument("range", nargs="+", metavar=RANGE_METAVAR, help=help)


def range_of(args: argparse.Namespace) -> tuple[str, str]:
    """(BASE, HEAD) as the user spelled them (names, not shas); bad shapes are usage errors."""
    words: list[str] = list(args.range)
    if len(words) == 1:
        spec = words[0]
        base, sep, head = spec.partition("..")
        if not sep or not base or not head or head.startswith("."):
            raise UsageError(f"expected a range BASE..HEAD or BASE HEAD, got {spec!r}")
        return base, head
    if len(words) == 2 and not any(".." in w for w in words):
        return words[0], words[1]
    raise UsageError(f"expected a range BASE..HEAD or BASE HEAD, got {' '.join(words)!r}")


def add_refs(p: argparse.ArgumentParser, help: str) -> None:
    """``--ref R`` (repeatable) and its alias ``--refs R…``, both filling ``args.refs`` in order."""
    p.add_argument(
        "--ref", action="append", dest="refs", metavar="REF", help=f"{help} (repeatable)"
    )
    p.add_argument(
        "--refs",
        nargs="+",
        action="extend",
        dest="refs",
        metavar="REF",
        help="several refs at once (alias of repeating --ref)",
    )


def refs_of(args: argparse.Namespace, default: list[str] | None = None) -> list[str]:
    """The refs given with --ref/--refs, else ``default``; none at all is a usage error."""
    refs = list(args.refs or default or [])
    if not refs:
        raise UsageError("no refs: pass --ref REF (repeatable) or --refs REF…")
    return refs


def old_spelling(old: str, new: str) -> None:
    """The one-line note for an option spelled the old way (it still works)."""
    sys.stderr.write(f"harness: note: {old} is now spelled {new} (the old spelling still works)\n")


def add_test_run_options(
    p: argparse.ArgumentParser, *, timeout: float, timeout_help: str, no_cache_help: str
) -> None:
    """The options every verb that runs the project's pytest shares: ``--timeout``, ``--no-cache``
    and the ``--setup`` commands run in the harness's copy of the tree first."""
    p.add_argument("--timeout", type=float, default=timeout, help=timeout_help)
    p.add_argument("--no-cache", action="store_true", help=no_cache_help)
    p.add_argument(
        "--setup",
        action="append",
        default=[],
        metavar="CMD",
        help="shell command run in the harness's copy of the tree before pytest, e.g. to write the "
        "version file a build step generates (repeatable)",
    )
