"""Tests that need the package index: skipped with the reason when it does not answer, failed
instead under CI (``HARNESS_REQUIRE_NETWORK=1``, set by ``.ci/run``), where a skip would hide a
tier that must run."""

from __future__ import annotations

import os
import urllib.request
from functools import lru_cache

import pytest

REQUIRE_ENV = "HARNESS_REQUIRE_NETWORK"
INDEX = "https://pypi.org/simple/"


@lru_cache(maxsize=4)
def index_unreachable(project: str = "sglang") -> str | None:
    """None when the index (``PIP_INDEX_URL``, else PyPI) answers for ``project``, else why not."""
    index = os.environ.get("PIP_INDEX_URL") or INDEX
    try:
        urllib.request.urlopen(f"{index.rstrip('/')}/{project}/", timeout=10).close()
        return None
    except OSError as exc:
        return f"package index not reachable ({exc.__class__.__name__}: {index})"


def need_index(project: str = "sglang") -> None:
    """Skip the calling test when the index does not answer (fail instead under CI)."""
    why = index_unreachable(project)
    if why is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{why}, and {REQUIRE_ENV}=1 requires it", pytrace=False)
    pytest.skip(why)
