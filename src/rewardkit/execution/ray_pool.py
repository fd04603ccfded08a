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
:class:`~rewardkit.execution.pool.TaskLink` (a spread task) rides alone and has half its
actor's room (one runs, the next waits there). Its parts stay on the actor until they are
needed: they come with its answer, or, once the task has reported and then been quiet
for the link's ``stall_s`` (a check runs long), the actor answers early with the parts so
far, gives back the tasks waiting behind it (not started) and any that reach it
meanwhile (sent before the driver heard), and the driver follows the task up
(``follow``) while the actor takes no new work. No polling: a spread task that
ends in time costs one call.

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
import time
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
    bounded,
    check_capacity,
    import_ray,
    one_line,
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

# How often an actor looks at a stalled linked task's board while the driver follows it.
_LOOK_S = 0.02
# A link without ``stall_s``: its task never answers early.
_NEVER_S = 1e9
# How long an actor keeps the answer of a stalled task nobody followed (its caller left).
_FORGET_S = 600.0

_LinkWire = tuple[int, float] | None
"""A linked task's key and ``TaskLink.stall_s``, or None for a task without a link."""
_Wire = tuple[bytes, float, "Hashable | None", _LinkWire, "tuple[Callable[[], None], ...]"]
"""A task as a call carries it: (pickled ``(fn, args)``, its timeout, its affinity, its link)."""
_Answer = tuple[str, Any, "list[bytes] | None"]
"""A task's answer: (kind, value, the parts its link received, pickled, or None without a
link). A linked task may answer ``("stalled", quiet for, parts so far)`` first: it
reported, then was quiet for its ``stall_s``; the driver follows it up (``follow``)."""


@dataclass(eq=False, slots=True)
class _Linked:
    """A linked task on its actor: its link, the parts it reported (pickled), its run."""

    link: TaskLink
    parts: list[bytes]
    job: asyncio.Future[tuple[str, Any]]
    stalled: bool = False  # answered "stalled": the driver follows it up
    ended: float | None = None  # when its run ended (time.monotonic)

    def __post_init__(self) -> None:
        self.job.add_done_callback(lambda _: setattr(self, "ended", time.monotonic()))


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
        self._linked: dict[int, _Linked] = {}  # linked tasks here: waiting, running, stalled
        self._jobs: dict[asyncio.Future[tuple[str, Any]], TaskLink] = {}  # every task here

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

    async def follow(self, key: int, seen: int) -> _Answer:
        """The rest of a linked task answered ``"stalled"``: ``("more", quiet for, parts
        past the ``seen`` first)`` as soon as it reports again (its check ended), else its
        answer once it ends, with the parts past ``seen``."""
        linked = self._linked.get(key)
        if linked is None:
            return "crashed", "the actor no longer knows this task", []
        while not linked.job.done():
            await asyncio.wait({linked.job}, timeout=_LOOK_S)
            linked.link.collect()
            if len(linked.parts) > seen:
                return "more", linked.link.quiet(), linked.parts[seen:]
        self._linked.pop(key, None)
        kind, value = linked.job.result()
        return kind, value, linked.parts[seen:]

    async def cut(self, key: int) -> None:
        """Ask the linked task keyed ``key`` to stop at its next check (``TaskLink.cut``)."""
        linked = self._linked.get(key)
        if linked is not None:
            linked.link.cut()

    async def drop(self, key: int) -> None:
        """Stop the stalled task keyed ``key`` now: its caller went away (its process is
        replaced, as a local pool replaces a worker whose task was cancelled)."""
        linked = self._linked.pop(key, None)
        if linked is not None:
            linked.job.cancel()

    async def _one(
        self,
        blob: bytes,
        timeout: float,
        affinity: Hashable | None,
        link: _LinkWire,
        prepare: tuple[Callable[[], None], ...] = (),
    ) -> _Answer:
        key, stall_s = link if link is not None else (None, _NEVER_S)
        if self._held():  # sent before the driver heard of the stall: it would wait there
            return "recalled", None, None
        parts: list[bytes] = []
        task_link = TaskLink(parts.append, raw=True)  # the driver unpickles them
        job = asyncio.ensure_future(self._answer(blob, timeout, affinity, task_link, prepare))
        self._jobs[job] = task_link  # until it ends: a stalled task gives back the waiting
        job.add_done_callback(self._jobs.pop)
        linked = None
        if key is not None:
            self._forget_finished()
            linked = self._linked[key] = _Linked(task_link, parts, job)
        try:
            while not job.done():  # its reports stay on the board until it is quiet too long
                quiet = task_link.quiet()
                wait = stall_s if quiet is None else stall_s - quiet
                await asyncio.wait({job}, timeout=max(wait, _LOOK_S))
                if linked is None:
                    continue
                task_link.collect()
                quiet = task_link.quiet()
                if not job.done() and quiet is not None and quiet >= stall_s:
                    linked.stalled = True  # the driver follows it up (follow)
                    self._recall_waiting()
                    return "stalled", quiet, parts[:]
        except asyncio.CancelledError:  # the call was cancelled: so is the task
            job.cancel()
            raise
        finally:
            if key is not None and not (linked is not None and linked.stalled):
                self._linked.pop(key, None)
        if job.cancelled():  # recalled: it waited behind a stalled task
            return "recalled", None, None
        kind, value = job.result()
        return kind, value, None if linked is None else parts

    async def _answer(
        self,
        blob: bytes,
        timeout: float,
        affinity: Hashable | None,
        link: TaskLink | None,
        prepare: tuple[Callable[[], None], ...] = (),
    ) -> tuple[str, Any]:
        assert self._pool is not None
        try:
            return "ok", await self._pool.run(
                _in_worker, blob, timeout=timeout, affinity=affinity, link=link, prepare=prepare
            )
        except ScorerTimeout as exc:
            return "timeout", str(exc)
        except WorkerCrashed as exc:
            return "crashed", str(exc)
        except ScorerError as exc:
            return "error", str(exc)

    def _recall_waiting(self) -> None:
        """A linked task's check runs long: give back every task waiting behind it that
        has not been handed to the process (each answers "recalled"; the driver sends it
        to another actor)."""
        for job, task_link in list(self._jobs.items()):
            if not (task_link.handed or job.done()):
                job.cancel()

    def _held(self) -> bool:
        """Whether a stalled linked task still holds this actor's one process."""
        return any(linked.stalled and linked.ended is None for linked in self._linked.values())

    def _forget_finished(self) -> None:
        """Drop stalled tasks that ended long ago and were never followed (their caller
        went away)."""
        now = time.monotonic()
        for key, linked in list(self._linked.items()):
            if linked.ended is not None and now - linked.ended > _FORGET_S:
                del self._linked[key]

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


@dataclass(eq=False, slots=True)
class _Task:
    """A task of ``RayWorkerPool.run``: what goes over the wire, and where its answer goes."""

    wire: _Wire
    answer: asyncio.Future[tuple[str, Any]]
    call: _Call | None = field(default=None)
    link: TaskLink | None = None
    fed: int = 0  # parts handed to ``link.on_part`` so far


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


def _lost_after_parts(exc: BaseException) -> str:
    return (
        f"the actor died or stopped answering ({one_line(exc)}) after the task had reported "
        "progress (not run again)"
    )


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
        self._following: set[asyncio.Future[None]] = set()  # stalled linked tasks, followed
        self._asking: set[asyncio.Future[None]] = set()  # cut calls on their way
        # calls: remote calls sent (each carries one or more tasks); recalled: tasks
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
        for following in list(self._following):
            following.cancel()
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
        prepare: tuple[Callable[[], None], ...] = (),
    ) -> Any:
        """Run one task on some actor; raise ScorerTimeout, WorkerCrashed or ScorerError on failure.

        ``prepare`` reaches the actor's own process pool, which runs it in a worker that
        has not (WorkerPool.run).

        ``affinity`` reaches the actor's own process pool (Ray picks the actor).
        ``link``: as for WorkerPool.run, across the network: its parts reach ``on_part``
        with the task's answer, or earlier once it has been quiet for ``link.stall_s``
        after a report (see the module), and ``cut`` reaches the task. A linked task
        rides in a call of its own and is not retried on another actor once a part of it
        has been handed on."""
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
        wired = None if link is None else (next(self._keys), link.stall_s or _NEVER_S)
        task = _Task(
            (blob, timeout, affinity, wired, prepare),
            asyncio.get_running_loop().create_future(),
            link=link,
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
            assert task.link is not None
            task.link.cut_by = functools.partial(self._cut, task)
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
            self._gather.set()  # its actor has room again: the pump looks
        recalled: list[_Task] = []
        for task, (kind, value, parts) in zip(call.tasks, answers, strict=True):
            if task.answer.done():
                if kind == "stalled" and task.wire[3] is not None:  # nobody follows it up
                    self._fire(call.handle.drop.remote(task.wire[3][0]))
                continue
            if kind == "recalled":  # it waited behind a stalled check: another actor runs it
                self.stats["recalled"] += 1
                task.call = None
                recalled.append(task)
                continue
            if parts is not None:
                self._feed(task, parts, quiet=value if kind == "stalled" else 0.0)
            if kind == "stalled":  # its check runs long: its actor takes no work meanwhile
                following = asyncio.ensure_future(self._follow(group, call, task))
                self._following.add(following)
                following.add_done_callback(self._following.discard)
                continue
            self._settled(task, kind, value)
        if recalled:  # first in line again, in their order
            self._queue.extendleft(reversed(recalled))
            if self._pump is None:
                self._pump = asyncio.ensure_future(self._pumping(group))

    # ------------------------------------------------------------------ links

    def _settled(self, task: _Task, kind: str, value: Any) -> None:
        if task.link is not None:
            task.link.cut_by = None
        if not task.answer.done():
            task.answer.set_result((kind, value))

    def _feed(self, task: _Task, parts: list[bytes], quiet: float) -> None:
        """Hand ``task``'s new parts to its link, in order; the last was written ``quiet``
        seconds ago (on the actor's clock, whose time is not ours)."""
        if task.link is None or task.answer.done():
            return
        written_at = time.monotonic() - quiet
        for part in parts:
            task.fed += 1
            task.link.hand_on(pickle.loads(part), written_at)

    async def _follow(self, group: ActorGroup, call: _Call, task: _Task) -> None:
        """A linked task answered "stalled": until it ends, its actor takes no new work,
        and each part it reports meanwhile is handed on as it comes (``follow``)."""
        handle = call.handle
        member = next((m for m in group.members if m.handle is handle), None)
        if member is not None:
            group.block(member, True)
        assert task.wire[3] is not None
        key, limit = task.wire[3][0], task.wire[1] + _SLACK_S
        try:
            while True:
                asked = asyncio.ensure_future(bounded(handle.follow.remote(key, task.fed), limit))
                await asyncio.wait({asked, task.answer}, return_when=asyncio.FIRST_COMPLETED)
                if not asked.done():  # its caller went away: the actor stops the task
                    asked.cancel()
                    self._fire(handle.drop.remote(key))
                    return
                try:
                    kind, value, parts = asked.result()
                except Exception as exc:  # the actor died or hangs: its rows reported stand
                    kind, value, parts = "crashed", _lost_after_parts(exc), []
                self._feed(task, parts or [], quiet=value if kind == "more" else 0.0)
                if kind != "more":
                    self._settled(task, kind, value)
                    return
        finally:
            if member is not None:
                group.block(member, False)
            self._gather.set()

    def _cut(self, task: _Task) -> None:
        """``task.link.cut()`` (a check of it runs long): tell its actor."""
        call = task.call
        if call is None or call.handle is None or task.wire[3] is None:
            return  # not sent yet: it runs whole, and its caller takes what it still owns
        self._fire(call.handle.cut.remote(task.wire[3][0]))

    def _fire(self, ref: Any) -> None:
        """Send a call whose answer nobody waits for (kept until it lands)."""
        asking = asyncio.ensure_future(_quietly(ref))
        self._asking.add(asking)
        asking.add_done_callback(self._asking.discard)

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
