"""Whole fidelity answers in the history index: kept by what they are a function of (the resolved
commits, the names the section shows, the policy's release paths) and served back checked.
Imports no check: a run served whole skips their import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.infra.history_codec import pack

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


def kept_fidelity(index: HistoryIndex, parts: Sequence[Any]) -> Checked[FidelityResult] | None:
    """The fidelity answer kept for ``parts``, checked (a Section, pick and commit lists of
    strings), or None. Imports no check: a run served whole skips their import."""
    from harness.checks.result import Checked, FidelityResult
    from harness.report.model import Section

    served: list[Checked[FidelityResult]] = []

    def valid(value: Any) -> bool:
        try:
            section, result = value["section"], FidelityResult.from_json(value["result"])
        except (TypeError, KeyError, IndexError):
            return False
        if not isinstance(section, Section) or result is None:
            return False
        served.append(Checked(result, section))
        return True

    index.kept(parts, valid)
    return served[0] if served else None


def keep_fidelity(
    index: HistoryIndex, parts: Sequence[Any], checked: Checked[FidelityResult]
) -> None:
    """Keep a fidelity answer for ``parts`` (not kept: a section the encoding does not know)."""
    try:
        section = pack(checked.section)
    except TypeError:
        return
    index.keep(parts, {"section": section, "result": checked.result.as_json()})
