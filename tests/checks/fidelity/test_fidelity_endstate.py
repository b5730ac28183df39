"""End state from the fork point, in order (issue #10 item 3), on repositories built with real git."""

from __future__ import annotations

from harness.checks.fidelity.check import fidelity_section
from harness.demo import build as build_demo
from harness.git import GitRepo

BODY = "".join(f"line_{i} = {i}\n" for i in range(12))


def _identical_picks(builder):
    builder.commit("base", {"f.py": BODY, "g.py": "g = 1\n"})
    builder.branch("release")
    # main moves first (not picked): a pre-existing difference in f.py.
    builder.commit("Header (#1)", {"f.py": "# header\n" + BODY})
    src = builder.commit(
        "Fix line 5 (#2)", {"f.py": "# header\n" + BODY.replace("line_5 = 5", "line_5 = 55")}
    )
    builder.commit("Later on main (#3)", {"g.py": "g = 2\n"})
    builder.checkout("release")
    fork = builder.rev("HEAD")
    pick = builder.cherry_pick(src, "-x")
    return fork, src, pick


def test_identical_pick_has_the_same_end_state_under_either_base(builder):
    fork, src, pick = _identical_picks(builder)
    repo = GitRepo(builder.path)
    verdicts = []
    for base in (fork, "main"):  # fork..release and main..release name the same picks
        s = fidelity_section(repo, base, "release", "main")
        (p,) = s.data["picks"]
        assert (p["pick"], p["source"], p["status"]) == (pick, src, "identical")
        (e,) = p["end_state"]
        verdicts.append((e["status"], e["pre_existing"], e["other_picks"], e["introduced"]))
        assert not [f for f in s.findings if f.kind == "end-state-introduced"]
    assert verdicts[0] == verdicts[1] == ("pre-existing", 1, 0, 0)


def test_a_moved_line_is_a_difference_and_its_lines_are_shown(tmp_path):
    marks = build_demo(tmp_path / "demo")
    s = fidelity_section(GitRepo(tmp_path / "demo"), "release/1.0", "backport/42", "main", "pr/42")
    pick = next(p for p in s.data["picks"] if p["pick"] == marks["pick42"])
    dec = next(e for e in pick["end_state"] if e["path"] == "serving/decoder.py")
    # Same multiset of lines (the increment only moved), different code: never "same" or 0/0/0.
    assert dec["status"] == "introduced" and dec["introduced"] == 2
    assert sorted(ln for _, ln in dec["lines"]) == ["+        count += 1", "-        count += 1"]
    assert any(
        "serving/decoder.py: end state introduced" in d.summary and "count += 1" in d.body
        for d in s.details
    )


def test_a_file_a_later_pick_renamed_is_read_at_its_new_path(builder):
    builder.commit("base", {"f.py": BODY})
    builder.branch("release")
    src = builder.commit("Fix line 2 (#5)", {"f.py": BODY.replace("line_2 = 2", "line_2 = 22")})
    builder.checkout("release")
    fork = builder.rev("HEAD")
    pick = builder.cherry_pick(src, "-x")
    builder.move("f.py", "g.py")
    builder.commit("Rename f.py on the release")
    s = fidelity_section(GitRepo(builder.path), fork, "release", "main")
    p = next(p for p in s.data["picks"] if p["pick"] == pick)
    assert [(e["path"], e["status"]) for e in p["end_state"]] == [("f.py", "same")]


def test_a_later_pick_that_changes_the_moved_file_counts_as_other_picks(builder):
    builder.commit("base", {"f.py": BODY})
    builder.branch("release")
    src = builder.commit("Fix line 2 (#5)", {"f.py": BODY.replace("line_2 = 2", "line_2 = 22")})
    builder.move("f.py", "g.py")
    builder.commit("Rename (#6)")
    later = builder.commit(
        "Fix line 9 (#7)",
        {"g.py": BODY.replace("line_2 = 2", "line_2 = 22").replace("line_9 = 9", "line_9 = 99")},
    )
    builder.checkout("release")
    fork = builder.rev("HEAD")
    pick = builder.cherry_pick(src, "-x")
    builder.move("f.py", "g.py")
    builder.commit("Rename f.py on the release")
    builder.cherry_pick(later, "-x")
    s = fidelity_section(GitRepo(builder.path), fork, "release", "main")
    p = next(p for p in s.data["picks"] if p["pick"] == pick)
    (e,) = p["end_state"]
    assert (e["path"], e["status"], e["other_picks"], e["introduced"]) == (
        "f.py",
        "other-picks",
        2,
        0,
    )
    assert not [f for f in s.findings if f.kind == "end-state-introduced"]


def test_end_states_started_early_are_the_answer_of_one_call_and_stale_rows_are_redone(builder):
    """Jobs started as sources are found give what one call over the final rows gives; a pick
    started with a row it no longer has (other sources) is computed again from its final row."""
    from harness.checks.fidelity.compare import compare_files
    from harness.checks.fidelity.endstate import EndStateJobs, end_states, file_paths, pick_lines
    from harness.git.patch import diff_many

    builder.commit("base", {"f.py": BODY, "g.py": BODY})
    builder.branch("release")
    builder.commit("Main only (#1)", {"g.py": "# main\n" + BODY})
    srcs = [
        builder.commit(
            f"Fix {n} (#{n + 10})", {"f.py": BODY.replace(f"line_{n} = ", f"line_{n} = 1")}
        )
        for n in (2, 5, 8)
    ]
    builder.checkout("release")
    fork = builder.rev("HEAD")
    picks = [builder.cherry_pick(s, "-x") for s in srcs]
    builder.commit("Release only", {"f.py": (builder.path / "f.py").read_text() + "tail = 1\n"})
    repo = GitRepo(builder.path)
    head = builder.rev("release")
    full = {p.commit: p.files for p in diff_many(repo, [(c, None) for c in picks + srcs])}

    def row(pick: str, src: str):
        return (pick, file_paths(compare_files(full[pick], full[src])), [src])

    final = [row(p, s) for p, s in zip(picks, srcs, strict=True)]
    jobs = EndStateJobs(repo, fork, head)
    jobs.picks({p: full[p] for p in picks})
    every = pick_lines({p: full[p] for p in picks})  # (a job is given only its rows' paths)
    whole = end_states(repo, fork, head, final, every, jobs.renamed)
    jobs.add([row(picks[0], srcs[1])])  # started with a source it will not keep
    jobs.add(final[1:2])
    jobs.finish(final, {p: full[p] for p in picks})
    got = jobs.result()
    assert len(jobs.jobs) == 3  # the stale pick and the one never started went in a last job
    assert {k: [e.as_dict() for e in v] for k, v in got.items()} == {
        k: [e.as_dict() for e in v] for k, v in whole.items()
    }
    # The stale start would have answered differently: the redo is what made them equal.
    stale = end_states(repo, fork, head, [row(picks[0], srcs[1])], every, jobs.renamed)
    assert [e.as_dict() for e in stale[picks[0]]] != [e.as_dict() for e in got[picks[0]]]


def test_ordered_diff_accounts_for_every_line_and_its_place():
    import random

    from harness.checks.fidelity.endstate import diff_at

    rng = random.Random(7)
    for size in (
        0,
        5,
        300,
        3000,
    ):  # small files diff exactly; large ones through unique-line anchors
        for _ in range(20):
            old = [b"l%d" % rng.randrange(max(size, 1)) for _ in range(size)]
            new = list(old)
            for _ in range(rng.randrange(12)):
                op = rng.randrange(3)
                if op == 0 and new:
                    del new[rng.randrange(len(new))]
                elif op == 1:
                    new.insert(rng.randrange(len(new) + 1), b"n%d" % rng.randrange(50))
                elif new:
                    new.insert(rng.randrange(len(new) + 1), new.pop(rng.randrange(len(new))))
            d = diff_at(old, new)
            gone = {pos for line, pos in d if line[:1] == b"-"}
            # Replaying the diff on old gives new: kept lines in order, added lines at their place.
            adds: dict[int, list[bytes]] = {}
            for line, pos in d:
                if line[:1] == b"+":
                    adds.setdefault(pos, []).append(line[1:])
            replay = [
                x
                for i in range(len(old) + 1)
                for x in adds.get(i, []) + ([old[i]] if i < len(old) and i not in gone else [])
            ]
            assert replay == new
            assert (not d) == (old == new)


def test_lines_unique_and_in_order_diff_as_difflib_does():
    """The shortcut for files without repeated lines gives difflib's exact diff, line for line;
    with a repeated or a moved line it steps aside."""
    import difflib
    import random

    from harness.checks.fidelity.endstate import _emit, _in_order

    def by_difflib(a: list[bytes], b: list[bytes]) -> list[tuple[bytes, int]]:
        out: list[tuple[bytes, int]] = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, a, b, autojunk=False
        ).get_opcodes():
            if tag != "equal":
                _emit(a[i1:i2], b[j1:j2], 3 + i1, out)
        return out

    rng = random.Random(11)
    taken = 0
    for _ in range(3000):
        pool = [b"l%d" % k for k in range(rng.randint(1, 60))]
        a = rng.sample(pool, min(rng.randint(0, 30), len(pool)))
        b = list(a)
        for _ in range(rng.randint(0, 6)):
            op = rng.random()
            if op < 0.3 and b:
                del b[rng.randrange(len(b))]
            elif op < 0.6:
                b.insert(rng.randint(0, len(b)), rng.choice([*pool, b"new%d" % rng.randrange(9)]))
            elif op < 0.8 and b:
                b[rng.randrange(len(b))] = b"changed%d" % rng.randrange(99)
            elif len(b) > 1:
                i, j = rng.randrange(len(b)), rng.randrange(len(b))
                b[i], b[j] = b[j], b[i]
        out: list[tuple[bytes, int]] = []
        if _in_order(a, b, 3, out):
            taken += 1
            assert out == by_difflib(a, b)
        else:
            assert not out
            assert len(set(b)) < len(b) or [x for x in a if x in b] != [x for x in b if x in a]
    assert 500 < taken < 3000  # both ways are exercised


def test_as_dict_is_every_field_as_asdict_gives_it() -> None:
    from dataclasses import asdict

    from harness.checks.fidelity.endstate import EndState

    st = EndState("a.py", "introduced", 1, 2, 3, "h", "s", [("introduced", "+x")])
    assert st.as_dict() == asdict(st)
    assert list(st.as_dict()) == list(asdict(st))  # same keys, same order (the JSON bytes)


def test_head_ids_asked_ahead_are_gits_and_the_memo_keys_need_no_other_lookup(builder, tmp_path):
    """The end states' HEAD ids of the picks' paths are asked once the picks' diffs are read
    (``EndStateJobs.ahead``): the same ids ``rev-parse HEAD:path`` gives, a path a later pick
    moved followed to where HEAD holds it, a path HEAD lacks as none; the rows' memo keys are the
    keys made without the lookahead, and no HEAD id is asked again for them."""
    import threading
    from concurrent.futures import Future

    from harness.checks.fidelity.compare import compare_files
    from harness.checks.fidelity.endstate import EndStateJobs, file_paths
    from harness.checks.fidelity.memo import Memo
    from harness.git.patch import diff_many
    from harness.infra.history_index import HistoryIndex

    builder.commit("base", {"f.py": BODY, "g.py": BODY, "gone.py": BODY})
    builder.branch("release")
    srcs = [
        builder.commit("Fix f (#1)", {"f.py": BODY.replace("line_2 = 2", "line_2 = 22")}),
        builder.commit("Fix g (#2)", {"g.py": BODY.replace("line_4 = 4", "line_4 = 44")}),
    ]
    builder.checkout("release")
    fork = builder.rev("HEAD")
    picks = [builder.cherry_pick(s, "-x") for s in srcs]
    builder.repo.git.mv("g.py", "moved.py")
    builder.repo.git.rm("-q", "gone.py")
    builder.commit("Move g, drop gone (#3)")
    picks.append(builder.rev("HEAD"))
    repo = GitRepo(builder.path)
    head = builder.rev("release")
    patches = diff_many(repo, [(c, None) for c in picks + srcs])
    full = {p.commit: p.files for p in patches}
    early: Future[list] = Future()
    early.set_result([p for p in patches if p.commit in picks])

    def rows():
        return [
            (p, file_paths(compare_files(full[p], full[s])), [s])
            for p, s in zip(picks, srcs, strict=False)
        ]

    keys = []
    for ahead in (True, False):
        index = HistoryIndex(repo, tmp_path / f"cache-{ahead}")
        jobs = EndStateJobs(repo, fork, head, memo=Memo(index, []))
        if ahead:
            jobs.ahead(early)
            assert jobs._ahead is not None
            got = jobs._ahead.result()
            assert got["f.py"] == builder.rev(f"{head}:f.py")
            assert got["moved.py"] == builder.rev(f"{head}:moved.py")  # g.py, moved by a later pick
            assert "g.py" not in got and got["gone.py"] is None
        jobs.picks({p: full[p] for p in picks})
        asked: list[str] = []
        real = repo.batch_check

        def counted(specs, fmt, real=real, asked=asked):
            if threading.current_thread() is threading.main_thread():  # (not the rows' job)
                asked.extend(specs)
            return real(specs, fmt)

        repo.batch_check = counted
        jobs.add(rows())
        repo.batch_check = real
        keys.append(jobs.keys)
        jobs.result()
        # With the lookahead, no HEAD id is asked again for the keys; without it, each path once.
        assert sorted(asked) == ([] if ahead else [f"{head}:{p}" for p in ("f.py", "moved.py")])
    assert keys[0] == keys[1] and keys[0]


def test_a_job_is_given_the_lines_of_its_rows_paths_each_counted_once(builder, monkeypatch):
    """``EndStateJobs.lines(paths)``: every pick's lines at those paths as ``pick_lines`` counts
    them over all paths, no others; a path counted for one job is not counted again."""
    from harness.checks.fidelity import endstate
    from harness.checks.fidelity.endstate import EndStateJobs, pick_lines
    from harness.git.patch import diff_many

    builder.commit("base", {"f.py": BODY, "g.py": BODY})
    builder.branch("release")
    builder.checkout("release")
    fork = builder.rev("HEAD")
    one = builder.commit("one", {"f.py": "# one\n" + BODY, "g.py": BODY + "# one\n"})
    two = builder.commit("two", {"g.py": "# two\n" + BODY + "# one\n"})
    repo = GitRepo(builder.path)
    full = {p.commit: p.files for p in diff_many(repo, [(c, None) for c in (one, two)])}
    every = pick_lines(full)
    jobs = EndStateJobs(repo, fork, builder.rev("release"))
    jobs.picks(full)
    counted: list[set[str] | None] = []
    real = endstate.pick_lines

    def counting(patches, paths=None):
        counted.append(paths)
        return real(patches, paths)

    monkeypatch.setattr(endstate, "pick_lines", counting)
    assert jobs.lines({"g.py"}) == {p: {"g.py": every[p]["g.py"]} for p in (one, two)}
    assert jobs.lines({"f.py", "g.py"}) == every
    assert jobs.lines({"f.py"}) == {one: {"f.py": every[one]["f.py"]}, two: {}}
    assert counted == [{"g.py"}, {"f.py"}]
