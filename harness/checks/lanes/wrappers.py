"""The wrappers CI puts around pytest, as data for the shell reading (gha_shell.py): interpreters,
shells, commands that pass the rest of the line on, the options each wrapper takes a value for,
commands that only mention pytest, and the project runners (``uv run``, ``pixi run`` …)."""

from __future__ import annotations

import posixpath
import re

PYTHON = re.compile(r"^(python|pypy)[0-9.]*$|^py$")
SHELLS = {"bash", "sh", "dash", "zsh"}
PASS_ON = {"time", "nohup", "exec", "command", "xvfb-run", "stdbuf", "sudo", "nice", "timeout"}
VALUE_OPTS = {  # options that take the next word as their value, per wrapper
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-U"},
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "stdbuf": {"-i", "-o", "-e"},
    "xvfb-run": {"-n", "--server-num", "-s", "--server-args", "-e", "--error-file", "-f"},
    "run": {  # uv run, poetry run, hatch run, pdm run, pipenv run, conda run, pixi run
        "--with",
        "--with-editable",
        "--with-requirements",
        "--python",
        "-p",
        "--group",
        "--extra",
        "--directory",
        "--project",
        "--package",
        "--env-file",
        "--index",
        "--index-url",
        "-n",
        "--name",
        "--prefix",
        "--cwd",
        "-e",
        "--environment",
        "--manifest-path",
    },
    "coverage": {
        "--rcfile",
        "--source",
        "--data-file",
        "--concurrency",
        "--omit",
        "--include",
        "--context",
    },
    "docker": {
        "-e",
        "--env",
        "--env-file",
        "-v",
        "--volume",
        "-w",
        "--workdir",
        "--name",
        "--network",
        "--net",
        "--entrypoint",
        "-u",
        "--user",
        "--gpus",
        "--shm-size",
        "--ipc",
        "-p",
        "--publish",
        "--platform",
        "--mount",
        "-l",
        "--label",
        "--cpus",
        "-m",
        "--memory",
        "--device",
        "--ulimit",
        "--cap-add",
        "--security-opt",
        "--runtime",
        "--hostname",
        "-h",
        "--add-host",
        "--pull",
        "--tmpfs",
        "-f",
        "--file",
        "--project-name",
        "--profile",
        "--pid",
        "--init-path",
        "--log-driver",
        "--restart",
        "--stop-signal",
        "--cidfile",
        "--group-add",
        "--dns",
    },
    "python": {"-X", "-W", "-Q"},
    "tox": {"-e", "--env", "-c", "--conf", "--root", "--workdir", "-r", "--recreate-pkg"},
}
SILENT = {"echo", "printf", "pip", "pip3", "cat", "grep", "sed", "awk", "tee", "git", "gh", ":"}
RUNNERS = {"uv", "poetry", "pipenv", "hatch", "pdm", "rye", "pixi", "conda", "mamba", "micromamba"}


def is_pytest(text: str) -> bool:
    return posixpath.basename(text) in ("pytest", "py.test")
