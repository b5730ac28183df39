"""The user's git configuration does not change what the harness reads: a report made under an
unusual global config is the one made without it (and the history index it fills is the same)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ODD = """[i18n]
\tlogOutputEncoding = ISO-8859-1
[grep]
\tcolumn = true
\tlineNumber = true
\tfullName = true
[log]
\tabbrevCommit = true
\tdecorate = full
[core]
\tabbrev = 5
"""


def _body(text: str) -> str:
    doc = json.loads(text)
    for k in ("generated", "date", "command"):
        doc.pop(k, None)
    return json.dumps(doc, sort_keys=True, ensure_ascii=False)


def test_reports_do_not_follow_the_user_s_git_config(
    builder, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builder.commit("init", {"f.py": "x = 1\nlog('ready')\n"})
    builder.branch("rel")
    src = builder.commit("Fix: ünïcode é (#7)", {"f.py": "x = 2\nlog('ready')\n"})
    builder.checkout("rel")
    builder.cherry_pick(src, "-x")
    builder.checkout("main")
    odd = tmp_path / "odd.gitconfig"
    odd.write_text(ODD)
    runs = []
    for config, cache in ((str(tmp_path / "none"), "c1"), (str(odd), "c2")):
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", config)
        monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / cache))
        got = []
        for argv in (
            ["fidelity", "main~1..rel", "--source", "main"],
            ["trace", "ready", "--ref", "rel", "--ref", "main"],
        ):
            code, out, err = run_cli(*argv, "--repo", str(builder.path), "--format", "json")
            assert code in (0, 1), err
            got.append(_body(out))
        runs.append(got)
    assert runs[0] == runs[1]
    assert "Fix: ünïcode é (#7)" in runs[1][0]
