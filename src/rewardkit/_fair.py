"""Fair sharing between requesters, and a row's clock that tells its waiting from its running.

A *requester* is one :meth:`~rewardkit.scoring.engine.RewardEngine.score_many` call (so
one HTTP request): :func:`fair_share` marks the work started inside it, asyncio tasks
included (they copy the context they are created in). What is scarce is shared by
requester, not first come, first served: the worker pool's processes
(:mod:`rewardkit.execution.pool`), the embedded sandbox's slots and a remote sandbox's
requests in flight (:class:`FairSlots`). Ten slow rows of one request never queue ahead
of another request's row, which waits at most for the first slot to free up.

A :class:`RowClock` (one per guarded await, :meth:`~rewardkit.scoring.guard.Guard.awaited`)
counts a row's *run* time apart from its *wait* for a slot: a slot taken through
:class:`FairSlots`, and anything inside :func:`waiting`, is reported to the clock of the
row that asked. The row's time limit is then on what it ran, and its wait has a bound of
its own: under load, a correct row is never timed out for the queue in front of it.

A leaf module: the sandbox, the verifiers, the pool and the engine all import it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Hashable, Iterable, Iterator
from contextvars import ContextVar
from typing import Generic, TypeVar

__all__ = ["FairSlots", "RowClock", "clocked", "fair_share", "holding", "requester", "waiting"]

_T = TypeVar("_T")

_OWNER: ContextVar[Hashable | None] = ContextVar("rewardkit_pool_owner", default=None)
_CLOCK: ContextVar[RowClock | None] = ContextVar("rewardkit_row_clock", default=None)


@contextlib.contextmanager
def fair_share(owner: Hashable | None = None) -> Iterator[None]:
    """Work started inside this block, and in asyncio tasks created inside it, belongs to
    one requester (``owner``, or a fresh one): pools and slots share themselves fairly
    between requesters instead of first come, first served."""
    token = _OWNER.set(object() if owner is None else owner)
    try:
        yield
    finally:
        _OWNER.reset(token)


def requester() -> Hashable | None:
    """The requester the running code works for (None outside :func:`fair_share`)."""
    return _OWNER.get()


# ---------------------------------------------------------------------- the row clock


class RowClock:
    """How long one row has run, and how long it has waited for slots.

    The row *waits* while it has a slot request pending and holds no slot (all of its
    work is queued); any other moment it *runs*, its own code and the parsing between
    runs included. A row that never reports waiting only runs: the clock is then a
    plain timer.
    """

    def __init__(self) -> None:
        self._waiting = 0  # this row's slot requests pending
        self._holding = 0  # this row's slots held
        self._ran = 0.0
        self._waited = 0.0
        self._since = time.monotonic()
        self._wake: asyncio.Future[None] | None = None

    @property
    def paused(self) -> bool:
        """Whether the row is waiting now (its run time stands still)."""
        return self._waiting > 0 and self._holding == 0

    def ran(self) -> float:
        """Seconds the row has run so far."""
        return self._ran + (0.0 if self.paused else time.monotonic() - self._since)

    def waited(self) -> float:
        """Seconds the row has waited for slots so far."""
        return self._waited + (time.monotonic() - self._since if self.paused else 0.0)

    def changed(self) -> asyncio.Future[None]:
        """A future done at the next switch between running and waiting."""
        if self._wake is None or self._wake.done():
            self._wake = asyncio.get_running_loop().create_future()
        return self._wake

    def _count(self, waiting: int = 0, holding: int = 0) -> None:
        was = self.paused
        now = time.monotonic()
        if was:
            self._waited += now - self._since
        else:
            self._ran += now - self._since
        self._since = now
        self._waiting += waiting
        self._holding += holding
        if self.paused != was and self._wake is not None and not self._wake.done():
            self._wake.set_result(None)


@contextlib.contextmanager
def waiting() -> Iterator[None]:
    """The code inside waits for a slot (or for the sandbox to start), for the row whose
    clock is running here; its run time stands still unless it holds a slot too."""
    clock = _CLOCK.get()
    if clock is None:
        yield
        return
    clock._count(waiting=1)
    try:
        yield
    finally:
        clock._count(waiting=-1)


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """The code inside holds a slot: the row runs, whatever else of it waits."""
    clock = _CLOCK.get()
    if clock is None:
        yield
        return
    clock._count(holding=1)
    try:
        yield
    finally:
        clock._count(holding=-1)


@contextlib.contextmanager
def clocked(clock: RowClock) -> Iterator[None]:
    """Tasks created inside this block report their waits to ``clock``."""
    token = _CLOCK.set(clock)
    try:
        yield
    finally:
        _CLOCK.reset(token)


# ---------------------------------------------------------------------- fair slots


class FairSlots(Generic[_T]):
    """A fixed set of slots shared fairly between requesters, on one event loop.

    A freed slot goes to the waiting requester that holds the fewest slots (ties: the one
    served longest ago, or never), first come, first served within a requester: the
    worker pool's rule (:class:`~rewardkit.execution.pool.WorkerPool`).
    """

    def __init__(self, slots: Iterable[_T]) -> None:
        self._idle: deque[_T] = deque(slots)
        self._queues: dict[Hashable | None, deque[asyncio.Future[_T]]] = {}
        self._held: Counter[Hashable | None] = Counter()
        self._last_served: dict[Hashable | None, int] = {}
        self._serial = 0

    @property
    def idle(self) -> int:
        """Slots free now."""
        return len(self._idle)

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot now."""
        return sum(len(queue) for queue in self._queues.values())

    @contextlib.asynccontextmanager
    async def take(self, timeout: float | None = None) -> AsyncIterator[_T]:
        """A slot for the current requester, held for the block; the wait for it and the
        hold are reported to the row's clock (:func:`waiting`, :func:`holding`).
        TimeoutError if none is free within ``timeout`` seconds."""
        owner = requester()
        with waiting():
            slot = await self.acquire(owner, timeout)
        try:
            with holding():
                yield slot
        finally:
            self.release(owner, slot)

    async def acquire(self, owner: Hashable | None, timeout: float | None = None) -> _T:
        """A slot for ``owner``: at once if one is free and nobody waits, else in turn.
        Give it back with :meth:`release`."""
        if self._idle and not self._queues:
            self._serve(owner)
            return self._idle.popleft()
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(owner, deque()).append(future)
        try:
            # Not wait_for: on 3.11 it can swallow a cancel that lands as the slot frees up.
            async with asyncio.timeout(timeout):
                return await future
        except (asyncio.CancelledError, TimeoutError):
            if future.done() and not future.cancelled():  # handed a slot as we left
                self.release(owner, future.result())
            else:
                future.cancel()
                self._forget(owner, future)
            raise

    def release(self, owner: Hashable | None, slot: _T) -> None:
        """Give back a slot ``owner`` held: to the next waiting requester in fairness."""
        self._held[owner] -= 1
        if self._held[owner] <= 0:
            del self._held[owner]
            self._drop_if_done(owner)
        while self._queues:
            turn = min(self._queues, key=lambda o: (self._held[o], self._last_served.get(o, -1)))
            queue = self._queues[turn]
            future = queue.popleft()
            if not queue:
                del self._queues[turn]
            if not future.done():
                self._serve(turn)
                future.set_result(slot)
                return
            self._drop_if_done(turn)
        self._idle.append(slot)

    def _serve(self, owner: Hashable | None) -> None:
        self._held[owner] += 1
        self._serial += 1
        self._last_served[owner] = self._serial

    def _drop_if_done(self, owner: Hashable | None) -> None:
        """Forget an owner that holds and waits for nothing (its record would leak)."""
        if owner not in self._held and owner not in self._queues:
            self._last_served.pop(owner, None)

    def _forget(self, owner: Hashable | None, future: asyncio.Future[_T]) -> None:
        queue = self._queues.get(owner)
        if queue is not None and future in queue:
            queue.remove(future)
            if not queue:
                del self._queues[owner]
                self._drop_if_done(owner)
