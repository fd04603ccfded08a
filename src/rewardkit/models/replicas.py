"""Copies of a local reward model as Ray actors, behind one ModelScorer.

    scorer = ReplicatedModelScorer(config.reward)   # reward_model.replicas actors
    await scorer.start()                           # each loads the weights (num_gpus on GPU clusters)
    result = await scorer.score(sample)

Rows that arrive together are gathered on the driver into rounds (one Ray call per round,
not per row), and each round goes to the replica with the fewest rows outstanding;
inside the replica the model's own batcher packs them by token budget. A replica that
dies mid-round has its round retried once on another replica (``stats["retried"]``
counts rows) and is replaced in the background (its weights load again), retried with
backoff until a node can hold it. A row is answered once: by the
replica that finished its round, or with an error.

Applies to ``backend: hf`` models (:func:`wants_replicas`): a remote server is scaled by
running more servers and listing them in ``reward_model.urls`` (rewardkit.balancer).
"""

from __future__ import annotations

import asyncio
import os
import pickle
from collections.abc import Mapping
from typing import Any

from rewardkit.config import RewardSection
from rewardkit.errors import ConfigError, ScorerError
from rewardkit.execution._ray import (
    ActorGroup,
    ActorSpec,
    acquire_ray,
    import_ray,
    start_actors,
    stop_actors,
)
from rewardkit.execution.health import PoolHealth
from rewardkit.models.base import ModelScore
from rewardkit.models.batching import Batcher, Emit
from rewardkit.types import Sample

__all__ = ["ReplicatedModelScorer", "wants_replicas"]


def wants_replicas(cfg: RewardSection) -> bool:
    """Whether the reward model runs as Ray actors: a local (hf) model with backend ray or
    replicas > 1 (a managed fleet's replicas are actors of their own: rewardkit.models.managed)."""
    rm = cfg.reward_model
    local = rm.backend == "hf" and not rm.managed
    return rm.enable and local and (cfg.backend == "ray" or rm.replicas > 1)


def _single_copy(cfg: RewardSection) -> RewardSection:
    """The config one replica builds its scorer from: one local copy (so it does not recurse)."""
    return cfg.model_copy(
        update={
            "backend": "local",
            "reward_model": cfg.reward_model.model_copy(update={"replicas": 1}),
        }
    )


class _ReplicaActor:
    """One replica: the scorer ``build_one_scorer`` makes for one local copy."""

    def __init__(self, cfg: RewardSection, max_batch_wait_ms: float) -> None:
        self._cfg = cfg
        self._wait_ms = max_batch_wait_ms
        self._scorer: Any = None

    async def start(self) -> dict[str, Any]:
        import ray

        from rewardkit.models.factory import build_one_scorer

        self._scorer = build_one_scorer(self._cfg.reward_model, max_batch_wait_ms=self._wait_ms)
        await self._scorer.start()
        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "pid": os.getpid(),
            "gpu_ids": [str(g) for g in ray.get_gpu_ids()],
            "component": self._scorer.component,
        }

    async def score_many(self, samples: list[Sample]) -> list[ModelScore | ScorerError]:
        """Score a round; each row's outcome is a ModelScore or a (picklable) ScorerError."""
        outcomes = await asyncio.gather(
            *(self._scorer.score(s) for s in samples), return_exceptions=True
        )
        return [_portable(o) for o in outcomes]

    async def close(self) -> None:
        if self._scorer is not None:
            await self._scorer.close()


def _portable(outcome: Any) -> ModelScore | ScorerError:
    """An outcome that survives the trip back: exceptions become ScorerErrors if they must.

    The message is what the engine would have written for the original exception, and
    ``extra`` (a judge's unparsable text) is kept.
    """
    if isinstance(outcome, ModelScore):
        return outcome
    if isinstance(outcome, ScorerError):
        try:
            pickle.loads(pickle.dumps(outcome))
            return outcome
        except Exception:  # e.g. an __init__ with extra required arguments
            pass
        message = str(outcome)
    else:
        message = f"{type(outcome).__name__}: {outcome}"
    extra = getattr(outcome, "extra", None)
    return ReplicaError(message, extra if isinstance(extra, Mapping) else None)


class ReplicaError(ScorerError):
    """A replica's failure as it crosses back from the actor: the message, and ``extra``
    (a judge's unparsable text) when the original error carried one."""

    def __init__(self, message: str, extra: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.extra: dict[str, Any] = dict(extra or {})

    def __reduce__(self) -> tuple[type[ReplicaError], tuple[str, dict[str, Any]]]:
        return ReplicaError, (str(self), self.extra)


class ReplicatedModelScorer:
    """A ModelScorer over ``reward_model.replicas`` Ray actors, each holding one copy of the model."""

    def __init__(self, cfg: RewardSection, *, max_batch_wait_ms: float = 5.0) -> None:
        rm = cfg.reward_model
        if rm.backend != "hf":
            raise ConfigError(
                "reward_model.replicas runs local (backend hf) models; to scale a model server, "
                "list its replicas in reward_model.urls"
            )
        self.cfg = cfg
        self.replicas = rm.replicas
        self._inner = _single_copy(cfg)
        self._wait_ms = max_batch_wait_ms
        self._component = "judge" if rm.kind == "generative" else "rm"
        self._group: ActorGroup | None = None
        self._leased = False
        self.stats: dict[str, int] = {"rows": 0}
        self._batcher: Batcher[Sample, ModelScore] = Batcher(
            self._round,
            max_wait_s=max_batch_wait_ms / 1000,
            max_round=rm.max_batch_size,
            max_inflight=2 * rm.replicas,  # one round running and one on its way, per replica
            name="reward model replicas",
        )

    @property
    def component(self) -> str:
        return self._component

    @property
    def weight(self) -> float:
        return self.cfg.reward_model.weight

    async def start(self) -> None:
        """Start the replicas and wait until every one has loaded its model."""
        if self._group is not None:
            return
        ray = import_ray()
        acquire_ray(self.cfg.ray)
        self._leased = True
        opts, count = self.cfg.ray, self.replicas
        gpus = opts.replica_num_gpus
        if gpus is None:
            gpus = 1.0 if ray.cluster_resources().get("GPU", 0) >= 1 else 0.0
        spec = ActorSpec(
            "reward model replicas",
            _ReplicaActor,
            (self._inner, self._wait_ms),
            count,
            num_cpus=opts.replica_num_cpus,
            num_gpus=gpus,
            needs={"CPU": count * opts.replica_num_cpus, "GPU": count * gpus},
            what=f"reward_model.replicas={count} x (reward.ray.replica_num_cpus="
            f"{opts.replica_num_cpus:g}, replica_num_gpus={gpus:g})",
        )
        self._group = await start_actors(spec, opts, self.stats)

    async def close(self) -> None:
        await self._batcher.close()
        group, self._group = self._group, None
        leased, self._leased = self._leased, False
        await stop_actors(group, leased=leased)

    async def score(self, sample: Sample) -> ModelScore:
        """Score one row on some replica (batched with the rows arriving with it)."""
        if self._group is None:
            raise ScorerError("reward model replicas are not started")
        return await self._batcher.submit(sample)

    def health(self) -> PoolHealth:
        """Live replicas against ``reward_model.replicas`` (see ``RayWorkerPool.health``)."""
        if self._group is None:
            return PoolHealth(self.replicas, 0, "not started")
        return self._group.health()

    @property
    def actors(self) -> list[dict[str, Any]]:
        """The live replicas: ``node_id``, ``pid``, ``gpu_ids`` and rows ``outstanding``."""
        return [] if self._group is None else self._group.describe()

    @property
    def actor_handles(self) -> list[Any]:
        """The live replicas' Ray handles (for operators and fault-injection tests)."""
        return [] if self._group is None else self._group.handles()

    async def _round(self, rows: list[Sample], emit: Emit[ModelScore]) -> None:
        group = self._group
        if group is None:
            raise ScorerError("reward model replicas are closed")
        self.stats["rows"] += len(rows)
        # A replica stuck past every row's own guard is replaced, and the round retried.
        guard = 2 * self.cfg.async_timeout_s
        outcomes = await group.call(
            lambda handle: handle.score_many.remote(rows), weight=len(rows), guard=guard
        )
        for i, outcome in enumerate(outcomes):
            emit(i, outcome)
