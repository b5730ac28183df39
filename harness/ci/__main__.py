"""``python -m harness.ci STEP``: one step of the GitHub Action (``harness/ci/steps.py``)."""

from __future__ import annotations

import sys

from harness.ci.steps import STEPS


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in STEPS:
        sys.stderr.write(f"usage: python -m harness.ci {{{'|'.join(STEPS)}}}\n")
        return 2
    return STEPS[args[0]]()


if __name__ == "__main__":
    raise SystemExit(main())
