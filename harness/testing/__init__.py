"""Helpers the test suite imports as a package (no ``sys.path`` edits): builders of real git
repositories (``repos``), the repositories the probe and sweep tests share (``decoder_repo``,
``sweep_repo``), and the package-index gate for tests that need the network (``network``)."""
