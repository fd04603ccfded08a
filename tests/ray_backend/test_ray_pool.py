"""guards: the Ray worker pool (rewardkit.execution.ray_pool).

reward.backend=ray on a simulated two-node cluster: the local backend's results, hard
timeouts inside actors, an actor killed mid-batch, back-pressure, clear failures.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from typing import Any

import pytest
import ray

from _support.user_functions import MISBEHAVING
from rewardkit import ConfigError, RewardLoop, Status
from rewardkit.config import RayOptions
from rewardkit.errors import ScorerError, ScorerTimeout
from rewardkit.execution import _ray, ray_pool
from rewardkit.execution.health import PoolHealth
from rewardkit.execution.ray_pool import RayWorkerPool

pytestmark = pytest.mark.usefixtures("ray_cluster")

# One CPU per node: two actors at half a CPU each leave room for a replacement.
RAY = {"backend": "ray", "num_workers": 2, "ray": {"num_cpus_per_worker": 0.5}}


ROWS: list[Any] = [
    {"data_source": "openai/gsm8k", "response": "so 8 * 9 = 72\n#### 72", "ground_truth": "72"},
    {"data_source": "openai/gsm8k", "response": "#### 72.00", "ground_truth": "72"},
    {"data_source": "openai/gsm8k", "response": "#### $1,250", "ground_truth": "1250"},
    {"data_source": "openai/gsm8k", "response": "the answer is 72", "ground_truth": "72"},
    {"data_source": "openai/gsm8k", "response": "#### 71", "ground_truth": "72"},
    {
        "data_source": "lighteval/MATH",
        "response": r"so $\boxed{\frac{1}{2}}$",
        "ground_truth": r"\frac12",
    },
    {"data_source": "lighteval/MATH", "response": r"\boxed{0.5}", "ground_truth": r"\frac{1}{2}"},
    {
        "data_source": "lighteval/MATH",
        "response": r"\boxed{\dfrac{\sqrt{3}}{2}}",
        "ground_truth": r"\frac{\sqrt3}{2}",
    },
    {"data_source": "lighteval/MATH", "response": r"\boxed{(1, 2]}", "ground_truth": r"(1,2]"},
    {
        "data_source": "lighteval/MATH",
        "response": r"\boxed{3 \pm 2^{1/2}}",
        "ground_truth": r"3 \pm \sqrt{2}",
    },
    {
        "data_source": "lighteval/MATH",
        "response": r"\boxed{3} or maybe \boxed{4}",
        "ground_truth": "4",
    },
    {"data_source": "lighteval/MATH", "response": r"\boxed{3}", "ground_truth": "4"},
    {
        "data_source": "lighteval/MATH",
        "response": "The final answer is 2\\pi",
        "ground_truth": r"2\pi",
    },
    {"data_source": "lighteval/MATH", "response": "I ran out of tokens", "ground_truth": "4"},
    {"data_source": "no/such/source", "response": "x", "ground_truth": "1"},
    {"data_source": "openai/gsm8k", "ground_truth": "1"},
    "not a row",
]


def _outcome(result: Any) -> tuple[Any, ...]:
    return (
        result.index,
        result.status,
        result.score,
        result.error,
        dict(result.components),
        dict(result.extra),
        dict(result.row),
    )


def test_ray_backend_gives_exactly_the_local_backend_results() -> None:
    rows = ROWS * 2  # repeats exercise the engine's dedup and cache identically
    # Results are compared, not time limits (test_timeouts_and_crashes_... has those): a
    # limit far past any check, so that a fresh actor's cold first parse, beside both
    # actors' warm-ups on a loaded machine, never ends a row as a timeout on one side only
    limit = {"timeout_s": 120}
    with RewardLoop({"reward": {"num_workers": 2, **limit}}) as loop:
        local = loop.score(rows)
        deadline = time.monotonic() + 30  # warm rows can all finish before the 2nd worker is up
        while loop.engine.pool.health().starting and time.monotonic() < deadline:
            time.sleep(0.02)
        assert loop.engine.pool.health() == PoolHealth(2, 2)  # the local pool: whole once up
    with RewardLoop({"reward": {**RAY, **limit}}) as loop:
        remote = loop.score(rows)
        actors = loop.engine.pool.actors
        stats = dict(loop.engine.pool.stats)
    assert [_outcome(r) for r in remote] == [_outcome(r) for r in local]
    assert {r.status for r in remote} == {Status.OK, Status.INVALID}
    assert len({a["node_id"] for a in actors}) == 2  # spread over both nodes
    assert stats["tasks"] > 0 and stats["retried"] == 0 and stats["actors_lost"] == 0


def test_timeouts_and_crashes_stay_the_rows_status_inside_actors(write_module) -> None:
    path = write_module("user_reward", MISBEHAVING)
    ray_opts = {**RAY["ray"], "runtime_env": {"env_vars": {"RK_TEST_MARK": "set by runtime_env"}}}
    config = {
        "reward": {
            **RAY,
            "ray": ray_opts,
            "timeout_s": 1.0,
            "custom_reward_function": {"path": path},
        }
    }
    rows = [
        {"data_source": "custom", "response": r, "ground_truth": "42"}
        for r in ["42", "hang", "segfault", "raise", "7", "42 ", "env"]
    ]
    started = time.perf_counter()
    with RewardLoop(config) as loop:
        results = loop.score(rows)
        stats = dict(loop.engine.pool.stats)
    elapsed = time.perf_counter() - started
    assert [r.status for r in results] == [
        Status.OK,
        Status.TIMEOUT,
        Status.ERROR,
        Status.ERROR,
        Status.OK,
        Status.OK,
        Status.OK,
    ]
    # The last row proves reward.ray.runtime_env reached the actors' scoring processes.
    assert [r.score for r in results] == [1.0, None, None, None, 0.0, 0.0, 1.0]
    assert "timed out after 1s" in results[1].error
    assert "worker process died" in results[2].error
    assert "RuntimeError: scorer bug" in results[3].error
    # The hard limit killed the worker process inside its actor; nothing was retried.
    assert stats["timeouts"] == 1 and stats["crashes"] == 1
    assert stats["retried"] == 0 and stats["actors_lost"] == 0
    assert elapsed < 40


NAPS = [{"data_source": "custom", "response": f"nap {i}", "ground_truth": "-"} for i in range(16)]


def _strike_when_both_busy(pool: Any, strike: Any, struck: list[Any]) -> threading.Thread:
    """A thread that calls ``strike(handle, info)`` on the first actor once both actors
    have work outstanding (within 20 s), recording the handle in ``struck``."""

    def watch() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            busy = [
                (h, a)
                for h, a in zip(pool.actor_handles, pool.actors, strict=False)
                if a["outstanding"]
            ]
            if len(busy) == 2:
                strike(*busy[0])
                struck.append(busy[0][0])
                return
            time.sleep(0.01)

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def test_an_actor_killed_mid_batch_costs_no_row(write_module) -> None:
    path = write_module("user_reward", MISBEHAVING)
    config = {"reward": {**RAY, "custom_reward_function": {"path": path}}}
    with RewardLoop(config) as loop:
        pool = loop.engine.pool
        killed: list[Any] = []
        killer = _strike_when_both_busy(
            pool, lambda handle, _: ray.kill(handle, no_restart=True), killed
        )
        results = loop.score(NAPS)
        killer.join()
        deadline = time.monotonic() + 60
        while len(pool.actors) < 2 and time.monotonic() < deadline:  # the replacement starts
            time.sleep(0.1)
        stats, live = dict(pool.stats), pool.actor_handles
        again = loop.score([{"data_source": "custom", "response": "nap 99", "ground_truth": "-"}])
    assert killed, "no moment with both actors busy"
    assert [r.index for r in results] == list(range(16))  # each row answered, once, in order
    assert [r.status for r in results] == [Status.OK] * 16
    assert [r.score for r in results] == [i / 100 for i in range(16)]
    assert stats["retried"] >= 1 and stats["actors_lost"] == 1
    assert len(live) == 2 and killed[0] not in live
    assert again[0].score == 0.99


def test_a_busy_actor_that_stops_answering_is_lost_and_its_rows_go_elsewhere(
    write_module, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung actor (SIGSTOPped here: its node alive, its process frozen) answers no
    liveness probe; busy and silent for ray_pool.SILENT_S, it is lost and its tasks run on
    the other actor, instead of each waiting out a guard that allows every task queued
    there its full limit (670 s at timeout_s 10)."""
    monkeypatch.setattr(_ray, "_PROBE_EVERY_S", 0.2)  # a probe answers within 1 s or not
    monkeypatch.setattr(ray_pool, "SILENT_S", 1.0)
    path = write_module("user_reward", MISBEHAVING)
    config = {"reward": {**RAY, "custom_reward_function": {"path": path}}}
    with RewardLoop(config) as loop:
        pool = loop.engine.pool
        stopped: list[Any] = []
        stopper = _strike_when_both_busy(
            pool, lambda _, info: os.kill(info["pid"], signal.SIGSTOP), stopped
        )
        started = time.monotonic()
        results = loop.score(NAPS)
        took = time.monotonic() - started
        stopper.join()
        stats = dict(pool.stats)
    assert stopped, "no moment with both actors busy"
    assert [r.status for r in results] == [Status.OK] * 16
    assert [r.score for r in results] == [i / 100 for i in range(16)]
    assert stats["actors_lost"] == 1 and stats["retried"] >= 1
    assert took < 60, took  # seconds, where the task guard alone would wait minutes


async def test_back_pressure_interface_and_hostile_tasks() -> None:
    pool = RayWorkerPool(
        2, options=RayOptions(num_cpus_per_worker=0.5, max_outstanding_per_worker=1)
    )
    await pool.start()
    try:
        assert pool.health() == PoolHealth(2, 2) and pool.health().full
        await asyncio.gather(*(pool.run(time.sleep, 0.05, timeout=5) for _ in range(12)))
        assert pool.stats["peak_outstanding"] == 1  # never more than the cap on one actor
        assert await pool.run(divmod, 7, 2, timeout=5) == (3, 1)
        with pytest.raises(ScorerError, match="ValueError"):
            await pool.run(int, "not a number", timeout=5)
        with pytest.raises(ScorerError, match="cannot send the task"):
            await pool.run(id, threading.Lock(), timeout=5)
        with pytest.raises(ScorerTimeout, match=r"timed out after 0\.5s"):
            await pool.run(time.sleep, 30, timeout=0.5)
        assert pool.stats["tasks"] == 16 and pool.stats["timeouts"] == 1
    finally:
        await pool.close()
    with pytest.raises(ScorerError, match="closed"):
        await pool.run(divmod, 1, 1, timeout=5)
    assert pool.health() == PoolHealth(2, 0, "closed") and not pool.health().usable


def test_more_workers_than_the_cluster_holds_fails_fast_naming_the_keys() -> None:
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=r"reward.num_workers=5 .* need 5 CPU .* has 2"):
        RewardLoop({"reward": {"backend": "ray", "num_workers": 5}}).start()
    assert time.perf_counter() - started < 10
