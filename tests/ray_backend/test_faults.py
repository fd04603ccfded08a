"""guards: the Ray backend losing and regaining nodes (rewardkit.execution.ray_pool).

Losing a node and getting it back, on the two-node cluster of conftest.py.

- a node (its raylet and every process on it) killed mid-batch: every row is right or
  typed ``error``; the pool runs on at 1 of 2 actors and returns to 2 of 2 when a node
  joins again, and a batch goes as fast as before the loss;
- no node can hold an actor: ``/ready`` answers 503 with the reason, ``/metrics`` shows
  0 live of 1 desired, and ``RewardLoop.score`` raises PoolUnavailable within a bounded
  time (the rows it scored attached); both come back when a node joins.

Each test leaves the cluster as it found it: two nodes of one CPU.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import ray

from _support.serving import running_app
from rewardkit import PoolUnavailable, RewardLoop, Status
from rewardkit.config import load_config
from rewardkit.execution import _ray
from rewardkit.server.app import create_app

NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}  # as conftest.py's nodes

NAP = """
import time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    time.sleep(float(ground_truth))
    return int(solution_str) / 100
"""

# Nodes are lost and found within this (Ray notices a killed raylet by missed health checks).
HEAL_S = 90.0


@pytest.fixture(autouse=True)
def _prompt_refills(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty slot is tried again every second at most (the default backoff doubles to
    30 s): a node that rejoins is used within a second, not after the last wait ran out."""
    monkeypatch.setattr(_ray, "_BACKOFF_MAX_S", 1.0)


def _rows(count: int, nap: float, first: int = 0) -> list[dict[str, Any]]:
    return [
        {"data_source": "custom", "response": str(first + i), "ground_truth": str(nap)}
        for i in range(count)
    ]


def _until(check: Callable[[], bool], limit: float, what: str) -> float:
    """Seconds until ``check()`` holds; fails the test past ``limit``."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > limit:
            raise AssertionError(f"not within {limit:g}s: {what}")
        time.sleep(0.1)
    return time.monotonic() - started


def _timed(loop: RewardLoop, rows: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    results = loop.score(rows)
    assert [r.score for r in results] == [int(r["response"]) / 100 for r in rows]
    return time.perf_counter() - started


def _napping_on_ray(write_module: Any, workers: int, ray: dict[str, Any]) -> dict[str, Any]:
    """A ``reward`` section: the NAP function on ``workers`` Ray actors, 10 s a row."""
    path = write_module("nap_reward", NAP)
    return {
        "backend": "ray",
        "num_workers": workers,
        "timeout_s": 10,
        "custom_reward_function": {"path": path},
        "ray": ray,
    }


@pytest.mark.slow  # ~20 s (a node lost, then one added); tests/ray_backend/test_ray_pool.py's
# actor killed mid-batch is its twin in the default run, and .ci/run runs it
def test_a_node_killed_mid_batch_costs_no_wrong_row_and_the_pool_heals(
    ray_cluster: Any, write_module: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # one actor per node: a lost one needs a node
    reward = _napping_on_ray(write_module, workers=2, ray={"num_cpus_per_worker": 1.0})
    with RewardLoop({"reward": reward}) as loop:
        pool = loop.engine.pool
        assert len({a["node_id"] for a in pool.actors}) == 2
        before = _timed(loop, _rows(8, 0.3))
        batch: list[Any] = []
        scorer = threading.Thread(target=lambda: batch.extend(loop.score(_rows(16, 0.3))))
        scorer.start()
        _until(lambda: all(a["outstanding"] for a in pool.actors), 20, "both actors busy")
        ray_cluster.remove_node(ray_cluster.list_all_nodes()[-1], allow_graceful=False)
        scorer.join(timeout=HEAL_S)
        # Every row is answered once, in order: the right score, or typed `error`; never wrong.
        assert [r.index for r in batch] == list(range(16))
        for result in batch:
            assert (result.status, result.score) == (Status.OK, int(result.row["response"]) / 100)
        health = pool.health()
        assert (health.live, health.desired) == (1, 2) and not health.full and health.usable
        assert pool.stats["actors_lost"] == 1 and pool.stats["retried"] >= 1
        short = [r for r in caplog.records if "1 of 2 actors live" in r.getMessage()]
        assert short and short[0].levelname == "WARNING"  # partial capacity is said in the log

        ray_cluster.add_node(**NODE)
        healed = _until(lambda: pool.health().full, HEAL_S, "back to 2 of 2 actors")
        after = _timed(loop, _rows(8, 0.3, first=50))
        assert len({a["node_id"] for a in pool.actors}) == 2
    # Two actors again: as fast as before the loss (8 naps of 0.3 s: 1.2 s on two, 2.4 s on one).
    assert after < max(2 * before, 2.2), (before, after, healed)


def test_with_no_node_to_hold_an_actor_ready_is_503_and_score_raises(
    ray_cluster: Any, write_module: Any
) -> None:
    reward = _napping_on_ray(
        write_module, workers=1, ray={"num_cpus_per_worker": 0.5, "unavailable_timeout_s": 1}
    )
    head = ray.get_runtime_context().get_node_id()

    class _Blocker:  # defined here, so that Ray ships it by value (tests/ is no package)
        def ping(self) -> bool:
            return True

    # Fill the head node, so the actors land on the other node and nothing can replace them.
    blocker = (
        ray.remote(num_cpus=1)(_Blocker)
        .options(
            scheduling_strategy=ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
                head, soft=False
            )
        )
        .remote()
    )
    ray.get(blocker.ping.remote())
    try:
        app = create_app(load_config({"reward": reward}))
        with running_app(app) as base, RewardLoop({"reward": reward}) as loop:
            client = httpx.Client(base_url=base, trust_env=False, timeout=60)
            assert loop.score(_rows(2, 0.01))[1].score == 0.01
            ray_cluster.remove_node(ray_cluster.list_all_nodes()[-1], allow_graceful=False)

            # The server says so, and why.
            _until(lambda: client.get("/ready").status_code == 503, HEAL_S, "/ready 503")
            assert "no usable actor, 0 of 1 live" in client.get("/ready").json()["error"]
            metrics = client.get("/metrics").text
            assert 'rewardkit_pool_workers{source="pool",state="live"} 0.0' in metrics
            assert 'rewardkit_pool_workers{source="pool",state="desired"} 1.0' in metrics

            # RewardLoop raises within a bounded wait, with the rows it could score.
            _until(lambda: not loop.engine.pool.health().usable, HEAL_S, "the loop's pool empty")
            started = time.monotonic()
            no_response = {"data_source": "custom", "ground_truth": "0"}  # answered in the driver
            with pytest.raises(PoolUnavailable, match="no usable actor, 0 of 1 live") as raised:
                loop.score([no_response, *_rows(3, 0.01, first=20)])
            assert time.monotonic() - started < 20  # unavailable_timeout_s=1, and slack
            scored = raised.value.results
            assert [(r.status, r.score) for r in scored] == [(Status.INVALID, None)] + [
                (Status.ERROR, None)
            ] * 3
            assert "no live actor" in scored[1].error

            ray_cluster.add_node(**NODE)
            _until(lambda: client.get("/ready").status_code == 200, HEAL_S, "/ready 200 again")
            _until(lambda: loop.engine.pool.health().full, HEAL_S, "the loop's pool back")
            assert [r.score for r in loop.score(_rows(2, 0.01, first=7))] == [0.07, 0.08]
            client.close()
    finally:
        ray.kill(blocker)
