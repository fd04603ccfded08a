"""Scoring actors on a Ray cluster behind the WorkerPool interface (``reward.backend=ray``).

    pool = make_pool(config.reward)              # WorkerPool, or RayWorkerPool for backend ray
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
the actor is replaced. A task that timed out or crashed its worker process is *not*
retried: that is the row's honest status, as with the local pool.

``ray`` is imported only when a Ray pool or replica starts: the local backend never
needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import socket
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardkit.config import RayOptions, RewardSection
from rewardkit.errors import (
    ConfigError,
    RewardkitError,
    ScorerError,
    ScorerTimeout,
    WorkerCrashed,
)
from rewardkit.execution.pool import WorkerPool

__all__ = [
    "ActorGroup",
    "RayWorkerPool",
    "acquire_ray",
    "actor_runtime_env",
    "check_capacity",
    "import_ray",
    "make_pool",
    "release_ray",
]

# Room for a worker restart and a network hop, on top of each task's own limit.
_SLACK_S = 30.0
_CLOSE_WAIT_S = 5.0


def make_pool(section: RewardSection) -> WorkerPool | RayWorkerPool:
    """The pool ``reward.backend`` asks for; ray is imported only for ``ray``."""
    if section.backend == "ray":
        from rewardkit.models.replicas import wants_replicas

        rm = section.reward_model
        reserve = rm.replicas * section.ray.replica_num_cpus if wants_replicas(section) else 0.0
        return RayWorkerPool(
            section.num_workers,
            options=section.ray,
            memory_mb=section.worker_memory_mb,
            reserve_cpus=reserve,
        )
    return WorkerPool(section.workers, memory_mb=section.worker_memory_mb)


# ---------------------------------------------------------------------- the Ray connection


def import_ray() -> Any:
    """``import ray``, or a ConfigError that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "reward.backend=ray (or reward_model.replicas > 1) needs Ray: "
            "pip install 'rewardkit[ray]'"
        ) from exc
    return ray


_LEASE_LOCK = threading.Lock()
_leases = 0
_owned = False


def acquire_ray(options: RayOptions) -> None:
    """Connect this process to Ray unless it already is; every call needs a :func:`release_ray`.

    Ray started by someone else (a trainer, a test) is used as it is and left running.
    Otherwise: ``reward.ray.address``; else ``RAY_ADDRESS`` or a cluster started with
    ``ray start`` on this machine; else a new local Ray, shut down with the last release.

    Call this on a thread that lives as long as Ray is used (the event loop's): a local
    Ray's processes are tied to the thread that started them (PR_SET_PDEATHSIG) and die
    when it exits, which is why this is not pushed onto a short-lived helper thread.
    """
    global _leases, _owned
    ray = import_ray()
    with _LEASE_LOCK:
        if _leases == 0 and not ray.is_initialized():
            _init(ray, options)
            _owned = True
        _leases += 1


def release_ray() -> None:
    """Give back one :func:`acquire_ray`; the last one shuts down a Ray that rewardkit started."""
    global _leases, _owned
    with _LEASE_LOCK:
        _leases = max(0, _leases - 1)
        if _leases == 0 and _owned:
            _owned = False
            import ray

            ray.shutdown()


def _init(ray: Any, options: RayOptions) -> None:
    common: dict[str, Any] = {"logging_level": logging.WARNING}
    target, source = _cluster_address(options)
    if target is not None and target not in ("auto", "local"):
        problem = _unreachable(target)
        if problem and source.startswith("the cluster file"):
            target = None  # left behind by a cluster that is gone: start a local Ray instead
        elif problem:
            # ray.init would retry an address that nothing answers for minutes: fail now.
            raise ConfigError(
                f"{source}={target!r}: {problem}; is `ray start --head` running there?"
            )
    if target is None or target == "local":
        local: dict[str, Any] = {"include_dashboard": False}
        if options.object_store_memory_mb:
            local["object_store_memory"] = options.object_store_memory_mb * 1024 * 1024
        ray.init(address="local", **common, **local)
        return
    try:
        ray.init(address=target, **common)
    except ConnectionError as exc:
        raise ConfigError(f"{source}={target!r}: {exc}") from exc


def _cluster_address(options: RayOptions) -> tuple[str | None, str]:
    """The cluster to join and where its address came from (for error messages)."""
    if options.address:
        return options.address, "reward.ray.address"
    if os.environ.get("RAY_ADDRESS"):
        return os.environ["RAY_ADDRESS"], "RAY_ADDRESS"
    # `ray start` writes its address here (Ray's own lookup, minus its process scan).
    temp = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    marker = Path(temp) / "ray" / "ray_current_cluster"
    try:
        address = marker.read_text().strip()
    except OSError:
        return None, ""
    return (address or None), f"the cluster file {marker}"


def _unreachable(address: str) -> str | None:
    """Why nothing answers at ``host:port`` (a 5 s TCP probe), or None when something does."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not port.isdigit():
        return None  # not host:port: let Ray judge it
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=5):
            return None
    except OSError as exc:
        return f"nothing answers at {host}:{port} ({exc.strerror or exc})"


def actor_runtime_env(options: RayOptions) -> dict[str, Any] | None:
    """``reward.ray.runtime_env`` for each actor: it holds even when Ray was started by someone else."""
    return dict(options.runtime_env) if options.runtime_env else None


def check_capacity(ray: Any, needs: Mapping[str, float], what: str) -> None:
    """Fail at once, naming the keys, when the cluster cannot ever hold what is asked.

    A request Ray cannot place waits forever; better a clear error than a hang.
    """
    total = ray.cluster_resources()
    for resource, amount in needs.items():
        have = float(total.get(resource, 0.0))
        if amount > have + 1e-9:
            raise ConfigError(
                f"{what} need {amount:g} {resource} but the Ray cluster has {have:g}: ask for "
                "fewer, or for fractions (e.g. reward.ray.num_cpus_per_worker=0.5)"
            )


# ---------------------------------------------------------------------- actors in general


class _Lost(Exception):
    """An actor died or stopped answering: its task may run again on another actor."""


@dataclass(eq=False, slots=True)
class _Member:
    handle: Any
    info: Mapping[str, Any] = field(default_factory=dict)  # what the actor's ready call said
    outstanding: int = 0
    lost: bool = False


class ActorGroup:
    """Interchangeable Ray actors: least-outstanding routing, retry once, replace the dead.

    ``spawn()`` creates one actor handle; ``ready(handle)`` is the ObjectRef of a call
    that finishes once the actor can work (its answer is kept as ``info``). ``cap``
    bounds the work outstanding on one actor (None: no bound). Counters go into
    ``stats``: ``retried`` (units of work sent a second time), ``actors_started``,
    ``actors_lost``, ``replacements_failed``, ``peak_outstanding``.
    """

    def __init__(
        self,
        name: str,
        spawn: Callable[[], Any],
        ready: Callable[[Any], Any],
        size: int,
        *,
        cap: int | None,
        start_timeout: float,
        stats: dict[str, int] | None = None,
    ) -> None:
        self.name = name
        self.size = size
        self._spawn_handle = spawn
        self._ready = ready
        self._cap = cap
        self._start_timeout = start_timeout
        self.members: list[_Member] = []
        self._waiters: deque[tuple[asyncio.Future[_Member], int]] = deque()
        self._replacing: set[asyncio.Task[None]] = set()
        self._closed = False
        self.stats = stats if stats is not None else {}
        for key in (
            "retried",
            "actors_started",
            "actors_lost",
            "replacements_failed",
            "peak_outstanding",
        ):
            self.stats.setdefault(key, 0)

    async def start(self) -> None:
        """Create every actor and wait until all are ready (or fail, leaving none behind)."""
        outcomes = await asyncio.gather(
            *(self._spawn() for _ in range(self.size)), return_exceptions=True
        )
        started = [o for o in outcomes if isinstance(o, _Member)]
        failed = [o for o in outcomes if not isinstance(o, _Member)]
        if failed:
            for member in started:
                _kill(member.handle)
            raise failed[0]
        self.members = started

    async def call(
        self, send: Callable[[Any], Any], *, weight: int = 1, guard: float | None = None
    ) -> Any:
        """``send(handle)`` on the least loaded actor and await it; once more elsewhere if it dies.

        Raises WorkerCrashed when the second actor dies too, ScorerError when the call
        itself fails (cannot be sent, or the actor's method raised).
        """
        for attempt in range(2):
            member = await self._acquire(weight)
            try:
                return await self._await(_send(send, member.handle), guard)
            except _Lost as exc:
                self._lose(member)
                if self._closed:
                    raise ScorerError(f"{self.name} closed while this task ran") from None
                if attempt == 1:
                    raise WorkerCrashed(
                        f"{self.name}: the actor died ({exc}), and so did the one it was retried on"
                    ) from None
                self.stats["retried"] += weight
            finally:
                self._release(member, weight)
        raise AssertionError("unreachable")  # pragma: no cover

    async def close(self, polite: Callable[[Any], Any] | None = None) -> None:
        """Fail whatever waits, let actors clean up (``polite(handle)``), then kill them."""
        self._closed = True
        self._fail_waiters(ScorerError(f"{self.name} is closed"))
        for task in list(self._replacing):
            task.cancel()
        await asyncio.gather(*self._replacing, return_exceptions=True)
        members, self.members = self.members, []
        if polite is not None:
            await asyncio.gather(
                *(_bounded(_send(polite, m.handle), _CLOSE_WAIT_S) for m in members),
                return_exceptions=True,
            )
        for member in members:
            _kill(member.handle)

    # ------------------------------------------------------------------ routing

    async def _acquire(self, weight: int) -> _Member:
        if self._closed:
            raise ScorerError(f"{self.name} is closed")
        if not self._waiters:
            member = self._least_loaded()
            if member is not None:
                self._take(member, weight)
                return member
        if not self.members and not self._replacing:
            raise WorkerCrashed(
                f"{self.name}: no live actor left (they died and could not be replaced)"
            )
        waiter: asyncio.Future[_Member] = asyncio.get_running_loop().create_future()
        self._waiters.append((waiter, weight))
        try:
            return await waiter
        except asyncio.CancelledError:
            # Handed an actor just as we were cancelled: give its slot to the next waiter.
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._release(waiter.result(), weight)
            raise

    def describe(self) -> list[dict[str, Any]]:
        """The live actors: what each reported when ready, and the work ``outstanding`` on it."""
        return [{**m.info, "outstanding": m.outstanding} for m in self.members]

    def handles(self) -> list[Any]:
        """The live actors' Ray handles (for operators and fault-injection tests)."""
        return [m.handle for m in self.members]

    def _least_loaded(self) -> _Member | None:
        free = [m for m in self.members if self._cap is None or m.outstanding < self._cap]
        return min(free, key=lambda m: m.outstanding, default=None)

    def _take(self, member: _Member, weight: int) -> None:
        member.outstanding += weight
        self.stats["peak_outstanding"] = max(self.stats["peak_outstanding"], member.outstanding)

    def _release(self, member: _Member, weight: int) -> None:
        member.outstanding -= weight
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free actors to waiters in arrival order (no newcomer overtakes a waiter)."""
        while self._waiters:
            waiter, weight = self._waiters[0]
            if waiter.done():  # cancelled while waiting
                self._waiters.popleft()
                continue
            member = self._least_loaded()
            if member is None:
                return
            self._waiters.popleft()
            self._take(member, weight)
            waiter.set_result(member)

    def _fail_waiters(self, error: BaseException) -> None:
        waiters, self._waiters = self._waiters, deque()
        for waiter, _ in waiters:
            if not waiter.done():
                waiter.set_exception(error)

    # ------------------------------------------------------------------ life and death

    async def _spawn(self) -> _Member:
        ray = import_ray()
        handle = self._spawn_handle()
        try:
            info = await _bounded(_send(self._ready, handle), self._start_timeout)
        except TimeoutError:
            _kill(handle)
            raise RewardkitError(
                f"{self.name}: an actor was not ready within {self._start_timeout:g}s "
                "(reward.ray.start_timeout_s); `ray status` shows resources still pending"
            ) from None
        except (ray.exceptions.RayError, ScorerError) as exc:
            _kill(handle)
            raise RewardkitError(
                f"{self.name}: an actor failed to start: {_one_line(exc)}"
            ) from None
        except BaseException:  # cancelled (closing): leave no actor behind
            _kill(handle)
            raise
        self.stats["actors_started"] += 1
        return _Member(handle, info if isinstance(info, Mapping) else {})

    def _lose(self, member: _Member) -> None:
        if member.lost:
            return
        member.lost = True
        if member in self.members:
            self.members.remove(member)
        self.stats["actors_lost"] += 1
        _kill(member.handle)
        if not self._closed:
            task = asyncio.ensure_future(self._replace())
            self._replacing.add(task)
            task.add_done_callback(self._replacing.discard)

    async def _replace(self) -> None:
        try:
            member = await self._spawn()
        except RewardkitError as exc:
            self.stats["replacements_failed"] += 1
            if not self.members and len(self._replacing) <= 1:  # this task is the last hope
                self._fail_waiters(WorkerCrashed(f"no live actor left: {exc}"))
            return
        if self._closed:
            _kill(member.handle)
            return
        self.members.append(member)
        self._dispatch()

    async def _await(self, ref: Any, guard: float | None) -> Any:
        ray = import_ray()
        try:
            return await _bounded(ref, guard)
        except ray.exceptions.RayActorError as exc:
            raise _Lost(_one_line(exc)) from None
        except ray.exceptions.RayTaskError as exc:  # the actor's method raised: not the row's fault
            raise ScorerError(
                f"{self.name}: {_one_line(getattr(exc, 'cause', None) or exc)}"
            ) from None
        except ray.exceptions.RayError as exc:  # node or object lost, killed for memory, ...
            raise _Lost(_one_line(exc)) from None
        except TimeoutError:
            raise _Lost(f"no answer within {guard:g}s") from None
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
            raise


def _send(send: Callable[[Any], Any], handle: Any) -> Any:
    try:
        return send(handle)
    except Exception as exc:  # unpicklable arguments, a handle already gone, ...
        raise ScorerError(
            f"cannot send the task to a Ray actor: {type(exc).__name__}: {exc}"
        ) from exc


async def _bounded(ref: Any, limit: float | None) -> Any:
    async def wait() -> Any:
        return await ref

    if limit is None:
        return await ref
    return await asyncio.wait_for(wait(), limit)


def _kill(handle: Any) -> None:
    with contextlib.suppress(Exception):
        import ray

        ray.kill(handle, no_restart=True)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:500]


# ---------------------------------------------------------------------- scoring actors


class _ScoringActor:
    """One scoring actor: a one-process WorkerPool of its own on whatever node Ray chose."""

    def __init__(self, memory_mb: int | None) -> None:
        self._memory_mb = memory_mb
        self._pool: WorkerPool | None = None

    async def start(self) -> dict[str, Any]:
        import ray

        self._pool = WorkerPool(1, memory_mb=self._memory_mb)
        await self._pool.start()
        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    async def run(
        self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float
    ) -> tuple[str, Any]:
        """Answer (kind, value): the rewardkit exceptions travel as data, not as RayTaskErrors."""
        assert self._pool is not None
        try:
            return "ok", await self._pool.run(_in_worker, fn, args, timeout=timeout)
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


def _in_worker(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Runs in the actor's scoring process: ``fn(*args)``, after tying the process's life to it.

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
    return fn(*args)


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
    ) -> None:
        if size is not None and size < 1:
            raise ValueError(f"a pool needs at least one worker, got size={size}")
        self.size = size
        self.options = options or RayOptions()
        self.memory_mb = memory_mb
        self.reserve_cpus = reserve_cpus
        self._group: ActorGroup | None = None
        self._leased = False
        self._closed = False
        self.stats: dict[str, int] = {"tasks": 0, "timeouts": 0, "crashes": 0, "restarts": 0}

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
        check_capacity(
            ray,
            {"CPU": size * opts.num_cpus_per_worker + self.reserve_cpus},
            f"reward.num_workers={size} actors x reward.ray.num_cpus_per_worker="
            f"{opts.num_cpus_per_worker:g}{reserved}",
        )
        actor_class = ray.remote(_ScoringActor)

        def spawn() -> Any:
            return actor_class.options(
                num_cpus=opts.num_cpus_per_worker,
                scheduling_strategy="SPREAD",
                max_restarts=0,  # we replace dead actors ourselves, and count what it cost
                runtime_env=actor_runtime_env(opts),
            ).remote(self.memory_mb)

        group = ActorGroup(
            "Ray scoring actors",
            spawn,
            lambda handle: handle.start.remote(),
            size,
            cap=opts.max_outstanding_per_worker,
            start_timeout=opts.start_timeout_s,
            stats=self.stats,
        )
        await group.start()
        self._group = group

    async def close(self) -> None:
        """Stop the actors (their scoring processes first); disconnect from a Ray we started."""
        self._closed = True
        group, self._group = self._group, None
        try:
            if group is not None:
                await group.close(lambda handle: handle.close.remote())
        finally:
            if self._leased:
                self._leased = False
                release_ray()

    async def run(self, fn: Callable[..., Any], *args: Any, timeout: float) -> Any:
        """Run one task on some actor; raise ScorerTimeout, WorkerCrashed or ScorerError on failure."""
        if self._closed or self._group is None:
            raise ScorerError(
                "the worker pool is closed" if self._closed else "the worker pool is not started"
            )
        self.stats["tasks"] += 1
        # Past this an actor is deemed stuck: every task queued on it had its full limit.
        guard = self.options.max_outstanding_per_worker * (timeout + _SLACK_S) + _SLACK_S
        kind, value = await self._group.call(lambda h: h.run.remote(fn, args, timeout), guard=guard)
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

    @property
    def actors(self) -> list[Mapping[str, Any]]:
        """The live actors: ``node_id``, ``pid`` and tasks ``outstanding`` on each."""
        return [] if self._group is None else self._group.describe()

    @property
    def actor_handles(self) -> list[Any]:
        """The live actors' Ray handles (for operators and fault-injection tests)."""
        return [] if self._group is None else self._group.handles()
