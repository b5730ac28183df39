"""#26: a pick is P1 only for source lines the release ships without (code, docs); what it lacks
in CI/tooling files, in files the release does not have, or carries in another file is P2."""

from __future__ import annotations

from harness.checks.fidelity.check import fidelity_section
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


def test_whitespace_and_what_the_release_already_has_are_not_lacking(builder):
    """numpy 2.3.x: a subset pick that differs from its source only in the indentation of its
    lines and a .clang-format line, and one whose source's submodule-like bump an earlier pick
    already brought, are P2; a real lack in the same shape stays P1 (control)."""
    macro = "#ifdef A\n# define X 0\n#endif\n"
    builder.commit("base", {"alloc.c": macro, "vendor.txt": "v1\n", "core.py": "x = 1\n"})
    builder.branch("release")
    src = builder.commit(
        "Fix macro (#5)",
        {
            "alloc.c": "#ifdef A\n#    define X 0\n#else\n#    define X 1\n#endif\n",
            ".clang-format": "IndentPPDirectives: AfterHash\n",
        },
    )
    bump = builder.commit("Bump vendor (#6)", {"vendor.txt": "v2\n"})
    both = builder.commit("Use v2 and fix core (#7)", {"vendor.txt": "v3\n", "core.py": "x = 2\n"})
    builder.checkout("release")
    base = builder.rev("HEAD")
    ws = builder.commit(
        "Fix macro", {"alloc.c": "#ifdef A\n  #define X 0\n#else\n  #define X 1\n#endif\n"}
    )
    builder.cherry_pick(bump, "-x")
    builder.write("vendor.txt", "v3\n")
    builder.commit("Vendor v3")  # an own commit brings the source's vendor.txt first
    lean = builder.commit(
        f"Use v2 and fix core\n\n(cherry picked from commit {both})", {"core.py": "x = 2\n"}
    )
    s = fidelity_section(GitRepo(builder.path), base, "release", "main")
    sev, detail = _sev(s, ws)
    assert sev == "P2" and "whitespace" in detail, detail
    picks = {p["pick"]: p for p in s.data["picks"]}
    assert picks[lean]["source"] == both and picks[lean]["status"] == "subset"
    sev, detail = _sev(s, lean)
    assert sev == "P2" and "already had" in detail, detail
    del src
