"""Builds real git repositories for tests (GitPython, in tmp dirs), with deterministic dates."""

from __future__ import annotations

import os
from pathlib import Path

import git

from harness.git.repo import GitRepo


class RepoBuilder:
    """A throwaway repository with helpers to write files, commit and branch."""

    def __init__(self, path: Path, bare_clone: bool = False, initial_branch: str = "main") -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.repo = git.Repo.init(self.path, initial_branch=initial_branch)
        with self.repo.config_writer() as cw:
            cw.set_value("user", "name", "Test Author")
            cw.set_value("user", "email", "author@example.com")
            cw.set_value("commit", "gpgsign", "false")
        self._tick = 1_700_000_000

    # -- files ------------------------------------------------------------------
    def write(self, rel: str, content: str | bytes) -> None:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            p.write_text(content, encoding="utf-8")
        else:
            p.write_bytes(content)

    def remove(self, rel: str) -> None:
        self.repo.git.rm("-q", "--", rel)

    def move(self, src: str, dst: str) -> None:
        self.repo.git.mv(src, dst)

    # -- history ----------------------------------------------------------------
    def commit(
        self,
        message: str,
        files: dict[str, str | bytes] | None = None,
        *,
        author: str = "Test Author <author@example.com>",
        committer: str | None = None,
        author_time: int | None = None,
        committer_time: int | None = None,
        allow_empty: bool = False,
    ) -> str:
        for rel, content in (files or {}).items():
            self.write(rel, content)
        self.repo.git.add("-A")
        self._tick += 60
        at = author_time if author_time is not None else self._tick
        ct = committer_time if committer_time is not None else at
        aname, aemail = author.rsplit(" <", 1)
        cname, cemail = (committer or author).rsplit(" <", 1)
        env = {
            "GIT_AUTHOR_NAME": aname,
            "GIT_AUTHOR_EMAIL": aemail.rstrip(">"),
            "GIT_COMMITTER_NAME": cname,
            "GIT_COMMITTER_EMAIL": cemail.rstrip(">"),
            "GIT_AUTHOR_DATE": f"{at} +0000",
            "GIT_COMMITTER_DATE": f"{ct} +0000",
        }
        args = ["-q", "-m", message]
        if allow_empty:
            args.append("--allow-empty")
        with self.repo.git.custom_environment(**env):
            self.repo.git.commit(*args)
        return self.repo.head.commit.hexsha

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.repo.git.branch(name, start)

    def checkout(self, name: str) -> None:
        self.repo.git.checkout("-q", name)

    def cherry_pick(self, sha: str, *extra: str) -> str:
        self._tick += 60
        env = {"GIT_COMMITTER_DATE": f"{self._tick} +0000"}
        with self.repo.git.custom_environment(**env):
            self.repo.git.cherry_pick(*extra, sha)
        return self.repo.head.commit.hexsha

    def merge(self, name: str, message: str) -> str:
        self._tick += 60
        env = {
            "GIT_AUTHOR_DATE": f"{self._tick} +0000",
            "GIT_COMMITTER_DATE": f"{self._tick} +0000",
        }
        with self.repo.git.custom_environment(**env):
            self.repo.git.merge("--no-ff", "-q", "-m", message, name)
        return self.repo.head.commit.hexsha

    def rev(self, ref: str) -> str:
        return self.repo.git.rev_parse(ref)

    def bare_clone(self, dest: Path) -> Path:
        git.Repo.clone_from(str(self.path), str(dest), bare=True, mirror=True)
        return dest

    def snapshot(self) -> tuple:
        """Everything a harness run must not change: HEAD, refs, index, status, stash, config."""
        g = self.repo.git
        index = self.path / ".git" / "index"
        return (
            g.rev_parse("HEAD"),
            g.symbolic_ref("-q", "HEAD", with_exceptions=False),
            g.for_each_ref(),
            g.status("--porcelain", "--ignored"),
            g.stash("list"),
            (self.path / ".git" / "config").read_bytes(),
            index.read_bytes() if index.exists() else b"",
            sorted(os.listdir(self.path / ".git")),
        )


def bare_snapshot(git_dir: Path) -> tuple:
    """Everything a run must not change in a bare repository: refs, HEAD, config, and every file's
    name and size under the git dir (objects, packs, hooks, worktrees)."""
    files = sorted(
        (str(p.relative_to(git_dir)), p.stat().st_size)
        for p in Path(git_dir).rglob("*")
        if p.is_file()
    )
    repo = git.Repo(git_dir)
    return (
        repo.git.for_each_ref(),
        (Path(git_dir) / "HEAD").read_bytes(),
        (Path(git_dir) / "config").read_bytes(),
        files,
    )


def git_blob_sha(repo: GitRepo, data: bytes) -> str:
    """The blob id git itself gives ``data`` (``hash-object --stdin``, nothing written): the oracle
    the tests hold ``harness.git.apply.blob_sha`` (computed in-process) against."""
    return repo.run(["hash-object", "--stdin"], input=data).decode().strip()
