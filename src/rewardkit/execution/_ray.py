"""Ray plumbing shared by the scoring actors (ray_pool) and the model replicas (replicas).

A leaf module: it imports neither of them, so neither imports the other. ``ray`` itself
is imported only when a Ray pool or replica starts.

:class:`ActorGroup` keeps a set of interchangeable actors at its size: a lost actor's
work is retried once elsewhere, and a slot whose actor is gone is refilled in the
background, with backoff, until a node can hold it again (a node that rejoins, a new
node). While no actor is live, callers wait at most ``unavailable_timeout`` (counted
from when the group went empty, not per call) and then get :class:`PoolUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardkit.config import RayOptions
from rewardkit.errors import (
    ConfigError,
    PoolUnavailable,
    RewardkitError,
    ScorerError,
    WorkerCrashed,
)
from rewardkit.execution.health import PoolHealth

__all__ = [
    "ActorGroup",
    "ActorSpec",
    "acquire_ray",
    "actor_runtime_env",
    "check_capacity",
    "import_ray",
    "one_line",
    "release_ray",
    "start_actors",
    "stop_actors",
]

log = logging.getLogger("rewardkit.ray")

_CLOSE_WAIT_S = 5.0
# Refilling a slot: first retry after 1 s, then twice as long each time, up to 30 s.
_BACKOFF_FIRST_S = 1.0
_BACKOFF_MAX_S = 30.0
# Idle actors are probed this often, so that a lost node is noticed without a task on it.
_PROBE_EVERY_S = 2.0


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
        _init_keeping_sigterm(ray, address="local", **common, **local)
        return
    try:
        _init_keeping_sigterm(ray, address=target, **common)
    except ConnectionError as exc:
        raise ConfigError(f"{source}={target!r}: {exc}") from exc


def _init_keeping_sigterm(ray: Any, **kwargs: Any) -> None:
    """``ray.init``, then give SIGTERM back to whoever handled it before.

    On the main thread ``ray.init`` installs a SIGTERM handler that calls ``sys.exit``:
    in the reward server that replaced uvicorn's drain, so an in-flight request got a 500
    and the process exited 15. Ray's own processes do not need the driver's handler.
    """
    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if on_main else None
    try:
        ray.init(**kwargs)
    finally:
        if previous is not None:  # None: set outside Python, nothing we can put back
            signal.signal(signal.SIGTERM, previous)
            if signal.getsignal(signal.SIGTERM) is not previous:  # pragma: no cover
                log.warning("could not restore the SIGTERM handler after ray.init")


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


@dataclass(frozen=True, slots=True)
class ActorSpec:
    """``count`` actors of ``actor_class(*args)``, each holding ``num_cpus`` and ``num_gpus``.

    ``needs`` is what the cluster must be able to hold in all (checked before any actor
    starts) and ``what`` names the config keys behind it, for the error when it cannot.
    """

    name: str
    actor_class: type
    args: tuple[Any, ...]
    count: int
    num_cpus: float
    needs: Mapping[str, float]
    what: str
    num_gpus: float = 0.0
    cap: int | None = None
    silent_after_s: float | None = None
    """An actor that answers no liveness probe for this long *while busy* is deemed hung
    and lost (None: only idle actors are probed). For actors whose event loop stays free
    while they work (the scoring actors: the work runs in their own process)."""


async def start_actors(spec: ActorSpec, options: RayOptions, stats: dict[str, int]) -> ActorGroup:
    """Start ``spec``'s actors spread over the nodes; return once every one is ready.

    Ray never restarts them (``max_restarts=0``): the group replaces a dead actor itself
    and counts what it cost in ``stats``.
    """
    ray = import_ray()
    check_capacity(ray, spec.needs, spec.what)
    remote_class = ray.remote(spec.actor_class)

    def spawn() -> Any:
        return remote_class.options(
            num_cpus=spec.num_cpus,
            num_gpus=spec.num_gpus,
            scheduling_strategy="SPREAD",
            max_restarts=0,
            runtime_env=actor_runtime_env(options),
        ).remote(*spec.args)

    group = ActorGroup(
        spec.name,
        spawn,
        lambda handle: handle.start.remote(),
        spec.count,
        cap=spec.cap,
        start_timeout=options.start_timeout_s,
        unavailable_timeout=options.unavailable_timeout_s,
        silent_after=spec.silent_after_s,
        stats=stats,
    )
    await group.start()
    return group


async def stop_actors(group: ActorGroup | None, *, leased: bool) -> None:
    """Close ``group``'s actors (each one's ``close`` first), then give back a Ray lease."""
    try:
        if group is not None:
            await group.close(lambda handle: handle.close.remote())
    finally:
        if leased:
            release_ray()


class _Lost(Exception):
    """An actor died or stopped answering: its task may run again on another actor."""


@dataclass(eq=False, slots=True)
class _Member:
    handle: Any
    info: Mapping[str, Any] = field(default_factory=dict)  # what the actor's ready call said
    outstanding: int = 0
    lost: bool = False
    blocked: int = 0  # > 0: takes no new work (ActorGroup.block)
    silent_since: float | None = None  # busy, and no probe answered since then


class ActorGroup:
    """Interchangeable Ray actors: least-outstanding routing, retry once, refill lost slots.

    ``spawn()`` creates one actor handle; ``ready(handle)`` is the ObjectRef of a call
    that finishes once the actor can work (its answer is kept as ``info``). ``cap``
    bounds the work outstanding on one actor (None: no bound). A lost actor's slot is
    refilled in the background until it succeeds (see the module docstring). Counters go
    into ``stats``: ``retried`` (units of work sent a second time), ``actors_started``,
    ``actors_lost``, ``replacements_failed`` (refill attempts that failed),
    ``peak_outstanding``, ``unavailable`` (calls refused because no actor was live).
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
        unavailable_timeout: float = 60.0,
        silent_after: float | None = None,
        stats: dict[str, int] | None = None,
    ) -> None:
        self.name = name
        self.size = size
        self._spawn_handle = spawn
        self._ready = ready
        self._cap = cap
        self._start_timeout = start_timeout
        self._unavailable_timeout = unavailable_timeout
        self._silent_after = silent_after
        self.members: list[_Member] = []
        self._waiters: deque[tuple[asyncio.Future[_Member], int]] = deque()
        self._replacing: set[asyncio.Task[None]] = set()
        self._closed = False
        self._last_failure: str | None = None
        self._empty_since: float | None = None
        self._give_up_timer: asyncio.TimerHandle | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.stats = stats if stats is not None else {}
        for key in (
            "retried",
            "actors_started",
            "actors_lost",
            "replacements_failed",
            "peak_outstanding",
            "unavailable",
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
        self._watcher = asyncio.ensure_future(self._watch())

    def health(self) -> PoolHealth:
        """Live actors against the group's size, and why fewer (the last failure seen)."""
        live = len(self.members)
        return PoolHealth(self.size, live, None if live >= self.size else self._last_failure)

    async def call(
        self,
        send: Callable[[Any], Any],
        *,
        weight: int = 1,
        guard: float | None = None,
        member: _Member | None = None,
        retry: Callable[[], bool] | None = None,
        units: int | None = None,
    ) -> Any:
        """``send(handle)`` on the least loaded actor and await it; once more elsewhere if it dies.

        ``member``: the actor for the first try, ``weight`` already taken on it
        (:meth:`free_member`, :meth:`take`); the retry goes to the least loaded one,
        unless ``retry()`` says no (then WorkerCrashed at once). ``units``: what a retry
        adds to ``stats["retried"]`` (default: ``weight``).
        Raises WorkerCrashed when the second actor dies too, PoolUnavailable when no
        actor has been live for ``unavailable_timeout``, ScorerError when the call itself
        fails (cannot be sent, or the actor's method raised).
        """
        first = member
        for attempt in range(2):
            chosen = first if attempt == 0 and first is not None else await self._acquire(weight)
            try:
                return await self._await(_send(send, chosen.handle), guard)
            except _Lost as exc:
                self._lose(chosen, str(exc))
                if self._closed:
                    raise ScorerError(f"{self.name} closed while this task ran") from None
                if attempt == 1:
                    raise WorkerCrashed(
                        f"{self.name}: the actor died ({exc}), and so did the one it was retried on"
                    ) from None
                if retry is not None and not retry():
                    raise WorkerCrashed(
                        f"{self.name}: the actor died ({exc}) after the task had reported "
                        "progress (not run again)"
                    ) from None
                self.stats["retried"] += weight if units is None else units
            finally:
                self._release(chosen, weight)
        raise AssertionError("unreachable")  # pragma: no cover

    async def close(self, polite: Callable[[Any], Any] | None = None) -> None:
        """Fail whatever waits, let actors clean up (``polite(handle)``), then kill them."""
        self._closed = True
        self._stop_give_up_timer()
        self._fail_waiters(ScorerError(f"{self.name} is closed"))
        if self._watcher is not None:
            self._watcher.cancel()
        for task in list(self._replacing):
            task.cancel()
        await asyncio.gather(*self._replacing, return_exceptions=True)
        members, self.members = self.members, []
        if polite is not None:
            await asyncio.gather(
                *(bounded(_send(polite, m.handle), _CLOSE_WAIT_S) for m in members),
                return_exceptions=True,
            )
        for member in members:
            _kill(member.handle)

    def describe(self) -> list[dict[str, Any]]:
        """The live actors: what each reported when ready, and the work ``outstanding`` on it."""
        return [{**m.info, "outstanding": m.outstanding} for m in self.members]

    def handles(self) -> list[Any]:
        """The live actors' Ray handles (for operators and fault-injection tests)."""
        return [m.handle for m in self.members]

    # ------------------------------------------------------------------ routing

    async def free_member(self) -> _Member:
        """Wait (in line behind earlier callers) for an actor with room; nothing is taken
        on it yet: :meth:`take` what goes to it before the next ``await``."""
        return await self._acquire(0)

    def room(self, member: _Member) -> int:
        """How much more work ``member`` may take under the cap (``cap`` is None: 2**30)."""
        return (1 << 30) if self._cap is None else self._cap - member.outstanding

    def with_room(self) -> int:
        """How many live actors could take more work now."""
        return sum(1 for m in self.members if self._has_room(m))

    def take(self, member: _Member, weight: int) -> None:
        """Count ``weight`` more work on ``member`` (``call(..., member=member)`` gives it back)."""
        self._take(member, weight)

    def block(self, member: _Member, blocked: bool) -> None:
        """Send ``member`` no new work (a task there runs long), or again (``blocked`` false)."""
        member.blocked += 1 if blocked else -1
        if not blocked:
            self._dispatch()

    async def _acquire(self, weight: int) -> _Member:
        if self._closed:
            raise ScorerError(f"{self.name} is closed")
        if not self._waiters:
            member = self._least_loaded()
            if member is not None:
                self._take(member, weight)
                return member
        if not self.members and self._waited_out():
            self.stats["unavailable"] += 1
            raise self._unavailable()
        waiter: asyncio.Future[_Member] = asyncio.get_running_loop().create_future()
        self._waiters.append((waiter, weight))
        try:
            return await waiter
        except asyncio.CancelledError:
            # Handed an actor just as we were cancelled: give its slot to the next waiter.
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._release(waiter.result(), weight)
            raise

    def _least_loaded(self) -> _Member | None:
        free = [m for m in self.members if self._has_room(m)]
        return min(free, key=lambda m: m.outstanding, default=None)

    def _has_room(self, member: _Member) -> bool:
        return not member.blocked and (self._cap is None or member.outstanding < self._cap)

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

    # ------------------------------------------------------------------ no live actor

    def _waited_out(self) -> bool:
        """The group has been empty for ``unavailable_timeout``: refuse at once."""
        since = self._empty_since
        return since is not None and time.monotonic() - since >= self._unavailable_timeout

    def _unavailable(self) -> PoolUnavailable:
        waited = time.monotonic() - (self._empty_since or time.monotonic())
        why = f": {self._last_failure}" if self._last_failure else ""
        return PoolUnavailable(
            f"{self.name}: no live actor for {waited:.0f}s, 0 of {self.size} "
            f"(still trying to place them){why}"
        )

    def _became_empty(self) -> None:
        """Start the clock: callers waiting for an actor get PoolUnavailable when it runs out."""
        if self._empty_since is not None or self._closed:
            return
        self._empty_since = time.monotonic()
        loop = asyncio.get_running_loop()
        self._give_up_timer = loop.call_later(self._unavailable_timeout, self._give_up)

    def _give_up(self) -> None:
        self._give_up_timer = None
        if not self.members and self._waiters:
            self.stats["unavailable"] += len(self._waiters)
            self._fail_waiters(self._unavailable())

    def _stop_give_up_timer(self) -> None:
        self._empty_since = None
        if self._give_up_timer is not None:
            self._give_up_timer.cancel()
            self._give_up_timer = None

    # ------------------------------------------------------------------ life and death

    async def _spawn(self) -> _Member:
        ray = import_ray()
        handle = self._spawn_handle()
        try:
            info = await bounded(_send(self._ready, handle), self._start_timeout)
        except TimeoutError:
            _kill(handle)
            raise RewardkitError(
                f"{self.name}: an actor was not ready within {self._start_timeout:g}s "
                "(reward.ray.start_timeout_s); `ray status` shows resources still pending"
            ) from None
        except (ray.exceptions.RayError, ScorerError) as exc:
            _kill(handle)
            raise RewardkitError(
                f"{self.name}: an actor failed to start: {one_line(exc)}"
            ) from None
        except BaseException:  # cancelled (closing): leave no actor behind
            _kill(handle)
            raise
        self.stats["actors_started"] += 1
        return _Member(handle, info if isinstance(info, Mapping) else {})

    def _lose(self, member: _Member, why: str) -> None:
        if member.lost:
            return
        member.lost = True
        if member in self.members:
            self.members.remove(member)
        self.stats["actors_lost"] += 1
        self._last_failure = f"an actor was lost: {why}"
        _kill(member.handle)
        if self._closed:
            return
        log.warning(
            "%s: %d of %d actors live after losing one (%s); replacing it in the background",
            self.name,
            len(self.members),
            self.size,
            why,
        )
        if not self.members:
            self._became_empty()
        task = asyncio.ensure_future(self._refill())
        self._replacing.add(task)
        task.add_done_callback(self._replacing.discard)

    async def _refill(self) -> None:
        """Start an actor for one empty slot, retrying with backoff until one is ready."""
        delay = _BACKOFF_FIRST_S
        while not self._closed:
            try:
                member = await self._spawn()
            except RewardkitError as exc:
                self.stats["replacements_failed"] += 1
                self._last_failure = str(exc)
                log.warning(
                    "%s: %d of %d actors live; next try in %gs: %s",
                    self.name,
                    len(self.members),
                    self.size,
                    delay,
                    exc,
                )
                await asyncio.sleep(delay)
                delay = min(2 * delay, _BACKOFF_MAX_S)
                continue
            self._add(member)
            return

    def _add(self, member: _Member) -> None:
        if self._closed:
            _kill(member.handle)
            return
        self.members.append(member)
        self._stop_give_up_timer()
        if len(self.members) >= self.size:
            log.warning("%s: back to %d of %d actors", self.name, len(self.members), self.size)
        self._dispatch()

    async def _watch(self) -> None:
        """Probe idle actors now and then: a dead node is noticed (and its actors replaced,
        ``/ready`` told) even when no task runs there. A busy actor's tasks tell that it
        died; with ``silent_after``, busy actors are probed too, and one that answers no
        probe for that long is hung (its tasks' own guard allows every task queued there
        its full limit: minutes)."""
        while not self._closed:
            await asyncio.sleep(_PROBE_EVERY_S)
            members = [
                m for m in self.members if m.outstanding == 0 or self._silent_after is not None
            ]
            outcomes = await asyncio.gather(
                *(self._probe(m.handle) for m in members), return_exceptions=True
            )
            for member, outcome in zip(members, outcomes, strict=True):
                if isinstance(outcome, _Lost):
                    self._lose(member, str(outcome))
                elif outcome is False and member.outstanding and self._silent_after is not None:
                    self._silent(member, self._silent_after)
                else:
                    member.silent_since = None

    def _silent(self, member: _Member, limit: float) -> None:
        """A busy actor did not answer a probe: lost once it has been silent ``limit`` s."""
        now = time.monotonic()
        if member.silent_since is None:
            member.silent_since = now
        elif now - member.silent_since >= limit:
            self._lose(member, f"busy and silent for {now - member.silent_since:.0f}s: hung")

    async def _probe(self, handle: Any) -> bool:
        """Raise _Lost when Ray says the actor is gone; False when it did not answer in
        time (one slow answer proves nothing: a loaded node)."""
        ray = import_ray()
        try:
            await bounded(handle.__ray_ready__.remote(), _PROBE_EVERY_S * 5)
        except TimeoutError:
            return False
        except ray.exceptions.RayError as exc:
            raise _Lost(one_line(exc)) from None
        return True

    async def _await(self, ref: Any, guard: float | None) -> Any:
        ray = import_ray()
        try:
            return await bounded(ref, guard)
        except ray.exceptions.RayActorError as exc:
            raise _Lost(one_line(exc)) from None
        except ray.exceptions.RayTaskError as exc:  # the actor's method raised: not the row's fault
            raise ScorerError(
                f"{self.name}: {one_line(getattr(exc, 'cause', None) or exc)}"
            ) from None
        except ray.exceptions.RayError as exc:  # node or object lost, killed for memory, ...
            raise _Lost(one_line(exc)) from None
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


async def bounded(ref: Any, limit: float | None) -> Any:
    async def wait() -> Any:
        return await ref

    if limit is None:
        return await ref
    return await asyncio.wait_for(wait(), limit)


def _kill(handle: Any) -> None:
    with contextlib.suppress(Exception):
        import ray

        ray.kill(handle, no_restart=True)


def one_line(exc: BaseException) -> str:
    """``Type: first line`` of an exception, at most 500 characters: a row's ``error``."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:500]
