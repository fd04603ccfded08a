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
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from rewardkit.config import RewardModelConfig, RolloutConfig
from rewardkit.engines import client_backend, command_line, health_path
from rewardkit.errors import RemoteError, ScorerError
from rewardkit.execution.health import PoolHealth
from rewardkit.models.base import ModelScore, ModelScorer
from rewardkit.types import Sample

__all__ = ["Fleet", "ManagedModel", "replica_argv"]

_LOG_TAIL_LINES = 20
_POLL_S = 0.2
_STOP_GRACE_S = 10.0

# Run as `python -c _SUPERVISE PARENT_PID ARGV...`, as the leader of the replica's own
# process group: it arms PR_SET_PDEATHSIG (SIGHUP when the thread that started it ends),
# starts the engine as its child, and waits. Its parent gone, it SIGKILLs the whole group
# (the engine and whatever the engine started), so a crash of rewardkit leaves no orphan.
# A SIGTERM to the group (a normal stop) reaches the engine, which shuts down as it does;
# the wrapper ignores it and exits with the engine's exit status.
_SUPERVISE = """
import ctypes, os, signal, sys
def down(*_):
    os.killpg(0, signal.SIGKILL)
signal.signal(signal.SIGHUP, down)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(1, signal.SIGHUP, 0, 0, 0)
if os.getppid() != int(sys.argv[1]):
    down()
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.execvp(sys.argv[2], sys.argv[2:])
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def replica_argv(
    rm: RewardModelConfig, *, port: int, rank: int
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
        served_name=rm.model_name or rm.model_path,
        device=rm.device,
        engine_kwargs=rollout.engine_kwargs.get(rollout.name, {}),
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _executable(name: str) -> str:
    """``name`` on PATH, else next to this Python (a venv's console scripts)."""
    found = shutil.which(name)
    if found:
        return found
    sibling = Path(sys.executable).parent / name
    return str(sibling) if sibling.exists() else name


@dataclass(eq=False)
class _Replica:
    rank: int
    log_path: Path
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    state: str = "down"  # starting | live | unhealthy | down | stopped
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
        return f"http://127.0.0.1:{self.port}"

    def tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        try:
            text = self.log_path.read_bytes()[-16_384:].decode("utf-8", "replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class _Stats:
    requests: int = 0
    retried: int = 0
    failed: int = 0
    restarts: int = 0
    by_replica: dict[int, int] = field(default_factory=dict)


class FleetStartError(RemoteError):
    """A replica did not come up: its exit or the time-out, with its last log lines."""


class Fleet:
    """The replicas of one reward model and the router in front of them (module docstring).

    ``start()`` blocks until every replica answers its health route (FleetStartError
    otherwise, everything stopped); ``stop()`` drains and stops. Both are thread-safe
    and callable from any thread; the fleet runs on a thread of its own.
    """

    def __init__(
        self,
        rm: RewardModelConfig,
        *,
        name: str | None = None,
        command: Callable[[int, int], tuple[list[str], dict[str, str]]] | None = None,
    ) -> None:
        """``command(rank, port)``: a replica's argv and extra environment; default: the
        engine's (:func:`replica_argv`)."""
        if rm.rollout.name is None or rm.model_path is None:
            raise ValueError("a fleet needs reward_model.rollout.name and model_path")
        self.rm = rm
        self.health_path = health_path(rm.rollout.name, rm.kind, rm.health_check.path)
        self._command = command or (lambda rank, port: replica_argv(rm, port=port, rank=rank))
        self.rollout: RolloutConfig = rm.rollout
        self.name = name or f"{rm.rollout.name} fleet of {Path(rm.model_path).name}"
        self._own_log_dir = rollout_log_dir(self.rollout)
        self.log_dir = Path(self._own_log_dir)
        self.replicas = [
            _Replica(rank, self.log_dir / f"replica-{rank}.log")
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
        self._draining = False
        self._stopped = False
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Launch the replicas and the router; return when all are live."""
        self._thread.start()
        atexit.register(self.stop)
        try:
            self._run(self._start())
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Drain, stop every replica (SIGTERM, then SIGKILL), stop the router and the thread."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        atexit.unregister(self.stop)
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self._run(self._stop())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
        else:
            for replica in self.replicas:
                _kill_group(replica, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self._loop.close()

    def health(self) -> PoolHealth:
        """Live replicas against ``data_parallel_size`` (what ``/ready`` reports)."""
        live = sum(r.state == "live" for r in self.replicas)
        why = [f"replica {r.rank} {r.state}{r.last_exit and f' ({r.last_exit})'}"
               for r in self.replicas if r.state != "live"]  # fmt: skip
        return PoolHealth(len(self.replicas), live, "; ".join(why) or None)

    def kill_replica(self, rank: int, sig: int = signal.SIGKILL) -> int:
        """Kill one replica's process group (for tests and drills); its pid."""
        proc = self.replicas[rank].proc
        assert proc is not None
        os.killpg(proc.pid, sig)
        return proc.pid

    def pids(self) -> list[int]:
        """The replicas' process ids now (group leaders)."""
        return [r.proc.pid for r in self.replicas if r.proc is not None and r.proc.poll() is None]

    def _run(self, coro: Awaitable[Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()  # type: ignore[arg-type]

    async def _start(self) -> None:
        timeout = httpx.Timeout(self.rm.http.timeout_s, connect=self.rm.http.connect_timeout_s)
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
        self._client = httpx.AsyncClient(timeout=timeout, limits=limits, trust_env=False)
        for replica in self.replicas:
            self._spawn(replica)
        await asyncio.gather(*(self._wait_first_start(r) for r in self.replicas))
        await self._serve_router()
        self._watcher = asyncio.create_task(self._watch(), name="rewardkit-fleet-watch")

    async def _wait_first_start(self, replica: _Replica) -> None:
        deadline = time.monotonic() + self.rollout.start_timeout_s
        while True:
            proc = replica.proc
            assert proc is not None and self._client is not None
            code = proc.poll()
            if code is not None:
                raise FleetStartError(
                    f"{self.name}: replica {replica.rank} exited with code {code} while "
                    f"starting ({' '.join(proc.args)!s:.300}); last lines of "  # type: ignore[arg-type]
                    f"{replica.log_path}:\n{replica.tail()}"
                )
            if await self._healthy(replica):
                replica.state = "live"
                return
            if time.monotonic() > deadline:
                raise FleetStartError(
                    f"{self.name}: replica {replica.rank} did not answer /health within "
                    f"{self.rollout.start_timeout_s:g}s (rollout.start_timeout_s); last lines "
                    f"of {replica.log_path}:\n{replica.tail()}"
                )
            await asyncio.sleep(0.25)

    async def _stop(self) -> None:
        self._draining = True
        deadline = time.monotonic() + self.rollout.drain_timeout_s
        while any(r.in_flight for r in self.replicas) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        for replica in self.replicas:
            _kill_group(replica, signal.SIGTERM)
        end = time.monotonic() + _STOP_GRACE_S
        while time.monotonic() < end and any(
            r.proc is not None and r.proc.poll() is None for r in self.replicas
        ):
            await asyncio.sleep(0.05)
        for replica in self.replicas:
            _kill_group(replica, signal.SIGKILL)
            if replica.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    replica.proc.wait(timeout=5)
            replica.state = "stopped"
        if self._server is not None:
            self._server.should_exit = True
            if self._serving is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._serving, timeout=5)
        if self._client is not None:
            await self._client.aclose()

    # ------------------------------------------------------------------ replicas

    def _spawn(self, replica: _Replica) -> None:
        """Start one replica (on the fleet's thread: PDEATHSIG follows that thread)."""
        replica.port = _free_port()
        argv, extra_env = self._command(replica.rank, replica.port)
        argv[0] = _executable(argv[0])
        env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"), **extra_env}
        wrapper = [sys.executable, "-c", _SUPERVISE, str(os.getpid())]
        with open(replica.log_path, "ab") as log:
            log.write(f"--- rewardkit: starting {' '.join(argv)}\n".encode())
            log.flush()
            replica.proc = subprocess.Popen(
                [*wrapper, *argv],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killpg reaches its children
                env=env,
                cwd=self.log_dir,
            )
        replica.state = "starting"
        replica.started_at = time.monotonic()

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
            now = time.monotonic()
            for replica in self.replicas:
                await self._tend(replica, now)
            await asyncio.sleep(_POLL_S)

    async def _tend(self, replica: _Replica, now: float) -> None:
        rollout = self.rollout
        proc = replica.proc
        if replica.state in ("starting", "live", "unhealthy") and proc is not None:
            code = proc.poll()
            if code is not None:
                _kill_group(replica, signal.SIGKILL)  # what it left in its group
                self._died(replica, f"exited with code {code}", now)
                return
        if replica.state == "down" and now >= replica.restart_at and not self._draining:
            self._spawn(replica)
            replica.restarts += 1
            self.stats.restarts += 1
        elif replica.state == "starting":
            if await self._healthy(replica):
                replica.state, replica.deaths_in_row = "live", 0
            elif now - replica.started_at > rollout.start_timeout_s:
                _kill_group(replica, signal.SIGKILL)
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
        sock.bind(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{sock.getsockname()[1]}"
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


def _kill_group(replica: _Replica, sig: int) -> None:
    """Signal the replica's whole process group (the engine and what it started)."""
    if replica.proc is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(replica.proc.pid, sig)


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
    ) -> None:
        self.cfg = rm
        self.fleet = Fleet(rm)
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
        """``127.0.0.1:PORT``: verl's ``reward_router_address`` (no scheme)."""
        return self.fleet.address

    def health(self) -> PoolHealth:
        return self.fleet.health()

    async def start(self) -> None:
        await asyncio.to_thread(self.fleet.start)
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
            raise

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()
        await asyncio.to_thread(self.fleet.stop)

    async def score(self, sample: Sample) -> ModelScore:
        if self._inner is None:
            raise ScorerError(f"{self.fleet.name} is not started")
        return await self._inner.score(sample)
