"""#26: a pick is P1 only for source lines the release ships without (code, docs); what it lacks
in CI/tooling files, in files the release does not have, or carries in another file is P2."""

from __future__ import annotations

from harness.checks.fidelity import fidelity_section
from harness.git.repo import GitRepo

CODE = "".join(f"def f_{i}():\n    return {i}\n" for i in range(6))
NOTE = "# the sysmon core is slow here\n# see the upstream issue 2082\n"
WF = "".join(f"      - run: step number {i}\n" for i in range(4))


def _sev(section, sha):
    (f,) = [f for f in section.findings if f.key.startswith(sha) and f.kind.startswith("pick-")]
    return f.severity, f.detail


def test_what_a_pick_lacks_decides_its_severity(builder):
    builder.commit(
        "base",
        {
            "core.py": CODE,
            ".github/workflows/ci.yml": WF,
            "pyproject.toml": "[tool.cov]\nbranch = true\n",
            ".coveragerc": "[run]\nbranch = 1\n",
        },
    )
    builder.branch("release")
    fix = CODE.replace("return 1", "return 11")
    ci = builder.commit(
        "Fix f_1 and CI (#1)",
        {"core.py": fix, ".github/workflows/ci.yml": WF.replace("number 2", "number 22")},
    )
    code = builder.commit(
        "Fix f_2 and f_3 (#2)",
        {"core.py": fix.replace("return 2", "return 22").replace("return 3", "return 33")},
    )
    new_file = builder.commit(
        "Fix f_4, and the new module (#3)",
        {
            "core.py": fix.replace("return 2", "return 22")
            .replace("return 3", "return 33")
            .replace("return 4", "return 44"),
            "newmod.py": "".join(f"value_{i} = compute_{i}()\n" for i in range(3)),
        },
    )
    moved = builder.commit(
        "Use the ctrace core (#4)",
        {
            "pyproject.toml": "[tool.cov]\nbranch = true\n# the sysmon core is slow here\ncore = 'ctrace'\n"
        },
    )
    builder.checkout("release")
    base = builder.rev("HEAD")
    picks = {}
    builder.write("core.py", fix)
    picks["ci"] = builder.commit("Fix f_1 (#1)")  # without the workflow line
    builder.write("core.py", fix.replace("return 2", "return 22"))
    picks["code"] = builder.commit("Fix f_2 (#2)")  # lacks f_3: code
    builder.write("core.py", fix.replace("return 2", "return 22").replace("return 4", "return 44"))
    picks["new_file"] = builder.commit("Fix f_4 (#3)")  # adapted; newmod.py is not on the release
    picks["moved"] = builder.commit(
        "Use the ctrace core (#4)",
        {".coveragerc": "[run]\nbranch = 1\n" + NOTE + "core = ctrace\n"},
    )
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    sev, detail = _sev(s, picks["ci"])
    assert sev == "P2" and "CI or tooling" in detail
    assert _sev(s, picks["code"])[0] == "P1"  # the real partial fix stays P1
    sev, detail = _sev(s, picks["new_file"])  # newmod.py is not on the release
    assert sev == "P2" and "files the release does not have" in detail
    sev, detail = _sev(s, picks["moved"])  # pyproject.toml's lines went into .coveragerc
    assert sev == "P2" and "in another file" in detail
    assert [p["status"] for p in s.data["picks"]] == ["subset", "subset", "subset", "adapted"]
    del ci, code, new_file, moved
