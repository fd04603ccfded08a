"""Scoring actors on a Ray cluster behind the WorkerPool interface (``reward.backend=ray``).

    pool = rewardkit.wiring.make_pool(config.reward)  # WorkerPool, or RayWorkerPool for ray
    await pool.start()
    value = await pool.run(fn, *args, timeout=10)  # ScorerTimeout | WorkerCrashed | ScorerError
    await pool.close()

Each scoring actor owns a local :class:`~rewardkit.execution.pool.WorkerPool` of one
process, so a task past its limit is SIGKILLed on whichever node it runs, exactly as on
one machine. The driver (the engine's event loop) sends each task to the actor with the
fewest tasks outstanding and never more than ``reward.ray.max_outstanding_per_worker``
to one actor: back-pressure, and an actor that never idles waiting for its next task.

An actor that dies (its node lost, killed for memory, ``ray.kill``) costs time, not
rows: its in-flight tasks are retried once on another actor (``stats["retried"]``) and
its slot is refilled in the background, with backoff, until some node can hold it (the
pool returns to full size when a node rejoins or a new one comes). ``pool.health()``
says how many actors are live; with none for ``reward.ray.unavailable_timeout_s`` a task
gets :class:`~rewardkit.errors.PoolUnavailable` at once. A task that timed out or
crashed its worker process is *not* retried: that is the row's honest status, as with
the local pool.

``ray`` is imported only when a Ray pool or replica starts: the local backend never
needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import pickle
import signal
from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardkit.config import RayOptions
from rewardkit.errors import ScorerError, ScorerTimeout, WorkerCrashed
from rewardkit.execution._ray import (
    ActorGroup,
    ActorSpec,
    acquire_ray,
    actor_runtime_env,
    check_capacity,
    import_ray,
    release_ray,
    start_actors,
    stop_actors,
)
from rewardkit.execution.health import PoolHealth
from rewardkit.execution.pool import WorkerPool

__all__ = [
    "ActorGroup",
    "RayWorkerPool",
    "acquire_ray",
    "actor_runtime_env",
    "check_capacity",
    "import_ray",
    "release_ray",
]

# Room for a worker restart and a network hop, on top of each task's own limit.
_SLACK_S = 30.0
# A call stops taking tasks past this many pickled bytes: beyond it, what a call costs
# is the transfer, and a few large rows would otherwise ride in one call, on one actor.
_CALL_BYTES = 1 << 20

_Wire = tuple[bytes, float, "Hashable | None"]
"""A task as a call carries it: (pickled ``(fn, args)``, its timeout, its affinity)."""


# ---------------------------------------------------------------------- scoring actors


class _ScoringActor:
    """One scoring actor: a one-process WorkerPool of its own on whatever node Ray chose."""

    def __init__(self, memory_mb: int | None, preload: tuple[str, ...] = ()) -> None:
        self._memory_mb = memory_mb
        self._preload = preload
        self._pool: WorkerPool | None = None

    async def start(self) -> dict[str, Any]:
        import ray

        self._pool = WorkerPool(1, memory_mb=self._memory_mb, preload=self._preload)
        await self._pool.start()
        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    async def run_many(self, tasks: list[_Wire]) -> list[tuple[str, Any]]:
        """Run a call's tasks (queued in order on this actor's one process) and answer one
        (kind, value) each: the rewardkit exceptions travel as data, not as RayTaskErrors,
        so one task's failure is that task's alone."""
        return list(await asyncio.gather(*(self._one(*task) for task in tasks)))

    async def _one(self, blob: bytes, timeout: float, affinity: Hashable | None) -> tuple[str, Any]:
        assert self._pool is not None
        try:
            value = await self._pool.run(_in_worker, blob, timeout=timeout, affinity=affinity)
            return "ok", value
        except ScorerTimeout as exc:
            return "timeout", str(exc)
        except WorkerCrashed as exc:
            return "crashed", str(exc)
        except ScorerError as exc:
            return "error", str(exc)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()


_ORPHAN_GUARD = False


def _in_worker(blob: bytes) -> Any:
    """Runs in the actor's scoring process: ``fn(*args)`` (pickled by the driver, so that
    neither Ray nor the actor unpickles and pickles them again), after tying the process's
    life to it.

    The process is a child of the actor's fork server, which exits when the actor dies.
    If the actor is SIGKILLed mid-task (a lost node, ``ray.kill``), nobody is left to
    enforce the time limit, so a looping task would spin forever; PR_SET_PDEATHSIG makes
    the kernel kill it with its parent instead.
    """
    global _ORPHAN_GUARD
    if not _ORPHAN_GUARD:
        _ORPHAN_GUARD = True
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    fn, args = pickle.loads(blob)
    return fn(*args)


@dataclass(eq=False, slots=True)
class _Call:
    """One remote call and the tasks it carries."""

    tasks: list[_Task]
    sent: asyncio.Future[None] | None = None


@dataclass(eq=False, slots=True)
class _Task:
    """A task of ``RayWorkerPool.run``: what goes over the wire, and where its answer goes."""

    wire: _Wire
    answer: asyncio.Future[tuple[str, Any]]
    call: _Call | None = field(default=None)


def _settle(answer: asyncio.Future[Any], exc: BaseException) -> None:
    """End a task's wait with ``exc`` (cancelled with it, when that is a cancellation)."""
    if answer.done():
        return
    if isinstance(exc, asyncio.CancelledError):
        answer.cancel()
    else:
        answer.set_exception(exc)


class RayWorkerPool:
    """The WorkerPool interface over Ray actors: ``await pool.run(fn, *args, timeout=...)``.

    ``size`` actors (None: as many as the cluster's free CPUs hold at
    ``options.num_cpus_per_worker`` each, less ``reserve_cpus`` kept for model replicas),
    spread over the nodes. ``fn`` and ``args`` must pickle (module-level functions and
    frozen dataclasses do) and ``fn`` must be importable on every node. See the module
    docstring for routing and faults.
    """

    def __init__(
        self,
        size: int | None = None,
        *,
        options: RayOptions | None = None,
        memory_mb: int | None = None,
        reserve_cpus: float = 0.0,
        preload: Sequence[str] = (),
    ) -> None:
        if size is not None and size < 1:
            raise ValueError(f"a pool needs at least one worker, got size={size}")
        self.size = size
        self.options = options or RayOptions()
        self.memory_mb = memory_mb
        self.reserve_cpus = reserve_cpus
        self.preload = tuple(preload)  # modules each actor's scoring process imports first
        self._group: ActorGroup | None = None
        self._leased = False
        self._closed = False
        self._queue: deque[_Task] = deque()  # tasks waiting for room on an actor
        self._pump: asyncio.Future[None] | None = None
        # calls: remote calls sent (each carries one or more tasks).
        self.stats: dict[str, int] = {
            "tasks": 0,
            "calls": 0,
            "timeouts": 0,
            "crashes": 0,
            "restarts": 0,
        }

    async def start(self) -> None:
        """Connect to Ray and start every actor (each with a warm scoring process)."""
        if self._group is not None:
            return
        ray = import_ray()
        acquire_ray(self.options)
        self._leased = True
        opts = self.options
        free = ray.available_resources().get("CPU", 0) - self.reserve_cpus
        size = self.size or max(1, int(free // opts.num_cpus_per_worker))
        reserved = f" + {self.reserve_cpus:g} for model replicas" if self.reserve_cpus else ""
        spec = ActorSpec(
            "Ray scoring actors",
            _ScoringActor,
            (self.memory_mb, self.preload),
            size,
            num_cpus=opts.num_cpus_per_worker,
            needs={"CPU": size * opts.num_cpus_per_worker + self.reserve_cpus},
            what=f"reward.num_workers={size} actors x reward.ray.num_cpus_per_worker="
            f"{opts.num_cpus_per_worker:g}{reserved}",
            cap=opts.max_outstanding_per_worker,
        )
        self._group = await start_actors(spec, opts, self.stats)

    async def close(self) -> None:
        """Stop the actors (their scoring processes first); disconnect from a Ray we started."""
        self._closed = True
        group, self._group = self._group, None
        leased, self._leased = self._leased, False
        await stop_actors(group, leased=leased)

    async def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float,
        affinity: Hashable | None = None,
    ) -> Any:
        """Run one task on some actor; raise ScorerTimeout, WorkerCrashed or ScorerError on failure.

        ``affinity`` reaches the actor's own process pool (Ray picks the actor)."""
        if self._closed or self._group is None:
            raise ScorerError(
                "the worker pool is closed" if self._closed else "the worker pool is not started"
            )
        self.stats["tasks"] += 1
        try:
            blob = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a lock, a lambda, ...: this task fails, not its call
            raise ScorerError(
                f"cannot send the task to a Ray actor: {type(exc).__name__}: {exc}"
            ) from exc
        task = _Task((blob, timeout, affinity), asyncio.get_running_loop().create_future())
        task.answer.add_done_callback(lambda _: self._dropped(task))
        self._queue.append(task)
        if self._pump is None:  # next tick: every task queued in this one rides along
            self._pump = asyncio.ensure_future(self._pumping(self._group))
        kind, value = await task.answer
        if kind == "ok":
            return value
        if kind == "timeout":
            self.stats["timeouts"] += 1
            self.stats["restarts"] += 1
            raise ScorerTimeout(value)
        if kind == "crashed":
            self.stats["crashes"] += 1
            self.stats["restarts"] += 1
            raise WorkerCrashed(value)
        raise ScorerError(value)

    # ------------------------------------------------------------------ coalescing

    async def _pumping(self, group: ActorGroup) -> None:
        """Send the queued tasks, as few calls as the room on the actors allows.

        Each actor with room takes up to ``max_tasks_per_call`` tasks in one call (fewer
        when there are few: they are shared among the actors with room, so that a handful
        of rows still run side by side), and never more outstanding than
        ``max_outstanding_per_worker``; what does not fit waits here, in order, and goes
        out as soon as a call comes back.
        """
        try:
            while self._first_live():
                member = await group.free_member()
                room = group.room(member)
                if room <= 0:  # its room went to a retry handed an actor just before us
                    continue
                share = -(-len(self._queue) // max(1, group.with_room()))
                tasks = self._take(min(room, share, self.options.max_tasks_per_call))
                if not tasks:
                    continue
                group.take(member, len(tasks))
                self.stats["calls"] += 1
                call = _Call(tasks)
                for task in tasks:
                    task.call = call
                call.sent = asyncio.ensure_future(self._send(group, member, call))
        except BaseException as exc:  # PoolUnavailable, closed, cancelled: the queue ends too
            queued, self._queue = self._queue, deque()
            for task in queued:
                _settle(task.answer, exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._pump = None

    def _first_live(self) -> bool:
        """Whether a task waits in the queue (dropping the cancelled ones at its head)."""
        while self._queue and self._queue[0].answer.done():
            self._queue.popleft()
        return bool(self._queue)

    def _take(self, most: int) -> list[_Task]:
        """Up to ``most`` waiting tasks, in order, within :data:`_CALL_BYTES` (at least one)."""
        taken: list[_Task] = []
        size = 0
        while self._queue and len(taken) < most and (not taken or size < _CALL_BYTES):
            task = self._queue.popleft()
            if task.answer.done():  # cancelled while it waited
                continue
            taken.append(task)
            size += len(task.wire[0])
        return taken

    async def _send(self, group: ActorGroup, member: Any, call: _Call) -> None:
        """One remote call for ``call``'s tasks; each task's answer goes to its own caller."""
        wire = [task.wire for task in call.tasks]
        longest = max(timeout for _, timeout, _ in wire)
        # Past this an actor is deemed stuck: every task queued on it had its full limit.
        guard = self.options.max_outstanding_per_worker * (longest + _SLACK_S) + _SLACK_S
        try:
            answers = await group.call(
                lambda h: h.run_many.remote(wire), weight=len(wire), guard=guard, member=member
            )
        except BaseException as exc:  # both actors died, none live, closed, all cancelled
            for task in call.tasks:
                _settle(task.answer, exc)
            if not isinstance(exc, (Exception, asyncio.CancelledError)):
                raise
            return
        for task, answer in zip(call.tasks, answers, strict=True):
            if not task.answer.done():
                task.answer.set_result(answer)

    def _dropped(self, task: _Task) -> None:
        """A task's caller went away: once no caller of its call is left, cancel the call."""
        call = task.call
        if not task.answer.cancelled() or call is None or call.sent is None:
            return
        if all(t.answer.done() for t in call.tasks) and not call.sent.done():
            call.sent.cancel()

    def health(self) -> PoolHealth:
        """Live actors against ``size``: below it while a node is gone, 0 when none can be placed."""
        if self._group is None:
            return PoolHealth(self.size or 0, 0, "closed" if self._closed else "not started")
        return self._group.health()

    @property
    def actors(self) -> list[Mapping[str, Any]]:
        """The live actors: ``node_id``, ``pid`` and tasks ``outstanding`` on each."""
        return [] if self._group is None else list(self._group.describe())

    @property
    def actor_handles(self) -> list[Any]:
        """The live actors' Ray handles (for operators and fault-injection tests)."""
        return [] if self._group is None else self._group.handles()
