"""Content search narrows candidates before reading diffs: patch ids only over commits whose patch
names the pick's paths, similarity only within a year of the pick (issue 13)."""

from __future__ import annotations

from harness.checks.fidelity.check import fidelity_section
from harness.git import GitRepo
from harness.git.patch import diff_many
from harness.git.picks import patch_paths

DAY = 86400
T0 = 1_700_000_000
LINES = "".join(f"value_{i} = compute({i})\n" for i in range(12))


def _adapted_pick(builder, days_later: int) -> tuple[str, str]:
    """A source on main that changes ten lines, and a pick on release that carries nine of them
    and adapts the tenth (no number, no trailer, its own subject and author date)."""
    builder.commit("base", {"m.py": LINES, "other.py": "x = 1\n"}, author_time=T0)
    builder.branch("release")
    new = LINES
    for i in range(10):
        new = new.replace(f"compute({i})\n", f"compute({i}, fast=True)\n")
    src = builder.commit("Speed up the computations", {"m.py": new}, author_time=T0 + DAY)
    builder.commit("Unrelated", {"other.py": "x = 2\n"}, author_time=T0 + 2 * DAY)
    builder.checkout("release")
    adapted = new.replace("compute(9, fast=True)", "compute(9, fast=False)")
    when = T0 + DAY + days_later * DAY
    pick = builder.commit("Faster computations on 1.x", {"m.py": adapted}, author_time=when)
    return src, pick


def _pick(builder) -> dict:
    section = fidelity_section(GitRepo(builder.path), builder.rev("release~1"), "release", "main")
    return section.data["picks"][0]


def test_similarity_finds_an_adapted_pick_a_month_after_its_source(builder):
    src, pick = _adapted_pick(builder, 30)
    found = _pick(builder)
    assert found["pick"] == pick
    assert (found["source_via"], found["sources"], found["status"]) == (
        "similarity",
        [src],
        "adapted",
    )


def test_similarity_does_not_look_past_a_year(builder):
    _, pick = _adapted_pick(builder, 400)
    found = _pick(builder)
    assert found["pick"] == pick
    assert (found["source_via"], found["sources"], found["status"]) == (None, [], "no-source")


def test_an_exact_pick_is_found_by_patch_id_whatever_its_age(builder):
    builder.commit("base", {"m.py": LINES}, author_time=T0)
    builder.branch("release")
    new = LINES.replace("compute(3)", "compute(3, fast=True)")
    src = builder.commit("Speed up three", {"m.py": new}, author_time=T0 + DAY)
    builder.checkout("release")
    builder.commit("Three, faster", {"m.py": new}, author_time=T0 + 900 * DAY)
    found = _pick(builder)
    assert (found["source_via"], found["sources"], found["status"]) == (
        "patch-id",
        [src],
        "identical",
    )


def test_patch_paths_name_what_the_patch_names(builder):
    body = "".join(f"line {i} of a file long enough to be found renamed\n" for i in range(20))
    builder.commit("base", {"a.py": body, "gone.py": "x = 1\n", "kept.py": "k = 1\n"})
    builder.remove("gone.py")
    builder.move("a.py", "b.py")
    builder.write("new.py", "n = 1\n")
    builder.write("kept.py", "k = 2\n")
    change = builder.commit("rename, delete, add, modify")
    repo = GitRepo(builder.path)
    named = patch_paths(repo, [change, builder.rev("HEAD~1")])
    assert named[change] == {"b.py", "gone.py", "new.py", "kept.py"}
    (patch,) = diff_many(repo, [(change, None)])
    assert named[change] == {f.path for f in patch.files}  # the same as the patch itself
    assert named[builder.rev("HEAD~1")] == {"a.py", "gone.py", "kept.py"}  # a root commit


def test_keys_of_files_is_the_sum_of_each_file_s_signed_lines():
    """``keys_of`` (and the follow-ups' keys of many commits, one pass over their files) counts
    what ``signed_keys`` counts file by file, a binary or line-less file as one token."""
    import random
    from collections import Counter

    from harness.checks.fidelity.compare import signed_keys
    from harness.checks.fidelity.patches import keys_of
    from harness.git.patch import FilePatch

    r = random.Random(11)
    words = [b"x = 1", b"  x  =  1", b"", b"   ", b"\t", b"y", b"caf\xe9", b"y "]

    def patch(i: int) -> FilePatch:
        lines = [r.choice([b"+", b"-", b" "]) + r.choice(words) for _ in range(r.randint(0, 6))]
        return FilePatch(f"p{i}.py", f"p{i}.py", binary=r.random() < 0.1, hunks=[lines])

    for _ in range(300):
        files = [patch(i % 3) for i in range(r.randint(0, 5))]
        want: Counter[tuple[str, bytes]] = Counter()
        for f in files:
            keys = signed_keys(f.added, f.removed)
            if f.binary or not keys:
                keys[("bin" if f.binary else "file", f.path.encode())] += 1
            want += keys
        assert keys_of(files) == want
