"""``records``: a log's NUL-framed records read the same by the column-by-column path (records
without a file list) and the scanning one, on real logs and edge shapes."""

from __future__ import annotations

import os

import pytest

from harness.git.records import _scan, log_format, records
from harness.git.repo import GitRepo


def _both(text: str, fields: int) -> tuple[list, list]:
    fast = [(list(h), list(r)) for h, r in records(text, fields)]
    return fast, [(list(h), list(r)) for h, r in _scan(text.split("\0"), fields)]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\0a\0b\0",
        "\0a\0\0",  # an empty last field
        "\0a\0b",  # no closing NUL
        "\0a\0b\0\0c\0d\0",
        "\0a\0b\0\nx\0y\0\0c\0d\0",  # a file list after the first record
        "\0\0\0",
        "x\0",
        "\0a\0b\0\0c",  # cut short
        "\0a\0\0\nx\0\0\0d\0\ny\0z\0",  # empty fields beside file lists
        "\0a\0b\0\n\0y\0",  # a file list's newline alone before its first name
        "\0a\0b\0\nx\0y",  # a file list, no closing NUL
        "\0a\0b\0\nx\0\0c",  # a file list, then a record cut short
    ],
)
def test_edge_shapes(text):
    fast, scanned = _both(text, 2)
    assert fast == scanned
    # each record's fields come as the scanning path gives them where there are file lists
    if any(r for _, r in scanned):
        assert all(isinstance(h, list) for h, _ in records(text, 2))


def test_real_logs(builder):
    builder.commit("one", {"a": "1\n", "b": "2\n"})
    builder.commit("two", {"a": "3\n"})
    builder.commit("three\n\nbody line\n\nmore", {"c": "4\n"})
    repo = GitRepo(builder.path)
    fields = ("%H", "%P", "%at", "%ct", "%s")
    for extra in ([], ["--name-only"], ["--reverse"]):
        text = repo.run_text(["log", "-z", log_format(*fields), *extra, "HEAD"])
        fast, scanned = _both(text, len(fields))
        assert fast == scanned and len(fast) == 3
        assert all(r for _, r in fast) == bool(extra == ["--name-only"])
    text = repo.run_text(["log", "-z", log_format("%H", "%b"), "HEAD"])
    fast, scanned = _both(text, 2)
    assert fast == scanned and [h[1] for h, _ in fast][0] == "body line\n\nmore\n"


class _Pieces:
    """A repository whose ``stream`` gives git's real output of a command in pieces of ``size``
    bytes (every cut a piece boundary can make, on a real log)."""

    def __init__(self, repo: GitRepo, size: int) -> None:
        self.repo, self.size = repo, size

    def run(self, args, *, input=None):
        return self.repo.run(args, input=input)

    def stream(self, args, size=0):
        out = self.repo.run(args)
        for i in range(0, len(out), self.size):
            yield out[i : i + self.size]


def test_streamed_records_are_the_records_git_wrote_whole(builder):
    """A listing read as git writes it (``streamed_log_records``) gives the records of its whole
    output, wherever the pieces are cut: a root commit (its parents field empty, a NUL pair
    inside a record), an empty subject, file names that look like commit ids or hold NULs'
    neighbours (newlines, spaces), non-UTF-8 bytes."""
    import subprocess

    from harness.git.picks import _FIELDS, _WITH_BODY, _path_options
    from harness.git.records import log_records, streamed_log_records

    def commit(message: bytes, files: dict[str, str]) -> None:
        for rel, text in files.items():
            builder.write(rel, text)
        (builder.path / ".git" / "MSG").write_bytes(message)
        env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a"}
        env |= {"GIT_COMMITTER_EMAIL": "a@x", "PATH": os.environ["PATH"], "HOME": str(builder.path)}
        subprocess.run(["git", "add", "-A"], cwd=builder.path, check=True, env=env)
        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "--allow-empty-message", "-F", ".git/MSG"],
            cwd=builder.path,
            check=True,
            env=env,
        )

    sha_like = "0123456789abcdef0123456789abcdef01234567"
    commit(b"root", {"a.txt": "0\n"})
    commit(b"", {sha_like: "x\n"})
    commit(b"names", {"b c\nd.txt": "1\n", "\u00e9.txt": "2\n"})
    commit(b"bytes \xff in subject", {"sub/e.txt": "3\n"})
    commit(b"no files", {})
    repo = GitRepo(builder.path)
    for paths in (True, False):
        options = _path_options(paths)
        whole = [
            (list(h), list(r)) for h, r in log_records(repo, _FIELDS, options, include=["HEAD"])
        ]
        assert len(whole) == 5 and any(h[1] == "" for h, _ in whole)  # the root commit
        for size in (1, 2, 3, 7, 41, 64, 1 << 20):
            got = streamed_log_records(_Pieces(repo, size), _FIELDS, options, include=["HEAD"])
            assert [(list(h), list(r)) for b in got for h, r in b] == whole, size
        real = streamed_log_records(repo, _FIELDS, options, include=["HEAD"])
        assert [(list(h), list(r)) for b in real for h, r in b] == whole
    # With each raw message (the listing that feeds the greps): a message that is a full commit
    # id after an empty subject, as a commit object may hold it, is no record's start.
    verbatim = ["git", "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", ".git/MSG"]
    for message in (sha_like.encode(), b"\n\n" + sha_like.encode(), b""):
        (builder.path / ".git" / "MSG").write_bytes(message)
        env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a"}
        env |= {"GIT_COMMITTER_EMAIL": "a@x", "PATH": os.environ["PATH"]}
        subprocess.run([*verbatim, "--allow-empty-message"], cwd=builder.path, check=True, env=env)
    whole = [
        (list(h), list(r))
        for h, r in log_records(repo, _WITH_BODY, _path_options(True), include=["HEAD"])
    ]
    assert len(whole) == 8 and sha_like in [h[3] for h, _ in whole]  # a message just that
    for size in (1, 2, 3, 5, 41, 43, 64, 1 << 20):
        got = streamed_log_records(
            _Pieces(repo, size), _WITH_BODY, _path_options(True), include=["HEAD"]
        )
        assert [(list(h), list(r)) for b in got for h, r in b] == whole, size


def test_streamed_records_of_commits_with_odd_idents(builder):
    """Idents as a commit object may hold them, whatever the bytes around them look like: an
    author date of 40 digits on a root commit, a committer line with no date before a subject
    that is a full commit id. Every cut a piece boundary can make gives git's whole records, and
    the listing names the commits and parents the plain log names."""
    import subprocess

    from harness.git.picks import _FIELDS, _WITH_BODY, _path_options, history
    from harness.git.records import log_records, streamed_log_records

    builder.commit("first", {"a.txt": "0\n"})
    tree = builder.rev("HEAD^{tree}")
    parent = builder.rev("HEAD")

    def raw(text: str) -> str:
        return (
            subprocess.run(
                ["git", "hash-object", "-t", "commit", "--literally", "-w", "--stdin"],
                cwd=builder.path,
                input=text.encode(),
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )

    sha_like = "0123456789abcdef0123456789abcdef01234567"
    root = raw(
        f"tree {tree}\nauthor A <a@b> {'1234567890' * 4} +0000\n"
        "committer C <c@d> 1700000000 +0000\n\nroot\n"
    )
    odd = raw(
        f"tree {tree}\nparent {parent}\nparent {root}\nauthor A <a@b> 1700000000 +0000\n"
        f"committer C <c@d>\n\n{sha_like}\n"
    )
    subprocess.run(["git", "branch", "odd", odd], cwd=builder.path, check=True)
    repo = GitRepo(builder.path)
    for fields in (_FIELDS, _WITH_BODY):
        options = _path_options(True)
        whole = [(list(h), list(r)) for h, r in log_records(repo, fields, options, include=["odd"])]
        assert len(whole) == 3
        size_all = len(repo.run(["log", "-z", log_format(*fields), *options, "odd", "--"]))
        for size in range(1, size_all + 1):
            got = streamed_log_records(_Pieces(repo, size), fields, options, include=["odd"])
            assert [(list(h), list(r)) for b in got for h, r in b] == whole, size
    plain = [(e.sha, e.parents) for e in history(repo, ["odd"], [], paths=False)]
    listed = [(e.sha, e.parents) for e in history(repo, ["odd"], [], paths=True)]
    assert listed == plain and len(plain) == 3
