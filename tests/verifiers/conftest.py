"""Loops shared by a verifier module's tests: started once per module.

A bound on how long a verifier takes is a bound on its CPU time (``time.process_time``),
never on wall time: two test processes beside other load stretch a 0.2 s wall time
past any bound, and the work done is the point (a hostile input costs milliseconds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardkit import RewardLoop


@pytest.fixture(scope="module", params=[True, False], ids=["inline", "in a worker"])
def both_paths_loop(request: pytest.FixtureRequest) -> Iterator[RewardLoop]:
    """One worker, fast paths on (rows decided inline) and off (every row checked in a
    worker): a table must score the same both ways."""
    config = {"reward": {"num_workers": 1, "verifiers": {"fast_paths": request.param}}}
    with RewardLoop(config) as scorer:
        yield scorer
