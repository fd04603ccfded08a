"""The engine decides rows inline where it can: a Result at once, no task, no await.

Real engine, real worker pool: the rows that need math-verify go to a worker, the others
never leave the event loop's thread, and one call mixes both without losing order.
"""

from __future__ import annotations

import asyncio
import gc
import inspect

from rewardkit.config import RewardConfig
from rewardkit.scoring.engine import RewardEngine
from rewardkit.types import BadRow, Result, Status

INLINE_RIGHT = {"data_source": "math", "response": "So \\boxed{12}.", "ground_truth": "12"}
INLINE_WRONG = {"data_source": "math", "response": "So \\boxed{13}.", "ground_truth": "12"}
# \sin^2 x + \cos^2 x against 1: no inline rule reads it; math-verify's simplify does.
POOLED = {
    "data_source": "math",
    "response": "So \\boxed{\\sin^2 x + \\cos^2 x}.",
    "ground_truth": "1",
}
NO_TRUTH = {"data_source": "math", "response": "\\boxed{1}", "ground_truth": None}
UNKNOWN = {"data_source": "no-such-source", "response": "1", "ground_truth": "1"}


async def _engine(**reward: object) -> RewardEngine:
    config = RewardConfig.model_validate({"reward": {"num_workers": 1, **reward}})
    return await RewardEngine.create(config)


async def test_start_row_decides_inline_rows_at_once_and_defers_the_rest() -> None:
    engine = await _engine()
    try:
        right = engine.start_row(0, INLINE_RIGHT)
        invalid = engine.start_row(1, NO_TRUTH)
        pooled = engine.start_row(2, POOLED)
        assert isinstance(right, Result) and right.score == 1.0
        assert right.elapsed_s is not None
        assert isinstance(invalid, Result) and invalid.status is Status.INVALID
        assert "needs a ground_truth" in (invalid.error or "")
        assert inspect.iscoroutine(pooled)  # left to a worker: the caller awaits it
        finished = await pooled
        assert finished.status is Status.OK and finished.score == 1.0
        assert engine.stats["quick"] == 1 and engine.stats["pool"] == 1
    finally:
        await engine.close()


async def test_score_many_keeps_order_across_inline_pooled_and_failed_rows() -> None:
    engine = await _engine()
    rows = [INLINE_RIGHT, POOLED, NO_TRUTH, BadRow("not json"), UNKNOWN, INLINE_WRONG]
    try:
        results = await engine.score_many(rows, start=10)
    finally:
        await engine.close()
    assert [r.index for r in results] == list(range(10, 16))
    assert [r.status.value for r in results] == ["ok", "ok", *["invalid"] * 3, "ok"]
    assert [r.score for r in results if r.status is Status.OK] == [1.0, 1.0, -1.0]  # verl's scale
    assert "unknown data_source" in (results[4].error or "")
    assert all(r.elapsed_s is not None for r in results)


async def test_with_fast_paths_off_no_row_is_decided_inline() -> None:
    engine = await _engine(verifiers={"fast_paths": False})
    try:
        started = engine.start_row(0, INLINE_RIGHT)
        assert inspect.iscoroutine(started)
        assert (await started).score == 1.0
    finally:
        await engine.close()


async def test_an_interrupted_call_leaves_no_row_running() -> None:
    engine = await _engine()
    try:
        call = asyncio.ensure_future(engine.score_many([POOLED, INLINE_RIGHT] * 3))
        await asyncio.sleep(0)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        await engine.cancel_pending()
        running = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not [t for t in running if "_store" in repr(t.get_coro())]
    finally:
        await engine.close()


async def test_workers_keep_what_the_fork_server_loaded_out_of_the_collector() -> None:
    engine = await _engine()
    try:
        assert engine.pool is not None
        frozen = await engine.pool.run(gc.get_freeze_count, timeout=30)
    finally:
        await engine.close()
    assert frozen > 10_000  # math-verify, sympy and the parser's warm-up: all frozen


async def test_a_long_batch_of_inline_rows_hands_the_loop_back_as_it_goes() -> None:
    engine = await _engine()
    done: dict[int, object] = {}
    seen_midway: list[int] = []

    async def neighbour() -> None:  # another request on the same loop (a server's)
        await asyncio.sleep(0)
        seen_midway.append(len(done))

    try:
        rows = [INLINE_RIGHT] * 2_000
        await asyncio.gather(engine.score_into(rows, 0, done), neighbour())  # type: ignore[arg-type]
    finally:
        await engine.close()
    assert len(done) == 2_000
    assert seen_midway and 0 < seen_midway[0] < 2_000  # it ran while the batch was read
