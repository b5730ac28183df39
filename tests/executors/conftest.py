"""A real local Ray cluster for the executor tests: a head on this machine with two CPUs (two
worker processes), a small object store and no dashboard; shut down (only it) at the end."""

from __future__ import annotations

import importlib.util

import pytest

HAVE_RAY = importlib.util.find_spec("ray") is not None


@pytest.fixture(scope="session")
def ray_cluster() -> str:
    """The cluster's address (``--ray-address``); this test process is connected to it."""
    if not HAVE_RAY:
        pytest.skip("ray is not installed (pip install 'harness[ray]')")
    import ray

    from harness.executors.ray_executor import start_local

    ctx = start_local(2, 200)  # retried: a loaded machine can miss Ray's 30 s start-up window
    yield ctx.address_info["gcs_address"]
    ray.shutdown()
