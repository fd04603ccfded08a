"""guards: verl's DAPO settings (overlong_buffer_cfg, max_resp_len) score as verl's DAPO manager does.

verl's DAPO manager, restated from volcengine/verl b178a3cd5,
``verl/experimental/reward_loop/reward_manager/dapo.py:33-35`` (the settings, read from
``reward_kwargs``) and ``:101-112`` (the penalty)::

    reward = score
    if overlong_buffer_cfg is not None and overlong_buffer_cfg.enable:
        expected_len = max_resp_len - overlong_buffer_cfg.len
        exceed_len = valid_response_length - expected_len
        overlong_reward = min(-exceed_len / overlong_buffer_cfg.len * penalty_factor, 0)
        reward += overlong_reward
        if overlong_buffer_cfg.log:
            reward_extra_info["overlong_reward"] = overlong_reward
            reward_extra_info["overlong"] = overlong_reward < 0
"""

from __future__ import annotations

from typing import Any

import pytest

from rewardkit.config import load_config
from rewardkit.errors import ConfigError
from rewardkit.integrations.verl import compute_score
from rewardkit.loop import RewardLoop

BUFFER = {"enable": True, "len": 1000, "penalty_factor": 1.0, "log": True}
MAX_RESP_LEN = 2000
LENGTH = 1883  # tokens in the response


def verl_dapo_reward(score: float, length: int, cfg: dict[str, Any], max_resp_len: int) -> float:
    """verl's DAPO manager's reward for a row (dapo.py:101-109)."""
    reward = score
    if cfg["enable"]:
        exceed_len = length - (max_resp_len - cfg["len"])
        reward += min(-exceed_len / cfg["len"] * cfg["penalty_factor"], 0)
    return reward


def test_a_row_scores_what_verls_dapo_manager_gives() -> None:
    expected = verl_dapo_reward(1.0, LENGTH, BUFFER, MAX_RESP_LEN)
    assert expected == pytest.approx(0.117)
    kwargs = {"overlong_buffer_cfg": BUFFER, "max_resp_len": MAX_RESP_LEN}
    config = {"reward": {"num_workers": 1, "reward_kwargs": kwargs}}
    out = compute_score(
        "openai/gsm8k", "#### 72", "72", {"response_length": LENGTH}, rewardkit_config=config
    )
    assert out["score"] == pytest.approx(expected)
    assert out["rewardkit_ok"] == 1.0


def test_log_reports_the_penalty_as_verl_does() -> None:
    kwargs = {"overlong_buffer_cfg": BUFFER, "max_resp_len": MAX_RESP_LEN}
    with RewardLoop({"reward": {"num_workers": 1, "reward_kwargs": kwargs}}) as loop:
        [result] = loop.score(
            [
                {
                    "data_source": "openai/gsm8k",
                    "response": "#### 72",
                    "ground_truth": "72",
                    "extra_info": {"response_length": LENGTH},
                }
            ]
        )
    assert result.extra["overlong_reward"] == pytest.approx(-0.883)
    assert result.extra["overlong"] is True


@pytest.mark.parametrize(
    "given",
    [
        # verl 0.9.1's command line, as pasted
        [
            "+reward.reward_kwargs.overlong_buffer_cfg.enable=True",
            "+reward.reward_kwargs.overlong_buffer_cfg.len=1000",
            "+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor=1.0",
            "+reward.reward_kwargs.overlong_buffer_cfg.log=False",
            "+reward.reward_kwargs.max_resp_len=2000",
        ],
        # verl's legacy layout (its recipe/dapo scripts)
        [
            "+reward_model.reward_kwargs.overlong_buffer_cfg.enable=True",
            "+reward_model.reward_kwargs.overlong_buffer_cfg.len=1000",
            "+reward_model.reward_kwargs.overlong_buffer_cfg.penalty_factor=1.0",
            "+reward_model.reward_kwargs.overlong_buffer_cfg.log=False",
            "+reward_model.reward_kwargs.max_resp_len=2000",
        ],
    ],
)
def test_verls_dapo_keys_become_reward_overlong_buffer(given: list[str]) -> None:
    config = load_config(None, given)
    ob = config.reward.overlong_buffer
    assert (ob.enable, ob.len, ob.penalty_factor, ob.log, ob.max_resp_len) == (
        True,
        1000,
        1.0,
        False,
        2000,
    )
    assert config.reward.reward_kwargs == {}  # not passed on to a custom function


def test_dapo_keys_that_disagree_or_are_unknown_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"overlong_buffer_cfg.len.*both set"):
        load_config(
            {
                "reward": {
                    "overlong_buffer": {"len": 500},
                    "reward_kwargs": {"overlong_buffer_cfg": {"len": 1000}},
                }
            }
        )
    with pytest.raises(ConfigError, match=r"overlong_buffer_cfg.lenght: not one of verl's DAPO"):
        load_config({"reward": {"reward_kwargs": {"overlong_buffer_cfg": {"lenght": 10}}}})
    with pytest.raises(ConfigError, match=r"needs overlong_buffer.len > 0 and max_resp_len"):
        load_config({"reward": {"reward_kwargs": {"overlong_buffer_cfg": BUFFER}}})


@pytest.mark.parametrize(
    ("name", "setting"),
    [
        ("remote", "reward.num_workers"),
        ("rate_limited", "reward.reward_model.http.max_concurrent"),
        ("gdpo", "component/<name>"),
    ],
)
def test_verls_other_managers_are_refused_naming_the_setting(name: str, setting: str) -> None:
    with pytest.raises(ConfigError, match=rf"reward_manager.name: .*'{name}'.*{setting}"):
        load_config(None, [f"reward.reward_manager.name={name}"])


def test_every_row_reports_a_numeric_ok_key_for_verls_metrics(rk_config: Any) -> None:
    rows = {
        "data_sources": ["openai/gsm8k", "no/such-source"],
        "solution_strs": ["#### 72", "#### 72"],
        "ground_truths": ["72", "72"],
    }
    outs = compute_score(**rows, rewardkit_config=rk_config, on_failure="fill")
    assert [out["rewardkit_ok"] for out in outs] == [1.0, 0.0]  # verl keeps numbers only
    assert [out["status"] for out in outs] == ["ok", "invalid"]
