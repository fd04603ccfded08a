"""guards: the agent-loop fields of extra_info (num_turns, rollout_reward_scores, tool_rewards, reward_score) as the engine reads them."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from rewardkit import RewardLoop
from rewardkit.config import load_config
from rewardkit.errors import ConfigError, InvalidSampleError
from rewardkit.scoring.spread import SPREAD_MIN_ROWS
from rewardkit.shaping.rollout import num_turns, prescored, rollout_rewards


@pytest.mark.parametrize(
    ("extra_info", "expected"),
    [
        ({}, {}),
        ({"rollout_reward_scores": {}, "tool_rewards": []}, {}),  # verl's defaults
        ({"rollout_reward_scores": None, "tool_rewards": None}, {}),
        ({"rollout_reward_scores": {"search": 0.5}}, {"tool/search": 0.5}),
        ({"rollout_reward_scores": {"user_turn_rewards": [0.25, 0.5]}}, {"tool/user_turn_rewards": 0.75}),
        ({"rollout_reward_scores": {"idle": []}}, {}),
        ({"tool_rewards": [0.1, -0.05, 0]}, {"tool/steps": 0.05}),
        ({"tool_rewards": np.array([0.5, 0.25])}, {"tool/steps": 0.75}),  # a DataProto's value
        ({"rollout_reward_scores": {"calc": np.float32(0.5), 3: 1}}, {"tool/calc": 0.5, "tool/3": 1.0}),
        # one name in both places: summed, not overwritten
        ({"rollout_reward_scores": {"steps": 1.0}, "tool_rewards": [0.5]}, {"tool/steps": 1.5}),
    ],
)  # fmt: skip
def test_rollout_rewards_become_tool_components(extra_info: dict[str, Any], expected) -> None:
    got = rollout_rewards(extra_info)
    assert got.keys() == expected.keys()
    assert all(math.isclose(got[k], v) for k, v in expected.items())


@pytest.mark.parametrize(
    ("extra_info", "named"),
    [
        ({"rollout_reward_scores": [0.5]}, "rollout_reward_scores must be an object"),
        ({"rollout_reward_scores": "0.5"}, "rollout_reward_scores must be an object"),
        ({"rollout_reward_scores": {"a": "0.5"}}, "rollout_reward_scores.a must be a finite"),
        ({"rollout_reward_scores": {"a": True}}, "rollout_reward_scores.a must be a finite"),
        ({"rollout_reward_scores": {"a": [1.0, None]}}, r"rollout_reward_scores.a\[1\]"),
        ({"rollout_reward_scores": {"a": {"b": 1}}}, "rollout_reward_scores.a must be a finite"),
        ({"rollout_reward_scores": {"a": math.inf}}, "rollout_reward_scores.a must be a finite"),
        ({"rollout_reward_scores": {"a": [1e308, 1e308]}}, "sum to inf"),
        ({"tool_rewards": 0.5}, "tool_rewards must be a list"),
        ({"tool_rewards": [math.nan]}, r"tool_rewards\[0\] must be a finite"),
        ({"tool_rewards": {"a": 1}}, "tool_rewards must be a list"),
    ],
)
def test_malformed_rollout_rewards_are_refused_naming_the_key(extra_info, named) -> None:
    with pytest.raises(InvalidSampleError, match=named):
        rollout_rewards(extra_info)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), (0, 0), (3, 3), (np.int32(5), 5), (np.array(6), 6), (4.0, 4)],
)
def test_num_turns(value, expected) -> None:
    assert num_turns({"num_turns": value}) == expected


@pytest.mark.parametrize("value", [-1, 2.5, True, "3", [3], 2**40, math.nan])
def test_bad_num_turns_are_refused(value) -> None:
    with pytest.raises(InvalidSampleError, match=r"extra_info\.num_turns must be a whole number"):
        num_turns({"num_turns": value})


@pytest.mark.parametrize(
    ("value", "expected"), [(None, None), (0, 0.0), (-1, -1.0), (np.float64(0.5), 0.5)]
)
def test_prescored(value, expected) -> None:
    assert prescored({"reward_score": value}) == expected


@pytest.mark.parametrize(
    "value", [True, "1.0", math.nan, -math.inf, [1.0], {"score": 1}, 10**400, -(10**400)]
)
def test_a_bad_given_score_is_refused(value) -> None:
    with pytest.raises(InvalidSampleError, match=r"extra_info\.reward_score must be a finite"):
        prescored({"reward_score": value})


def test_the_weight_is_validated_naming_the_key() -> None:
    assert load_config({}).reward.rollout_reward_weight == 1.0
    with pytest.raises(ConfigError, match="rollout_reward_weight"):
        load_config({"reward": {"rollout_reward_weight": math.nan}})
    with pytest.raises(ConfigError, match="rollout_reward_weight"):
        load_config({"reward": {"rollout_reward_weight": "heavy"}})


@pytest.fixture(scope="module")
def loop() -> Iterator[RewardLoop]:
    with RewardLoop({"reward": {"num_workers": 1, "rollout_reward_weight": 2.0}}) as loop:
        yield loop


def _row(response: str = "#### 72", **extra_info: Any) -> dict[str, Any]:
    return {
        "data_source": "openai/gsm8k",
        "response": response,
        "ground_truth": "72",
        "extra_info": extra_info,
    }


def test_tool_rewards_are_weighted_and_summed_into_the_score(loop: RewardLoop) -> None:
    [result] = loop.score(
        [_row(num_turns=6, rollout_reward_scores={"search": 0.25}, tool_rewards=[-0.125])]
    )
    assert result.components == {"rule": 1.0, "tool/search": 0.25, "tool/steps": -0.125}
    assert result.score == 1.0 + 2.0 * (0.25 - 0.125)
    assert result.extra["num_turns"] == 6


def test_a_prescored_row_keeps_its_score_on_every_path(loop: RewardLoop) -> None:
    """Its reward_score is the score (no verifier, no tool rewards), also in a batch large
    enough for the workers to run the inline phases; a malformed one is invalid."""
    rows = [_row() for _ in range(SPREAD_MIN_ROWS)]
    rows[3] = _row("#### 7", reward_score=0.5, tool_rewards=[1.0], num_turns=3)
    rows[5] = _row(reward_score=-1)
    rows[7] = _row(reward_score="high")
    results = loop.score(rows)
    assert (results[3].score, results[3].components) == (0.5, {"prescored": 0.5})
    assert results[3].extra == {"prescored": 1, "num_turns": 3}
    assert (results[5].score, results[5].status.value) == (-1.0, "ok")
    assert results[7].status.value == "invalid" and "reward_score" in (results[7].error or "")
    assert [r.score for i, r in enumerate(results) if i not in (3, 5, 7)] == [1.0] * (
        SPREAD_MIN_ROWS - 3
    )


def test_a_prescored_row_with_malformed_tool_rewards_is_invalid(loop: RewardLoop) -> None:
    """Its tool rewards are not added, but a malformed one is refused as on any row (an
    integer past the float range too: it raised OverflowError, status error)."""
    rows = [
        _row(reward_score=1.0, tool_rewards=[math.nan]),
        _row(reward_score=1.0, rollout_reward_scores="oops"),
        _row(tool_rewards=[10**400]),
        _row(reward_score=1.0, tool_rewards=[0.5]),
    ]
    results = loop.score(rows)
    assert [r.status.value for r in results] == ["invalid", "invalid", "invalid", "ok"]
    assert "tool_rewards[0] must be a finite number" in (results[0].error or "")
    assert "rollout_reward_scores must be an object" in (results[1].error or "")
    assert "tool_rewards[0] must be a finite number, got int 1000" in (results[2].error or "")
    assert results[3].score == 1.0


def test_a_malformed_field_fails_its_row_only(loop: RewardLoop) -> None:
    good, bad = loop.score([_row(num_turns=2), _row(tool_rewards=["x"])])
    assert good.score == 1.0 and good.extra["num_turns"] == 2
    assert bad.status.value == "invalid" and "extra_info.tool_rewards[0]" in (bad.error or "")
