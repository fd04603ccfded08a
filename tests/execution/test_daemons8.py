"""Processes a user function leaves behind must not outlive its worker (red-team red8c).

Found: a custom reward function that double-forked a daemon (fork, setsid, fork, the
middle process exits) left a process reparented to init. The pool's kill on timeout and
on close only found the worker's descendants, so the daemon ran on for ever. Workers are
now child subreapers: such orphans are adopted by the worker and killed with it.

    .venv/bin/python -m pytest tests/execution/test_daemons8.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from _support.verifier_rows import gone
from rewardkit import RewardLoop, Status
from rewardkit.execution import pool as pool_module
from rewardkit.execution.pool import WorkerPool

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="subreapers and /proc are Linux's"
)

DAEMONS = """
import os, subprocess, time

def _daemonize(pid_file, body):
    \"\"\"The classic double fork; the daemon's pid goes to pid_file.\"\"\"
    r, w = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode())
            body()
            os._exit(0)
        os._exit(0)
    os.close(w)
    os.waitpid(middle, 0)
    pid = int(os.read(r, 64))
    with open(pid_file + ".tmp", "w") as handle:
        handle.write(str(pid))
    os.rename(pid_file + ".tmp", pid_file)

def _sleep():
    time.sleep(300)

def _hop(log):
    \"\"\"A process that forks and exits again and again: its pid never stays put.\"\"\"
    def body():
        while True:
            if os.fork() != 0:
                os._exit(0)
            with open(log, "a") as handle:
                handle.write(f"{os.getpid()}\\n")
            time.sleep(0.005)
    return body

def _tree(log, depth):
    \"\"\"A bounded fork bomb: each process its own session, two children each.\"\"\"
    def body():
        for _ in range(2 if depth else 0):
            if os.fork() == 0:
                os.setsid()
                _tree(log, depth - 1)()
                os._exit(0)
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()}\\n")
        time.sleep(300)
    return body

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    mode, _, path = solution_str.partition(":")
    if mode == "daemon_then_hang":
        _daemonize(path, _sleep)
        while True:
            time.sleep(0.05)
    if mode == "daemon_then_return":
        _daemonize(path, _sleep)
        return 1.0
    if mode == "hopper_then_hang":
        _daemonize(path, _hop(path + ".log"))
        while True:
            time.sleep(0.05)
    if mode == "tree_then_hang":
        _daemonize(path, _tree(path + ".log", 6))
        while True:
            time.sleep(0.05)
    if mode == "exit_status":  # an orphan exits while the function's own child runs
        child = subprocess.Popen(["sh", "-c", "sleep 0.3; exit 3"])
        _daemonize(path, lambda: None)
        time.sleep(0.1)
        return float(child.wait())
    return float(solution_str == str(ground_truth))
"""


def _orphan_that_exits() -> int:
    """Leave an orphan that exits at once (a zombie of the worker, which adopts it)."""
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:
            os._exit(0)
        os._exit(0)
    os.waitpid(middle, 0)
    return os.getpid()


def _row(response: str) -> dict:
    return {"data_source": "custom", "response": response, "ground_truth": "42"}


def _config(path: str, timeout_s: float = 30) -> dict:
    function = {"path": path}
    return {
        "reward": {"num_workers": 1, "timeout_s": timeout_s, "custom_reward_function": function}
    }


def _waitgone(pids: list[int], within_s: float = 10) -> list[int]:
    """The pids still running after ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while any(not gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if not gone(p)]


def test_a_double_forked_daemon_dies_with_its_timed_out_worker(write_module, tmp_path) -> None:
    path = write_module("daemons8", DAEMONS)
    pid_file = tmp_path / "daemon.pid"
    with RewardLoop(_config(path, timeout_s=3)) as loop:
        results = loop.score([_row(f"daemon_then_hang:{pid_file}"), _row("42")])
        assert [r.status for r in results] == [Status.TIMEOUT, Status.OK]
        daemon = int(pid_file.read_text())
        assert _waitgone([daemon]) == [], f"daemon {daemon} outlived its timed-out worker"
        assert loop.score([_row("42")])[0].score == 1.0  # the replacement worker serves


def test_a_daemon_left_by_a_task_that_returned_lives_until_the_pool_closes(
    write_module, tmp_path
) -> None:
    """Kept for the worker's life (a helper the function may reuse), never longer."""
    path = write_module("daemons8", DAEMONS)
    pid_file = tmp_path / "daemon.pid"
    with RewardLoop(_config(path)) as loop:
        assert loop.score([_row(f"daemon_then_return:{pid_file}")])[0].score == 1.0
        daemon = int(pid_file.read_text())
        assert loop.score([_row("42")])[0].score == 1.0
        assert not gone(daemon)  # not killed after its task: it lives with the worker
    assert _waitgone([daemon]) == [], f"daemon {daemon} outlived the closed pool"


def test_a_process_that_keeps_changing_its_pid_is_caught(write_module, tmp_path) -> None:
    """Fork and exit in a loop: each pid is gone before a one-pass kill reaches it. The
    kill goes round until nothing below the (stopped) worker lives."""
    path = write_module("daemons8", DAEMONS)
    pid_file = tmp_path / "hopper.pid"
    log = Path(f"{pid_file}.log")
    with RewardLoop(_config(path, timeout_s=3)) as loop:
        results = loop.score([_row(f"hopper_then_hang:{pid_file}")])
        assert results[0].status is Status.TIMEOUT
        time.sleep(0.5)
        size = log.stat().st_size
        time.sleep(1.0)
        assert log.stat().st_size == size, "the hopper still forks after the kill"
        hops = [int(p) for p in log.read_text().split()]
        assert len(hops) > 10  # it did hop while the function ran
        assert _waitgone(hops[-50:], within_s=2) == []


def test_adopted_orphans_never_take_the_functions_own_exit_statuses(write_module, tmp_path) -> None:
    """The worker does not reap what it adopts during a task: a reap-all would also
    steal the status of the function's own child (Python reads a stolen one as 0)."""
    path = write_module("daemons8", DAEMONS)
    with RewardLoop(_config(path)) as loop:
        result = loop.score([_row(f"exit_status:{tmp_path / 'orphan.pid'}")])[0]
    assert (result.status, result.score) == (Status.OK, 3.0)


def test_a_tree_of_setsid_processes_is_killed_in_bounded_time(write_module, tmp_path) -> None:
    """127 processes, each in its own session: all found below the worker and killed,
    and the row's answer is not held up by the kill for long."""
    path = write_module("daemons8", DAEMONS)
    pid_file = tmp_path / "tree.pid"
    log = Path(f"{pid_file}.log")
    with RewardLoop(_config(path, timeout_s=4)) as loop:
        started = time.monotonic()
        results = loop.score([_row(f"tree_then_hang:{pid_file}"), _row("42")])
        elapsed = time.monotonic() - started
        assert [r.status for r in results] == [Status.TIMEOUT, Status.OK]
        tree = [int(p) for p in log.read_text().split()]
        assert len(tree) > 10  # the bomb did go off before the timeout
        assert _waitgone(tree) == [], "processes of the tree outlived their worker"
    assert elapsed < 4 + 20  # the timeout, then a bounded kill and a fresh worker


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
