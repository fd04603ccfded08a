"""One simulated two-node Ray cluster for every test in tests/ray_backend (it takes ~10 s to start).

Two raylets of one CPU each on this machine (``ray.cluster_utils.Cluster``): actors
asked to SPREAD land on both, and nothing asks for more CPUs than exist, so no task
waits forever. Everything Ray started is shut down after the last test of the package.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

# ".[dev]" includes ray: a missing ray is a broken install, not a skip.
import ray
import ray.cluster_utils as cluster_utils

_NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}

# Ray notices a killed raylet by missed health checks: by default 5 misses 3 s apart,
# 15 s of every fault test spent waiting. Checks 0.5 s apart, 4 misses: 2 s. A killed
# raylet refuses the check at once; a live one on a loaded machine keeps the default 10 s
# to answer each, so no live node is declared dead by these settings.
_HEALTH_CHECKS = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}


@pytest.fixture(scope="package")
def ray_cluster() -> Iterator[Any]:
    """A head and a worker node, one CPU each; the driver (this process) is connected."""
    cluster = cluster_utils.Cluster(
        initialize_head=True,
        head_node_args={**_NODE, "include_dashboard": False, "_system_config": _HEALTH_CHECKS},
    )
    try:
        cluster.add_node(**_NODE)
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
