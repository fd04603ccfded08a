"""guards: a task's progress reports (rewardkit.execution._board and TaskLink): pinned in
memory the worker and its pool share, read when the caller looks, every one handed on,
in order, before the task's answer; a record half written is never read."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from rewardkit.execution._board import BOARD_BYTES, Board
from rewardkit.execution._worker import report
from rewardkit.execution.pool import TaskLink, WorkerPool


def _steps(count: int, pause: float, size: int = 10) -> str:
    for step in range(count):
        report((step, "x" * size))
        time.sleep(pause)
    return "done"


def _two_then_wait(marker: str, go: str) -> str:
    """Report twice, say so (``marker``), wait (bounded) for ``go``, report once more."""
    report((0, "x"))
    report((1, "x"))
    Path(marker).touch()
    deadline = time.monotonic() + 30
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.01)
    report((2, "x"))
    return "done"


def _board() -> Board:
    board, fd = Board.create()
    os.close(fd)  # the worker's copy: the mapping stays
    return board


def test_records_are_read_in_order_and_only_the_current_tasks() -> None:
    board = _board()
    try:
        board.begin(1)
        assert board.pin(b"old")
        board.begin(2)
        assert board.pin(b"first") and board.pin(b"second")
        records, at = board.read(2, 0)
        assert [payload for payload, _ in records] == [b"first", b"second"]
        assert board.read(2, at) == ([], at)  # nothing new since
        assert board.read(1, 0) == ([], 0)  # task 1's record was written over
        assert all(abs(written - time.monotonic()) < 5 for _, written in records)
    finally:
        board.close()


def test_a_record_being_written_is_not_read_until_it_is_whole() -> None:
    board = _board()
    try:
        board.begin(7)
        assert board.pin(b"whole") and board.pin(b"torn")
        view = board._map
        end = view.find(b"torn")
        view[end : end + 4] = b"TORN"  # the payload no longer matches its header's CRC
        assert [p for p, _ in board.read(7, 0)[0]] == [b"whole"]
        view[end : end + 4] = b"torn"
        assert [p for p, _ in board.read(7, 0)[0]] == [b"whole", b"torn"]
    finally:
        board.close()


def test_a_full_board_refuses_every_later_record_of_the_task() -> None:
    """Once a report does not fit, a smaller one after it must not either: it would
    overtake the one sent another way (the board holds a prefix of the reports)."""
    board = _board()
    try:
        board.begin(1)
        assert not board.pin(b"x" * BOARD_BYTES)
        assert not board.pin(b"would fit")
        board.begin(2)
        assert board.pin(b"fits")
    finally:
        board.close()


async def test_reports_wait_on_the_board_until_the_caller_looks(tmp_path: Path) -> None:
    """No message per report: the caller sees nothing until it looks (collect), then
    every part so far, with when the last was written; the rest before the answer. (The
    task waits for the test between its reports: no sleep decides what is written when.)"""
    marker, go = tmp_path / "two-reported", tmp_path / "go"
    pool = WorkerPool(1)
    await pool.start()
    try:
        parts: list[Any] = []
        link = TaskLink(parts.append)
        running = asyncio.ensure_future(
            pool.run(_two_then_wait, str(marker), str(go), timeout=60, link=link)
        )
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert marker.exists()  # two reports written by now
        assert parts == [] and link.last_part_at is None
        assert link.collect() == 2
        assert [step for step, _ in parts] == [0, 1]
        assert link.last_part_at is not None and time.monotonic() - link.last_part_at < 30
        go.touch()
        assert await asyncio.wait_for(running, 30) == "done"
    finally:
        await pool.close()
    assert [step for step, _ in parts] == [0, 1, 2]


async def test_reports_past_a_full_board_cross_the_pipe_in_order() -> None:
    """20 reports of 100 KB: the first ten fill the board, the rest go through the pipe;
    the caller gets all twenty, in order, before the answer."""
    pool = WorkerPool(1)
    await pool.start()
    try:
        parts: list[Any] = []
        answer = await pool.run(_steps, 20, 0.0, 100_000, timeout=30, link=TaskLink(parts.append))
        again: list[Any] = []  # the next task starts its board over
        assert await pool.run(_steps, 2, 0.0, timeout=30, link=TaskLink(again.append)) == "done"
    finally:
        await pool.close()
    assert answer == "done"
    assert [step for step, _ in parts] == list(range(20))
    assert all(len(text) == 100_000 for _, text in parts)
    assert [step for step, _ in again] == [0, 1]
