"""Managed reward-model servers: launch replicas of an engine, route to them, heal them.

    reward:
      reward_model:
        enable: true
        kind: generative
        model_path: /models/judge
        rollout: {name: vllm, data_parallel_size: 2, tensor_model_parallel_size: 2}

A :class:`Fleet` starts ``rollout.data_parallel_size`` replicas of the engine
(:mod:`rewardkit.engines` builds their command lines), each on a free port of 127.0.0.1
with its own log file, and waits for each one's ``/health``. In front of them it serves
a router on 127.0.0.1 (an HTTP proxy, in-process, on the fleet's own thread and event
loop): each request goes to the live replica with the fewest requests in flight, as
verl's reward router does; with ``rollout.full_determinism`` to replica
``crc32(body) % live`` (verl's reward router keys determinism on the request body: the
same request, the same replica). A connection error or a 5xx answer is retried on
another replica with backoff, a 4xx answer is passed back as it is, and when no replica
answers the router says so (503, naming the fleet), so each row fails with status
``error`` and that message.

A replica that dies is restarted after ``rollout.restart_backoff_s`` (doubling for
each death in a row, capped by ``restart_backoff_max_s``). Each replica runs in its own
process group under a tiny supervisor that kills that group when the fleet's thread ends
(``PR_SET_PDEATHSIG``), so a crash of this process leaves no orphan, not even what the
engine started; on
close the fleet stops routing new requests, lets those in flight finish (up to
``rollout.drain_timeout_s``), then sends SIGTERM to each group and SIGKILL to what is
left.

With ``reward.backend: ray`` each replica is a Ray actor holding the replica's resources
(rewardkit.models._fleet_ray): the actor starts the same command line under the same
supervisor on its node, on a free port of that node, and the fleet (router, health
checks, restarts) stays in this process. A replica whose actor dies (killed, its node
lost) is restarted as one whose process exits, on a new actor placed as Ray places it.

:class:`ManagedModel` is the scorer: it starts the fleet, then scores through the
router with the judge or remote scorer that ``url`` would give, and hands the router's
address (``host:port``, verl's ``reward_router_address``) to custom reward functions.
"""

from __future__ import annotations

import asyncio
import atexit
import binascii
import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

from rewardkit.config import RayOptions, RewardModelConfig, RolloutConfig
from rewardkit.engines import client_backend, command_line, health_path
from rewardkit.errors import RemoteError, RewardkitError, ScorerError
from rewardkit.execution.health import PoolHealth
from rewardkit.models._engine_process import EngineProcess, SlotError, free_port, log_tail
from rewardkit.models.base import ModelScore, ModelScorer
from rewardkit.types import Sample

__all__ = ["Fleet", "ManagedModel", "replica_argv"]

_POLL_S = 0.2
_STOP_GRACE_S = 10.0


def replica_argv(
    rm: RewardModelConfig, *, port: int, rank: int, host: str = "127.0.0.1"
) -> tuple[list[str], dict[str, str]]:
    """The command line and extra environment of replica ``rank`` of ``rm``'s fleet."""
    rollout = rm.rollout
    assert rollout.name is not None and rm.model_path is not None
    values = rollout.model_dump()
    values.update(prompt_length=rm.prompt_length, response_length=rm.response_length)
    return command_line(
        rollout.name,
        values,
        model=rm.model_path,
        port=port,
        rank=rank,
        kind=rm.kind,
        host=host,
        served_name=rm.model_name or rm.model_path,
        device=rm.device,
        engine_kwargs=rollout.engine_kwargs.get(rollout.name, {}),
        model_keys=_model_keys(rm),
    )


_MODEL_KEYS = ("dtype", "num_threads", "max_batch_tokens", "max_padding_tokens")
"""The keys of a model run in-process that `rewardkit serve` replicas are given."""


def _model_keys(rm: RewardModelConfig) -> dict[str, Any]:
    """Those of :data:`_MODEL_KEYS` that ``rm`` sets (the config refuses them for the
    engines that have no use for them)."""
    fields = RewardModelConfig.model_fields
    return {k: getattr(rm, k) for k in _MODEL_KEYS if getattr(rm, k) != fields[k].default}


def visible_gpus() -> list[str]:
    """The GPUs this process may use: ``CUDA_VISIBLE_DEVICES`` as set, else every device
    torch sees (none without torch or CUDA)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        devices = [d.strip() for d in listed.split(",") if d.strip()]
        return [] if not devices or devices[0] == "-1" else devices
    try:
        import torch
    except ImportError:
        return []
    return [str(i) for i in range(torch.cuda.device_count())]


def gpu_groups(replicas: int, per_replica: int, visible: list[str]) -> list[str]:
    """The ``CUDA_VISIBLE_DEVICES`` of each of ``replicas`` replicas launched on this
    machine, ``per_replica`` GPUs each (tensor_model_parallel_size), from ``visible``:
    GPUs of their own while there are enough, as verl places its replicas; with fewer, the
    groups in turn (replicas then share GPUs, and the engine's memory fraction must leave
    room for each). Empty when not one group fits: the engine is left to say why."""
    groups = [
        ",".join(visible[at : at + per_replica])
        for at in range(0, len(visible) - per_replica + 1, per_replica)
    ]
    return [groups[rank % len(groups)] for rank in range(replicas)] if groups else []


class _Slot(Protocol):
    """Where a replica's engine runs: a child of this process, or a Ray actor's."""

    @property
    def log_name(self) -> str: ...
    async def place(self) -> tuple[str, int]: ...
    async def launch(self, argv: list[str], extra_env: dict[str, str]) -> None: ...
    async def exit_status(self) -> str | None: ...
    async def tail(self) -> str: ...
    async def signal(self, sig: int) -> None: ...
    async def stop(self, grace_s: float) -> None: ...
    def pids(self) -> list[int]: ...
    def kill_now(self, sig: int) -> int | None: ...


class _LocalSlot:
    """A replica as a process group of this machine, started on the fleet's thread."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.engine: EngineProcess | None = None

    @property
    def log_name(self) -> str:
        return str(self.log_path)

    async def place(self) -> tuple[str, int]:
        return "127.0.0.1", free_port()

    async def launch(self, argv: list[str], extra_env: dict[str, str]) -> None:
        self.engine = EngineProcess(argv, extra_env, self.log_path, self.log_path.parent)

    async def exit_status(self) -> str | None:
        code = None if self.engine is None else self.engine.poll()
        return None if code is None else f"exited with code {code}"

    async def tail(self) -> str:
        return log_tail(self.log_path)

    async def signal(self, sig: int) -> None:
        if self.engine is not None:
            self.engine.signal(sig)

    async def stop(self, grace_s: float) -> None:
        engine = self.engine
        if engine is None:
            return
        engine.signal(signal.SIGTERM)
        end = time.monotonic() + grace_s
        while time.monotonic() < end and engine.poll() is None:
            await asyncio.sleep(0.05)
        engine.signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            engine.proc.wait(timeout=5)

    def pids(self) -> list[int]:
        engine = self.engine
        return [engine.pid] if engine is not None and engine.poll() is None else []

    def kill_now(self, sig: int) -> int | None:
        if self.engine is None:
            return None
        os.killpg(self.engine.pid, sig)
        return self.engine.pid


@dataclass(eq=False)
class _Replica:
    rank: int
    slot: _Slot
    host: str = "127.0.0.1"
    port: int = 0
    argv: list[str] = field(default_factory=list)
    state: str = "down"  # placing | starting | live | unhealthy | down | stopped
    started_at: float = 0.0
    restart_at: float = 0.0
    deaths_in_row: int = 0
    restarts: int = 0
    in_flight: int = 0
    picked: int = 0
    last_exit: str = ""
    next_check: float = 0.0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        """The local replica's supervisor process (None on Ray, or before it starts)."""
        engine = getattr(self.slot, "engine", None)
        return None if engine is None else engine.proc


@dataclass
class _Stats:
    requests: int = 0
    retried: int = 0
    failed: int = 0
    restarts: int = 0
    by_replica: dict[int, int] = field(default_factory=dict)


class FleetStartError(RemoteError):
    """A replica did not come up: its exit or the time-out, with its last log lines."""


class _SpawnError(Exception):
    """A replica could not be placed or launched (why, for its last_exit or the start error)."""


class Fleet:
    """The replicas of one reward model and the router in front of them (module docstring).

    ``start()`` blocks until every replica answers its health route (FleetStartError
    otherwise, everything stopped); ``stop()`` drains and stops. Both are thread-safe
    and callable from any thread; the fleet runs on a thread of its own. With ``ray``
    (``reward.ray``), each replica is a Ray actor (rewardkit.models._fleet_ray); Ray is
    connected on the thread that calls ``start()`` unless it already is, so call it on a
    thread that outlives the fleet, or connect Ray first.
    """

    def __init__(
        self,
        rm: RewardModelConfig,
        *,
        name: str | None = None,
        command: Callable[[int, int], tuple[list[str], dict[str, str]]] | None = None,
        ray: RayOptions | None = None,
        key: str = "reward_model",
    ) -> None:
        """``command(rank, port)``: a replica's argv and extra environment; default: the
        engine's (:func:`replica_argv`), listening on the replica's host."""
        if rm.rollout.name is None or rm.model_path is None:
            raise ValueError("a fleet needs reward_model.rollout.name and model_path")
        self.rm = rm
        self.health_path = health_path(rm.rollout.name, rm.kind, rm.health_check.path)
        self._command = command or self._engine_command
        self.rollout: RolloutConfig = rm.rollout
        self.name = name or f"{rm.rollout.name} fleet of {Path(rm.model_path).name}"
        self.ray = ray
        self._key = key
        self.log_dir: Path | None = None
        self.replicas: list[_Replica] = []
        self._gpus: list[str] | None = None  # a local fleet's, found at its first command line
        if ray is None:
            self.log_dir = Path(rollout_log_dir(self.rollout))
            self.replicas = [
                _Replica(rank, _LocalSlot(self.log_dir / f"replica-{rank}.log"))
                for rank in range(self.rollout.data_parallel_size)
            ]
        self.stats = _Stats()
        self.address = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="rewardkit-fleet", daemon=True
        )
        self._client: httpx.AsyncClient | None = None
        self._server: Any = None
        self._serving: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._respawning: set[asyncio.Task[None]] = set()
        self._draining = False
        self._stopped = False
        self._leased = False
        self._router_host = "127.0.0.1"
        self._lock = threading.Lock()

    def _engine_command(self, rank: int, port: int) -> tuple[list[str], dict[str, str]]:
        argv, env = replica_argv(self.rm, port=port, rank=rank, host=self.replicas[rank].host)
        if self.ray is None and (gpus := self._local_gpus()):  # (on Ray, Ray sets each actor's)
            env = {**env, "CUDA_VISIBLE_DEVICES": gpus[rank]}
        return argv, env

    def _local_gpus(self) -> list[str]:
        """Each local replica's GPUs (:func:`gpu_groups`), found once, when the engine's
        command line is first built (a fleet of another command needs none); none for
        transformers given a device (every replica on that device)."""
        if self._gpus is None:
            own = self.rm.rollout.name != "transformers" or self.rm.device is None
            per_replica = self.rollout.tensor_model_parallel_size
            self._gpus = gpu_groups(len(self.replicas), per_replica, visible_gpus()) if own else []
        return self._gpus

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Launch the replicas and the router; return when all are live."""
        try:
            if self.ray is not None:
                self._ray_slots(self.ray)
            self._thread.start()
            atexit.register(self.stop)
            self._run(self._start())
        except BaseException:
            self.stop()
            raise

    def _ray_slots(self, options: RayOptions) -> None:
        """Connect Ray (a lease), check the cluster can hold the fleet, make one slot per replica."""
        from rewardkit.execution._ray import acquire_ray, import_ray
        from rewardkit.models._fleet_ray import (
            RaySlot,
            check_fleet_capacity,
            driver_node_ip,
            replica_resources,
            router_host,
        )

        ray = import_ray()
        acquire_ray(options)
        self._leased = True
        resources = replica_resources(self.rm, options, ray)
        check_fleet_capacity(self.rm, self._key, *resources, ray)
        driver_ip = driver_node_ip()
        # Sync custom functions run in the scoring actors, on any node: they must reach
        # the router (reward_router_address) too.
        self._router_host = router_host(ray, driver_ip)
        self.replicas = [
            _Replica(rank, RaySlot(rank, self.rm, options, resources, driver_ip))
            for rank in range(self.rollout.data_parallel_size)
        ]

    def stop(self) -> None:
        """Drain, stop every replica (SIGTERM, then SIGKILL), stop the router and the thread."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        atexit.unregister(self.stop)
        try:
            if self._thread.is_alive():
                with contextlib.suppress(Exception):
                    self._run(self._stop())
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=30)
            else:
                for replica in self.replicas:
                    with contextlib.suppress(Exception):
                        replica.slot.kill_now(signal.SIGKILL)
            with contextlib.suppress(Exception):
                self._loop.close()
        finally:
            if self._leased:
                from rewardkit.execution._ray import release_ray

                self._leased = False
                release_ray()

    def health(self) -> PoolHealth:
        """Live replicas against ``data_parallel_size`` (what ``/ready`` reports)."""
        live = sum(r.state == "live" for r in self.replicas)
        why = [f"replica {r.rank} {r.state}{r.last_exit and f' ({r.last_exit})'}"
               for r in self.replicas if r.state != "live"]  # fmt: skip
        desired = self.rollout.data_parallel_size
        return PoolHealth(desired, live, "; ".join(why) or None)

    def kill_replica(self, rank: int, sig: int = signal.SIGKILL) -> int:
        """Kill one replica's process group (for tests and drills); its pid."""
        pid = self.replicas[rank].slot.kill_now(sig)
        assert pid is not None, f"replica {rank} runs no process"
        return pid

    def kill_actor(self, rank: int) -> dict[str, Any]:
        """Kill one replica's Ray actor, as a lost node would (tests, drills); what it was."""
        from rewardkit.execution._ray import import_ray

        slot = self.replicas[rank].slot
        handle = getattr(slot, "handle", None)
        assert handle is not None, f"replica {rank} has no Ray actor"
        info = dict(slot.info)  # type: ignore[attr-defined]
        import_ray().kill(handle, no_restart=True)
        return info

    def actors(self) -> list[dict[str, Any]]:
        """Each live Ray replica actor's placement: ``node_ip``, ``node_id``, ``actor_pid``,
        ``gpu_ids``, ``host``, ``port``, ``log`` (none for a local fleet)."""
        slots = [r.slot for r in self.replicas]
        return [dict(s.info) for s in slots if getattr(s, "handle", None) is not None]  # type: ignore[attr-defined]

    def pids(self) -> list[int]:
        """The replicas' process ids now (group leaders; on Ray, on their nodes)."""
        return [pid for r in self.replicas for pid in r.slot.pids()]

    def _run(self, coro: Awaitable[Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()  # type: ignore[arg-type]

    async def _start(self) -> None:
        timeout = httpx.Timeout(self.rm.http.timeout_s, connect=self.rm.http.connect_timeout_s)
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
        self._client = httpx.AsyncClient(timeout=timeout, limits=limits, trust_env=False)
        waits = [asyncio.ensure_future(self._wait_first_start(r)) for r in self.replicas]
        try:
            await asyncio.gather(*waits)
        except BaseException:
            for wait in waits:  # none goes on placing or launching behind the failure
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
            raise
        await self._serve_router()
        self._watcher = asyncio.create_task(self._watch(), name="rewardkit-fleet-watch")

    async def _wait_first_start(self, replica: _Replica) -> None:
        try:
            await self._spawn(replica)
        except _SpawnError as exc:
            raise FleetStartError(f"{self.name}: replica {replica.rank} {exc}") from None
        deadline = time.monotonic() + self.rollout.start_timeout_s
        while True:
            assert self._client is not None
            why = await replica.slot.exit_status()
            if why is not None:
                raise FleetStartError(
                    f"{self.name}: replica {replica.rank} {why} while starting "
                    f"({' '.join(replica.argv)!s:.300}); last lines of "
                    f"{replica.slot.log_name}:\n{await replica.slot.tail()}"
                )
            if await self._healthy(replica):
                replica.state = "live"
                return
            if time.monotonic() > deadline:
                raise FleetStartError(
                    f"{self.name}: replica {replica.rank} did not answer /health within "
                    f"{self.rollout.start_timeout_s:g}s (rollout.start_timeout_s); last lines "
                    f"of {replica.slot.log_name}:\n{await replica.slot.tail()}"
                )
            await asyncio.sleep(0.25)

    async def _stop(self) -> None:
        self._draining = True
        deadline = time.monotonic() + self.rollout.drain_timeout_s
        while any(r.in_flight for r in self.replicas) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for task in [self._watcher, *self._respawning]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await asyncio.gather(
            *(r.slot.stop(_STOP_GRACE_S) for r in self.replicas), return_exceptions=True
        )
        for replica in self.replicas:
            replica.state = "stopped"
        if self._server is not None:
            self._server.should_exit = True
            if self._serving is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._serving, timeout=5)
        if self._client is not None:
            await self._client.aclose()

    # ------------------------------------------------------------------ replicas

    async def _spawn(self, replica: _Replica) -> None:
        """Place and start one replica (a local one on the fleet's thread: PDEATHSIG follows
        that thread; a Ray one on its actor's)."""
        try:
            replica.host, replica.port = await replica.slot.place()
            argv, extra_env = self._command(replica.rank, replica.port)
            replica.argv = list(argv)
            await replica.slot.launch(argv, extra_env)
        except (OSError, SlotError, RewardkitError) as exc:
            raise _SpawnError(f"could not be started: {exc}") from exc
        replica.state = "starting"
        replica.started_at = time.monotonic()

    def _respawn(self, replica: _Replica) -> None:
        """Start a dead replica again, in the background (placing a Ray actor may take long)."""
        replica.state = "placing"
        replica.restarts += 1
        self.stats.restarts += 1

        async def respawn() -> None:
            try:
                await self._spawn(replica)
            except _SpawnError as exc:
                self._died(replica, str(exc), time.monotonic())

        task = asyncio.ensure_future(respawn())
        self._respawning.add(task)
        task.add_done_callback(self._respawning.discard)

    async def _healthy(self, replica: _Replica) -> bool:
        assert self._client is not None
        try:
            answer = await self._client.get(
                f"{replica.url}{self.health_path}", timeout=self.rm.health_check.timeout_s
            )
        except httpx.HTTPError:
            return False
        return answer.is_success

    async def _watch(self) -> None:
        """Notice deaths, restart with backoff, health-check live replicas."""
        while True:
            await asyncio.gather(*(self._tend(r, time.monotonic()) for r in self.replicas))
            await asyncio.sleep(_POLL_S)

    async def _tend(self, replica: _Replica, now: float) -> None:
        rollout = self.rollout
        if replica.state in ("starting", "live", "unhealthy"):
            why = await replica.slot.exit_status()
            if why is not None:
                await replica.slot.signal(signal.SIGKILL)  # what it left in its group
                self._died(replica, why, now)
                return
        if replica.state == "down" and now >= replica.restart_at and not self._draining:
            self._respawn(replica)
        elif replica.state == "starting":
            if await self._healthy(replica):
                replica.state, replica.deaths_in_row = "live", 0
            elif now - replica.started_at > rollout.start_timeout_s:
                await replica.slot.signal(signal.SIGKILL)
                self._died(replica, f"no /health within {rollout.start_timeout_s:g}s", now)
        elif replica.state in ("live", "unhealthy") and now >= replica.next_check:
            replica.next_check = now + self.rm.health_check.interval_s
            replica.state = "live" if await self._healthy(replica) else "unhealthy"

    def _died(self, replica: _Replica, why: str, now: float) -> None:
        replica.last_exit = why
        replica.deaths_in_row += 1
        wait = min(
            self.rollout.restart_backoff_max_s,
            self.rollout.restart_backoff_s * 2 ** (replica.deaths_in_row - 1),
        )
        replica.state, replica.restart_at = "down", now + wait

    # ------------------------------------------------------------------ router

    async def _serve_router(self) -> None:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._router_host, 0))
        self.address = f"{self._router_host}:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            self._asgi,
            interface="asgi3",
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_keep_alive=30,
        )
        self._server = uvicorn.Server(config)
        self._serving = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._serving.done():  # it could not serve: say why
                self._serving.result()
            await asyncio.sleep(0.01)

    async def _asgi(
        self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]
    ) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        path = scope["path"] + (
            f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        )
        headers = {
            k.decode("latin-1"): v.decode("latin-1")
            for k, v in scope["headers"]
            if k.lower() not in _HOP_HEADERS
        }
        status, content_type, content = await self.forward(
            scope["method"], path, headers, b"".join(chunks)
        )
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type.encode("latin-1"))]})  # fmt: skip
        await send({"type": "http.response.body", "body": content})

    async def forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, str, bytes]:
        """One request through the fleet: (status, content type, body)."""
        self.stats.requests += 1
        if self._draining:
            return _error(503, f"{self.name} is shutting down")
        http = self.rm.http
        attempts = max(http.max_retries, 1) + len(self.replicas)
        tried: set[int] = set()
        last = "no replica is live"
        for attempt in range(attempts):
            replica = self._pick(body, tried)
            if replica is None:  # none live now: wait for a restart, then look again
                tried.clear()
                await asyncio.sleep(_backoff(http.backoff_base_s, http.backoff_max_s, attempt))
                continue
            replica.in_flight += 1
            replica.picked += 1
            self.stats.by_replica[replica.rank] = self.stats.by_replica.get(replica.rank, 0) + 1
            try:
                assert self._client is not None
                answer = await self._client.request(
                    method, f"{replica.url}{path}", content=body, headers=headers
                )
            except httpx.TimeoutException as exc:
                # Not moved: the replica may still be working on it (HttpOptions.timeout_s).
                self.stats.failed += 1
                return _error(
                    504,
                    f"{self.name}: replica {replica.rank} gave no answer in time ({type(exc).__name__})",
                )
            except httpx.HTTPError as exc:
                last = f"replica {replica.rank}: {type(exc).__name__}: {exc}"
                if replica.state == "live":
                    replica.state = "unhealthy"  # out of routing until its next check passes
                    replica.next_check = 0.0
            else:
                if answer.status_code < 500:
                    return (
                        answer.status_code,
                        answer.headers.get("content-type", "application/json"),
                        answer.content,
                    )
                last = f"replica {replica.rank}: HTTP {answer.status_code}: {answer.text[:200]}"
            finally:
                replica.in_flight -= 1
            tried.add(replica.rank)
            self.stats.retried += 1
            if len(tried) >= len(self.replicas) or not self._live(tried):
                tried.clear()
                await asyncio.sleep(_backoff(http.backoff_base_s, http.backoff_max_s, attempt))
        self.stats.failed += 1
        health = self.health()
        return _error(
            503,
            f"{self.name}: no replica answered after {attempts} attempts "
            f"({health.describe()}); last: {last}",
        )

    def _live(self, tried: set[int]) -> list[_Replica]:
        return [r for r in self.replicas if r.state == "live" and r.rank not in tried]

    def _pick(self, body: bytes, tried: set[int]) -> _Replica | None:
        live = self._live(tried)
        if not live:
            return None
        if self.rollout.full_determinism:
            return live[binascii.crc32(body) % len(live)]
        return min(live, key=lambda r: (r.in_flight, r.picked))


_HOP_HEADERS = frozenset(
    {"host", "content-length", "connection", "transfer-encoding", "keep-alive"}
)


def _error(status: int, message: str) -> tuple[int, str, bytes]:
    import json

    return status, "application/json", json.dumps({"error": message}).encode()


def _backoff(base: float, cap: float, attempt: int) -> float:
    return min(cap, base * 2**attempt)


def rollout_log_dir(rollout: RolloutConfig) -> str:
    if rollout.log_dir:
        Path(rollout.log_dir).mkdir(parents=True, exist_ok=True)
        return rollout.log_dir
    return tempfile.mkdtemp(prefix="rewardkit-fleet-")


def _tokenizer_or_none(path: str | None) -> Any:
    """The served model's tokenizer for custom functions (verl's ``reward_model_tokenizer``)."""
    from rewardkit.models.loading import load_tokenizer

    try:
        return load_tokenizer(path, "reward_model.model_path") if path else None
    except Exception:  # a model directory without one: the functions get None
        return None


class ManagedModel:
    """A reward model whose servers rewardkit launches: the fleet plus the scorer ``url``
    would give (a judge over the chat API, or vLLM ``/classify`` / SGLang embeddings),
    pointed at the fleet's router."""

    def __init__(
        self,
        rm: RewardModelConfig,
        build: Callable[[RewardModelConfig], ModelScorer],
        *,
        ray: RayOptions | None = None,
        key: str = "reward_model",
    ) -> None:
        """``ray``: ``reward.ray`` when the replicas are Ray actors (``reward.backend: ray``);
        ``key``: the config section, for messages."""
        self.cfg = rm
        self.fleet = Fleet(rm, ray=ray, key=key)
        self._ray = ray
        self._leased = False
        assert rm.rollout.name is not None
        self._backend = client_backend(rm.rollout.name, rm.kind)
        self._build = build
        self._inner: ModelScorer | None = None
        self.tokenizer: Any = None

    @property
    def component(self) -> str:
        return "judge" if self.cfg.kind == "generative" else "rm"

    @property
    def _sends_conversations(self) -> bool:
        return self.cfg.rollout.name == "transformers" and self.cfg.kind == "discriminative"

    @property
    def weight(self) -> float:
        return self.cfg.weight

    @property
    def router_address(self) -> str:
        """``127.0.0.1:PORT`` (on a multi-node Ray cluster, this node's Ray address):
        verl's ``reward_router_address`` (no scheme)."""
        return self.fleet.address

    def health(self) -> PoolHealth:
        return self.fleet.health()

    async def start(self) -> None:
        if self._ray is not None:
            from rewardkit.execution._ray import acquire_ray

            # On the event loop's thread, which lives as long as Ray is used: a local Ray
            # started here dies with the thread that started it (execution._ray).
            acquire_ray(self._ray)
            self._leased = True
        try:
            await asyncio.to_thread(self.fleet.start)
        except BaseException:
            self._release()
            raise
        try:
            self.tokenizer = await asyncio.to_thread(_tokenizer_or_none, self.cfg.model_path)
            via_router = self.cfg.model_copy(
                update={
                    "backend": self._backend,
                    "url": f"http://{self.fleet.address}",
                    "rollout": RolloutConfig(),
                    # rewardkit serve replicas render and truncate rows themselves: send
                    # each conversation (vLLM's messages form), not token ids.
                    **({"model_path": None} if self._sends_conversations else {}),
                }
            )
            self._inner = self._build(via_router)
            await self._inner.start()
        except BaseException:
            await asyncio.to_thread(self.fleet.stop)
            self._release()
            raise

    async def close(self) -> None:
        try:
            if self._inner is not None:
                await self._inner.close()
            await asyncio.to_thread(self.fleet.stop)
        finally:
            self._release()

    def _release(self) -> None:
        if self._leased:
            from rewardkit.execution._ray import release_ray

            self._leased = False
            release_ray()

    async def score(self, sample: Sample) -> ModelScore:
        if self._inner is None:
            raise ScorerError(f"{self.fleet.name} is not started")
        return await self._inner.score(sample)
