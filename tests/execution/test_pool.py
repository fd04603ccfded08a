"""guards: the worker pool (rewardkit.execution.pool): hard timeouts, crashes, fairness,
affinity, and workers that never outlive the pool."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _support.processes import gone, wait_gone
from rewardkit.errors import ScorerError, ScorerTimeout, WorkerCrashed
from rewardkit.execution import pool as pool_module
from rewardkit.execution.pool import WorkerPool, _drop_zygote, fair_share


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
    await _until(lambda: len(pool._idle) < pool.size)  # a worker has taken it
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


async def _until(condition: Callable[[], object], within_s: float = 60.0) -> None:
    """Wait for the pool to reach a state (an event, not a guess of how long it takes)."""
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, "the pool never reached the expected state"
        await asyncio.sleep(0.01)


def _spin(seconds: float) -> int:
    """A busy loop (100% CPU), like a runaway scorer."""
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        n += 1
    return n


def _echo(value: object) -> object:
    return value


async def test_workers_die_with_the_fork_server(pool: WorkerPool) -> None:
    from multiprocessing import forkserver

    busy = [asyncio.create_task(pool.run(_spin, 60, timeout=120)) for _ in range(2)]
    await asyncio.sleep(0.5)
    pids = [w.process.pid for w in pool._all]
    os.kill(forkserver._forkserver._forkserver_pid, signal.SIGKILL)
    assert await asyncio.to_thread(wait_gone, pids, 10) == []
    outcomes = await asyncio.gather(*busy, return_exceptions=True)
    assert all(isinstance(o, WorkerCrashed) for o in outcomes)
    # Replacements come from a new fork server: the pool is whole again.
    assert await asyncio.gather(*(pool.run(pow, 2, i, timeout=30) for i in range(4))) == [
        1,
        2,
        4,
        8,
    ]


KILLED_SUPERVISOR = """
import asyncio, sys, time
from rewardkit.execution.pool import WorkerPool, fair_share
from tests_pool_helpers import spin

async def main():
    pool = WorkerPool(2, warm=WARM)
    await pool.start()
    tasks = [asyncio.create_task(pool.run(spin, 120, timeout=300)) for _ in range(2)]
    await asyncio.sleep(0.5)
    zygote = [pool._zygote.process.pid] if pool._zygote else []
    print(" ".join(str(pid) for pid in [w.process.pid for w in pool._all] + zygote), flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


@pytest.mark.parametrize("warm", [[], ["json"]], ids=["fork server", "zygote"])
def test_workers_die_with_the_process_that_runs_the_pool(tmp_path, warm: list[str]) -> None:
    """Whichever forked them: the fork server, or the zygote (then it dies too)."""
    (tmp_path / "tests_pool_helpers.py").write_text(
        "import time\n\ndef spin(seconds):\n    deadline = time.monotonic() + seconds\n"
        "    while time.monotonic() < deadline:\n        pass\n"
    )
    script = tmp_path / "supervisor.py"
    script.write_text(f"WARM = {warm!r}\n" + KILLED_SUPERVISOR)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    supervisor = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        line = supervisor.stdout.readline()
        pids = [int(p) for p in line.split()]
        assert len(pids) == 2 + bool(warm) and not any(gone(p) for p in pids)
        supervisor.kill()  # SIGKILL: no cleanup of its own runs
        supervisor.wait(timeout=10)
        assert wait_gone(pids, 10) == []
    finally:
        if supervisor.poll() is None:
            supervisor.kill()


async def test_a_free_worker_goes_to_the_requester_holding_fewest() -> None:
    pool = WorkerPool(2)
    await pool.start()
    try:
        with fair_share("A"):  # ten 0.5 s tasks: 2.5 s of queue on two workers
            slow = [asyncio.create_task(pool.run(time.sleep, 0.5, timeout=10)) for _ in range(10)]
        await asyncio.sleep(0.1)
        started = time.perf_counter()
        with fair_share("B"):
            assert await pool.run(pow, 3, 2, timeout=10) == 9
        waited = time.perf_counter() - started
        await asyncio.gather(*slow)
    finally:
        await pool.close()
    # B takes the first worker to free up (about 0.4 s), not the end of A's queue (2.5 s).
    assert waited < 1.5, f"B waited {waited:.2f}s behind A's queue"


async def test_fair_share_alternates_between_requesters_and_keeps_order_within_one() -> None:
    pool = WorkerPool(1)
    await pool.start()
    order: list[str] = []

    async def one(owner: str, i: int) -> None:
        with fair_share(owner):
            await pool.run(time.sleep, 0.05, timeout=10)
        order.append(f"{owner}{i}")

    try:
        with fair_share("A"):
            blocker = asyncio.create_task(pool.run(time.sleep, 1.0, timeout=10))
        await _until(lambda: not pool._idle)  # the blocker holds the one worker
        tasks = [asyncio.create_task(one("A", i)) for i in range(3)]
        await asyncio.sleep(0)
        tasks += [asyncio.create_task(one("B", i)) for i in range(3)]
        await asyncio.gather(blocker, *tasks)
    finally:
        await pool.close()
    assert order == ["B0", "A0", "B1", "A1", "B2", "A2"]


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_large_tasks_and_replies_cross_the_pipe_on_any_loop(loop: str) -> None:
    # uvloop leaves the pipe non-blocking: a task over its buffer once failed with EAGAIN.
    import uvloop

    async def main() -> None:
        pool = WorkerPool(1)
        await pool.start()
        try:
            big = "x" * 5_000_000
            for _ in range(2):
                assert await pool.run(_echo, big, timeout=30) == big
            assert await pool.run(pow, 2, 10, timeout=30) == 1024
        finally:
            await pool.close()

    factory = uvloop.new_event_loop if loop == "uvloop" else asyncio.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main())


async def test_waiting_tasks_fail_when_the_pool_closes() -> None:
    pool = WorkerPool(1)
    await pool.start()
    busy = asyncio.create_task(pool.run(time.sleep, 5, timeout=10))
    await _until(lambda: not pool._idle)  # the one worker is busy
    waiting = asyncio.create_task(pool.run(abs, -1, timeout=10))
    await _until(lambda: bool(pool._waiting))  # queued behind it
    await pool.close()
    with pytest.raises(ScorerError, match="closed"):
        await waiting
    with pytest.raises((WorkerCrashed, ScorerError, asyncio.CancelledError)):
        await busy


def _sleep_then_pid(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _keys_by_worker(size: int) -> list[str]:
    """One affinity key per worker slot (str hashes differ between processes)."""
    keys: dict[int, str] = {}
    for i in range(1000):
        keys.setdefault(hash(f"gold-{i}") % size, f"gold-{i}")
    return [keys[slot] for slot in range(size)]


async def test_tasks_with_one_affinity_reach_one_worker(pool: WorkerPool) -> None:
    first, second = _keys_by_worker(2)
    pids = {key: {await pool.run(os.getpid, timeout=5, affinity=key) for _ in range(6)}
            for key in (first, second, first)}  # fmt: skip
    assert len(pids[first]) == 1 and len(pids[second]) == 1  # each prompt its own worker
    assert pids[first] != pids[second]


async def test_affinity_never_leaves_a_worker_idle(pool: WorkerPool) -> None:
    busy_key, _ = _keys_by_worker(2)
    blocker = asyncio.create_task(pool.run(_sleep_then_pid, 1.5, timeout=10, affinity=busy_key))
    await _until(lambda: len(pool._idle) == 1)  # the preferred worker is taken
    started = time.perf_counter()
    pids = await asyncio.gather(
        *(pool.run(_sleep_then_pid, 0.1, timeout=10, affinity=busy_key) for _ in range(3))
    )
    waited = time.perf_counter() - started
    # The other worker took them all rather than idle while they waited for theirs.
    assert waited < 1.2, f"tasks waited {waited:.2f}s for their preferred worker"
    assert len(set(pids)) == 1 and await blocker not in pids


async def test_a_task_without_affinity_is_not_passed_over(pool: WorkerPool) -> None:
    busy_key, free_key = _keys_by_worker(2)
    order: list[str] = []

    async def one(name: str, key: str | None) -> None:
        await pool.run(time.sleep, 0.2, timeout=10, affinity=key)
        order.append(name)

    blockers = [asyncio.create_task(one("blocker0", busy_key)),
                asyncio.create_task(one("blocker1", free_key))]  # fmt: skip
    await _until(lambda: not pool._idle)
    queued = [asyncio.create_task(one(f"busy{i}", busy_key)) for i in range(3)]
    queued.append(asyncio.create_task(one("plain", None)))
    await asyncio.gather(*blockers, *queued)
    # The first worker to free up that no busy-key task prefers takes the plain task at
    # once, ahead of older tasks that prefer the other worker.
    assert order.index("plain") <= 3


async def test_affinity_on_a_one_worker_pool_and_mixed_tasks() -> None:
    """Ize=1, tasks with keys (several), with None and without: all run, in order."""
    pool = WorkerPool(1)
    await pool.start()
    try:
        keys: list[Any] = ["a", None, "b", ("t", 1), None, 7]
        pids = await asyncio.gather(
            *(pool.run(_sleep_then_pid, 0.01, timeout=10, affinity=key) for key in keys * 3)
        )
    finally:
        await pool.close()
    assert len(set(pids)) == 1


async def test_a_replaced_worker_keeps_its_slot_for_its_keys() -> None:
    """Fter a timeout kills the worker a key prefers, its replacement takes that
    slot: the key's tasks reach one (new) worker again, and the other key is untouched."""
    pool = WorkerPool(2)
    await pool.start()
    try:
        first, second = _keys_by_worker(2)
        before = {await pool.run(os.getpid, timeout=5, affinity=first) for _ in range(4)}
        with pytest.raises(ScorerTimeout):
            await pool.run(_sleep_then_pid, 5, timeout=0.2, affinity=first)
        after = {await pool.run(os.getpid, timeout=5, affinity=first) for _ in range(4)}
        other = {await pool.run(os.getpid, timeout=5, affinity=second) for _ in range(4)}
    finally:
        await pool.close()
    assert len(before) == len(after) == len(other) == 1
    assert before != after and after != other


async def test_an_unhashable_affinity_is_refused_and_costs_nothing() -> None:
    """list key raises TypeError before any worker is taken; the pool still works."""
    pool = WorkerPool(2)
    await pool.start()
    try:
        with pytest.raises(TypeError):
            await pool.run(os.getpid, timeout=5, affinity=["1", "2"])  # type: ignore[arg-type]
        assert len(pool._idle) == 2 and not pool._running
        assert await pool.run(os.getpid, timeout=5, affinity="x") > 0
    finally:
        await pool.close()


async def test_a_task_whose_worker_is_stuck_waits_at_most_for_the_others_queue() -> None:
    """He worker a key prefers is stuck (3 s); tasks of that key queued before 8
    short tasks of the other key still finish once the free worker has no other task in
    its window, long before the stuck one frees (no starvation, no idle worker)."""
    pool = WorkerPool(2)
    await pool.start()
    try:
        stuck_key, free_key = _keys_by_worker(2)
        stuck = asyncio.create_task(pool.run(_sleep_then_pid, 3.0, timeout=10, affinity=stuck_key))
        while len(pool._idle) != 1:
            await asyncio.sleep(0.01)
        started = time.perf_counter()
        waiting = [
            pool.run(_sleep_then_pid, 0.05, timeout=10, affinity=stuck_key) for _ in range(2)
        ]
        others = [pool.run(_sleep_then_pid, 0.05, timeout=10, affinity=free_key) for _ in range(8)]
        await asyncio.gather(*waiting, *others)
        elapsed = time.perf_counter() - started
        await stuck
    finally:
        await pool.close()
    assert elapsed < 2.5, f"tasks waited {elapsed:.2f}s for a stuck worker"


@pytest.mark.parametrize("ending", ["return", "time out"])
async def test_as_many_stuck_tasks_as_workers_hold_no_other_task(ending: str) -> None:
    """Both workers of a pool of two run a task for 4 s (it returns, or times out at
    3.5 s). Past STUCK_TASK_S a spare worker serves the tasks that wait, long before
    either frees; once the stuck ones end, the pool is back to its size."""
    pool = WorkerPool(2, spares=2)
    await pool.start()
    timeout = 10.0 if ending == "return" else 3.5
    try:
        stuck = [asyncio.create_task(pool.run(time.sleep, 4.0, timeout=timeout)) for _ in range(2)]
        while pool._idle:
            await asyncio.sleep(0.01)
        started = time.perf_counter()
        squares = await asyncio.gather(*(pool.run(pow, i, 2, timeout=10) for i in range(20)))
        elapsed = time.perf_counter() - started
        assert squares == [i * i for i in range(20)]
        assert 1 <= pool.stats["spares"] <= 2 and len(pool._all) <= 4
        await asyncio.gather(*stuck, return_exceptions=True)
        for _ in range(200):  # a spare or a replacement no longer needed is stopped
            if len(pool._all) == 2 and not pool._stopping:
                break
            await asyncio.sleep(0.02)
        assert len(pool._all) == 2 and not pool._stopping
        assert await pool.run(pow, 3, 2, timeout=5) == 9
    finally:
        await pool.close()
    assert elapsed < pool_module.STUCK_TASK_S + 2.0, f"tasks waited {elapsed:.2f}s"


async def test_no_spare_while_nothing_waits_or_with_none_allowed() -> None:
    """A task running long with the other worker free forks nothing; nor do two stuck
    tasks with tasks waiting when the pool may have no spares (reward.spare_workers=0)."""
    pool = WorkerPool(2, spares=2)
    await pool.start()
    try:
        await pool.run(time.sleep, pool_module.STUCK_TASK_S + 0.3, timeout=10)
        assert pool.stats["spares"] == 0 and len(pool._all) == 2
    finally:
        await pool.close()
    pool = WorkerPool(2)  # spares=0, the default of the class (the config's: num_workers)
    await pool.start()
    try:
        stuck = [pool.run(time.sleep, pool_module.STUCK_TASK_S + 0.5, timeout=10) for _ in range(2)]
        await asyncio.gather(*stuck, *(pool.run(pow, i, 2, timeout=10) for i in range(4)))
        assert pool.stats["spares"] == 0 and len(pool._all) == 2
    finally:
        await pool.close()


async def test_a_worker_holding_too_many_processes_is_replaced(monkeypatch) -> None:
    """Adopted orphans that exit stay zombies of the worker (reaping them could steal a
    status the user's code waits for): a worker past the bound is replaced, ending them."""
    monkeypatch.setattr(pool_module, "_CENSUS_EVERY", 4)
    monkeypatch.setattr(pool_module, "_MAX_BELOW", 5)
    pool = WorkerPool(1)
    await pool.start()
    try:
        workers = [await pool.run(_orphan_that_exits, timeout=30) for _ in range(12)]
    finally:
        await pool.close()
    # Counted after tasks 4 (4 zombies: kept), 8 (8: replaced) and 12 (4 more: kept).
    assert workers[:8] == [workers[0]] * 8 and workers[8:] == [workers[8]] * 4
    assert workers[0] != workers[8] and pool.stats["restarts"] == 1


def _orphan_that_exits() -> int:
    """Leave an orphan that exits at once (a zombie of the worker, which adopts it)."""
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:
            os._exit(0)
        os._exit(0)
    os.waitpid(middle, 0)
    return os.getpid()


PRINTING_POOL = """
import asyncio
from rewardkit.execution.pool import WorkerPool
from tests_print_helpers import chatter

async def main():
    pool = WorkerPool(2)
    await pool.start()
    try:
        await asyncio.gather(*(pool.run(chatter, w, timeout=30) for w in range(8)))
    finally:
        await pool.close()

asyncio.run(main())
"""


def test_workers_print_whole_lines_even_unbuffered(tmp_path) -> None:
    """Workers share the parent's stderr. Under PYTHONUNBUFFERED a print is one write per
    argument, and CI once saw "debug: scoringdebug: scoring b" from two workers; a worker's
    stdout and stderr are line-buffered, so every line arrives whole."""
    (tmp_path / "tests_print_helpers.py").write_text(
        "import sys\n\ndef chatter(w):\n    for i in range(300):\n"
        "        print('worker', w, 'line', i, 'end')\n"
        "        print('err', w, 'line', i, 'end', file=sys.stderr)\n"
    )
    (tmp_path / "printing_pool.py").write_text(PRINTING_POOL)
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "printing_pool.py")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == ""  # stdout belongs to the parent's rows
    lines = proc.stderr.splitlines()
    assert len(lines) == 8 * 300 * 2
    torn = [
        line
        for line in lines
        if not (
            line.startswith(("worker ", "err "))
            and line.endswith(" end")
            and line.count("line") == 1
        )
    ]
    assert torn == []


# --- the zygote: the first worker serves while the warm-ups run -------------------------


def _warmth(nap: float = 0.0) -> tuple[int, bool]:
    """This worker's pid, and whether it started with the warm-up done."""
    time.sleep(nap)
    return os.getpid(), "_support.warm_marker" in sys.modules


def _exit_three() -> None:
    os._exit(3)


async def test_workers_serve_at_once_and_are_swapped_for_warm_ones_from_the_zygote() -> None:
    """With warm-ups, the workers (from the fork server) answer before the warm-up is
    done (it waits for the test's gate); then each is swapped for one the zygote forks
    with it done, as is every replacement after a timeout or a crash (its exit code read
    all the same). The pool's close leaves none of its workers running; the zygote is the
    process's, and the next pool's workers fork from it warm at once, with no swap."""
    gate = Path(__file__).parents[1] / "_support" / "warm_marker.gate"
    gate.unlink(missing_ok=True)  # the warm-up waits for it
    pool = WorkerPool(2, warm=["_support.warm_marker"])
    await pool.start(wait=False)
    try:
        first_pid, first_warm = await pool.run(_warmth, timeout=60)
        assert not first_warm
        gate.touch()
        deadline = time.monotonic() + 60
        while pool.stats["warmed"] < 2:  # both idle: swapped as soon as the zygote is ready
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        both = await asyncio.gather(*(pool.run(_warmth, 0.5, timeout=60) for _ in range(2)))
        assert all(warm for _, warm in both) and first_pid not in {pid for pid, _ in both}
        naps = [pool.run(_warmth, 30, timeout=0.5) for _ in range(2)]  # both replaced
        timeouts = await asyncio.gather(*naps, return_exceptions=True)
        assert all(isinstance(t, ScorerTimeout) for t in timeouts), timeouts
        crashes = [pool.run(_exit_three, timeout=30) for _ in range(2)]  # both replaced again
        for crash in await asyncio.gather(*crashes, return_exceptions=True):
            assert isinstance(crash, WorkerCrashed) and "exit code 3" in str(crash), crash
        after = await asyncio.gather(*(pool.run(_warmth, 0.5, timeout=60) for _ in range(2)))
        assert all(warm for _, warm in after)  # from the zygote
        assert pool.stats["restarts"] == 4 and pool.stats["warmed"] == 2
        pids = [first_pid, *(pid for pid, _ in both + after)]
        zygote = pool._zygote
        assert zygote is not None and zygote.process.pid is not None
    finally:
        await pool.close()
        gate.unlink(missing_ok=True)
    assert wait_gone(pids) == [] and not gone(zygote.process.pid)

    again = WorkerPool(1, warm=["_support.warm_marker"])
    await again.start()
    try:
        pid, warm = await again.run(_warmth, timeout=60)
        assert warm and again.stats["warmed"] == 0 and again._zygote is zygote
    finally:
        await again.close()
        _drop_zygote(zygote)
        zygote.stop()
    assert wait_gone([pid, zygote.process.pid]) == []


_LOADED: list[str] = []  # in a worker: what its preparations loaded


def _load_slowly() -> None:  # a verifier family's checkers and models: seconds to load
    time.sleep(1.0)
    _LOADED.append("checkers")


def _cannot_load() -> None:
    raise RuntimeError("no such language model")


def _loaded_here() -> int:
    return len(_LOADED)


async def test_a_preparation_runs_once_per_worker_outside_the_tasks_time() -> None:
    # Loading IFEval's checkers on a loaded machine took longer than a row's limit: every
    # row of a cold worker (and of its cold replacement) ended a timeout.
    workers = WorkerPool(1)
    await workers.start()
    try:
        assert await workers.run(_loaded_here, timeout=0.5, prepare=(_load_slowly,)) == 1
        assert await workers.run(_loaded_here, timeout=0.5, prepare=(_load_slowly,)) == 1
        assert workers.stats["prepared"] == 1  # once for the worker, not once per task
        with pytest.raises(ScorerTimeout):  # the task's own time is still hard
            await workers.run(time.sleep, 60, timeout=0.3, prepare=(_load_slowly,))
        with pytest.raises(ScorerError, match=r"could not load what the check needs.*no such"):
            await workers.run(_loaded_here, timeout=5, prepare=(_cannot_load,))
        assert await workers.run(pow, 2, 3, timeout=5) == 8  # its worker replaced: whole
    finally:
        await workers.close()
