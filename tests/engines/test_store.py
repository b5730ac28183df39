"""The store builds atomically: only complete environments are listed or reused."""

import pytest

from harness.engines.store import MANIFEST, EngineStore, EnvKey

KEY = EnvKey("sglang", "0.5.18", "params")


def test_failed_build_leaves_nothing(tmp_path):
    store = EngineStore(tmp_path)

    def broken(path):
        path.mkdir()
        (path / "half").write_text("x")
        raise RuntimeError("pip failed")

    with pytest.raises(RuntimeError):
        store.build(KEY, broken)
    assert store.get(KEY) is None
    assert store.list() == []
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


def test_build_once_then_reuse(tmp_path):
    store = EngineStore(tmp_path)
    calls = []

    def builder(path):
        calls.append(path)
        path.mkdir()
        return {"fingerprint": "abc", "packages": ["sglang==0.5.18"]}

    env, built = store.build(KEY, builder)
    again, built_again = store.build(KEY, builder)
    assert (built, built_again) == (True, False)
    assert len(calls) == 1
    assert env.path == tmp_path / "sglang-0.5.18-params" and (env.path / MANIFEST).is_file()
    assert [e.key for e in store.list()] == [KEY]
    assert again.fingerprint == "abc"
    _, rebuilt = store.build(KEY, builder, rebuild=True)
    assert rebuilt and len(calls) == 2


def test_root_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_ENGINE_DIR", str(tmp_path / "e"))
    assert EngineStore().root == tmp_path / "e"
    monkeypatch.delenv("HARNESS_ENGINE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert EngineStore().root == tmp_path / "c" / "harness" / "engines"


def test_a_killed_build_is_removed_by_the_next_build_of_that_version(tmp_path):
    store = EngineStore(tmp_path)
    left = tmp_path / f".{KEY.name}.building-999999"  # a SIGKILLed build (its lock is free again)
    left.mkdir()
    (left / "half").write_text("x")

    def builder(path):
        path.mkdir()
        return {"fingerprint": "abc"}

    store.build(KEY, builder)
    assert not left.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{KEY.name}.lock", KEY.name]
