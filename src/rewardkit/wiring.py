"""Wiring: which pool, which verifiers and which model scorers a config asks for.

The one place that turns a :class:`~rewardkit.config.RewardConfig` into the engine's
parts, so that the parts (execution, verifiers, models) need not know each other: the
pool learns which modules its workers preload from here, not from the verifiers, and
the Ray pool's CPU reserve for model replicas is computed here, not in the pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from rewardkit.config import RewardConfig, RewardSection
from rewardkit.execution.pool import WorkerPool, start_fork_server
from rewardkit.verifiers.registry import VerifierTable

if TYPE_CHECKING:
    from rewardkit.execution.ray_pool import RayWorkerPool

__all__ = [
    "WORKER_IMPORTS",
    "WORKER_PRELOAD",
    "WORKER_WARM_UPS",
    "Pool",
    "make_model_scorers",
    "make_pool",
    "make_verifiers",
    "prepare_pool",
]

Pool: TypeAlias = "WorkerPool | RayWorkerPool"

WORKER_IMPORTS = ("rewardkit.scoring.tasks",)
WORKER_WARM_UPS = ("rewardkit.verifiers._warm",)
WORKER_PRELOAD = WORKER_IMPORTS + WORKER_WARM_UPS
"""Imported by every worker before its first task: the task functions, and the warm-ups
of the registered verifiers (math-verify's imports and tables: half a second per worker,
paid once in the fork server instead of on each worker's first row). A pool, local or
each Ray actor's, splits them: the fork server imports WORKER_IMPORTS, the first worker
forks from it at once, and a zygote runs WORKER_WARM_UPS and forks the others
(``WorkerPool(warm=...)``)."""


def make_pool(section: RewardSection) -> Pool:
    """The pool ``reward.backend`` asks for; ray is imported only for ``ray``."""
    if section.backend == "ray":
        from rewardkit.execution.ray_pool import RayWorkerPool
        from rewardkit.models.replicas import wants_replicas

        reserve = 0.0
        for _, rm in section.model_sections():  # each model's replicas, as it builds them
            if wants_replicas(section.model_copy(update={"reward_model": rm})):
                reserve += rm.replicas * section.ray.replica_num_cpus
            elif rm.enable and rm.managed:  # a managed fleet's replica actors
                reserve += rm.rollout.data_parallel_size * section.ray.replica_num_cpus
        return RayWorkerPool(
            section.num_workers,
            options=section.ray,
            memory_mb=section.worker_memory_mb,
            reserve_cpus=reserve,
            preload=WORKER_IMPORTS,  # each actor serves before its warm-ups are done
            warm=WORKER_WARM_UPS,
        )
    return WorkerPool(
        section.workers,
        spares=section.spares,
        memory_mb=section.worker_memory_mb,
        preload=WORKER_IMPORTS,  # the first worker serves without waiting for the warm-ups
        warm=WORKER_WARM_UPS,  # which a zygote runs, then forks the others from
    )


def prepare_pool(section: RewardSection) -> None:
    """What the pool needs from the caller's thread, before the engine's own thread builds
    it: the local pool's fork server, started with its imports and SIGINT ignored (only
    the main thread may set that), so that a Ctrl-C during the start prints no traceback
    from it (:func:`~rewardkit.execution.pool.start_fork_server`)."""
    if section.backend == "local":
        start_fork_server(WORKER_IMPORTS)


def make_verifiers(section: RewardSection) -> VerifierTable:
    """The verifier registry for this config: each entry's verifier is built on first use."""
    return VerifierTable(section)


def make_model_scorers(config: RewardConfig) -> list[Any]:
    """The reward-model scorers ``reward.reward_model`` and ``reward.reward_models`` enable."""
    if not config.reward.model_sections():
        return []
    from rewardkit.models import build_model_scorers

    # The server's batching window applies to model rows of concurrent requests.
    return list(
        build_model_scorers(config.reward, max_batch_wait_ms=config.server.max_batch_wait_ms)
    )
