"""The section's columns, each a column tree as probe columns are (a ref plus edits):

* ``without_fix``: BASE with the picks' versions of the test files (and the source's version of
  the files the pick did not carry) — the control that the tests detect the fix;
* ``head``: HEAD, with the source's version of the test files the pick did not carry (a partial
  backport is caught by the source's own tests);
* ``head_source_tests``: HEAD with the source's version of every test file the source changed,
  only where the pick carries one of them in another version (a pick cut before the PR's last
  commit: the source's own tests catch what it lacks);
* ``source_parent``: the first parent of the oldest source, with the source's test files;
* ``source``: the newest source commit.
"""

from __future__ import annotations

from collections.abc import Collection

from harness.checks.fix_tests.files import Selection, Sources
from harness.columns.edits import Edit
from harness.columns.trees import Column

ORDER = ("without_fix", "head", "head_source_tests", "source_parent", "source")


def _take(files: list[tuple[str, str]]) -> list[Edit]:
    return [Edit(kind="checkout", path=p, commit=c) for p, c in files]


def columns_for(
    base: str, head: str, sources: Sources, sel: Selection, differ: Collection[str] = ()
) -> list[Column]:
    """The columns this selection runs in (source columns only where a source was found)."""
    both = sel.files + sel.support  # a changed conftest.py travels with the tests
    pick_side = [(f.path, head) for f in both if f.origin != "source"]
    source_only = [(f.path, str(sources.newest)) for f in both if f.origin == "source"]
    cols = [
        Column(
            "without_fix",
            base,
            _take(pick_side + source_only),
            role="control",
            description="BASE + the tests (the revert control)",
        ),
        Column(
            "head",
            head,
            _take(source_only),
            role="control" if source_only else "ref",
            description="HEAD" + (" + the source's tests it lacks" if source_only else ""),
        ),
    ]
    if sources.newest and sources.parent:
        source_side = [(f.path, sources.newest) for f in both if f.origin != "pick"]
        if differ:  # "both" files whose source version is not HEAD's
            cols.append(
                Column(
                    "head_source_tests",
                    head,
                    _take(source_side),
                    role="control",
                    description="HEAD + the source's version of its tests",
                )
            )
        cols.append(
            Column(
                "source_parent",
                sources.parent,
                _take(source_side),
                role="control",
                description="the source's parent + the source's tests",
            )
        )
        cols.append(Column("source", sources.newest, description="the source"))
    return cols
