"""guards: rewardkit._loopwatch: an async function that blocks the event loop is named, not
hidden behind others' timeouts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

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


def _spin(seconds: float) -> None:
    """CPU work on this thread (not a sleep): ``seconds`` of this thread's CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@pytest.mark.skipif(
    not Path("/proc/thread-self/schedstat").exists(), reason="the kernel's run-queue times"
)
def test_a_step_slowed_by_a_busy_machine_is_not_blamed_on_its_coroutine() -> None:
    # Under a loaded machine a short step waits for a CPU; that wait is not the step's.
    # Six spinning processes share the one CPU this thread is pinned to: a step of 20 ms
    # of CPU work takes about 140 ms of wall time, over the 60 ms limit. A thread of this
    # process running Python beside it holds the GIL while it waits for the CPU, and the
    # step waits for the GIL: not the step's time either. Sleeping for 120 ms, or 120 ms
    # of CPU work, is still a blocked loop.
    cpu = min(os.sched_getaffinity(0))
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    others = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(6)]
    mask = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    log = BlockLog(limit_s=0.06)

    async def step(work: Callable[[], None]) -> str:
        await asyncio.sleep(0)
        start = time.perf_counter()
        work()
        return f"{time.perf_counter() - start:.3f}s"

    async def blamed(work: Callable[[], None]) -> tuple[bool, str]:
        try:
            return False, await watched(step(work), "row", log)
        except LoopBlocked as exc:
            return True, str(exc)

    def busy_thread() -> None:  # holds the GIL whenever it runs, waits for the CPU too
        while not done.is_set():
            sum(range(1000))

    done = threading.Event()
    try:
        time.sleep(0.3)  # the spinners start
        short = [asyncio.run(blamed(lambda: _spin(0.02))) for _ in range(3)]
        beside = threading.Thread(target=busy_thread)
        beside.start()
        short_beside_a_thread = [asyncio.run(blamed(lambda: _spin(0.02))) for _ in range(5)]
        done.set()
        beside.join()
        sleeping = asyncio.run(blamed(lambda: time.sleep(0.12)))
        hogging = asyncio.run(blamed(lambda: _spin(0.12)))
    finally:
        done.set()
        os.sched_setaffinity(0, mask)
        for other in others:
            other.kill()
            other.wait()
    assert [b for b, _ in short] == [False] * 3, short
    assert [b for b, _ in short_beside_a_thread] == [False] * 5, short_beside_a_thread
    assert sleeping[0] and "row blocked the event loop" in sleeping[1]
    assert hogging[0] and "row blocked the event loop" in hogging[1]
