"""Finding the coroutine that blocked the event loop.

An ``async`` user function that calls ``time.sleep`` (or does seconds of CPU work
between awaits) freezes the event loop: every other row waiting on it overshoots
its timeout, while the culprit itself returns ok. :func:`watched` runs a coroutine
one step at a time and times each step; a step longer than ``limit_s`` is a blocked
loop, recorded with the coroutine's name so that

* the culprit's row fails with :class:`LoopBlocked` naming it, and
* a row that timed out while the loop was blocked says who blocked it.

A step's time is its own: wall time less the time the process sat runnable, waiting
for a CPU (Linux's ``schedstat``): its own thread, or another thread of the process
that held the GIL meanwhile. On a loaded machine a step of a few milliseconds can take
half a second of wall time; blaming the coroutine for it failed well-behaved rows.
Sleeping, blocking I/O and CPU work all count. Where the kernel says nothing (not
Linux), steps are timed by the wall clock.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Coroutine, Generator
from typing import Any

from rewardkit.errors import ScorerError

__all__ = ["BlockLog", "LoopBlocked", "watched"]

logger = logging.getLogger("rewardkit")


class LoopBlocked(ScorerError):
    """A coroutine held the event loop longer than allowed in one step."""


class BlockLog:
    """Recent loop blocks: (start, end, name) in perf_counter seconds, newest last."""

    def __init__(self, limit_s: float = 0.5, keep: int = 64) -> None:
        self.limit_s = limit_s
        self._blocks: deque[tuple[float, float, str]] = deque(maxlen=keep)
        self._warned: set[str] = set()

    def record(self, name: str, start: float, end: float) -> None:
        self._blocks.append((start, end, name))
        if name not in self._warned:
            self._warned.add(name)
            logger.warning(
                "%s blocked the event loop for %.1fs: it makes blocking calls (time.sleep, "
                "sync I/O, long CPU work) inside async code, so other rows wait and may time "
                "out; make it a plain def (it then runs in a worker process) or await "
                "non-blocking calls",
                name,
                end - start,
            )

    def during(self, start: float, end: float) -> str | None:
        """Who blocked the loop between ``start`` and ``end`` (the longest block), or None."""
        overlapping = [b for b in self._blocks if b[1] > start and b[0] < end]
        if not overlapping:
            return None
        first, last, name = max(overlapping, key=lambda b: b[1] - b[0])
        return f"the event loop was blocked {last - first:.1f}s by {name}"


async def watched(coro: Coroutine[Any, Any, Any], name: str, log: BlockLog) -> Any:
    """Await ``coro``; LoopBlocked naming it if one of its steps held the loop too long."""
    timer = _StepTimer(coro, name, log)
    value = await timer
    if timer.longest > log.limit_s:
        raise LoopBlocked(
            f"{name} blocked the event loop for {timer.longest:.1f}s (a blocking call such as "
            "time.sleep in async code; other rows time out meanwhile): make it a plain def "
            "or await non-blocking calls"
        )
    return value


class _RunQueueFile:
    """One thread's ``/proc/thread-self/schedstat``, kept open (a read costs about 2 us);
    closed when the thread ends and its locals go."""

    def __init__(self) -> None:
        try:
            self.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self.fd = -1

    def waited(self) -> float:
        """Seconds this thread has waited, runnable, for a CPU (0.0 when unknown)."""
        if self.fd < 0:
            return 0.0
        try:  # "<ns on a CPU> <ns runnable, waiting for one> <time slices>"
            return int(os.pread(self.fd, 64, 0).split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return 0.0

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)


_THREAD = threading.local()


def _thread_waited() -> float:
    file = getattr(_THREAD, "run_queue", None)
    if file is None:
        file = _THREAD.run_queue = _RunQueueFile()
    return file.waited()


def _process_waited() -> float:
    """Seconds the process's threads have waited, runnable, for a CPU, all together."""
    total = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0.0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/schedstat", "rb") as file:
                total += int(file.read().split()[1])
        except (OSError, IndexError, ValueError):  # a thread that just ended
            continue
    return total / 1e9


_SAMPLE_EVERY_S = 0.05
_sample: tuple[float, float] = (float("-inf"), 0.0)  # (when, _process_waited() then)


def _process_sample(now: float) -> tuple[float, float]:
    """A reading of :func:`_process_waited` taken at most 50 ms before ``now``: reading
    every thread costs about 10 us each, too much for every step; the few ms it may
    reach back only lower a step's own time by what the process waited then."""
    global _sample
    if now - _sample[0] > _SAMPLE_EVERY_S:
        _sample = (now, _process_waited())
    return _sample


class _StepTimer:
    """Drives a coroutine as ``await`` would, timing each step it runs on the loop."""

    def __init__(self, coro: Coroutine[Any, Any, Any], name: str, log: BlockLog) -> None:
        self._coro, self._name, self._log = coro, name, log
        self.longest = 0.0

    def __await__(self) -> Generator[Any, Any, Any]:
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            start = time.perf_counter()
            waited, sample = _thread_waited(), _process_sample(start)
            try:
                if thrown is not None:
                    yielded = self._coro.throw(thrown)
                else:
                    yielded = self._coro.send(sent)
            except StopIteration as stop:
                return stop.value
            finally:
                self._measure(start, waited, sample[1])
            try:
                sent, thrown = (yield yielded), None
            except BaseException as exc:  # cancellation, passed on to the coroutine
                sent, thrown = None, exc

    def _measure(self, start: float, thread_waited: float, process_waited: float) -> None:
        end = time.perf_counter()
        wall = end - start
        own = wall - (_thread_waited() - thread_waited)
        if own > self._log.limit_s:  # (rare: only then is every thread read)
            # another thread waiting for a CPU while it held the GIL held this one too
            own = min(own, wall - min(wall, _process_waited() - process_waited))
        self.longest = max(self.longest, own)
        if own > self._log.limit_s:
            self._log.record(self._name, start, end)
