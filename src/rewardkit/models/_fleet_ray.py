"""A managed fleet's replicas as Ray actors (``reward.backend: ray`` with ``rollout.name``).

Each replica is one :class:`EngineHost` actor holding the resources the replica needs
(:func:`replica_resources`). The actor starts the engine's server on its node under the
same supervisor a local replica runs under (rewardkit.models._engine_process), on a free
port of its node, and answers for it: its exit, its log, signals, a stop. The fleet
(rewardkit.models.managed) keeps routing, health checks and restarts in the driver, and
talks to each actor through a :class:`RaySlot`.

Binding: a replica placed on the driver's own node binds 127.0.0.1, as a local replica
does; one placed on another node binds that node's address (the one Ray reaches the node
at), since the router in the driver must reach it. That is the one exception to
127.0.0.1-by-default, and it only happens on a multi-node cluster (docs/ray.md).

Imported only when a Ray fleet starts; it imports ray lazily itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rewardkit.config import RayOptions, RewardModelConfig
from rewardkit.errors import ConfigError
from rewardkit.execution._ray import (
    actor_runtime_env,
    bounded,
    check_capacity,
    import_ray,
    one_line,
)
from rewardkit.models._engine_process import EngineProcess, SlotError, free_port, log_tail

__all__ = [
    "EngineHost",
    "RaySlot",
    "check_fleet_capacity",
    "driver_node_ip",
    "replica_resources",
    "router_host",
]

_CALL_TIMEOUT_S = 30.0  # an actor call that only reads or signals; slower proves nothing
# The watcher asks every replica's actor each 0.2 s, all at once: a hung node must not hold
# up the others' restarts for long (its server's health check judges it meanwhile).
_POLL_TIMEOUT_S = 5.0
_STOP_EXTRA_S = 15.0  # on top of the engine's grace, for the actor to reap it


def replica_resources(rm: RewardModelConfig, options: RayOptions, ray: Any) -> tuple[float, float]:
    """``(num_cpus, num_gpus)`` of each replica's actor.

    ``reward.ray.replica_num_gpus`` when set; else vllm and sglang take
    ``tensor_model_parallel_size`` GPUs, and ``transformers`` takes none on
    ``device: cpu``, else one when the cluster has GPUs.
    """
    rollout = rm.rollout
    gpus = options.replica_num_gpus
    if gpus is None:
        if rollout.name in ("vllm", "sglang"):
            gpus = float(rollout.tensor_model_parallel_size)
        elif rm.device == "cpu":
            gpus = 0.0
        else:
            gpus = 1.0 if ray.cluster_resources().get("GPU", 0) >= 1 else 0.0
    return options.replica_num_cpus, gpus


def check_fleet_capacity(
    rm: RewardModelConfig, key: str, cpus: float, gpus: float, ray: Any
) -> None:
    """Fail at once, naming the keys, when the cluster can never hold the fleet."""
    count = rm.rollout.data_parallel_size
    if ray.util.client.ray.is_connected():
        raise ConfigError(
            f"{key}.rollout.name with a Ray Client connection (ray://): the router runs in "
            "this process, outside the cluster, and cannot reach the replicas' ports; run "
            "rewardkit on a node of the cluster (reward.ray.address: auto or host:6379)"
        )
    check_capacity(
        ray,
        {"CPU": count * cpus, "GPU": count * gpus},
        f"{key}.rollout.data_parallel_size={count} x (reward.ray.replica_num_cpus={cpus:g}, "
        f"replica_num_gpus={gpus:g})",
    )


def driver_node_ip() -> str:
    """The address Ray knows this (the driver's) node by."""
    ray = import_ray()
    return str(ray.util.get_node_ip_address())


def router_host(ray: Any, driver_ip: str) -> str:
    """Where the router listens: 127.0.0.1, unless a node of the cluster has another address
    (its scoring actors then reach the router at this node's address)."""
    others = {n.get("NodeManagerAddress") for n in ray.nodes() if n.get("Alive")} - {driver_ip}
    return driver_ip if others else "127.0.0.1"


class EngineHost:
    """The Ray actor of one replica: its engine process on the actor's node.

    The engine is started from a thread the actor keeps for its lifetime (the supervisor's
    PR_SET_PDEATHSIG follows the thread that started it), so the replica dies with its
    actor, however the actor ends (``ray.kill``, a lost node, the driver gone).
    """

    def __init__(self, rank: int, log_dir: str | None) -> None:
        self._rank = rank
        self._log_dir = Path(log_dir) if log_dir else None
        self._engine: EngineProcess | None = None
        self._starter = ThreadPoolExecutor(1, thread_name_prefix="rewardkit-replica")
        self._log_path: Path | None = None

    def place(self, driver_ip: str) -> dict[str, Any]:
        """Where the replica will listen (``host``, ``port``) and log, on this node."""
        import ray

        node_ip = str(ray.util.get_node_ip_address())
        host = "127.0.0.1" if node_ip == driver_ip else node_ip
        if self._log_dir is None:
            self._log_dir = Path(tempfile.mkdtemp(prefix="rewardkit-fleet-"))
        self._log_dir.mkdir(parents=True, exist_ok=True)
        self._log_path = self._log_dir / f"replica-{self._rank}.log"
        return {
            "host": host,
            "port": free_port(host),
            "node_ip": node_ip,
            "node_id": ray.get_runtime_context().get_node_id(),
            "actor_pid": os.getpid(),
            "gpu_ids": [str(g) for g in ray.get_gpu_ids()],
            "log": str(self._log_path),
        }

    def launch(self, argv: list[str], extra_env: dict[str, str], driver_python: str) -> int:
        """Start the engine (the driver's Python in ``argv`` becomes this node's); its pid."""
        assert self._log_path is not None, "place() first"
        if argv and argv[0] == driver_python:
            argv = [sys.executable, *argv[1:]]
        log_path, cwd = self._log_path, self._log_path.parent
        self._engine = self._starter.submit(EngineProcess, argv, extra_env, log_path, cwd).result()
        return self._engine.pid

    def poll(self) -> int | None:
        """The engine's exit code, or None while it runs (or before it is launched)."""
        return None if self._engine is None else self._engine.poll()

    def tail(self) -> str:
        """The last lines of the replica's log on this node."""
        return "(no log)" if self._log_path is None else log_tail(self._log_path)

    def signal(self, sig: int) -> int | None:
        """Signal the engine's process group; its pid."""
        if self._engine is None:
            return None
        self._engine.signal(sig)
        return self._engine.pid

    def stop(self, grace_s: float) -> None:
        """SIGTERM the engine's group, SIGKILL what is left after ``grace_s``."""
        if self._engine is not None:
            self._engine.stop(grace_s)


class RaySlot:
    """The driver's side of one replica actor: placing it, and each call to it, bounded."""

    def __init__(
        self, rank: int, rm: RewardModelConfig, options: RayOptions, resources: tuple[float, float],
        driver_ip: str,
    ) -> None:  # fmt: skip
        self.rank = rank
        self._rm = rm
        self._options = options
        self._cpus, self._gpus = resources
        self._driver_ip = driver_ip
        self.handle: Any = None
        self.info: dict[str, Any] = {}
        self._pid: int | None = None

    @property
    def log_name(self) -> str:
        if not self.info:
            return "(not placed yet)"
        return f"{self.info['log']} on node {self.info['node_ip']}"

    async def place(self) -> tuple[str, int]:
        """Start the actor when there is none (Ray places it), and pick the replica's port."""
        ray = import_ray()
        if self.handle is None:
            self.handle = (
                _remote_class(ray)
                .options(
                    num_cpus=self._cpus,
                    num_gpus=self._gpus,
                    scheduling_strategy="SPREAD",
                    max_restarts=0,  # the fleet restarts replicas itself, with its backoff
                    runtime_env=actor_runtime_env(self._options),
                )
                .remote(self.rank, self._rm.rollout.log_dir)
            )
        limit = self._options.start_timeout_s
        try:
            self.info = await bounded(self.handle.place.remote(self._driver_ip), limit)
        except TimeoutError:
            self.kill_actor()
            raise SlotError(
                f"its Ray actor was not placed within {limit:g}s (reward.ray.start_timeout_s); "
                "`ray status` shows resources still pending"
            ) from None
        except ray.exceptions.RayError as exc:
            self.kill_actor()
            raise SlotError(f"its Ray actor failed: {one_line(exc)}") from None
        except BaseException:  # cancelled (the fleet stops): leave no actor behind
            self.kill_actor()
            raise
        return str(self.info["host"]), int(self.info["port"])

    async def launch(self, argv: list[str], extra_env: dict[str, str]) -> None:
        ray = import_ray()
        try:
            self._pid = await bounded(
                self.handle.launch.remote(argv, extra_env, sys.executable), _CALL_TIMEOUT_S
            )
        except (TimeoutError, ray.exceptions.RayError) as exc:
            self.kill_actor()
            raise SlotError(f"its Ray actor could not launch it: {one_line(exc)}") from None

    async def exit_status(self) -> str | None:
        """Why the replica ended ("exited with code N", its actor lost), or None while it runs."""
        ray = import_ray()
        if self.handle is None:
            return "has no Ray actor"
        try:
            code = await bounded(self.handle.poll.remote(), _POLL_TIMEOUT_S)
        except TimeoutError:
            return None  # a loaded node proves nothing; the health check judges the server
        except ray.exceptions.RayError as exc:
            self.kill_actor()
            return f"lost its Ray actor ({one_line(exc)})"
        return None if code is None else f"exited with code {code}"

    async def tail(self) -> str:
        if self.handle is None:
            return "(its actor is gone, and with it the way to its log)"
        try:
            return str(await bounded(self.handle.tail.remote(), _CALL_TIMEOUT_S))
        except Exception as exc:
            return f"(cannot read the log: {one_line(exc)})"

    async def signal(self, sig: int) -> None:
        if self.handle is not None:
            with contextlib.suppress(Exception):
                await bounded(self.handle.signal.remote(sig), _CALL_TIMEOUT_S)

    async def stop(self, grace_s: float) -> None:
        """Stop the engine on its node (SIGTERM, then SIGKILL), then kill the actor."""
        if self.handle is None:
            return
        with contextlib.suppress(Exception):
            await bounded(self.handle.stop.remote(grace_s), grace_s + _STOP_EXTRA_S)
        self.kill_actor()  # and were the engine still there, its supervisor takes it down

    def pids(self) -> list[int]:
        return [self._pid] if self.handle is not None and self._pid is not None else []

    def kill_now(self, sig: int) -> int | None:
        """Signal the engine's group from any thread (tests, drills); its pid."""
        ray = import_ray()
        if self.handle is None:
            return None
        pid = ray.get(self.handle.signal.remote(sig), timeout=_CALL_TIMEOUT_S)
        return None if pid is None else int(pid)

    def kill_actor(self) -> None:
        """Kill the actor (its engine follows it: the supervisor's parent is gone)."""
        handle, self.handle, self._pid = self.handle, None, None
        if handle is not None:
            with contextlib.suppress(Exception):
                import ray

                ray.kill(handle, no_restart=True)


_REMOTE: Any = None


def _remote_class(ray: Any) -> Any:
    global _REMOTE
    if _REMOTE is None:
        _REMOTE = ray.remote(EngineHost)
    return _REMOTE
