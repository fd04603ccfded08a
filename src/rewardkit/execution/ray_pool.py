"""Scoring actors on a Ray cluster behind the WorkerPool interface (``reward.backend=ray``).

    pool = rewardkit.wiring.make_pool(config.reward)  # WorkerPool, or RayWorkerPool for ray
    await pool.start()
    value = await pool.run(fn, *args, timeout=10)  # ScorerTimeout | WorkerCrashed | ScorerError
    await pool.close()

Each scoring actor owns a local :class:`~rewardkit.execution.pool.WorkerPool` of one
process, so a task past its limit is SIGKILLed on whichever node it runs, exactly as on
one machine. The driver (the engine's event loop) sends tasks to the actor with the
fewest tasks outstanding and never more than ``reward.ray.max_outstanding_per_worker``
to one actor: back-pressure, and an actor that never idles waiting for its next task.
A remote call costs the driver several times a small task's work, so the tasks waiting
for room go together, up to ``reward.ray.max_tasks_per_call`` in one call (``run_many``);
each keeps its own timeout, failure and answer. A task with a
:class:`~rewardkit.execution.pool.TaskLink` (a spread task) rides alone, has its actor to
itself, and its parts are polled from the actor while it runs, all of them handed on
before its answer.

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
import functools
import itertools
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
from rewardkit.execution.pool import TaskLink, WorkerPool

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
SILENT_S = 60.0
"""A busy scoring actor that answers no liveness probe for this long is hung: lost, its
tasks retried elsewhere (the work runs in the actor's own process, so a live actor's
event loop answers at once, however long its tasks run)."""
# A call stops taking tasks past this many pickled bytes: beyond it, what a call costs
# is the transfer, and a few large rows would otherwise ride in one call, on one actor.
_CALL_BYTES = 1 << 20

# How often the driver asks actors for the progress of the linked tasks they run.
_POLL_S = 0.04

_Wire = tuple[bytes, float, "Hashable | None", "int | None"]
"""A task as a call carries it: (pickled ``(fn, args)``, its timeout, its affinity, the
key of its link or None)."""
_Answer = tuple[str, Any, "list[Any] | None"]
"""A task's answer: (kind, value, every part its link received, or None without a link)."""


# ---------------------------------------------------------------------- scoring actors


class _ScoringActor:
    """One scoring actor: a one-process WorkerPool of its own on whatever node Ray chose."""

    def __init__(
        self, memory_mb: int | None, preload: tuple[str, ...] = (), warm: tuple[str, ...] = ()
    ) -> None:
        self._memory_mb = memory_mb
        self._preload = preload
        self._warm = warm
        self._pool: WorkerPool | None = None
        self._links: dict[int, tuple[TaskLink, list[Any]]] = {}  # running linked tasks
        self._waiting: dict[int, asyncio.Task[Any]] = {}  # linked tasks' own asyncio tasks
        self._recalled: set[int] = set()

    async def start(self) -> dict[str, Any]:
        import ray

        # The warm-ups run in the pool's zygote in the background: the actor is ready once
        # its first (cold) process is, and that process is swapped for a warm one later.
        self._pool = WorkerPool(
            1, memory_mb=self._memory_mb, preload=self._preload, warm=self._warm
        )
        await self._pool.start()
        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    async def run_many(self, tasks: list[_Wire]) -> list[_Answer]:
        """Run a call's tasks (queued in order on this actor's one process) and answer one
        (kind, value, parts) each: the rewardkit exceptions travel as data, not as
        RayTaskErrors, so one task's failure is that task's alone."""
        return list(await asyncio.gather(*(self._one(*task) for task in tasks)))

    async def progress(self, since: dict[int, int], cuts: list[int]) -> dict[int, list[Any]]:
        """Cut the linked tasks keyed in ``cuts``; the parts each task keyed in ``since``
        received past the count given (the driver's :meth:`RayWorkerPool._feed`)."""
        for key in cuts:
            if key in self._links:
                self._links[key][0].cut()
        return {key: self._links[key][1][n:] for key, n in since.items() if key in self._links}

    async def recall(self, keys: list[int]) -> None:
        """Give back the linked tasks keyed in ``keys`` that have not started: each answers
        ("recalled", ...) and the driver sends it to another actor."""
        for key in keys:
            waiting, (link, parts) = self._waiting.get(key), self._links.get(key, (None, None))
            if waiting is None or link is None or link.running or parts or key in self._recalled:
                continue
            self._recalled.add(key)
            waiting.cancel()

    async def _one(
        self, blob: bytes, timeout: float, affinity: Hashable | None, key: int | None
    ) -> _Answer:
        assert self._pool is not None
        parts: list[Any] | None = None
        link = None
        if key is not None:
            parts = []
            link = TaskLink(parts.append)
            self._links[key] = (link, parts)
            current = asyncio.current_task()
            assert current is not None
            self._waiting[key] = current
        try:
            value = await self._pool.run(
                _in_worker, blob, timeout=timeout, affinity=affinity, link=link
            )
            return "ok", value, parts
        except asyncio.CancelledError:
            if key is None or key not in self._recalled:
                raise
            if parts:  # it had started after all: its reported rows stand, the rest fails
                return "crashed", "recalled from a stalled actor after it started", parts
            return "recalled", None, None
        except ScorerTimeout as exc:
            return "timeout", str(exc), parts
        except WorkerCrashed as exc:
            return "crashed", str(exc), parts
        except ScorerError as exc:
            return "error", str(exc), parts
        finally:
            if key is not None:
                self._links.pop(key, None)
                self._waiting.pop(key, None)
                self._recalled.discard(key)

    def warming(self) -> bool:
        """Whether this actor's process still starts or waits for its warm-ups."""
        return self._pool is not None and (self._pool.health().starting or self._pool.warming)

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
    member: Any  # the actor it went to first (ActorGroup's member)
    sent: asyncio.Future[None] | None = None
    handle: Any = None  # the actor it went to (the last, when retried)
    blocked: bool = False  # its actor takes no new work while a check of it runs long


@dataclass(eq=False, slots=True)
class _Task:
    """A task of ``RayWorkerPool.run``: what goes over the wire, and where its answer goes."""

    wire: _Wire
    answer: asyncio.Future[tuple[str, Any]]
    call: _Call | None = field(default=None)
    link: TaskLink | None = None
    fed: int = 0  # parts handed to ``link.on_part`` so far
    cuts: bool = False  # its link asked for a cut the actor has not been told of


def _weight(tasks: list[_Task], cap: int) -> int:
    """What a call counts against ``max_outstanding_per_worker`` (``cap``): its tasks; a
    linked task (a spread task: a few dozen rows) half of it, so that an actor holds one
    running and one waiting (recalled when the running one's check runs long)."""
    return max(1, cap // 2) if tasks[0].link is not None else len(tasks)


async def _awaited(ref: Any) -> Any:
    return await ref


async def _quietly(ref: Any) -> None:
    """Await a call whose answer nobody needs (a dead actor's call tells the same)."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(_awaited(ref), _SLACK_S)


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
        warm: Sequence[str] = (),
    ) -> None:
        if size is not None and size < 1:
            raise ValueError(f"a pool needs at least one worker, got size={size}")
        self.size = size
        self.options = options or RayOptions()
        self.memory_mb = memory_mb
        self.reserve_cpus = reserve_cpus
        self.preload = tuple(preload)  # modules each actor's scoring process imports first
        self.warm = tuple(warm)  # warm-ups each actor runs in the background (WorkerPool)
        self._group: ActorGroup | None = None
        self._leased = False
        self._closed = False
        self._queue: deque[_Task] = deque()  # tasks waiting for room on an actor
        self._pump: asyncio.Future[None] | None = None
        self._gather = asyncio.Event()  # wakes a pump that lets tasks gather
        self._keys = itertools.count()  # linked tasks' keys
        self._linked: set[_Task] = set()  # linked tasks in flight
        self._poller: asyncio.Future[None] | None = None
        self._asking: set[asyncio.Future[None]] = set()  # progress calls carrying a cut
        # calls: remote calls sent (each carries one or more tasks); recalled: linked tasks
        # given back by an actor whose running task's check ran long, and sent elsewhere.
        self.stats: dict[str, int] = {
            "tasks": 0,
            "calls": 0,
            "recalled": 0,
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
            (self.memory_mb, self.preload, self.warm),
            size,
            num_cpus=opts.num_cpus_per_worker,
            needs={"CPU": size * opts.num_cpus_per_worker + self.reserve_cpus},
            what=f"reward.num_workers={size} actors x reward.ray.num_cpus_per_worker="
            f"{opts.num_cpus_per_worker:g}{reserved}",
            cap=opts.max_outstanding_per_worker,
            silent_after_s=SILENT_S,  # its event loop answers while its process scores
        )
        self._group = await start_actors(spec, opts, self.stats)

    async def close(self) -> None:
        """Stop the actors (their scoring processes first); disconnect from a Ray we started."""
        self._closed = True
        self._gather.set()  # a pump letting tasks gather finds the group closed
        group, self._group = self._group, None
        leased, self._leased = self._leased, False
        await stop_actors(group, leased=leased)

    async def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float,
        affinity: Hashable | None = None,
        link: TaskLink | None = None,
    ) -> Any:
        """Run one task on some actor; raise ScorerTimeout, WorkerCrashed or ScorerError on failure.

        ``affinity`` reaches the actor's own process pool (Ray picks the actor).
        ``link``: as for WorkerPool.run, across the network: its parts reach ``on_part``
        (polled every few hundredths of a second, all of them before the task's answer)
        and ``cut`` reaches the task. A linked task rides in a call of its own, has its
        actor to itself, and is not retried on another actor once a part of it has been
        handed on."""
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
        key = None if link is None else next(self._keys)
        task = _Task(
            (blob, timeout, affinity, key), asyncio.get_running_loop().create_future(), link=link
        )
        task.answer.add_done_callback(lambda _: self._dropped(task))
        self._queue.append(task)
        if len(self._queue) >= self.options.max_tasks_per_call:
            self._gather.set()
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
        most = self.options.max_tasks_per_call
        cap = self.options.max_outstanding_per_worker
        try:
            while self._first_live():
                member = await group.free_member()
                room = group.room(member)
                if room <= 0 or member.blocked:  # taken, or blocked, since it was handed to us
                    continue
                head = self._queue[0]
                if (
                    room < _weight([head], cap)  # a linked task: half an actor's room
                    if head.link is not None
                    else member.outstanding >= most and len(self._queue) < most
                ):
                    # Every actor has a full call's work ahead of it: no hurry. Let more
                    # tasks gather, until a full call waits or a call comes back.
                    self._gather.clear()
                    await self._gather.wait()
                    continue
                share = -(-len(self._queue) // max(1, group.with_room()))
                tasks = self._take(min(room, share, most))
                if not tasks:
                    continue
                group.take(member, _weight(tasks, cap))
                self.stats["calls"] += 1
                call = _Call(tasks, member)
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
            if taken and self._queue[0].link is not None:
                break  # a linked task rides alone
            task = self._queue.popleft()
            if task.answer.done():  # cancelled while it waited
                continue
            taken.append(task)
            size += len(task.wire[0])
            if task.link is not None:
                break
        return taken

    async def _send(self, group: ActorGroup, member: Any, call: _Call) -> None:
        """One remote call for ``call``'s tasks; each task's answer goes to its own caller."""
        wire = [task.wire for task in call.tasks]
        longest = max(task[1] for task in wire)
        # Past this an actor is deemed stuck: every task queued on it had its full limit.
        guard = self.options.max_outstanding_per_worker * (longest + _SLACK_S) + _SLACK_S
        linked = [task for task in call.tasks if task.link is not None]

        def send(handle: Any) -> Any:
            call.handle = handle
            return handle.run_many.remote(wire)

        for task in linked:
            self._linked.add(task)
            assert task.link is not None
            task.link.cut_by = functools.partial(self._cut, task)
        if linked and self._poller is None:
            self._poller = asyncio.ensure_future(self._polling())
        try:
            answers = await group.call(
                send,
                weight=_weight(call.tasks, self.options.max_outstanding_per_worker),
                units=len(wire),
                guard=guard,
                member=member,
                # once its parts went on, a rerun elsewhere would send them again
                retry=lambda: all(task.fed == 0 for task in linked),
            )
        except BaseException as exc:  # both actors died, none live, closed, all cancelled
            for task in call.tasks:
                _settle(task.answer, exc)
            if not isinstance(exc, (Exception, asyncio.CancelledError)):
                raise
            return
        finally:
            for task in linked:
                self._linked.discard(task)
                assert task.link is not None
                task.link.cut_by = None
            if call.blocked:
                group.block(call.member, False)
            self._gather.set()  # its actor has room again: the pump looks
        for task, (kind, value, parts) in zip(call.tasks, answers, strict=True):
            if task.answer.done():
                continue
            if kind == "recalled":  # it waited behind a stalled check: another actor runs it
                self.stats["recalled"] += 1
                task.call = None
                self._queue.appendleft(task)
                if self._pump is None:
                    self._pump = asyncio.ensure_future(self._pumping(group))
                continue
            if parts is not None:
                self._feed(task, 0, parts)  # whatever the polls had not brought
            task.answer.set_result((kind, value))

    # ------------------------------------------------------------------ links

    def _feed(self, task: _Task, start: int, parts: list[Any]) -> None:
        """Hand ``task``'s parts ``start``... to its link, each once, in order."""
        if task.link is None or task.answer.done():
            return
        for part in parts[max(0, task.fed - start) :]:
            task.fed += 1
            task.link.on_part(part)

    def _cut(self, task: _Task) -> None:
        """``task.link.cut()`` (a check of it runs long): tell its actor now (with a poll of
        the task's progress); until the task answers, that actor takes no more work, and
        the linked tasks waiting there that have not started are recalled."""
        task.cuts = True
        call = task.call
        if call is None or call.handle is None:
            return
        handle = call.handle
        waiting = [
            t.wire[3]
            for t in self._linked
            if t is not task and t.call is not None and t.call.handle is handle and t.fed == 0
        ]
        group = self._group
        if group is not None and not call.blocked:
            call.blocked = True
            group.block(call.member, True)
        for ask in (self._ask(handle, [task]), _quietly(handle.recall.remote(waiting))):
            pending = asyncio.ensure_future(ask)
            self._asking.add(pending)
            pending.add_done_callback(self._asking.discard)

    async def _polling(self) -> None:
        """While linked tasks run: ask their actors for the parts not yet handed on."""
        try:
            while self._linked:
                await asyncio.sleep(_POLL_S)
                by_actor: dict[Any, list[_Task]] = {}
                for task in self._linked:
                    if task.call is not None and task.call.handle is not None:
                        by_actor.setdefault(task.call.handle, []).append(task)
                await asyncio.gather(*(self._ask(h, ts) for h, ts in by_actor.items()))
        finally:
            self._poller = None

    async def _ask(self, handle: Any, tasks: list[_Task]) -> None:
        """One progress call to ``handle`` for ``tasks`` (and the cuts asked of them)."""
        keys = {task.wire[3]: task for task in tasks if task.wire[3] is not None}
        since = {key: task.fed for key, task in keys.items()}
        cuts = [key for key, task in keys.items() if task.cuts]
        for task in tasks:
            task.cuts = False
        try:
            ref = handle.progress.remote(since, cuts)
            parts = await asyncio.wait_for(_awaited(ref), 10 * _POLL_S + 5)
        except Exception:  # a dead or slow actor: its call's own answer (or failure) tells
            return
        for key, new in parts.items():
            self._feed(keys[key], since[key], new)

    def _dropped(self, task: _Task) -> None:
        """A task's caller went away: once no caller of its call is left, cancel the call."""
        call = task.call
        if not task.answer.cancelled() or call is None or call.sent is None:
            return
        if all(t.answer.done() for t in call.tasks) and not call.sent.done():
            call.sent.cancel()

    @property
    def warming(self) -> bool:
        """Whether some actor still starts or warms up (it asks each actor: call it from
        outside the pool's event loop; a benchmark's timed run waits for it)."""
        if self._group is None:
            return False
        import ray

        handles = self._group.handles()
        return any(ray.get([handle.warming.remote() for handle in handles], timeout=60))

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
