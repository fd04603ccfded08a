"""guards: a task's progress reports on its worker's board (rewardkit.execution._board,
_worker.report, pool.TaskLink): every part handed on once and in order across the
board / pipe boundary, before any answer or failure; a worker's board starts clean for
each task and for each replacement; no descriptors left behind by replaced workers."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from typing import Any

import pytest

from rewardkit.errors import ScorerTimeout, WorkerCrashed
from rewardkit.execution._worker import cut_asked, report
from rewardkit.execution.pool import TaskLink, WorkerPool

# ------------------------------------------------------------------ tasks (in workers)


def _sized(sizes: list[int]) -> str:
    """One report per size, each ``(index, "x" * size)``."""
    for index, size in enumerate(sizes):
        report((index, "x" * size))
    return "done"


def _tiny(count: int) -> int:
    for index in range(count):
        report(index)
    return count


def _report_then_exit(count: int) -> None:
    for index in range(count):
        report(index)
    os._exit(3)


def _report_then_hang(count: int, size: int = 10) -> None:
    for index in range(count):
        report((index, "x" * size))
    time.sleep(60)


def _report_until_cut(pause: float) -> tuple[str, int]:
    step = 0
    while True:
        report(step)
        time.sleep(pause)
        if cut_asked():
            return "cut", step
        step += 1


def _threads_report(threads: int, each: int, size: int) -> str:
    """Several threads report at once (a user function with a thread pool)."""

    def one(name: int) -> None:
        for index in range(each):
            report((name, index, "x" * size))

    started = [threading.Thread(target=one, args=(n,)) for n in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    return "done"


def _pid() -> int:
    return os.getpid()


# ------------------------------------------------------------------ helpers


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _board_fds() -> int:
    """This process's descriptors of worker boards (memfds named rewardkit-board)."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            count += "rewardkit-board" in os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            pass
    return count


def _maps(name: str = "rewardkit-board") -> int:
    with open("/proc/self/maps") as handle:
        return sum(name in line for line in handle)


# ------------------------------------------------------------------ order across the boundary


async def test_a_part_too_big_for_what_is_left_of_the_board_keeps_its_place() -> None:
    """Ten parts of 100 KB fill the board but for ~48 KB; an 80 KB part then goes through
    the pipe, and the three small parts after it fit on the board again. The caller must
    get them in the order the task reported them: 0..9, the big one, then the small ones.

    The pool's loop is kept busy while the task reports (as a loaded driver would be), so
    that the pipe message is read after the small parts were pinned."""
    sizes = [100_000] * 10 + [80_000] + [10, 10, 10]
    pool = WorkerPool(1)
    await pool.start()
    try:
        parts: list[Any] = []
        running = asyncio.ensure_future(
            pool.run(_sized, sizes, timeout=30, link=TaskLink(parts.append))
        )
        await asyncio.sleep(0.05)  # the task is sent
        time.sleep(1.0)  # the loop is busy meanwhile: the worker reports everything
        assert await running == "done"
    finally:
        await pool.close()
    assert [index for index, _ in parts] == list(range(len(sizes)))
    assert [len(text) for _, text in parts] == sizes


async def test_raw_parts_are_bytes_on_both_sides_of_the_boundary() -> None:
    """``raw=True`` (the Ray actor's link): each part handed on pickled, as bytes, the
    same type whether it came from the board or, the board full, through the pipe."""
    pool = WorkerPool(1)
    await pool.start()
    try:
        parts: list[Any] = []
        sizes = [100_000] * 12  # the last two cross the pipe
        assert await pool.run(_sized, sizes, timeout=30, link=TaskLink(parts.append, raw=True))
    finally:
        await pool.close()
    assert len(parts) == 12
    assert [type(p).__name__ for p in parts] == ["bytes"] * 12


async def test_thousands_of_tiny_parts_then_the_next_task_starts_clean() -> None:
    """60 000 tiny reports: the board fills (~1 MiB), the rest cross the pipe; every one
    arrives once, in order; the next task on that worker reads only its own parts,
    although the board still holds the first task's records past them."""
    pool = WorkerPool(1)
    await pool.start()
    try:
        first: list[Any] = []
        link = TaskLink(first.append)
        assert await pool.run(_tiny, 60_000, timeout=60, link=link) == 60_000
        second: list[Any] = []
        assert await pool.run(_tiny, 5, timeout=30, link=TaskLink(second.append)) == 5
        third: list[Any] = []  # and a task without reports reads nothing stale
        assert await pool.run(_tiny, 0, timeout=30, link=TaskLink(third.append)) == 0
    finally:
        await pool.close()
    assert first == list(range(60_000))
    assert second == list(range(5))
    assert third == []


async def test_collect_while_running_then_at_the_end_hands_each_part_once() -> None:
    """The caller looks many times while the task reports (board then pipe): no part is
    handed twice or skipped."""
    pool = WorkerPool(1)
    await pool.start()
    try:
        parts: list[Any] = []
        link = TaskLink(parts.append)
        running = asyncio.ensure_future(pool.run(_tiny, 80_000, timeout=60, link=link))
        while not running.done():
            link.collect()
            await asyncio.sleep(0.001)
        assert await running == 80_000
        assert link.collect() == 0  # the task is over: nothing more, nothing again
    finally:
        await pool.close()
    assert parts == list(range(80_000))


# ------------------------------------------------------------------ failures


async def test_parts_before_a_crash_are_all_handed_on_before_the_failure() -> None:
    pool = WorkerPool(1)
    await pool.start()
    try:
        parts: list[Any] = []
        with pytest.raises(WorkerCrashed):
            await pool.run(_report_then_exit, 500, timeout=30, link=TaskLink(parts.append))
        assert parts == list(range(500))
        again: list[Any] = []  # the replacement's board is its own, its serial from 1
        assert await pool.run(_tiny, 3, timeout=30, link=TaskLink(again.append)) == 3
        assert again == [0, 1, 2]
    finally:
        await pool.close()


async def test_parts_past_a_full_board_before_a_crash_are_all_handed_on() -> None:
    pool = WorkerPool(1)
    await pool.start()
    try:
        parts: list[Any] = []
        with pytest.raises(WorkerCrashed):
            await pool.run(_report_then_exit, 70_000, timeout=30, link=TaskLink(parts.append))
        assert parts == list(range(70_000))
    finally:
        await pool.close()


async def test_parts_before_a_timeout_are_handed_on_and_the_replacement_starts_clean() -> None:
    pool = WorkerPool(1)
    await pool.start()
    try:
        first_pid = await pool.run(_pid, timeout=10)
        parts: list[Any] = []
        with pytest.raises(ScorerTimeout):
            await pool.run(_report_then_hang, 7, timeout=1.0, link=TaskLink(parts.append))
        assert [index for index, _ in parts] == list(range(7))
        second_pid = await pool.run(_pid, timeout=10)  # serial 1 on the new worker
        assert second_pid != first_pid
        again: list[Any] = []  # serial 2 there: the pool counts the same way
        assert await pool.run(_tiny, 4, timeout=30, link=TaskLink(again.append)) == 4
        assert again == list(range(4))
    finally:
        await pool.close()


async def test_a_cut_between_reports_ends_the_task_with_every_part_handed_on() -> None:
    pool = WorkerPool(1)
    await pool.start()
    try:
        parts: list[Any] = []
        link = TaskLink(parts.append)
        running = asyncio.ensure_future(pool.run(_report_until_cut, 0.05, timeout=30, link=link))
        await asyncio.sleep(0.3)
        link.cut()
        kind, step = await asyncio.wait_for(running, 10)
        again: list[Any] = []
        assert await pool.run(_tiny, 2, timeout=30, link=TaskLink(again.append)) == 2
    finally:
        await pool.close()
    assert kind == "cut"
    assert parts == list(range(step + 1))
    assert again == [0, 1]


# ------------------------------------------------------------------ leaks


async def test_replaced_workers_leave_no_descriptors_or_boards_behind() -> None:
    """Twelve timeouts, twelve replacements: the pool's process holds no more descriptors
    or board mappings than it did with its first worker."""
    pool = WorkerPool(1)
    await pool.start()
    try:
        await pool.run(_pid, timeout=10)
        fds, maps, boards = _fds(), _maps(), _board_fds()
        for _ in range(12):
            with pytest.raises(ScorerTimeout):
                await pool.run(_report_then_hang, 1, timeout=0.2, link=TaskLink(lambda _: None))
        await pool.run(_pid, timeout=10)
        assert pool.stats["restarts"] == 12
        assert _fds() <= fds + 1, (fds, _fds())
        assert _maps() <= maps, (maps, _maps())
        assert _board_fds() <= boards, (boards, _board_fds())
    finally:
        await pool.close()


async def test_a_closed_pool_leaves_no_board_behind() -> None:
    """Once ``close()`` returns, its workers' boards (a memfd descriptor and a 1 MiB
    mapping each) are released, not left to whoever still holds a worker: here the
    failure of a task in flight at close, kept by its caller (as ``gather(...,
    return_exceptions=True)`` keeps it), whose traceback reaches the worker."""
    gc.collect()
    before_fds, before_maps = _board_fds(), _maps()
    gc.disable()  # what close() releases itself, not what a collection happens to
    try:
        pool = WorkerPool(2)
        await pool.start()
        await pool.run(_pid, timeout=10)
        running = asyncio.ensure_future(
            pool.run(_report_then_hang, 1, timeout=30, link=TaskLink(lambda _: None))
        )
        await asyncio.sleep(0.3)
        await pool.close()
        (failure,) = await asyncio.gather(running, return_exceptions=True)
        assert isinstance(failure, Exception)
        assert _maps() == before_maps, (before_maps, _maps())
        assert _board_fds() == before_fds, (before_fds, _board_fds())
    finally:
        gc.enable()


# ------------------------------------------------------------------ threads


async def test_parts_reported_from_several_threads_are_all_handed_on() -> None:
    """Reports from two threads at once (8 KB parts: their CRC runs without the GIL):
    through the pipe each was one message; on the board none may be lost or torn."""
    pool = WorkerPool(1)
    await pool.start()
    try:
        rounds: list[list[Any]] = []
        for _ in range(3):
            parts: list[Any] = []
            link = TaskLink(parts.append)
            assert await pool.run(_threads_report, 2, 50, 8_000, timeout=30, link=link)
            rounds.append(parts)
    finally:
        await pool.close()
    assert [len(parts) for parts in rounds] == [100, 100, 100]
    for parts in rounds:
        for name in (0, 1):
            assert [index for who, index, _ in parts if who == name] == list(range(50))


# ------------------------------------------------------------------ zygote-forked workers


async def test_workers_the_zygote_forks_get_a_board_too() -> None:
    """With warm-ups, the cold workers are swapped for ones the zygote forks (another
    socket, another path to the board's descriptor): their reports arrive all the same,
    board and pipe, and a timeout's replacement (forked there too) starts clean."""
    pool = WorkerPool(1, warm=("json",))
    await pool.start()
    try:
        started = time.perf_counter()
        while pool.warming and time.perf_counter() - started < 20:
            await pool.run(_pid, timeout=10)  # a busy cold worker is swapped after its task
            await asyncio.sleep(0.05)
        assert not pool.warming and pool.stats["warmed"] == 1
        parts: list[Any] = []
        assert await pool.run(_tiny, 40_000, timeout=30, link=TaskLink(parts.append)) == 40_000
        assert parts == list(range(40_000))
        late: list[Any] = []
        with pytest.raises(ScorerTimeout):
            await pool.run(_report_then_hang, 3, timeout=0.5, link=TaskLink(late.append))
        assert [index for index, _ in late] == [0, 1, 2]
        again: list[Any] = []
        assert await pool.run(_tiny, 3, timeout=30, link=TaskLink(again.append)) == 3
        assert again == [0, 1, 2]
    finally:
        await pool.close()
