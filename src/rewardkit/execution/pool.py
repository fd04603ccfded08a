"""A supervised pool of scoring processes with hard per-task time limits.

Each task runs in a worker process. Past its deadline the worker is SIGKILLed and
replaced and the caller gets :class:`~rewardkit.errors.ScorerTimeout`; a worker that
dies on its own (segfault, ``os._exit``, the OOM killer) costs only its task
(:class:`~rewardkit.errors.WorkerCrashed`). The pool lives on an asyncio event loop:
replies are read with ``loop.add_reader``, so there is no thread per worker and no
batch barrier: a worker takes the next task the moment it is free.

Workers fork from a fork server that has already imported the verifiers, so a
replacement is ready in milliseconds instead of re-importing sympy. A worker dies with
its parent (Linux's parent-death signal), and the fork server with this process: killing
either never leaves workers running on their own. A worker is a child subreaper (Linux):
the daemons a user function double-forks are adopted by it and killed with it (on a
timeout, a replacement, the pool's close), never left to init.

Free workers are shared fairly between requesters (:func:`~rewardkit._fair.fair_share`,
one per ``RewardEngine.score_many`` call, so one per HTTP request): a free worker goes to the
waiting requester that holds the fewest workers, so ten slow rows of one request never
queue ahead of another request's row; that row waits at most for the first worker to
free up.

A task that runs past :data:`STUCK_TASK_S` while other tasks wait no longer counts as
one of the pool's workers: a spare worker is forked for the waiting tasks (at most
``spares`` of them, ``reward.spare_workers``), and it goes once it is free, nothing waits,
and the pool has its size in workers again. Two rows that hang until their time limit in a pool of two workers
would otherwise hold every other row for that long.

A task may name an ``affinity`` (the engine uses the row's ground truth): it then prefers
the worker that key maps to, so a prompt's rollouts, epoch after epoch, reach the worker
that already parsed its reference and similar answers (latex2sympy's parser learns its
predictions per process). The preference is soft: a free worker never idles while a task
waits, it takes the oldest task that prefers it, else the oldest task.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing as mp
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from multiprocessing import reduction, spawn
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

from rewardkit._fair import fair_share, requester
from rewardkit.errors import ScorerError, ScorerTimeout, WorkerCrashed
from rewardkit.execution._board import Board
from rewardkit.execution._worker import (
    CUT,
    exit_status,
    holds_more_than,
    kill_descendants,
    running,
    worker_main,
    zygote_main,
)
from rewardkit.execution.health import PoolHealth

__all__ = ["TaskLink", "WorkerPool", "fair_share", "start_fork_server"]

_CTX = mp.get_context("forkserver")
_PRELOAD = ["rewardkit.execution._worker"]
_CTX.set_forkserver_preload(_PRELOAD)


def _add_preload(modules: Sequence[str]) -> None:
    """Have the fork server import ``modules`` too, so workers fork with them loaded.

    The fork server starts once per process: modules asked for after it started are
    imported by each worker when it first needs them instead (slower, same results).
    """
    new = [name for name in modules if name not in _PRELOAD]
    if new:
        _PRELOAD.extend(new)
        _CTX.set_forkserver_preload(list(_PRELOAD))


_START_LOCK = threading.Lock()


def start_fork_server(preload: Sequence[str] = ()) -> None:
    """Start the workers' fork server now, importing ``preload``, with SIGINT ignored: for
    the caller's main thread, before a pool is built elsewhere (the engine's thread).

    A process started with SIGINT ignored keeps ignoring it until it says otherwise
    (Python installs its KeyboardInterrupt handler only over the default), so a Ctrl-C
    during the server's imports (a second or so) leaves no traceback there; the server
    ignores SIGINT itself once they are done, as the workers do. Only the main thread may
    set a handler: elsewhere, or once the server runs, this only adds ``preload``. The
    caller's own Ctrl-C is held for the few milliseconds of the start."""
    _add_preload(preload)
    if threading.current_thread() is not threading.main_thread():
        return
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    if server is None or getattr(server, "_forkserver_pid", None) is not None:
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with _main_module_left_alone():
            server.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _main_module_left_alone() -> Iterator[None]:
    """Start processes without re-running the caller's ``__main__`` in them.

    multiprocessing re-imports the main script in every child so that functions
    defined there unpickle; a script without an ``if __name__ == "__main__"`` guard
    then recurses. Our workers only run importable rewardkit functions, so the main
    module is never needed: drop it from the preparation data, for our starts only.
    """
    original = spawn.get_preparation_data

    def without_main(name: str) -> dict[str, Any]:
        data = original(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    with _START_LOCK:
        spawn.get_preparation_data = without_main
        try:
            yield
        finally:
            spawn.get_preparation_data = original


_INLINE_SEND_BYTES = 64 * 1024  # tasks up to this are sent from the loop thread

# A worker keeps the processes its tasks leave (see _worker._adopt_orphans), the dead ones
# as zombies: one that holds more than _MAX_BELOW is replaced, which ends them all. Counted
# every _CENSUS_EVERY tasks, as a count reads /proc (tens of microseconds).
_CENSUS_EVERY = 256
_MAX_BELOW = 1024
# How far down a requester's queue a free worker looks for a task that prefers it: the
# head waits at most for its preferred worker's current task, or is taken as the oldest.
_AFFINITY_SCAN = 64
# A task still running after this long has its worker counted out while tasks wait: a
# spare worker serves them (up to the pool's ``spares``), so that as many hanging rows as
# workers never hold every other row for their time limit. A spare goes as soon as it is
# free with no task waiting and the pool has its size in workers that are not stuck.
STUCK_TASK_S = 1.0
PREPARE_TIMEOUT_S = 120.0
"""How long a worker may take to load what a task needs (``WorkerPool.run``'s ``prepare``):
seconds on an idle machine, many more on a loaded one; past it, the task's error."""


def _prepared(steps: tuple[Callable[[], None], ...]) -> None:
    """Run, in a worker, the preparations a task needs (``WorkerPool.run``'s ``prepare``)."""
    for step in steps:
        step()


class _Frames:
    """``multiprocessing.Connection`` messages (a 4-byte size, or -1 and an 8-byte size,
    then the bytes), reassembled from the reads the event loop's reader gets: a task's
    progress reports (:class:`TaskLink`) and then its reply can arrive in one read."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """Add what was read; the messages it completed, in order (often none)."""
        self._buffer += data
        messages: list[bytes] = []
        while True:
            message = self._next()
            if message is None:
                return messages
            messages.append(message)

    def _next(self) -> bytes | None:
        if len(self._buffer) < 4:
            return None
        (size,) = struct.unpack_from("!i", self._buffer)
        start = 4
        if size == -1:
            if len(self._buffer) < 12:
                return None
            (size,) = struct.unpack_from("!Q", self._buffer, 4)
            start = 12
        if len(self._buffer) < start + size:
            return None
        message = bytes(self._buffer[start : start + size])
        del self._buffer[: start + size]
        return message


class TaskLink:
    """A running task's line to its caller (``pool.run(..., link=TaskLink(on_part))``).

    What the task reports with :func:`rewardkit.execution._worker.report` reaches
    ``on_part``, in order, every part before the task's reply: the worker pins its parts
    on a board the pool reads when someone looks (:mod:`rewardkit.execution._board`),
    that is when the caller calls :meth:`collect` (on its own timer) and, at the latest,
    just before the reply is handed on. ``last_part_at`` tells when the latest part handed
    on was written (``time.monotonic()`` of this process), so that the caller knows how
    long the task has been quiet. :meth:`cut` asks the task to stop early, which it sees
    when it calls :func:`rewardkit.execution._worker.cut_asked` (a task that never asks
    finishes as usual). A spread task reports before each row and each check, so that a
    slow row holds no other row (:mod:`rewardkit.scoring.spread`).

    ``stall_s``: for a task on Ray, whose parts only cross the network when they are
    needed: its actor answers the call early, with the parts so far, once the task has
    reported and then been quiet this long (:class:`~rewardkit.execution.ray_pool.RayWorkerPool`).
    A local pool ignores it (its caller looks itself). ``raw``: each part is handed on
    pickled (bytes), as the actor passes them on to its driver.
    """

    def __init__(
        self, on_part: Callable[[Any], None], *, stall_s: float | None = None, raw: bool = False
    ) -> None:
        self.on_part = on_part
        self.stall_s = stall_s
        self.raw = raw
        self.last_part_at: float | None = None
        self.handed = False  # the task went to a worker (it may have started)
        self._conn: Connection | None = None  # set while a worker runs the task
        self._board: tuple[Board, int] | None = None  # that worker's board, the task's serial
        self._read_at = 0  # where the board's next record starts
        self._reply: asyncio.Future[Any] | None = None  # the running task's answer, to come
        # set while a remote actor runs the task (RayWorkerPool): how to reach it
        self.cut_by: Callable[[], None] | None = None
        self.cut_sent = False

    @property
    def running(self) -> bool:
        """Whether a worker of this process's pool runs the task now."""
        return self._conn is not None

    def collect(self) -> int:
        """Hand on the parts the task wrote since the last look; how many."""
        if self._board is None:
            return 0
        board, serial = self._board
        records, self._read_at = board.read(serial, self._read_at)
        for payload, written_at in records:
            self.hand_on(payload if self.raw else pickle.loads(payload), written_at)
        return len(records)

    def quiet(self) -> float | None:
        """Seconds since the latest part handed on was written; None before the first."""
        return None if self.last_part_at is None else time.monotonic() - self.last_part_at

    def hand_on(self, part: Any, written_at: float) -> None:
        """Give ``part`` (written at ``written_at``, this process's monotonic clock) to ``on_part``."""
        self.last_part_at = written_at
        self.on_part(part)

    def replied(self) -> bool:
        """Whether the running task's answer has come (or waits in its pipe, unread): a
        caller about to :meth:`expire` it must not throw a finished answer away."""
        if self._reply is None:
            return False
        if self._reply.done():
            return True
        with contextlib.suppress(OSError, ValueError):
            return self._conn is not None and self._conn.poll(0)
        return False

    def expire(self, message: str) -> bool:
        """End the running task now, as if it had run out of its time (the pool kills and
        replaces its worker, and counts a timeout): for a caller that keeps a limit of its
        own, tighter than the task's. False when no worker of this pool runs it."""
        if self._reply is None or self._reply.done():
            return False
        self._reply.set_exception(ScorerTimeout(message))
        return True

    def cut(self) -> None:
        """Ask the task to stop at its next :func:`~rewardkit.execution._worker.cut_asked`
        (once; nothing when it is not running)."""
        if self.cut_sent:
            return
        if self._conn is not None:
            self.cut_sent = True
            with contextlib.suppress(OSError, ValueError):  # it died meanwhile: its reply says so
                self._conn.send_bytes(_CUT_BYTES)
        elif self.cut_by is not None:
            self.cut_sent = True
            self.cut_by()


_CUT_BYTES = bytes(ForkingPickler.dumps(CUT))


class _Zygote:
    """A process forked from the fork server that runs the warm-ups, then forks workers
    that inherit them (:func:`rewardkit.execution._worker.zygote_main`).

    One per process and set of warm-ups, as the fork server is one per process
    (:func:`_shared_zygote`): every pool of this process forks its workers from it, so a
    later pool's workers start warm, and the warm-ups' seconds of CPU are paid once, not
    once per pool. It dies with the fork server, so with this process.
    """

    def __init__(self, modules: Sequence[str]) -> None:
        parent, child = _CTX.Pipe(duplex=True)
        self.process = _CTX.Process(target=zygote_main, args=(child, list(modules)), daemon=True)
        with _main_module_left_alone():
            self.process.start()
        child.close()
        self.conn: Connection = parent
        self.owner = os.getpid()  # a process forked from this one has no zygote of its own
        self.lock = threading.Lock()  # one fork request at a time, whichever pool asks
        # Workers whose exit code their pool has read: the zygote reaps these only, at its
        # next request. Reaping every dead worker there lost the exit code of one that died
        # while another's replacement was asked for ("exit code None" for a crash).
        self.released: list[int] = []
        self.released_lock = threading.Lock()  # not self.lock: a fork request waits on it
        self.users = 0  # pools that fork from it now (see _shared_zygote)
        self._ready: bool | None = None  # None: the warm-ups run
        self._ready_callbacks: list[Callable[[bool], None]] = []
        self._ready_lock = threading.Lock()
        # A daemon thread waits for the warm-ups: no pool's event loop or executor does,
        # so a pool closes (and an interpreter exits) without waiting for them.
        threading.Thread(target=self._wait_ready, name="rewardkit-zygote", daemon=True).start()

    def _wait_ready(self) -> None:
        try:
            ready = bool(self.conn.recv() == "ready")
        except (EOFError, OSError):
            ready = False
        with self._ready_lock:
            self._ready, callbacks = ready, self._ready_callbacks
            self._ready_callbacks = []
        for callback in callbacks:
            callback(ready)

    def when_ready(self, callback: Callable[[bool], None]) -> None:
        """Call ``callback(ready)`` once the warm-ups are done (False: the zygote died
        first), from the zygote's thread; at once when they already are."""
        with self._ready_lock:
            ready = self._ready
            if ready is None:
                self._ready_callbacks.append(callback)
                return
        callback(ready)

    @property
    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.is_alive()

    @property
    def ready(self) -> bool:
        return bool(self._ready) and self.alive

    def fork(self, memory_mb: int | None) -> tuple[Connection, int]:
        """A new worker's pipe and pid (a thread's call). Raises OSError or EOFError when
        the zygote is gone."""
        with self.lock:
            with self.released_lock:
                released, self.released = tuple(self.released), []
            self.conn.send(("fork", memory_mb, released))
            fd = reduction.recv_handle(self.conn)
            pid = self.conn.recv()
        return Connection(fd), pid

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()


_ZygoteKey = tuple[tuple[str, ...], tuple[str, ...], str]
"""A zygote's warm-up modules, and the ``sys.path`` and working directory it started
with: its workers inherit those, so a pool started after either changed gets another."""

_ZYGOTES: dict[_ZygoteKey, _Zygote] = {}
_ZYGOTES_LOCK = threading.Lock()


def _zygote_key(modules: tuple[str, ...]) -> _ZygoteKey:
    return modules, tuple(sys.path), os.getcwd()


def _shared_zygote(modules: tuple[str, ...]) -> _Zygote:
    """This process's zygote for ``modules`` (and the current ``sys.path`` and working
    directory): the live one, else a new one (a thread's call: starting one waits on the
    fork server). Zygotes of an older path that no pool uses any more are stopped."""
    key = _zygote_key(modules)
    with _ZYGOTES_LOCK:
        zygote = _ZYGOTES.get(key)
        if zygote is None or not zygote.alive or zygote._ready is False:
            zygote = _ZYGOTES[key] = _Zygote(modules)
        zygote.users += 1
        stale = [k for k, z in _ZYGOTES.items() if k[0] == modules and k != key and not z.users]
        retired = [_ZYGOTES.pop(k) for k in stale]
    for old in retired:
        old.stop()
    return zygote


def _ready_zygote(modules: tuple[str, ...]) -> _Zygote | None:
    """The live zygote for ``modules`` whose warm-ups are done, taken for a pool, or None."""
    with _ZYGOTES_LOCK:
        zygote = _ZYGOTES.get(_zygote_key(modules))
        if zygote is None or not zygote.ready:
            return None
        zygote.users += 1
        return zygote


def _release_zygote(zygote: _Zygote) -> None:
    """A pool is done with ``zygote``: it stays for the next pool while it is its key's."""
    with _ZYGOTES_LOCK:
        zygote.users -= 1
        current = zygote in _ZYGOTES.values()
    if not current and not zygote.users:  # off the caller's thread: stop() waits
        threading.Thread(target=zygote.stop, name="rewardkit-zygote-stop", daemon=True).start()


def _let_go(taking: asyncio.Future[_Zygote]) -> None:
    """A pool closed while it took a zygote: it is no user of it."""
    if not taking.cancelled() and taking.exception() is None:
        _release_zygote(taking.result())


def _drop_zygote(zygote: _Zygote) -> None:
    """Forget a zygote that died (or is stopped): the next pool starts another."""
    with _ZYGOTES_LOCK:
        for key, known in list(_ZYGOTES.items()):
            if known is zygote:
                del _ZYGOTES[key]


class _Forked:
    """A worker the zygote forked, seen as ``multiprocessing.Process`` shows ours: not our
    child, so its end is watched through a pidfd and its exit code read from /proc."""

    def __init__(self, pid: int, zygote: _Zygote) -> None:
        self.pid = pid
        self.sentinel = os.pidfd_open(pid)  # readable once it has exited
        self._zygote = zygote  # its parent, which reaps it once we release it (close)

    def is_alive(self) -> bool:
        return running(self.pid)

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(OSError, ValueError):
            select.select([self.sentinel], [], [], timeout)

    @property
    def exitcode(self) -> int | None:
        return None if running(self.pid) else exit_status(self.pid)

    def close(self) -> None:
        """Close the pidfd (once: its number may be another file's afterwards), and let the
        zygote reap the process: its exit code is not read after this."""
        sentinel, self.sentinel = self.sentinel, -1
        if sentinel >= 0:
            with contextlib.suppress(OSError):
                os.close(sentinel)
            with self._zygote.released_lock:
                self._zygote.released.append(self.pid)


class _Worker:
    """One process and its end of the pipe: forked by the fork server, or by the pool's
    zygote (then it starts with the warm-ups done)."""

    def __init__(self, memory_mb: int | None, slot: int, zygote: _Zygote | None = None) -> None:
        self.slot = slot  # the affinity keys this worker is preferred for (a replacement's too)
        self.process: Any
        if zygote is not None:
            self.conn, pid = zygote.fork(memory_mb)
            self.process = _Forked(pid, zygote)
        else:
            parent, child = _CTX.Pipe(duplex=True)
            self.process = _CTX.Process(target=worker_main, args=(child, memory_mb), daemon=True)
            with _main_module_left_alone():
                self.process.start()
            child.close()  # so that the worker's death reads as EOF on our end
            self.conn = parent
        self.board = self._hand_board()
        self.serial = 0  # tasks sent: the worker counts them too (its board's records)
        self.tasks_done = 0
        self.cold = False  # forked without the warm-ups while a zygote runs them
        # The preparations run in it (WorkerPool.run's ``prepare``); one forked by the zygote
        # has every warm-up done: EVERY
        self.prepared: set[Callable[[], None]] | None = None if zygote is not None else set()
        self.retire = False  # cold, and the zygote is ready: swap it when it is free
        self.stuck = False  # its task has run past STUCK_TASK_S: a spare may serve for it
        self.reply: asyncio.Future[tuple[bool, Any]] | None = None  # the task in flight

    def _hand_board(self) -> Board:
        """A board for the worker's reports, its descriptor sent before any task."""
        board, fd = Board.create()
        try:
            reduction.send_handle(self.conn, fd, self.process.pid)
        except OSError:  # it died at once: the first task finds out
            pass
        finally:
            os.close(fd)
        return board

    def kill(self) -> None:
        """SIGKILL the worker and every process below it: a user function's children, and
        the daemons it double-forked, which the worker adopted (a child subreaper)."""
        pid = self.process.pid
        if pid is not None and self.process.is_alive():
            # Stopped, it starts nothing more and stays alive to adopt the orphans of what
            # we kill (dead, it would hand them to init, out of our sight).
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
            kill_descendants(pid)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.process.join(timeout=5)
        self.conn.close()
        with contextlib.suppress(BufferError, ValueError):  # (a reader's slice: GC frees it)
            self.board.close()
        if isinstance(self.process, _Forked):
            self.process.close()

    def stop(self) -> None:
        """Ask politely (close the pipe: the worker ends its processes and exits), then
        insist (a busy worker)."""
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(timeout=2)
        self.kill()


_Waiter = tuple["asyncio.Future[_Worker]", int | None]
"""A task waiting for a worker: its future, and the worker slot it prefers (or None)."""


def _take(queue: deque[_Waiter], slot: int) -> asyncio.Future[_Worker]:
    """The oldest of the first few waiters that prefers ``slot`` or no worker, else the
    oldest: a task without affinity is never passed over for long."""
    for at, (future, prefer) in enumerate(itertools.islice(queue, _AFFINITY_SCAN)):
        if prefer is None or prefer == slot:
            del queue[at]
            return future
    return queue.popleft()[0]


class WorkerPool:
    """``await pool.run(fn, *args, timeout=...)`` runs ``fn(*args)`` in a killable process.

    ``fn`` must be importable by reference (a module-level function). A task's time limit
    starts when a worker takes it. Waiting tasks are served fairly between requesters
    (:func:`fair_share`): a free worker goes to the requester holding the fewest workers
    (ties: the one served longest ago), in first-come order within a requester, except
    that a task naming an ``affinity`` goes first to the worker that key prefers.
    """

    def __init__(
        self,
        size: int,
        *,
        spares: int = 0,
        memory_mb: int | None = None,
        preload: Sequence[str] = (),
        warm: Sequence[str] = (),
    ) -> None:
        if size < 1:
            raise ValueError(f"a pool needs at least one worker, got size={size}")
        _add_preload(preload)  # what the tasks will need, imported (and warmed) once
        self.size = size
        self.spares = spares  # workers it may fork past size while some are stuck
        self.memory_mb = memory_mb
        self.warm = tuple(warm)  # warm-ups run by the zygote (see start)
        self._zygote: _Zygote | None = None
        self._warming: asyncio.Future[None] | None = None
        self._held: _Zygote | None = None  # the shared zygote this pool counts as a user of
        self._idle: list[_Worker] = []
        self._waiting: dict[Hashable | None, deque[_Waiter]] = {}
        self._running: Counter[Hashable | None] = Counter()
        self._last_served: dict[Hashable | None, int] = {}
        self._serial = 0
        self._all: set[_Worker] = set()
        self._forking_spares = 0  # spare workers on their way (see STUCK_TASK_S)
        self._stuck_workers = 0  # workers of _all whose task has run past STUCK_TASK_S
        self._stopping: set[asyncio.Future[None]] = set()  # spares being forked or stopped
        self._closed = False
        self.started = 0  # workers started so far (the pool is whole from then on)
        self._starting: asyncio.Future[None] | None = None  # start(wait=False) in progress
        self._start_error: str | None = None  # why the workers could not start
        self.stats: dict[str, int] = {
            "tasks": 0,
            "timeouts": 0,
            "crashes": 0,
            "restarts": 0,
            "warmed": 0,  # cold workers swapped for ones the zygote forked (see start)
            "prepared": 0,  # preparations run in a worker before its task (see run)
            "spares": 0,  # spare workers forked while workers were stuck (STUCK_TASK_S)
        }

    async def start(self, wait: bool = True) -> None:
        """Start every worker (the first start also boots the fork server, whose imports
        and warm-up are most of a cold start), each taking tasks as soon as it is up.

        With ``warm`` modules (warm-ups: the parser's prediction tables), the workers fork
        from the fork server without them and serve at once, while a zygote forked beside
        them runs the warm-ups; then each worker is swapped, as soon as it is free, for one
        the zygote forks, as is every later replacement: they all inherit one warm-up, and
        no row waits for it (``stats["warmed"]`` counts the swaps).

        ``wait=False`` returns at once: tasks wait for the first worker (an engine decides
        the rows it can inline meanwhile), and if the workers cannot start, every task
        fails with ScorerError saying why.
        """
        if not wait:
            self._starting = asyncio.ensure_future(self._start_workers())
            self._starting.add_done_callback(self._start_done)
            return
        await self._start_workers()

    async def _start_workers(self) -> None:
        if self.warm:  # an earlier pool's zygote, warm already: every worker starts warm
            self._zygote = self._held = _ready_zygote(self.warm)
        for slot in range(self.size):
            worker = await asyncio.to_thread(self._new_worker, slot)
            if self._closed:  # closed while it started
                await asyncio.to_thread(worker.stop)
                return
            self.started += 1
            self._all.add(worker)
            self._release(worker)
        if self.warm and self._zygote is None and not self._closed:
            self._warming = asyncio.ensure_future(self._warm_up())

    async def _warm_up(self) -> None:
        """Get this process's zygote; once its warm-ups are done, swap every cold worker
        for one it forks: an idle one now, a busy one when its task ends (:meth:`run`)."""
        taking = asyncio.ensure_future(asyncio.to_thread(_shared_zygote, self.warm))
        try:
            zygote = self._held = await asyncio.shield(taking)
        except asyncio.CancelledError:  # closed meanwhile: let go of it once it comes
            taking.add_done_callback(_let_go)
            raise
        loop = asyncio.get_running_loop()
        decided: asyncio.Future[bool] = loop.create_future()

        def settle(ready: bool) -> None:
            if not decided.done():
                decided.set_result(ready)

        def told(ready: bool) -> None:  # the zygote's thread
            with contextlib.suppress(RuntimeError):  # this pool's loop is gone: nothing to do
                loop.call_soon_threadsafe(settle, ready)

        zygote.when_ready(told)
        if not await decided:
            _drop_zygote(zygote)
            return
        if self._closed:
            return
        self._zygote = zygote
        for worker in list(self._all):
            if not worker.cold:
                continue
            worker.retire = True
            if worker in self._idle:
                self._idle.remove(worker)
                await self._replace(worker, warmed=True)

    def _new_worker(self, slot: int) -> _Worker:
        """A worker from the zygote, when there is one (else, or when it is gone, from the
        fork server: the same worker, without the warm-ups)."""
        zygote = self._zygote
        if zygote is not None:
            try:
                return _Worker(self.memory_mb, slot, zygote)
            except (OSError, EOFError, ValueError):
                _drop_zygote(zygote)  # died: the fork server from now on
                self._zygote = None
        worker = _Worker(self.memory_mb, slot)
        worker.cold = bool(self.warm)
        return worker

    @property
    def warming(self) -> bool:
        """Whether the warm-ups are still on their way to some worker (the zygote runs
        them, or a cold worker waits to be swapped): a benchmark's timed run waits."""
        if self._warming is not None and not self._warming.done():
            return True
        return self._zygote is not None and any(w.cold for w in self._all)

    def _start_done(self, starting: asyncio.Future[None]) -> None:
        if starting.cancelled() or starting.exception() is None:
            return
        self._start_error = f"the scoring workers could not start: {starting.exception()}"
        self._fail_waiting(self._start_error)

    def health(self) -> PoolHealth:
        """Whole while open once started: a dead worker process is replaced before its
        task returns. While the workers start (``start(wait=False)``), tasks wait for them:
        the pool counts as usable."""
        if self._closed or self._start_error is not None:
            return PoolHealth(self.size, 0, self._start_error)
        if self.started < self.size and self._starting is not None:
            return PoolHealth(self.size, self.started, "starting", starting=True)
        return PoolHealth(self.size, self.size)

    def _fail_waiting(self, why: str) -> None:
        waiting, self._waiting = self._waiting, {}
        for queue in waiting.values():
            for future, _ in queue:
                if not future.done():
                    future.set_exception(ScorerError(why))

    async def close(self) -> None:
        self._closed = True
        self._fail_waiting("the worker pool is closed")
        if self._warming is not None:  # the zygote warms on for the next pool: no waiting
            self._warming.cancel()
        starting = self._starting
        if starting is not None and not starting.done():
            with contextlib.suppress(Exception):  # a start that failed: nothing to stop
                await starting  # ends at the step it runs now (never cut mid-start)
        workers, self._all, self._idle = list(self._all), set(), []
        for worker in workers:  # a closed pipe reports nothing: fail the tasks in flight now
            if worker.reply is not None and not worker.reply.done():
                worker.reply.set_exception(ScorerError("the worker pool is closed"))
        self._zygote = None  # this process's, not the pool's: it stays for the next pool
        held, self._held = self._held, None

        def stop_all() -> None:
            for worker in workers:
                worker.stop()
            if held is not None:
                _release_zygote(held)

        await asyncio.to_thread(stop_all)
        await asyncio.gather(*self._stopping, return_exceptions=True)  # spares, forked or going

    async def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float,
        affinity: Hashable | None = None,
        link: TaskLink | None = None,
        prepare: tuple[Callable[[], None], ...] = (),
    ) -> Any:
        """Run one task; raise ScorerTimeout, WorkerCrashed or ScorerError on failure.

        ``affinity``: tasks with equal keys prefer the same worker (see the module).
        ``link``: the task's progress reports and an early stop (:class:`TaskLink`).
        ``prepare``: what the task needs loaded once per process (a verifier family's
        checkers and models: :func:`rewardkit.verifiers.base.preparations`). A worker that
        has not run one yet (started before the zygote's warm-ups were done) runs it
        first, under :data:`PREPARE_TIMEOUT_S`, outside the task's ``timeout``: on a loaded
        machine, loading IFEval's checkers took longer than a row's 10 s, and every row
        of a cold worker, and of its cold replacement, ended ``timeout`` (a right answer
        called a timeout). A preparation that fails is the task's ScorerError.
        """
        if self._closed:
            raise ScorerError("the worker pool is closed")
        if self._start_error is not None:
            raise ScorerError(self._start_error)
        owner = requester()
        prefer = None if affinity is None else hash(affinity) % self.size
        worker = await self._acquire(owner, prefer)
        if prepare and worker.prepared is not None:
            try:
                await self._prepare(worker, prepare)
            except BaseException:
                self._finished(owner)
                await asyncio.shield(self._replace(worker))
                raise
        self.stats["tasks"] += 1
        watch = asyncio.get_running_loop().call_later(STUCK_TASK_S, self._stuck, worker)
        try:
            ok, value = await self._exchange(worker, (fn, args), timeout, link)
        except BaseException as exc:
            watch.cancel()
            self._unstuck(worker)
            self._finished(owner)
            if isinstance(exc, ScorerTimeout):
                self.stats["timeouts"] += 1
            elif isinstance(exc, WorkerCrashed):
                self.stats["crashes"] += 1
            # Timed out, dead, or cancelled mid-task (it may still be busy): never reused.
            await asyncio.shield(self._replace(worker))
            raise
        watch.cancel()
        self._unstuck(worker)
        self._finished(owner)
        worker.tasks_done += 1
        if worker.retire:  # a cold worker, now that the zygote can fork a warm one
            await asyncio.shield(self._replace(worker, warmed=True))
        elif worker.tasks_done % _CENSUS_EVERY == 0 and holds_more_than(
            worker.process.pid, _MAX_BELOW
        ):
            await asyncio.shield(self._replace(worker))
        else:
            self._release(worker)
        if not ok:
            raise ScorerError(value)
        return value

    async def _prepare(self, worker: _Worker, prepare: tuple[Callable[[], None], ...]) -> None:
        """Run in ``worker`` the preparations it has not run yet (ScorerError if they fail)."""
        assert worker.prepared is not None
        missing = tuple(step for step in prepare if step not in worker.prepared)
        if not missing:
            return
        try:
            ok, value = await self._exchange(worker, (_prepared, (missing,)), PREPARE_TIMEOUT_S)
        except (ScorerTimeout, WorkerCrashed) as exc:
            raise ScorerError(f"a worker could not load what the check needs: {exc}") from exc
        if not ok:
            raise ScorerError(f"a worker could not load what the check needs: {value}")
        worker.prepared.update(missing)
        self.stats["prepared"] += 1

    # ------------------------------------------------------------------ fair sharing

    async def _acquire(self, owner: Hashable | None, prefer: int | None) -> _Worker:
        if self._idle and not self._waiting:
            self._serve(owner)
            at = next((i for i, w in enumerate(self._idle) if w.slot == prefer), -1)
            return self._idle.pop(at)
        future: asyncio.Future[_Worker] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(owner, deque()).append((future, prefer))
        self._top_up()
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # handed a worker as we left
                self._finished(owner)
                self._release(future.result())
            else:
                self._forget(owner, future)
            raise

    def _release(self, worker: _Worker) -> None:
        """Hand a free worker to the waiting requester holding the fewest workers (ties:
        the one served longest ago, or never)."""
        while self._waiting:
            owner = min(
                self._waiting, key=lambda o: (self._running[o], self._last_served.get(o, -1))
            )
            queue = self._waiting[owner]
            future = _take(queue, worker.slot)
            if not queue:
                del self._waiting[owner]
            if not future.done():
                self._serve(owner)
                future.set_result(worker)
                return
        if self._serving() > self.size:  # a spare, no longer needed: nothing waits
            self._all.discard(worker)
            self._hold(asyncio.ensure_future(asyncio.to_thread(worker.stop)))
            return
        self._idle.append(worker)

    # ------------------------------------------------------------------ spares

    def _serving(self) -> int:
        """Workers that serve or may serve tasks soon: all but those stuck in a task."""
        return len(self._all) - self._stuck_workers

    def _stuck(self, worker: _Worker) -> None:
        """``worker``'s task has run past STUCK_TASK_S (the watch in :meth:`run`)."""
        if worker in self._all and not worker.stuck:
            worker.stuck = True
            self._stuck_workers += 1
            self._top_up(worker.slot)

    def _unstuck(self, worker: _Worker) -> None:
        """``worker``'s task has ended (before it is released or replaced)."""
        if worker.stuck:
            worker.stuck = False
            self._stuck_workers -= 1

    def _top_up(self, slot: int = 0) -> None:
        """Fork a spare worker while tasks wait and fewer than ``size`` workers serve
        (at most ``spares`` past ``size`` in all): see STUCK_TASK_S."""
        if self._closed or not self._waiting or self.started < self.size:
            return
        if self._serving() + self._forking_spares >= self.size:
            return
        if len(self._all) + self._forking_spares >= self.size + self.spares:
            return
        self._forking_spares += 1
        self._hold(asyncio.ensure_future(self._add_spare(slot)))

    def _hold(self, job: asyncio.Future[None]) -> None:
        """Keep a spare's start or stop until it is done (close() awaits what is left)."""
        self._stopping.add(job)
        job.add_done_callback(self._stopping.discard)

    async def _add_spare(self, slot: int) -> None:
        try:
            worker = await asyncio.to_thread(self._new_worker, slot)
        except Exception:  # a spare that cannot start costs speed, never a task
            return
        finally:
            self._forking_spares -= 1
        if self._closed:
            await asyncio.to_thread(worker.stop)
            return
        self.stats["spares"] += 1
        self._all.add(worker)
        self._release(worker)

    def _serve(self, owner: Hashable | None) -> None:
        self._running[owner] += 1
        self._serial += 1
        self._last_served[owner] = self._serial

    def _finished(self, owner: Hashable | None) -> None:
        self._running[owner] -= 1
        if self._running[owner] <= 0:
            del self._running[owner]
            self._drop_if_done(owner)

    def _drop_if_done(self, owner: Hashable | None) -> None:
        """Forget an owner that holds and waits for nothing (its record would leak)."""
        if owner not in self._running and owner not in self._waiting:
            self._last_served.pop(owner, None)

    def _forget(self, owner: Hashable | None, future: asyncio.Future[_Worker]) -> None:
        queue = self._waiting.get(owner)
        entry = next((e for e in queue or () if e[0] is future), None)
        if queue is not None and entry is not None:
            queue.remove(entry)
            if not queue:
                del self._waiting[owner]
                self._drop_if_done(owner)

    # ------------------------------------------------------------------ workers

    async def _exchange(
        self, worker: _Worker, task: Any, timeout: float, link: TaskLink | None = None
    ) -> tuple[bool, Any]:
        loop = asyncio.get_running_loop()
        fd = worker.conn.fileno()
        if link is not None:
            link.handed = True
        try:
            payload = bytes(ForkingPickler.dumps(task))
        except Exception as exc:
            raise ScorerError(f"the task cannot be sent to a worker: {exc}") from exc
        # An event loop's reader (uvloop's) leaves the socket non-blocking, where a message
        # larger than its buffer fails with EAGAIN: send blocking, off the loop when large
        # (the worker is idle, so it reads at once).
        os.set_blocking(fd, True)
        worker.serial += 1
        try:
            if len(payload) <= _INLINE_SEND_BYTES:
                worker.conn.send_bytes(payload)
            else:
                await asyncio.to_thread(worker.conn.send_bytes, payload)
        except (OSError, ValueError) as exc:
            raise WorkerCrashed(f"could not send the task to its worker: {exc}") from exc
        reply: asyncio.Future[tuple[bool, Any]] = loop.create_future()
        worker.reply = reply
        frames = _Frames()

        def on_readable() -> None:
            if reply.done():
                return
            try:
                data = os.read(fd, 1 << 20)  # what is there: a large reply never blocks the loop
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                worker.process.join(timeout=1)
                code = worker.process.exitcode
                reply.set_exception(WorkerCrashed(f"worker process died (exit code {code})"))
                return
            for message in frames.feed(data):
                try:
                    answer = pickle.loads(message)
                    if link is not None:  # its reports first, in the order written
                        link.collect()
                        if answer[0] is None:  # one its board had no room for: (None, part)
                            part = answer[1]
                            link.hand_on(
                                bytes(ForkingPickler.dumps(part)) if link.raw else part,
                                time.monotonic(),
                            )
                except Exception as exc:
                    reply.set_exception(WorkerCrashed(f"unreadable reply from a worker: {exc}"))
                    return
                if answer[0] is None:
                    continue
                reply.set_result(answer)
                return

        def on_exit() -> None:
            # The worker died, but a process it forked still holds its end of the pipe,
            # so no EOF comes: read what it sent, else it crashed (not, later, a timeout).
            # The sentinel also reads as ended when the fork server dies, before its
            # workers do (the parent-death signal): then wait for the pipe's EOF.
            loop.remove_reader(worker.process.sentinel)  # it stays readable: once is enough
            if running(worker.process.pid):
                return
            while not reply.done() and worker.conn.poll(0):
                on_readable()
            if not reply.done():
                worker.process.join(timeout=1)
                code = worker.process.exitcode
                reply.set_exception(WorkerCrashed(f"worker process died (exit code {code})"))

        loop.add_reader(fd, on_readable)
        loop.add_reader(worker.process.sentinel, on_exit)
        if link is not None:
            link._conn, link._board, link._read_at = worker.conn, (worker.board, worker.serial), 0
            link._reply = reply
        try:
            return await asyncio.wait_for(reply, timeout)
        except TimeoutError:
            raise ScorerTimeout(f"timed out after {timeout:g}s") from None
        finally:
            if link is not None:
                with contextlib.suppress(Exception):  # a failed task: what it reported first
                    link.collect()
                link._conn = link._board = link._reply = None
            loop.remove_reader(fd)
            loop.remove_reader(worker.process.sentinel)

    async def _replace(self, worker: _Worker, warmed: bool = False) -> None:
        """A fresh worker in ``worker``'s slot (``warmed``: a cold one swapped for a
        warm one, no restart)."""
        self._all.discard(worker)
        if self._closed:
            return  # close() stops every worker it had, this one too: never twice at once
        await asyncio.to_thread(worker.stop if warmed else worker.kill)
        if self._closed:
            return
        fresh = await asyncio.to_thread(self._new_worker, worker.slot)
        fresh.retire = fresh.cold and self._zygote is not None  # forked as the zygote got ready
        self.stats["warmed" if warmed else "restarts"] += 1
        if self._closed:  # closed while it started
            await asyncio.to_thread(fresh.stop)
            return
        self._all.add(fresh)
        self._release(fresh)
