"""Whole fidelity answers in the history index: kept by what they are a function of (the resolved
commits, the names the section shows, the policy's release paths) and served back checked.
Imports no check: a run served whole skips their import."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from harness.infra.history_codec import pack, unpack

if TYPE_CHECKING:
    from harness.checks.result import Checked, FidelityResult
    from harness.infra.history_index import HistoryIndex


def fidelity_parts(
    base: str,
    head: str,
    source: str,
    source_name: str,
    source_branch: str | None,
    branch_tip: str | None,
    release_paths: Sequence[str] = (),
) -> tuple[Any, ...]:
    """What a fidelity answer is a function of, besides the stamp: the resolved commits, the
    names the section shows and the policy's release paths."""
    return (
        "fidelity",
        base,
        head,
        source,
        source_name,
        source_branch,
        branch_tip,
        list(release_paths),
    )


# A section's parts no verdict reads (the rest, with its findings, is its head): kept apart, as
# JSON text within the answer, and read only when the section is wanted whole.
_BODY = ("tables", "controls", "details", "data", "judged")


def kept_fidelity(
    index: HistoryIndex, parts: Sequence[Any], whole: bool = True
) -> Checked[FidelityResult] | None:
    """The fidelity answer kept for ``parts``, checked (a Section, pick and commit lists of
    strings), or None. Imports no check: a run served whole skips their import. Not ``whole``:
    the section without its tables, controls, details, data and judged items (for a run that
    writes the section's kept text and reads only its findings and what it did not verify)."""
    from harness.checks.result import Checked, FidelityResult
    from harness.report.model import Section

    served: list[Checked[FidelityResult]] = []

    def valid(value: Any) -> bool:
        try:
            section, result = value["section"], FidelityResult.from_json(value["result"])
            body = value["body"]
        except (TypeError, KeyError, IndexError):
            return False
        if not isinstance(section, Section) or result is None or type(body) is not str:
            return False
        if whole:
            try:
                got = unpack(body)
            except (ValueError, TypeError, KeyError, RecursionError):
                return False
            if not isinstance(got, dict) or sorted(got) != sorted(_BODY):
                return False
            if not all(isinstance(got[k], dict if k == "data" else list) for k in _BODY):
                return False
            for k in _BODY:
                setattr(section, k, got[k])
        served.append(Checked(result, section))
        return True

    index.kept(parts, valid)
    return served[0] if served else None


def keep_fidelity(
    index: HistoryIndex,
    parts: Sequence[Any],
    checked: Checked[FidelityResult],
    escaped: bool = True,
) -> None:
    """Keep a fidelity answer for ``parts`` (not kept: a section the encoding does not know),
    its text that is not UTF-8 escaped (``report.printable``) where it was not (``escaped``)."""
    section = checked.section
    if not escaped:  # (by the index's writer, after the run: off the run's time)
        from harness.report.printable import printable

        printable(section)
    try:
        head = pack(replace(section, **{k: type(getattr(section, k))() for k in _BODY}))
        body = pack({k: getattr(section, k) for k in _BODY})
        text = json.dumps(body, separators=(",", ":"), check_circular=False)
    except (TypeError, ValueError):
        return
    index.keep(parts, {"section": head, "body": text, "result": checked.result.as_json()})
