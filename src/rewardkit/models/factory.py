"""One model scorer from a ``reward_model`` section: the backend and kind pick the class.

:func:`rewardkit.models.build_model_scorers` uses it for a model in this process, and each
Ray replica (:mod:`rewardkit.models.replicas`) for its one local copy, so neither imports
the other.
"""

from __future__ import annotations

from rewardkit.config import RayOptions, RewardModelConfig
from rewardkit.errors import ConfigError
from rewardkit.models.base import ModelScorer

__all__ = ["build_one_scorer"]


def build_one_scorer(
    rm: RewardModelConfig,
    *,
    max_batch_wait_ms: float = 5.0,
    ray: RayOptions | None = None,
    key: str = "reward_model",
) -> ModelScorer:
    """The scorer for ``rm`` in this process (replicas aside).

    kind discriminative: backend hf -> LocalRewardModel; vllm, sglang, tei -> RemoteRewardModel.
    kind generative: backend hf -> a local judge; openai, vllm, sglang -> a chat-completions judge;
    with judge.group set, a GroupJudge on either.
    ``rollout.name`` set: a ManagedModel (rewardkit launches the servers) around one of those,
    its replicas Ray actors when ``ray`` (``reward.ray`` of ``reward.backend: ray``) is given;
    ``key`` names the section in its errors (``reward_models.<name>``).
    Nothing is loaded or connected until ``await scorer.start()``.
    """
    if rm.managed:
        from rewardkit.models.managed import ManagedModel

        return ManagedModel(
            rm,
            lambda cfg: build_one_scorer(cfg, max_batch_wait_ms=max_batch_wait_ms),
            ray=ray,
            key=key,
        )
    if rm.kind == "generative" and rm.judge.group is not None:
        from rewardkit.models.group_judge import GroupJudge

        return GroupJudge(rm, max_batch_wait_ms=max_batch_wait_ms)
    if rm.kind == "generative":
        from rewardkit.models.judge import LLMJudge

        return LLMJudge(rm, max_batch_wait_ms=max_batch_wait_ms)
    if rm.backend == "hf":
        from rewardkit.models.discriminative import LocalRewardModel

        return LocalRewardModel(rm, max_batch_wait_ms=max_batch_wait_ms)
    if rm.backend == "openai":
        raise ConfigError(
            "reward_model.backend 'openai' serves generative judges: set reward_model.kind: generative"
        )
    from rewardkit.models.remote import RemoteRewardModel

    return RemoteRewardModel(rm, max_batch_wait_ms=max_batch_wait_ms)
