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

Neither ever returns None. Over HTTP (``rewardkit serve``) no answer can stop OpenRLHF's
run (it retries an error status five times, then swallows it at INFO), so ``/get_reward``
always fills: ``server.failed_reward`` (default 0.0), with the same ``extra_logs``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rewardkit.config import ConfigSource, check_runnable, load_config
from rewardkit.errors import ScorerError, StopTraining
from rewardkit.integrations._backend import (
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
    on_failure: OnFailure = "raise",
    fill_score: float = 0.0,
) -> RewardFunc:
    """An OpenRLHF ``reward_func(queries, prompts, labels, **kw)`` scoring through rewardkit.

    It returns ``{"rewards": [N], "scores": [N], "extra_logs": {"rewardkit_<status>": [N]}}``
    (float tensors, 1.0 where the row has that status); ``scores`` equals ``rewards``
    (OpenRLHF filters on it). A failed row raises :class:`StopTraining`, or with
    ``on_failure="fill"`` gets ``fill_score`` (see the module docstring).
    """
    if config is not None:
        config = load_config(config)  # fail at import, not at the first rollout
        check_runnable(config)
    if url is not None:
        check_server_url(url, "url")
    policy = FailurePolicy(on_failure, fill_score)

    def reward_func(
        queries: Sequence[str], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any
    ) -> dict[str, Any]:
        """Score OpenRLHF rollouts with rewardkit (see :func:`make_reward_func`)."""
        rows = rows_from_request(queries, prompts, labels)
        results = get_backend(config, url).score(rows)
        import torch  # here, not at module level: the reward server imports this module

        try:
            scores = policy.scores(results)
        except ScorerError as exc:
            raise StopTraining(str(exc)) from exc
        rewards = torch.tensor(scores, dtype=torch.float32)  # [N]
        extra_logs = {
            f"rewardkit_{status.value}": torch.tensor(
                [float(r.status is status) for r in results], dtype=torch.float32
            )  # [N]
            for status in Status
        }
        for key, values in model_logs(results).items():  # each reward model's score, tokens
            extra_logs[key] = torch.tensor(values, dtype=torch.float32)  # [N]
        return {"rewards": rewards, "scores": rewards.clone(), "extra_logs": extra_logs}

    return reward_func


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
