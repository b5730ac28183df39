"""Error types that map onto the documented exit codes."""

EXIT_OK = 0
EXIT_BLOCKED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class UsageError(Exception):
    """Bad input from the user: one clear line on stderr, exit 2, nothing written."""


class HarnessError(Exception):
    """The harness itself failed (exit 3)."""
