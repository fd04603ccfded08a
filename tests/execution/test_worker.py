"""guards: the worker process (rewardkit.execution._worker): what user code starts dies with it.

A custom reward function that double-forks a daemon (fork, setsid, fork, the middle
process exits) leaves a process reparented away from the worker, out of reach of a kill
of the worker's descendants. Workers are child subreapers: such orphans are adopted by the
worker and killed with it, on a timeout and when the pool closes. A worker that dies is
noticed by its process, not by EOF on a pipe a child may still hold.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from _support.processes import gone, wait_gone
from _support.user_functions import custom_config, custom_row
from rewardkit import RewardLoop, Status

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


def _config(path: str, timeout_s: float = 30) -> dict:
    return custom_config(path, timeout_s=timeout_s)


def test_a_double_forked_daemon_dies_with_its_timed_out_worker(write_module, tmp_path) -> None:
    path = write_module("daemons", DAEMONS)
    pid_file = tmp_path / "daemon.pid"
    with RewardLoop(_config(path, timeout_s=1.5)) as loop:  # a double fork takes milliseconds
        results = loop.score([custom_row(f"daemon_then_hang:{pid_file}"), custom_row("42")])
        assert [r.status for r in results] == [Status.TIMEOUT, Status.OK]
        daemon = int(pid_file.read_text())
        assert wait_gone([daemon]) == [], f"daemon {daemon} outlived its timed-out worker"
        assert loop.score([custom_row("42")])[0].score == 1.0  # the replacement worker serves


def test_a_daemon_left_by_a_task_that_returned_lives_until_the_pool_closes(
    write_module, tmp_path
) -> None:
    """Kept for the worker's life (a helper the function may reuse), never longer."""
    path = write_module("daemons", DAEMONS)
    pid_file = tmp_path / "daemon.pid"
    with RewardLoop(_config(path)) as loop:
        assert loop.score([custom_row(f"daemon_then_return:{pid_file}")])[0].score == 1.0
        daemon = int(pid_file.read_text())
        assert loop.score([custom_row("42")])[0].score == 1.0
        assert not gone(daemon)  # not killed after its task: it lives with the worker
    assert wait_gone([daemon]) == [], f"daemon {daemon} outlived the closed pool"


def test_a_process_that_keeps_changing_its_pid_is_caught(write_module, tmp_path) -> None:
    """Fork and exit in a loop: each pid is gone before a one-pass kill reaches it. The
    kill goes round until nothing below the (stopped) worker lives."""
    path = write_module("daemons", DAEMONS)
    pid_file = tmp_path / "hopper.pid"
    log = Path(f"{pid_file}.log")
    with RewardLoop(_config(path, timeout_s=1.5)) as loop:  # hundreds of hops by then
        results = loop.score([custom_row(f"hopper_then_hang:{pid_file}")])
        assert results[0].status is Status.TIMEOUT
        time.sleep(0.5)
        size = log.stat().st_size
        time.sleep(1.0)
        assert log.stat().st_size == size, "the hopper still forks after the kill"
        hops = [int(p) for p in log.read_text().split()]
        assert len(hops) > 10  # it did hop while the function ran
        assert wait_gone(hops[-50:], within_s=2) == []


def test_adopted_orphans_never_take_the_functions_own_exit_statuses(write_module, tmp_path) -> None:
    """The worker does not reap what it adopts during a task: a reap-all would also
    steal the status of the function's own child (Python reads a stolen one as 0)."""
    path = write_module("daemons", DAEMONS)
    with RewardLoop(_config(path)) as loop:
        result = loop.score([custom_row(f"exit_status:{tmp_path / 'orphan.pid'}")])[0]
    assert (result.status, result.score) == (Status.OK, 3.0)


def test_a_tree_of_setsid_processes_is_killed_in_bounded_time(write_module, tmp_path) -> None:
    """127 processes, each in its own session: all found below the worker and killed,
    and the row's answer is not held up by the kill for long."""
    path = write_module("daemons", DAEMONS)
    pid_file = tmp_path / "tree.pid"
    log = Path(f"{pid_file}.log")
    with RewardLoop(_config(path, timeout_s=2)) as loop:  # the bomb forks within it
        started = time.monotonic()
        results = loop.score([custom_row(f"tree_then_hang:{pid_file}"), custom_row("42")])
        elapsed = time.monotonic() - started
        assert [r.status for r in results] == [Status.TIMEOUT, Status.OK]
        tree = [int(p) for p in log.read_text().split()]
        assert len(tree) > 10  # the bomb did go off before the timeout
        assert wait_gone(tree) == [], "processes of the tree outlived their worker"
    assert elapsed < 2 + 20  # the timeout, then a bounded kill and a fresh worker


CHILDREN = """
import os, subprocess, sys, time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    if solution_str == "fork_then_die":  # the child keeps the worker's pipe open
        if os.fork() == 0:
            time.sleep(25)  # outlives the check below, then goes
            os._exit(0)
        os._exit(3)
    if solution_str.startswith("spawn_then_hang:"):  # a child process, then a hang
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        with open(solution_str.split(":", 1)[1], "w") as handle:
            handle.write(str(child.pid))
        while True:
            time.sleep(0.05)
    return float(solution_str == str(ground_truth))
"""


def test_a_worker_that_dies_while_its_child_holds_the_pipe_is_a_crash_not_a_timeout(
    write_module,
) -> None:
    """A worker that forks and then dies is noticed by its process, not by EOF on its
    pipe, which the child still holds: the row is an error at once, not a ``timeout``
    after the whole timeout."""
    path = write_module("children", CHILDREN)
    with RewardLoop(_config(path, timeout_s=30)) as loop:
        started = time.perf_counter()
        results = loop.score([custom_row("42"), custom_row("fork_then_die"), custom_row("42")])
        elapsed = time.perf_counter() - started
    assert [r.score for r in results] == [1.0, None, 1.0]
    assert results[1].status is Status.ERROR
    assert "worker process died (exit code 3)" in results[1].error
    assert elapsed < 15  # not the 30 s timeout, nor the 25 s the child holds the pipe


def test_a_timed_out_function_takes_its_child_processes_with_it(write_module, tmp_path) -> None:
    """Killing a timed-out worker kills the processes it started: none runs on, orphaned."""
    path = write_module("children", CHILDREN)
    pid_file = tmp_path / "child.pid"
    with RewardLoop(_config(path, timeout_s=2)) as loop:
        results = loop.score([custom_row(f"spawn_then_hang:{pid_file}"), custom_row("42")])
        assert [r.status for r in results] == [Status.TIMEOUT, Status.OK]
        child = int(pid_file.read_text())
        deadline = time.monotonic() + 10
        while not gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gone(child), f"process {child} outlived its timed-out worker"
