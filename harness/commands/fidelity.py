"""`harness fidelity BASE..HEAD --source REF`: does each pick carry exactly what its source carried?"""

from __future__ import annotations

import argparse
import importlib
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.commands._common import (
    add_report_options,
    check_output_path,
    command_line,
    emit,
    repo_of,
)
from harness.commands._grammar import add_range, range_of
from harness.errors import UsageError
from harness.git import GitRepo
from harness.report.model import Report, Section

if TYPE_CHECKING:
    from harness.checks.result import Checked, FidelityResult
    from harness.infra.history_index import HistoryIndex

NAME = "fidelity"
HELP = "compare each commit of a backport range with its source commit(s), file by file"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_range(p, "the picks: non-merge commits of this range")
    p.add_argument(
        "--source",
        required=True,
        metavar="REF",
        help="branch the picks were taken from (e.g. main)",
    )
    p.add_argument(
        "--source-branch",
        metavar="REF",
        help="PR branch squash-merged as the source (e.g. refs/pull/N/head): list commits missing "
        "from the pick",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="PICK=SOURCE",
        help="force a pick's source (repeat; SOURCE may be A+B for a union)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the history index in the cache (the same report, slower)",
    )
    add_report_options(p)


def parse_map(items: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        pick, sep, src = item.partition("=")
        if not sep or not pick or not src:
            raise UsageError(f"--map expects PICK=SOURCE, got {item!r}")
        out.setdefault(pick, []).extend(s for s in src.split("+") if s)
    return out


def run(args: argparse.Namespace) -> int:
    check_output_path(args)
    mapping = parse_map(args.map)
    repo = repo_of(args)
    from harness.infra.history_index import open_index

    if not args.no_cache:
        from harness.git.history import ask_git_version

        ask_git_version(repo)  # (the index's stamp names it: answered beside the refs below)

    base_name, head_name = range_of(args)
    # Every ref the run names, resolved in one process (a bad one is left to ``resolve``'s error).
    repo.preresolve([base_name, head_name, args.source, args.source_branch or ""], ("commit",))
    base, head = repo.resolve(base_name), repo.resolve(head_name)
    index = open_index(repo, enabled=not args.no_cache)
    if index is None:
        return _judge(args, repo, mapping, (base_name, head_name, base, head), None)
    # The index is written once the report is out (``finish``), or once the run failed after it
    # learned something (a reader that left, a report that cannot be written, a harness error);
    # not on bad input, and not on Ctrl-C.
    index.defer()
    try:
        code = _judge(args, repo, mapping, (base_name, head_name, base, head), index)
    except UsageError:
        raise
    except Exception:
        index.finish()
        raise
    index.finish()
    return code


def _judge(
    args: argparse.Namespace,
    repo: GitRepo,
    mapping: dict[str, list[str]],
    named: tuple[str, str, str, str],
    index: HistoryIndex | None,
) -> int:
    """The report of the range (``named``: base and head as named and resolved), through the
    index where there is one (its writes deferred by ``run``)."""
    from harness.checks.judgeable import judge_range

    base_name, head_name, base, head = named
    # What the causes' actions call HEAD (a typed id: its branch) is git's work alone: asked now,
    # beside this run's, not after it.
    from harness.git.names import head_name as called_as
    from harness.infra.background import Background

    called = Background(called_as, repo, head_name)
    # An answer the history index keeps for these very commits needs no check module; else the
    # check's modules (~40 ms of imports) load while git answers the range's first questions.
    parts = _parts(repo, base, head, args) if index is not None and not mapping else None
    # A JSON report of an answer kept whole writes the section's kept text: of the section itself
    # only what the verdict reads is loaded then.
    text: bytes | None = None
    kept: Checked[FidelityResult] | None = None
    if index is not None and parts is not None:
        from harness.infra.history_answers import kept_fidelity

        text = index.kept_text(parts) if args.format == "json" else None
        kept = kept_fidelity(index, parts, whole=text is None)
    loading = None
    if kept is None:
        loading = threading.Thread(
            target=importlib.import_module, args=("harness.checks.fidelity.check",), daemon=True
        )
        loading.start()
    if index is not None:
        index.prime_range(base, head)  # the range's walk, merge base and commits, where kept
    facts = judge_range(
        repo, base_name, head_name, source=args.source, source_branch=args.source_branch, picks=True
    )
    if kept is not None:
        section = kept.section
        if index is not None:  # (written only now: the input is valid)
            index.keep_range(base, head)
            index.save()
    else:
        if loading is not None:
            loading.join()
        from harness.checks.fidelity.check import fidelity_section

        # Its renderers escape what is not UTF-8 as they write (the JSON writer in one scan); its
        # findings are escaped now: the verdict's causes word and clip them before any renderer.
        section = fidelity_section(
            repo, base, head, args.source, args.source_branch, mapping, index=index, escaped=False
        )
        from harness.report.printable import printable

        printable(section.findings)  # (dataclasses: escaped in place)
    inputs = {
        "range": f"{base_name}..{head_name}",
        "base": base,
        "head": head,
        **facts.header(),
        "source": args.source,
    }
    if args.source_branch:
        inputs["source branch"] = args.source_branch
    report = Report(
        "Cherry-pick fidelity", command_line(getattr(args, "_argv", None)), [section], inputs
    )
    rendered = _rendered(index, parts, args.format, section, text if kept is not None else None)
    return emit(args, report, head=called.result(), rendered=rendered)


def _rendered(
    index: HistoryIndex | None,
    parts: Sequence[Any] | None,
    fmt: str,
    section: Section,
    kept_text: bytes | None,
) -> dict[int, bytes] | None:
    """The section's JSON text for ``--format json``: the text kept beside a served answer, else
    rendered now and kept beside the answer (where the index keeps one)."""
    if index is None or parts is None or fmt != "json":
        return None
    if kept_text is None:
        kept_text = _section_utf8(index, section)
        index.later(_keep_text, index, parts, kept_text)
    return {id(section): kept_text}


def _keep_text(index: HistoryIndex, parts: Sequence[Any], text: bytes) -> None:
    index.keep_text(parts, text.decode("utf-8"))  # (decoded by the index's writer: after the run)


def _section_utf8(index: HistoryIndex, section: Section) -> bytes:
    """The section's JSON text (``section_text``, UTF-8), each entry of ``data.picks`` written as
    the text an earlier run kept for an equal entry (``report/json_items.py``), else rendered now;
    this run's entries are kept for the next (``infra/history_fragments.py``)."""
    from harness.infra.history_fragments import fragments, keep_fragments
    from harness.report.json import section_utf8
    from harness.report.json_items import item_key, items_text, with_items

    picks = section.data.get("picks")
    if not isinstance(picks, list) or not picks:
        return section_utf8(section)
    keys = list(map(item_key, picks))
    items, texts = items_text(picks, keys, fragments(index, [k for k in keys if k is not None]))
    index.later(keep_fragments, index, texts)
    return section_utf8(with_items(section, "picks", items))


def _parts(repo: GitRepo, base: str, head: str, args: argparse.Namespace) -> tuple[Any, ...] | None:
    """What the index keeps this range's answer by, where every ref resolves (else judge_range
    says why not)."""
    from harness.infra.history_answers import fidelity_parts

    source = repo.try_resolve(args.source)
    tip = repo.try_resolve(args.source_branch) if args.source_branch else None
    if source is None or (args.source_branch and tip is None):
        return None
    return fidelity_parts(base, head, source, args.source, args.source_branch, tip)
