"""Python environments for running a project's tests: what to install (``spec``), where it is kept
and how it is built (``build``), and the version a git-metadata build would supply (``version``)."""
