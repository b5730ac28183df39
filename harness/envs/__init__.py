"""Python environments, one room: what to install (``spec``), building it (``build`` on ``venv``,
``installer`` and ``step``), what an interpreter is (``fingerprint``; ``interpreter``: ``--python``
as an ``Env``), which tree a module came from (``proof``), and the version a git-metadata build
would supply (``version``). Used by the tests section, mutation, sweep, selection, probe columns
and the engines."""
