"""The body of one scoring process. Imported by the fork server, so children start warm
(with whatever else the pool's ``preload`` names: the engine's tasks and warm-ups).

A worker receives ``(fn, args)`` pairs over a pipe, one at a time, and answers
``(True, value)`` or ``(False, "Type: message")``. It never decides its own time
limit: the parent kills it. That is why no signal.alarm appears anywhere.
"""

from __future__ import annotations

import ctypes
import gc
import os
import resource
import signal
import sys
from multiprocessing.connection import Connection
from typing import Any


def worker_main(conn: Connection, memory_mb: int | None) -> None:
    """Serve tasks until the parent closes the pipe."""
    _die_with_parent()
    # What the fork server loaded (math-verify, sympy, the parser's warm-up) lives as long
    # as this worker: out of the cyclic collector's reach, a full collection neither
    # walks it nor writes to its pages (which would copy them out of the shared memory).
    # About a tenth of a worker's CPU on math rows (benchmarks/worker_warmth.py).
    gc.freeze()
    # Ctrl-C reaches the whole process group; the parent decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _stdout_to_stderr()
    if memory_mb:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone or closed us: nothing left to do
        if task is None:
            return
        conn.send(_run(task))


def _stdout_to_stderr() -> None:
    """Send what user code prints (``print``, ``os.write(1, ...)``, its children's output)
    to stderr. Stdout belongs to the parent: ``rewardkit score ... -o -`` writes its JSONL
    rows there, and a scorer's debug print would land between them."""
    try:
        sys.stdout.flush()
        os.dup2(2, 1)
    except (OSError, ValueError):  # no stderr (a closed descriptor): leave stdout as it is
        pass


_PR_SET_PDEATHSIG = 1


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


def _run(task: tuple[Any, tuple[Any, ...]]) -> tuple[bool, Any]:
    fn, args = task
    try:
        value = fn(*args)
    except BaseException as exc:
        return False, f"{type(exc).__name__}: {exc}"[:2000]
    try:  # an unpicklable value would otherwise break the pipe protocol
        import pickle

        pickle.dumps(value)
    except Exception as exc:
        return False, f"result of type {type(value).__name__} cannot be sent back: {exc}"
    return True, value
