from __future__ import annotations

import asyncio
import ctypes
import os
import time

import pytest

from rewardkit.errors import ScorerError, ScorerTimeout, WorkerCrashed
from rewardkit.execution.pool import WorkerPool


def _segfault() -> None:
    ctypes.string_at(0)


def _unpicklable() -> object:
    return lambda: None


def _allocate(megabytes: int) -> int:
    return len(bytearray(megabytes * 1024 * 1024))


@pytest.fixture
async def pool():
    workers = WorkerPool(2)
    await workers.start()
    yield workers
    await workers.close()


async def test_runs_tasks_in_parallel_and_returns_values(pool: WorkerPool) -> None:
    results = await asyncio.gather(*(pool.run(pow, i, 2, timeout=5) for i in range(200)))
    assert results == [i * i for i in range(200)]
    started = time.perf_counter()
    await asyncio.gather(*(pool.run(time.sleep, 0.5, timeout=5) for _ in range(2)))
    assert time.perf_counter() - started < 0.95  # two workers sleep at the same time


async def test_timeout_kills_and_replaces_the_worker(pool: WorkerPool) -> None:
    started = time.perf_counter()
    with pytest.raises(ScorerTimeout, match=r"0\.3s"):
        await pool.run(time.sleep, 60, timeout=0.3)
    assert time.perf_counter() - started < 5
    assert pool.stats["timeouts"] == 1
    assert await pool.run(pow, 2, 5, timeout=5) == 32  # the pool is whole again
    assert len(pool._all) == 2


async def test_timeout_is_hard_even_for_code_that_swallows_exceptions(pool: WorkerPool) -> None:
    # A busy loop in C (no Python bytecode boundary) ignores any in-process timer.
    with pytest.raises(ScorerTimeout):
        await pool.run(pow, 10, 10**8, timeout=0.3)


@pytest.mark.parametrize("crash", [os._exit, _segfault])
async def test_a_crash_costs_only_its_task(pool: WorkerPool, crash) -> None:
    args = (3,) if crash is os._exit else ()
    others = [pool.run(pow, i, 2, timeout=5) for i in range(20)]
    outcomes = await asyncio.gather(
        pool.run(crash, *args, timeout=5), *others, return_exceptions=True
    )
    assert isinstance(outcomes[0], WorkerCrashed)
    assert "exit code" in str(outcomes[0])
    assert outcomes[1:] == [i * i for i in range(20)]


async def test_exceptions_and_unpicklable_results_are_scorer_errors(pool: WorkerPool) -> None:
    with pytest.raises(ScorerError, match="ZeroDivisionError"):
        await pool.run(divmod, 1, 0, timeout=5)
    with pytest.raises(ScorerError, match="cannot be sent back"):
        await pool.run(_unpicklable, timeout=5)
    assert await pool.run(abs, -1, timeout=5) == 1


async def test_cancelled_caller_does_not_leave_a_busy_worker(pool: WorkerPool) -> None:
    task = asyncio.create_task(pool.run(time.sleep, 60, timeout=120))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = await asyncio.gather(*(pool.run(pow, 3, 2, timeout=5) for _ in range(4)))
    assert results == [9] * 4


async def test_memory_limit_turns_a_memory_bomb_into_an_error() -> None:
    pool = WorkerPool(1, memory_mb=512)
    await pool.start()
    try:
        with pytest.raises(ScorerError, match="MemoryError"):
            await pool.run(_allocate, 4096, timeout=10)
        assert await pool.run(_allocate, 8, timeout=10) == 8 * 1024 * 1024
    finally:
        await pool.close()


async def test_closed_pool_refuses_work() -> None:
    pool = WorkerPool(1)
    await pool.start()
    await pool.close()
    with pytest.raises(ScorerError, match="closed"):
        await pool.run(abs, 1, timeout=1)
    with pytest.raises(ValueError):
        WorkerPool(0)
