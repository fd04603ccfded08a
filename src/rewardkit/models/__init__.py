"""Reward models: discriminative (sequence classifiers) and generative (LLM judges).

The scoring loop builds its model scorers with :func:`build_model_scorers` and awaits
``scorer.score(sample)`` per row; each scorer batches concurrent calls itself.

torch and transformers load only when a local model starts, so importing this package
(and building remote scorers) needs neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewardkit.config import RewardSection
from rewardkit.errors import ConfigError
from rewardkit.models.base import ModelScore, ModelScorer
from rewardkit.models.factory import build_one_scorer

if TYPE_CHECKING:
    from rewardkit.models.discriminative import LocalRewardModel
    from rewardkit.models.group_judge import GroupJudge
    from rewardkit.models.judge import JudgeParseError, LLMJudge
    from rewardkit.models.remote import RemoteRewardModel

__all__ = [
    "GroupJudge",
    "JudgeParseError",
    "LLMJudge",
    "LocalRewardModel",
    "ModelScore",
    "ModelScorer",
    "RemoteRewardModel",
    "build_model_scorers",
]


def build_model_scorers(cfg: RewardSection, *, max_batch_wait_ms: float = 5.0) -> list[ModelScorer]:
    """The scorers ``reward.reward_model`` and ``reward.reward_models`` ask for (the enabled ones).

    kind discriminative: backend hf -> LocalRewardModel; vllm, sglang, tei -> RemoteRewardModel.
    kind generative: backend hf -> a local judge; openai, vllm, sglang -> a chat-completions judge.
    A local (hf) model with ``replicas > 1`` or ``reward.backend: ray`` -> ReplicatedModelScorer.
    ``rollout.name`` set -> a ManagedModel (its replicas Ray actors with ``reward.backend: ray``).
    Each named model is built as its own ``reward_model`` section would be, and writes the
    component ``rm/<name>`` (:class:`~rewardkit.models.named.NamedScorer`).
    Nothing is loaded or connected until ``await scorer.start()``.
    """
    from rewardkit.models.named import NamedScorer

    scorers: list[ModelScorer] = []
    if cfg.reward_model.enable:
        scorers.append(_one_section(cfg, max_batch_wait_ms))
    for name, rm in cfg.reward_models.items():
        if rm.enable:  # the section as if it were the only reward_model
            alone = cfg.model_copy(update={"reward_model": rm})
            named = _one_section(alone, max_batch_wait_ms, key=f"reward_models.{name}")
            scorers.append(NamedScorer(name, named))
    return scorers


def _one_section(
    cfg: RewardSection, max_batch_wait_ms: float, *, key: str = "reward_model"
) -> ModelScorer:
    from rewardkit.models.replicas import ReplicatedModelScorer, wants_replicas

    if wants_replicas(cfg) and cfg.reward_model.judge.group is not None:
        raise ConfigError(
            "reward_model.judge.group: a group judge gathers a group's rows in this process; "
            "it cannot run as Ray replicas (reward_model.replicas > 1 or reward.backend ray "
            "with backend hf): serve the judge (backend vllm/sglang/openai with a url) instead"
        )
    if wants_replicas(cfg):  # a local model as Ray actors (replicas > 1 or reward.backend ray)
        return ReplicatedModelScorer(cfg, max_batch_wait_ms=max_batch_wait_ms)
    ray = cfg.ray if cfg.backend == "ray" else None  # a managed fleet's replicas as actors
    return build_one_scorer(cfg.reward_model, max_batch_wait_ms=max_batch_wait_ms, ray=ray, key=key)


def __getattr__(name: str) -> object:
    """Import the model classes on first use (they pull in torch only when started)."""
    modules = {
        "LocalRewardModel": "rewardkit.models.discriminative",
        "RemoteRewardModel": "rewardkit.models.remote",
        "LLMJudge": "rewardkit.models.judge",
        "GroupJudge": "rewardkit.models.group_judge",
        "JudgeParseError": "rewardkit.models.judge",
    }
    if name in modules:
        import importlib

        return getattr(importlib.import_module(modules[name]), name)
    raise AttributeError(f"module 'rewardkit.models' has no attribute {name!r}")
