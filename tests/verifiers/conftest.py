"""Loops shared by a verifier module's tests: started once per module."""

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
