"""guards: the verl adapter's run_single as verl's agent loop calls it: per sample, concurrently, with the agent-loop fields.

verl 0.9.1's AgentLoopWorker scores each sample as its rollout ends, awaiting
``RewardLoopWorker.compute_score`` -> ``reward_manager.run_single`` on a one-row batch
whose non-tensor columns hold ``__num_turns__`` and ``tool_extra_fields``. Here the
batch has that shape (DataProto-like); tests/compat/test_verl_agent_loop_path.py lets verl's
own agent-loop code build it.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch

from _support import agent_reward
from rewardkit.errors import ScorerError
from rewardkit.integrations.verl import (
    AGENT_KEYS,
    EXTRA_KEYS,
    RewardkitRewardManager,
    prescored_extra_info,
)

KEYS = ["score", "status", "error", "rewardkit_ok", *EXTRA_KEYS, "component/rule"]
"""What every row of a rules-only config reports to verl (its one component included)."""
SLOW_S = 1.0


@dataclass
class AgentRow:
    """One sample as verl's agent loop hands it to the reward loop."""

    response: str
    truth: str = "72"
    extra_info: dict[str, Any] = field(default_factory=dict)
    num_turns: int | None = 4
    tool_fields: dict[str, Any] | None = None
    columns: dict[str, Any] = field(default_factory=dict)  # other non-tensor columns


@dataclass
class OneRowBatch:
    """The parts of verl's DataProto a reward manager reads."""

    batch: dict[str, torch.Tensor]
    non_tensor_batch: dict[str, np.ndarray]
    meta_info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return 1


def one_row(tokenizer: Any, row: AgentRow, data_source: str = "openai/gsm8k") -> OneRowBatch:
    """verl's agent-loop layout for one sample: no padding, every token attended."""
    prompt = tokenizer("what is 36 + 36 ?", add_special_tokens=False)["input_ids"]
    response = tokenizer(row.response, add_special_tokens=False)["input_ids"]
    objects = [
        ("data_source", data_source),
        ("reward_model", {"ground_truth": row.truth, "style": "rule"}),
        ("extra_info", {"index": 0, **row.extra_info}),
        ("tool_extra_fields", row.tool_fields),
        *row.columns.items(),
    ]
    non_tensor = {}
    for key, value in objects:
        if value is not None:
            column = np.empty(1, dtype=object)
            column[0] = value
            non_tensor[key] = column
    if row.num_turns is not None:
        non_tensor["__num_turns__"] = np.array([row.num_turns])
    return OneRowBatch(
        batch={
            "prompts": torch.tensor([prompt]),  # [1, P]
            "responses": torch.tensor([response]),  # [1, R]
            "attention_mask": torch.ones(1, len(prompt) + len(response), dtype=torch.long),
        },
        non_tensor_batch=non_tensor,
    )


@pytest.fixture
def manager(tiny_tokenizer, rk_config) -> RewardkitRewardManager:
    """A manager scoring with the adapter tests' shared config (gsm8k, default weights)."""
    return RewardkitRewardManager(tokenizer=tiny_tokenizer, rewardkit_config=rk_config)


@pytest.fixture
def agent_manager(tiny_tokenizer) -> RewardkitRewardManager:
    """A manager scoring with an async custom function (agent_reward), as a verl user sets."""
    config = {
        "reward": {
            "num_workers": 1,
            "rollout_reward_weight": 0.5,
            "custom_reward_function": {"path": agent_reward.PATH},
        }
    }
    return RewardkitRewardManager(tokenizer=tiny_tokenizer, rewardkit_config=config)


def test_agent_fields_reach_the_score_and_verls_extra_info(manager, tiny_tokenizer):
    """Tool rewards are components summed in (weight 1.0 by default); num_turns is a number."""
    row = AgentRow(
        "so #### 72",
        num_turns=5,
        tool_fields={"tool_rewards": [0.25, -0.5], "turn_scores": []},
        columns={"reward_scores": {"search": 0.5, "user_turn_rewards": [0.25, 0.25]}},
    )
    out = asyncio.run(manager.run_single(one_row(tiny_tokenizer, row)))
    assert out["reward_score"] == 1.0 + 0.5 + 0.5 - 0.25
    info = out["reward_extra_info"]
    assert list(info) == [*KEYS, *AGENT_KEYS]
    assert info["num_turns"] == 5.0 and isinstance(info["num_turns"], float)
    assert info["tool_reward"] == 0.75  # unweighted: search, user turns, steps
    assert info["prescored"] == 0.0


def test_a_single_turn_row_reports_the_same_keys(manager, tiny_tokenizer):
    """verl's single-turn loop: tool_rewards [] (no component), __num_turns__ 2."""
    row = AgentRow("#### 7", num_turns=2, tool_fields={"tool_rewards": [], "turn_scores": []})
    out = asyncio.run(manager.run_single(one_row(tiny_tokenizer, row)))
    assert out["reward_score"] == 0.0
    assert list(out["reward_extra_info"]) == [*KEYS, *AGENT_KEYS]
    assert out["reward_extra_info"]["tool_reward"] == 0.0


def test_without_num_turns_the_keys_stay_as_before(manager, tiny_tokenizer):
    row = AgentRow("so #### 72", num_turns=None)
    out = asyncio.run(manager.run_single(one_row(tiny_tokenizer, row)))
    assert list(out["reward_extra_info"]) == KEYS


def test_tool_rewards_as_a_column_of_verls_batch_path(manager, tiny_tokenizer):
    """With a reward model on the trainer's pool, verl's extra fields are columns."""
    row = AgentRow("so #### 72", columns={"tool_rewards": np.array([0.5, 0.5])})
    out = asyncio.run(manager.run_single(one_row(tiny_tokenizer, row)))
    assert out["reward_score"] == 2.0
    assert out["reward_extra_info"]["tool_reward"] == 1.0


def test_custom_functions_see_num_turns_and_the_weight_applies(agent_manager, tiny_tokenizer):
    row = AgentRow("so #### 72", num_turns=7, tool_fields={"tool_rewards": [1.0]})
    out = asyncio.run(agent_manager.run_single(one_row(tiny_tokenizer, row)))
    assert out["reward_score"] == 1.0 + 0.5 * 1.0  # rollout_reward_weight 0.5
    assert out["reward_extra_info"]["num_turns"] == 7.0


def test_a_row_the_agent_loop_scored_is_not_scored_again(agent_manager, tiny_tokenizer):
    """Its reward_score (from the agent's extra fields) is the score, at once: the slow
    custom function never runs, and the tool rewards are not added on top."""
    row = AgentRow(
        "#### 7",  # scoring it would give 0.0, after SLOW_S
        extra_info={"slow": SLOW_S},
        tool_fields={"tool_rewards": [1.0], "reward_score": 0.625},
    )
    began = time.perf_counter()
    out = asyncio.run(agent_manager.run_single(one_row(tiny_tokenizer, row)))
    assert time.perf_counter() - began < SLOW_S
    assert out["reward_score"] == 0.625
    info = out["reward_extra_info"]
    assert (info["status"], info["prescored"], info["num_turns"]) == ("ok", 1.0, 4.0)
    assert info["tool_reward"] == 0.0


def test_prescored_extra_info_has_the_keys_of_a_scored_row(manager, tiny_tokenizer):
    """What an agent loop that scores a sample itself stores, for verl's step assembly."""
    row = AgentRow("so #### 72", num_turns=3)
    scored = asyncio.run(manager.run_single(one_row(tiny_tokenizer, row)))["reward_extra_info"]
    given = prescored_extra_info(0.5, num_turns=3)
    assert list(given) == list(scored)
    assert (given["score"], given["status"], given["prescored"], given["num_turns"]) == (
        0.5,
        "ok",
        1.0,
        3.0,
    )
    assert math.isnan(prescored_extra_info(0.5)["num_turns"])


def test_rows_are_scored_concurrently_one_slow_row_delays_no_other(agent_manager, tiny_tokenizer):
    """verl awaits run_single from a task per sample: the fast rows finish while the slow
    one is in flight, and the caller's event loop is never blocked meanwhile."""
    rows = [AgentRow("so #### 72", extra_info={"slow": SLOW_S})]
    rows += [AgentRow("so #### 72", num_turns=n) for n in range(2, 6)]
    batches = [one_row(tiny_tokenizer, row) for row in rows]

    async def main() -> tuple[list[float], float]:
        await agent_manager.run_single(batches[1])  # the loop started, as after a first step
        began = time.perf_counter()
        done: list[float] = [0.0] * len(batches)
        gaps: list[float] = []

        async def one(i: int) -> None:
            await agent_manager.run_single(batches[i])
            done[i] = time.perf_counter() - began

        async def ticker() -> None:
            last = time.perf_counter()
            while True:
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        await asyncio.gather(*(one(i) for i in range(len(batches))))
        tick.cancel()
        return done, max(gaps)

    done, longest_gap = asyncio.run(main())
    slow, fast = done[0], done[1:]
    assert slow >= SLOW_S
    assert max(fast) < slow - 0.5 * SLOW_S, done  # not queued behind the slow row
    assert slow < 2.5 * SLOW_S, done  # the rows ran together, not one after another
    assert longest_gap < 0.5 * SLOW_S  # the caller's loop kept running


@pytest.mark.parametrize(
    ("fields", "columns", "named"),
    [
        ({"tool_rewards": ["0.5"]}, {}, "extra_info.tool_rewards[0]"),
        ({"tool_rewards": 0.5}, {}, "extra_info.tool_rewards must be a list"),
        ({}, {"reward_scores": [0.5]}, "extra_info.rollout_reward_scores must be an object"),
        ({}, {"reward_scores": {"search": math.nan}}, "rollout_reward_scores.search"),
        ({"reward_score": True}, {}, "extra_info.reward_score"),
    ],
)
def test_malformed_agent_fields_fail_the_row_naming_the_key(
    manager, tiny_tokenizer, fields, columns, named
):
    row = AgentRow("so #### 72", tool_fields=fields, columns=columns)
    with pytest.raises(ScorerError, match=r"invalid: 1\).*" + named.replace("[", r"\[")):
        asyncio.run(manager.run_single(one_row(tiny_tokenizer, row)))


def test_malformed_fields_under_fill_keep_the_keys(tiny_tokenizer, rk_config):
    manager = RewardkitRewardManager(
        tokenizer=tiny_tokenizer, rewardkit_config=rk_config, on_failure="fill"
    )
    row = AgentRow("so #### 72", num_turns=3, tool_fields={"tool_rewards": [math.inf]})
    out = asyncio.run(manager.run_single(one_row(tiny_tokenizer, row)))
    info = out["reward_extra_info"]
    assert out["reward_score"] == 0.0 and info["status"] == "invalid"
    assert list(info) == [*KEYS, *AGENT_KEYS]
    assert math.isnan(info["num_turns"])  # no result to read it from: NaN, not a guess
