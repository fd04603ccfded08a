"""The body of one scoring process. Imported by the fork server, so children start warm
(with whatever else the pool's ``preload`` names: the engine's tasks and warm-ups).

A worker receives ``(fn, args)`` pairs over a pipe, one at a time, and answers
``(True, value)`` or ``(False, "Type: message")``. It never decides its own time
limit: the parent kills it. That is why no signal.alarm appears anywhere.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import io
import os
import pickle
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from multiprocessing import reduction
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

from rewardkit.execution._board import Board

CUT = "rewardkit: cut"
"""What the pool sends a running task to ask it to stop early (``pool.TaskLink.cut``):
read by :func:`cut_asked`, or, when the task had already finished, skipped."""

_current: Connection | None = None  # the pipe of the task running now (report, cut_asked)
_board: Board | None = None  # where report pins its parts (the pool sends it first thing)
_reporting = threading.Lock()
_stopping = False  # the pool's stop arrived while a task asked for a cut: end after it


def report(part: Any) -> bool:
    """Hand ``part`` to the running task's caller (``pool.TaskLink.on_part``), ahead of
    its reply; whether it was handed (not outside a worker: a task called in-process).

    It is pinned on the worker's board (:mod:`rewardkit.execution._board`), where the
    caller reads it when it looks: no message, no wake-up. A board that is full sends it
    through the pipe instead (the pool reads the board first: the order stands)."""
    if _current is None:
        return False
    payload = pickle.dumps(part, pickle.HIGHEST_PROTOCOL)  # data: no process handles in it
    with _reporting:  # a task's threads may report at once: one record at a time
        if _board is None or not _board.pin(payload):
            _current.send_bytes(bytes(ForkingPickler.dumps((None, part))))
    return True


def cut_asked() -> bool:
    """Whether the caller asked the running task to stop early (``pool.TaskLink.cut``).
    A poll of the pipe: a microsecond. False outside a worker."""
    global _stopping
    if _current is None:
        return False
    cut = False
    while _current.poll(0):
        message = _current.recv()
        if message is None:  # the pool is closing: stop now, exit after this task
            _stopping = cut = True
        elif message == CUT:
            cut = True
    return cut


def worker_main(conn: Connection, memory_mb: int | None) -> None:
    """Serve tasks until the parent closes the pipe, then end every process it started."""
    _die_with_parent()
    _adopt_orphans()
    # What the fork server loaded (math-verify, sympy, the parser's warm-up) lives as long
    # as this worker: out of the cyclic collector's reach, a full collection neither
    # walks it nor writes to its pages (which would copy them out of the shared memory).
    # About a tenth of a worker's CPU on math rows (benchmarks/worker_warmth.py).
    gc.freeze()
    # Ctrl-C reaches the whole process group; the parent decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _stdout_to_stderr()
    _take_board(conn)
    if memory_mb:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        _serve(conn)
    finally:
        kill_descendants(os.getpid())  # before we exit, while the orphans are still ours


def zygote_main(conn: Connection, modules: Sequence[str]) -> None:
    """Import ``modules`` (the warm-ups), then fork a worker for each request on ``conn``:
    every worker it forks inherits what the warm-ups learned (the parser's prediction
    tables), while the pool's first workers, forked without them, already serve. It says
    ``"ready"`` once they are done.

    A request is ``("fork", memory_mb, released)``; the answer is the worker's end of a
    new socket pair (passed as a descriptor) and its pid. ``None`` or the pool's end closing ends the
    zygote. It dies with the fork server, and its workers with it (parent-death signals),
    so killing the pool's process leaves none running. Dead workers stay zombies until the
    request after their pool released them (their exit status readable in /proc meanwhile:
    ``exit_status``).
    """
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in modules:
        importlib.import_module(name)
    conn.send("ready")
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        _reap(request[2])
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the worker: never back into this loop
            code = 1
            try:
                conn.close()
                ours.close()
                worker_main(Connection(theirs.detach()), request[1])
                code = 0
            finally:
                os._exit(code)
        theirs.close()
        try:
            reduction.send_handle(conn, ours.fileno(), os.getppid())
            conn.send(pid)
        finally:
            ours.close()


def _reap(pids: Sequence[int]) -> None:
    """Collect the workers the pool released (zombies until now: their exit code stays
    readable in /proc until the pool has read it), without waiting."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def exit_status(pid: int) -> int | None:
    """The exit code of a dead process that is not ours (a zombie's, from /proc, as
    ``Process.exitcode`` gives it: negative for a signal); None when unknown."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return os.waitstatus_to_exitcode(int(fields[49]))
    except (OSError, IndexError, ValueError):
        return None


def _take_board(conn: Connection) -> None:
    """Map the board the pool sends before any task (its descriptor, over the socket)."""
    global _board
    fd = reduction.recv_handle(conn)
    try:
        _board = Board(fd)
    finally:
        os.close(fd)


def _serve(conn: Connection) -> None:
    global _current
    serial = 0  # the pool counts the tasks it sends this worker the same way
    while not _stopping:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone or closed us: nothing left to do
        if task is None:
            return
        if isinstance(task, str) and task == CUT:
            continue  # for a task that finished before the cut arrived
        serial += 1
        if _board is not None:
            _board.begin(serial)
        _current = conn
        try:
            reply = _reply(task)
        finally:
            _current = None
        conn.send_bytes(reply)


def _stdout_to_stderr() -> None:
    """Send what user code prints (``print``, ``os.write(1, ...)``, its children's output)
    to stderr. Stdout belongs to the parent: ``rewardkit score ... -o -`` writes its JSONL
    rows there, and a scorer's debug print would land between them."""
    try:
        sys.stdout.flush()
        os.dup2(2, 1)
    except (OSError, ValueError):  # no stderr (a closed descriptor): leave stdout as it is
        return
    # Workers share one stderr. Unbuffered (PYTHONUNBUFFERED, ``python -u``), a print is
    # one write per argument and separator, so two workers' lines interleave mid-line
    # ("debug: scoringdebug: scoring b" seen in CI); line-buffered, a line is one write.
    sys.stdout = _line_buffered(1, sys.stdout)
    sys.stderr = _line_buffered(2, sys.stderr)


def _line_buffered(fd: int, old: Any) -> Any:
    return io.TextIOWrapper(
        open(fd, "wb", closefd=False),  # lives as long as the worker
        encoding=getattr(old, "encoding", None) or "utf-8",
        errors=getattr(old, "errors", None) or "backslashreplace",
        line_buffering=True,
    )


_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _die_with_parent() -> None:
    """Have the kernel SIGKILL this worker when its parent (the fork server) dies.

    Without it, a killed fork server leaves its workers to init, still running their
    tasks (a busy loop runs at 100% CPU for ever). The fork server itself exits when the
    pool's process dies (its "alive" pipe reads EOF) so the chain reaches the workers
    whatever is killed, once each worker lets go of its inherited copy of that pipe's
    write end: while any worker holds it, the fork server never sees EOF. Linux only.
    """
    _release_forkserver_alive_fd()
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return
    if armed and os.getppid() != parent:
        os._exit(1)  # the parent died before the signal was armed


def _adopt_orphans() -> None:
    """Make this worker the parent of every orphan below it (Linux's child subreaper).

    A user function that double-forks a daemon (fork, setsid, fork, the middle one exits)
    leaves a process whose parent is gone: it would go to init, out of the pool's sight,
    and outlive the worker's kill (a busy loop would eat a core for the whole run). As a
    subreaper the worker adopts it, so :func:`kill_descendants` finds it under us.

    Such processes live as long as the worker, not one task: a task that returned may
    have started a helper it reuses on its next call (a module-level REPL or server), and
    killing it after each task would break that. The worker's end (timeout, pool close,
    replacement) takes them all. An adopted orphan that exits stays a zombie (no CPU, one
    pid) until then: reaping it here could steal the exit status of a child the user's
    code waits for, which Python reads as 0. The pool replaces a worker that holds too
    many (``pool._MAX_BELOW``), so they cannot pile up either.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


_KILL_ROUNDS = 50
_KILL_BUDGET_S = 3.0


def kill_descendants(pid: int) -> None:
    """SIGKILL every live process below ``pid``, round after round until none can be left.

    Each is killed the moment it is listed, so that it has no time to fork first. Its
    children, and a child forked or handed down just before it died, are adopted by
    ``pid`` (a subreaper) and found next round. ``pid`` must not reap meanwhile (stopped
    is best: it starts nothing either), so the dead stay listed as zombies and the list
    below it only grows. The end is a round that lists nothing but processes already seen
    dead in an earlier one: nothing then lives below ``pid`` that could hand it another.
    (A round that merely finds none alive is not enough: a process seen alive as it
    exits hands its child over after its parent's list was read.) Bounded in rounds and
    time, whatever a fork bomb does.
    """
    deadline = time.monotonic() + _KILL_BUDGET_S
    dead: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        if not _kill_round(pid, dead) or time.monotonic() > deadline:
            return


def _kill_round(pid: int, dead: set[int]) -> bool:
    """One pass over the processes below ``pid``, adding the dead it sees to ``dead``;
    whether it listed any process not already seen dead."""
    fresh = False
    for child in _below(pid):
        if child in dead:
            continue
        fresh = True
        if not running(child):
            dead.add(child)
            continue
        try:
            os.kill(child, signal.SIGKILL)
        except OSError:
            pass
    return fresh


def holds_more_than(pid: int | None, count: int) -> bool:
    """Whether more than ``count`` processes (live or zombies) are below ``pid``."""
    if pid is None:
        return False
    return any(seen > count for seen, _ in enumerate(_below(pid), 1))


def _below(pid: int) -> Iterator[int]:
    """Every process below ``pid``, each as soon as it is found (Linux:
    /proc/PID/task/TID/children); nothing elsewhere. Bounded, whatever a fork bomb did."""
    stack, found = [pid], 0
    while stack and found < 10_000:
        parent = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{parent}/task/{tid}/children") as handle:
                    kids = [int(k) for k in handle.read().split()]
            except (OSError, ValueError):
                continue
            for kid in kids:
                found += 1
                yield kid
                stack.append(kid)


def running(pid: int | None) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc here: ask the kernel if the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            pass
        return True


def _release_forkserver_alive_fd() -> None:
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    fd = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(fd, int):
        server._forkserver_alive_fd = None  # type: ignore[union-attr]
        try:
            os.close(fd)
        except OSError:
            pass


def _reply(task: tuple[Any, tuple[Any, ...]]) -> bytes:
    """The task's answer, pickled once: ``(True, value)`` or ``(False, "Type: message")``
    (what ``Connection.send`` would write; a value that cannot be pickled is a failure
    of its own, which would otherwise break the pipe protocol)."""
    fn, args = task
    try:
        value = fn(*args)
    except BaseException as exc:
        return bytes(ForkingPickler.dumps((False, f"{type(exc).__name__}: {exc}"[:2000])))
    try:
        return bytes(ForkingPickler.dumps((True, value)))
    except Exception as exc:
        why = f"result of type {type(value).__name__} cannot be sent back: {exc}"
        return bytes(ForkingPickler.dumps((False, why)))
