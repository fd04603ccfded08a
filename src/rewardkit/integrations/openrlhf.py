"""rewardkit as OpenRLHF's reward: a ``reward_func`` file, or ``rewardkit serve``.

**In-process** (``--reward.remote_url /path/to/file.py``; ``--remote_rm_url`` before
OpenRLHF's flag rename): OpenRLHF imports the file and calls its ``reward_func(queries,
prompts, labels)``, where ``queries`` are the decoded prompt + response (special tokens
kept), ``prompts`` the prompts and ``labels`` the ``--data.label_key`` column. Write a two-line file (``examples/integrations/openrlhf_reward.py``)::

    from rewardkit.integrations.openrlhf import make_reward_func
    reward_func = make_reward_func({"reward": {"default_data_source": "openai/gsm8k"}})

or point ``--reward.remote_url`` at this module's own file, which reads
``$REWARDKIT_CONFIG`` / ``$REWARDKIT_URL``.

**Over HTTP**: ``rewardkit serve -c reward.yaml reward.default_data_source=openai/gsm8k``
and ``--reward.remote_url http://HOST:8000/get_reward`` (same request and answer shapes).

A label is the ground truth, or a mapping with ``ground_truth`` (and optionally
``data_source``, ``extra_info`` and ``id``) for mixed datasets; :func:`rows_from_request`
is the one conversion both ways use. A row without a data source uses
``reward.default_data_source``. The response is the query after its prompt; where
OpenRLHF cut the prompt from the left (a prompt longer than ``max_len`` leaves room for)
it is found only where certain, else the row is ``invalid`` with the reason
(:func:`split_response`): the prompt is never scored.

**Failed rows.** What OpenRLHF 0.11 does with a reward (``openrlhf/utils/agent.py``,
``SingleTurnAgentExecutor.execute``): it calls ``reward_func`` on one sample at a time,
inside ``try: ... except Exception`` that logs at INFO and leaves the sample's reward
``None``; the run then fails later, in ``samples_generator.py``, with torch's unrelated
"Could not infer dtype of NoneType". So:

* ``on_failure="raise"`` (the default) raises :class:`StopTraining`, a ``BaseException``
  that OpenRLHF's ``except Exception`` does not swallow: the rollout stops with
  rewardkit's reason (rows, statuses, first error) in its message, also logged at ERROR.
* ``on_failure="fill"`` gives failed rows ``fill_score`` (default 0.0) and reports the
  status in ``extra_logs``, which OpenRLHF averages into its metrics: ``rewardkit_ok``
  (1.0 scored, 0.0 failed), ``rewardkit_timeout``, ``rewardkit_error``,
  ``rewardkit_invalid``.

Both also come from rewardkit's config (``reward.on_failure``, ``reward.fill_score``);
an argument wins.

* ``on_failure="drop"`` uses OpenRLHF's dynamic filtering, its one way to keep rollouts
  out of the gradient: OpenRLHF trains on ``rewards`` but filters groups on ``scores``
  (``--algo.dynamic_filtering_enable``: ``should_keep_group`` in
  ``openrlhf/trainer/ppo_utils/dynamic_filtering.py`` keeps a group only when the mean
  of its scores lies inside ``--algo.dynamic_filtering_range``). A failed row gets
  ``fill_score`` as its reward and NaN as its score: its group's mean is NaN, inside no
  range, so OpenRLHF drops the whole group and samples a new prompt. It is coarser than
  TRL's None (the group goes, not the row) and works only with dynamic filtering on;
  without it the row trains on ``fill_score``, as under ``fill``.

``reward.aggregation: normalize_then_sum`` and ``reward.scale_rewards`` are refused:
OpenRLHF calls with one rollout at a time, never a whole group.

**Per-component scores**: ``extra_logs`` also holds ``component/<name>`` for each
component the config scores (``rule``, ``rm`` or ``judge``, ``format``, ``overlong``),
unweighted; 0.0 where a row has none (a failed row, say: ``rewardkit_ok`` tells them
apart), since OpenRLHF turns each value into a tensor and averages it into its metrics,
where one NaN would hide every other row's.

Neither ever returns None. Over HTTP (``rewardkit serve``) no answer can stop OpenRLHF's
run (it retries an error status five times, then swallows it at INFO), so ``/get_reward``
always fills: ``server.failed_reward`` (default 0.0), with the same ``extra_logs``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from rewardkit.aggregate import component_logs, component_names, refuse_per_sample
from rewardkit.config import ConfigSource, RewardConfig, check_runnable, load_config
from rewardkit.errors import ScorerError, StopTraining
from rewardkit.integrations._backend import (
    Backend,
    FailurePolicy,
    OnFailure,
    check_server_url,
    get_backend,
)
from rewardkit.trainer_rows import (  # shared with the server
    model_logs,
    rows_from_request,
    split_response,
)
from rewardkit.types import Status

__all__ = [
    "StopTraining",
    "make_reward_func",
    "reward_func",
    "rows_from_request",
    "split_response",
]


RewardFunc = Callable[..., dict[str, Any]]


def make_reward_func(
    config: ConfigSource = None,
    *,
    url: str | None = None,
    on_failure: OnFailure | None = None,
    fill_score: float | None = None,
) -> RewardFunc:
    """An OpenRLHF ``reward_func(queries, prompts, labels, **kw)`` scoring through rewardkit.

    It returns ``{"rewards": [N], "scores": [N], "extra_logs": {"rewardkit_<status>": [N]}}``
    (float tensors, 1.0 where the row has that status) plus ``component/<name>``;
    ``scores`` equals ``rewards`` (OpenRLHF filters on it) but for a dropped row. A failed
    row raises :class:`StopTraining`, or with ``on_failure="fill"`` gets ``fill_score``,
    or with ``"drop"`` gets ``fill_score`` and a NaN score (see the module docstring).
    """
    loaded: RewardConfig | None = None
    if config is not None:
        config = loaded = load_config(config)  # fail at import, not at the first rollout
        check_runnable(config)
    if url is not None:
        check_server_url(url, "url")
    if loaded is not None:
        refuse_per_sample(loaded.reward, "OpenRLHF's reward_func (one rollout per call)")
    FailurePolicy.resolve(on_failure, fill_score, loaded, default="raise")

    def reward_func(
        queries: Sequence[str], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any
    ) -> dict[str, Any]:
        """Score OpenRLHF rollouts with rewardkit (see :func:`make_reward_func`)."""
        rows = rows_from_request(queries, prompts, labels)
        backend = get_backend(config, url)
        policy = _policy(on_failure, fill_score, backend)
        if backend.config is not None:  # the environment's config, read by the backend
            refuse_per_sample(
                backend.config.reward, "OpenRLHF's reward_func (one rollout per call)"
            )
        results = backend.score(rows)
        import torch  # here, not at module level: the reward server imports this module

        try:
            values = policy.values(results)
        except ScorerError as exc:
            raise StopTraining(str(exc)) from exc
        fill = policy.fill_score
        rewards = torch.tensor(
            [fill if v is None else v for v in values], dtype=torch.float32
        )  # [N]
        scores = torch.tensor(
            [math.nan if v is None else v for v in values], dtype=torch.float32
        )  # [N]: NaN drops the row's group under OpenRLHF's dynamic filtering
        extra_logs = {
            f"rewardkit_{status.value}": torch.tensor(
                [float(r.status is status) for r in results], dtype=torch.float32
            )  # [N]
            for status in Status
        }
        names = component_names(backend.config.reward) if backend.config is not None else ()
        for key, column in component_logs(results, names).items():
            extra_logs[key] = torch.tensor(column, dtype=torch.float32)  # [N]
        for key, counts in model_logs(results).items():  # each API judge's tokens
            if key.endswith("_tokens"):  # (its score is its component/<name> above)
                extra_logs[key] = torch.tensor(counts, dtype=torch.float32)  # [N]
        return {"rewards": rewards, "scores": scores, "extra_logs": extra_logs}

    return reward_func


def _policy(
    on_failure: OnFailure | None, fill_score: float | None, backend: Backend
) -> FailurePolicy:
    return FailurePolicy.resolve(on_failure, fill_score, backend.config, default="raise")


def reward_func(
    queries: Sequence[str], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any
) -> dict[str, Any]:
    """OpenRLHF's entry point when this file itself is the ``--remote_rm_url``.

    Configured by ``$REWARDKIT_CONFIG`` or ``$REWARDKIT_URL``; failures raise.
    """
    return _default()(queries, prompts, labels, **kwargs)


_DEFAULT: list[RewardFunc] = []


def _default() -> RewardFunc:
    if not _DEFAULT:
        _DEFAULT.append(make_reward_func())  # env vars are read by the backend, per call
    return _DEFAULT[0]
