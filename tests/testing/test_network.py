"""The package-index gate: a skip with the reason, or a failure when CI requires the index."""

from __future__ import annotations

import pytest

from harness.testing import network


@pytest.fixture
def dead_index(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")  # discard port: refused
    network.index_unreachable.cache_clear()
    yield
    network.index_unreachable.cache_clear()


def test_unreachable_index_skips_with_the_reason(dead_index, monkeypatch) -> None:
    monkeypatch.delenv(network.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception) as out:
        network.need_index()
    assert "package index not reachable" in str(out.value)
    assert "127.0.0.1:9" in str(out.value)


def test_unreachable_index_fails_under_ci(dead_index, monkeypatch) -> None:
    monkeypatch.setenv(network.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception) as out:
        network.need_index()
    assert f"{network.REQUIRE_ENV}=1 requires it" in str(out.value)
