"""A repository with known backports, built for the fidelity tests (real git via RepoBuilder).

main carries the sources; release forks before them and gets one pick per status and pitfall.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.testing.repos import RepoBuilder

CORE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(14))


def lines(n: int, tag: str) -> str:
    return "".join(f"value_{tag}_{i} = compute('{tag}', {i})\n" for i in range(n))


@dataclass
class Scenario:
    b: RepoBuilder
    base: str = ""
    src: dict[str, str] = field(default_factory=dict)  # name -> source sha on main
    pick: dict[str, str] = field(default_factory=dict)  # name -> pick sha on release
    pr: list[str] = field(default_factory=list)  # PR-branch commits, oldest first
    merge: str = ""


def build(b: RepoBuilder) -> Scenario:
    sc = Scenario(b)
    b.commit(
        "base",
        {
            "core.py": CORE,
            "util.py": lines(30, "u"),
            "tests/test_core.py": "def test(): pass\n",
            "docs.txt": "hello\n",
            "logo.bin": b"\x89PNG\0\x01\x02",
            "latin.txt": b"caf\xe9 ok\n",
            "pkg/old_name.py": lines(10, "r"),
            "feature.py": "# feature\n",
        },
    )
    fork = b.rev("HEAD")
    # main moves on: the first lines of util.py change, so picks near them see other context.
    b.commit("drift (#10)", {"util.py": "# header drift\n" + lines(30, "u")})
    c1 = CORE.replace("return x + 3\n", "return x + 3  # fixed\n")
    sc.src["identical"] = b.commit("Fix f3 (#3001)", {"core.py": c1})
    sc.src["context"] = b.commit(
        "Tune u1 (#3002)",
        {
            "util.py": "# header drift\n"
            + lines(30, "u").replace("compute('u', 1)", "compute('u', 100)")
        },
    )
    c2 = c1.replace(
        "def f5(x):\n    return x + 5\n",
        "def f5(x):\n    if x:\n        return x + 5\n    return 0\n",
    )
    sc.src["ws"] = b.commit("Guard f5 (#3003)", {"core.py": c2})
    c3 = c2.replace("return x + 7\n", "return x + 7 + 70\n")
    sc.src["subset"] = b.commit(
        "Fix f7 and docs (#3004)",
        {
            "core.py": c3,
            "tests/test_core.py": "def test(): pass\ndef test7(): assert True\n",
            "docs.txt": "hello\nf7 fixed\n",
        },
    )
    c4 = c3.replace("return x + 9\n", "return x + 9 + 90\n")
    sc.src["superset"] = b.commit("Fix f9", {"core.py": c4})
    c5 = c4.replace("return x + 10\n", "return x + 10 + 100\n").replace(
        "return x + 11\n", "return x + 11 + 110\n"
    )
    sc.src["adapted"] = b.commit("Fix f10 and f11 (#3006)", {"core.py": c5})
    sc.src["binary"] = b.commit("New logo (#3007)", {"logo.bin": b"\x89PNG\0\x09\x09"})
    sc.src["latin"] = b.commit("Latin-1 fix (#3008)", {"latin.txt": b"caf\xe9 ok\nna\xefve \xff\n"})
    c6 = c5.replace("return x + 12\n", "return x + 12 + 120\n")
    sc.src["two_a"] = b.commit("Fix f12 (#3009)", {"core.py": c6})
    c7 = c6.replace("return x + 13\n", "return x + 13 + 130\n")
    sc.src["two_b"] = b.commit("Fix f13 (#3010)", {"core.py": c7})
    sc.src["rename"] = b.commit(
        "Tune r4 (#3011)",
        {"pkg/old_name.py": lines(10, "r").replace("compute('r', 4)", "compute('r', 44)")},
    )
    b.commit("unrelated (#1)", {"other.py": "print('an unrelated line here')\n"})
    b.commit("Docs touch (#4004)", {"README": "a readme that shares nothing\n"})
    # A PR branch with three commits, squash-merged on main as one source.
    pr_fork = b.rev("HEAD")
    b.branch("pr", pr_fork)
    b.checkout("pr")
    f1 = "# feature\ndef feature_one():\n    return 'one'\n"
    sc.pr.append(b.commit("feature: one", {"feature.py": f1}))
    f2 = f1 + "def feature_two():\n    return 'two'\n"
    sc.pr.append(b.commit("feature: two", {"feature.py": f2}))
    f3 = f2 + "def feature_three():\n    return 'three'\n"
    sc.pr.append(b.commit("feature: three, after the pick was cut", {"feature.py": f3}))
    b.checkout("main")
    sc.src["squash"] = b.commit("Feature (#3020)", {"feature.py": f3})

    # release: rename a file first (part of BASE), then the picks.
    b.branch("release", fork)
    b.checkout("release")
    b.move("pkg/old_name.py", "pkg/new_name.py")
    b.commit("release: rename module")
    sc.base = b.rev("HEAD")
    sc.pick["identical"] = b.cherry_pick(sc.src["identical"], "-x")  # via trailer
    sc.pick["context"] = b.commit(
        "[release/1.2] Tune u1 (#4002) (#3002)",
        {"util.py": lines(30, "u").replace("compute('u', 1)", "compute('u', 100)")},
    )
    sc.pick["ws"] = b.commit(
        "Guard f5 for release",
        {
            "core.py": b.path.joinpath("core.py")
            .read_text()
            .replace(
                "def f5(x):\n    return x + 5\n",
                "def f5(x):\n    if x:\n      return x + 5\n    return 0\n",
            )
        },
    )
    cur = b.path.joinpath("core.py").read_text()
    sc.pick["subset"] = b.commit(
        "Fix f7 and docs (#3004) (#4004)",
        {"core.py": cur.replace("return x + 7\n", "return x + 7 + 70\n")},
    )
    cur = b.path.joinpath("core.py").read_text()
    sc.pick["superset"] = b.commit(
        "Fix f9 on release",
        {
            "core.py": cur.replace("return x + 9\n", "return x + 9 + 90\n"),
            "compat.py": "release_only_shim = compute('shim', 1)\n",
        },
    )
    cur = b.path.joinpath("core.py").read_text()
    sc.pick["adapted"] = b.commit(
        "Fix f10 and f11 (#3006) (#4006)",
        {
            "core.py": cur.replace("return x + 10\n", "return x + 10 + 100\n").replace(
                "return x + 11\n", "return x + 11 + 111\n"
            )
        },
    )
    sc.pick["binary"] = b.cherry_pick(sc.src["binary"])
    sc.pick["latin"] = b.cherry_pick(sc.src["latin"])
    cur = b.path.joinpath("core.py").read_text()
    sc.pick["two"] = b.commit(
        "Fix f12 and f13 (#3009 and #3010)",
        {
            "core.py": cur.replace("return x + 12\n", "return x + 12 + 120\n").replace(
                "return x + 13\n", "return x + 13 + 130\n"
            )
        },
    )
    sc.pick["rename"] = b.cherry_pick(sc.src["rename"], "-x")
    sc.pick["stray"] = b.commit("Release notes (#1)", {"NOTES": "release 1.2 notes only here\n"})
    sc.pick["empty"] = b.commit("Fix f3 (#3001)", allow_empty=True)
    sc.pick["squash"] = b.commit(
        "Feature (#3020) (#4020)",
        {
            "feature.py": "# feature\ndef feature_one():\n    return 'one'\ndef feature_two():\n    return 'two'\n"
        },
    )
    # A merge commit inside the range.
    b.branch("side", "HEAD")
    b.checkout("side")
    sc.pick["side"] = b.commit("release-only side fix", {"side.txt": "side\n"})
    b.checkout("release")
    sc.merge = b.merge("side", "Merge side into release")
    return sc


def test_scenario_has_a_merge_inside_the_range(tmp_path):
    sc = build(RepoBuilder(tmp_path / "r"))
    parents = sc.b.repo.commit(sc.merge).parents
    assert len(parents) == 2 and sc.b.repo.is_ancestor(sc.base, sc.merge)
