"""guards: rewardkit._loopwatch: an async function that blocks the event loop is named, not
hidden behind others' timeouts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from rewardkit import RewardLoop
from rewardkit._loopwatch import BlockLog, LoopBlocked, watched

FUNCTIONS = """
import asyncio, time

async def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "block":
        time.sleep(1.2)          # the bug: a blocking call inside async code
        return 1.0
    await asyncio.sleep(0.2)     # a well-behaved row that waits on I/O
    return 0.5
"""


def test_blocking_async_function_is_named_in_its_row_and_a_warning(tmp_path: Path, caplog) -> None:
    path = tmp_path / "fn.py"
    path.write_text(FUNCTIONS)
    config = {
        "reward": {
            "num_workers": 1,
            "async_timeout_s": 0.8,  # under the block: rows waiting behind it time out
            "custom_reward_function": {"path": str(path)},
        }
    }
    rows = [{"data_source": "x", "response": r} for r in ["fine"] * 5 + ["block"] + ["fine"] * 5]
    with caplog.at_level(logging.WARNING, logger="rewardkit"), RewardLoop(config) as loop:
        results = loop.score(rows)
    culprit = results[5]
    # It returned 1.0, but while it slept nobody else could run: that is not an ok row.
    assert culprit.status == "error" and "compute_score" in culprit.error
    assert "blocked the event loop" in culprit.error and "time.sleep" in culprit.error
    assert any("compute_score" in r.getMessage() for r in caplog.records)
    for other in results[:5] + results[6:]:
        # A neighbour either finished or timed out; a timeout names who blocked the loop.
        assert other.status in ("ok", "timeout")
        if other.status == "timeout":
            assert "blocked" in other.error and "compute_score" in other.error
        else:
            assert other.score == 0.5
    assert all(r.elapsed_s is not None and r.elapsed_s >= 0 for r in results)


def test_watched_passes_through_values_and_cancellation() -> None:
    log = BlockLog(limit_s=0.5)

    async def quick() -> int:
        await asyncio.sleep(0.01)
        return 7

    async def forever() -> None:
        await asyncio.sleep(3600)

    async def blocking() -> int:
        time.sleep(0.7)
        return 1

    async def main() -> None:
        assert await watched(quick(), "quick", log) == 7
        task = asyncio.ensure_future(watched(forever(), "forever", log))
        await asyncio.sleep(0.05)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        assert task.cancelled()
        try:
            await watched(blocking(), "slowpoke", log)
        except LoopBlocked as exc:
            assert "slowpoke" in str(exc)
        else:
            raise AssertionError("a 0.7 s blocking step passed a 0.5 s limit")

    asyncio.run(main())
    assert log.during(0, time.perf_counter()) is not None
