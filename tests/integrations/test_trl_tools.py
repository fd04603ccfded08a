"""guards: rewardkit.integrations.trl with conversational and tool-calling completions,
called by TRL's own GRPOTrainer._calculate_rewards (the code that calls reward functions)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from rewardkit.integrations.trl import reward_func

pytest.importorskip("trl")

PROMPT = [{"role": "user", "content": "What is the weather in Paris for 3 days?"}]
EXPECTED = json.dumps([{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}])


def _call(city: str) -> dict[str, Any]:
    """An assistant turn as TRL's parse_response gives it: arguments an object, content ''."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": city, "days": 3}},
            }
        ],
    }


def _calculate_rewards(
    function: Any, inputs: list[dict[str, Any]], completions: list[Any]
) -> list[float]:
    """TRL 1.16's GRPOTrainer._calculate_rewards, run on the few attributes it reads."""
    from trl import GRPOTrainer

    logged: dict[str, Any] = {}
    trainer = SimpleNamespace(
        accelerator=SimpleNamespace(device=torch.device("cpu"), is_main_process=True),
        args=SimpleNamespace(report_to=[]),
        state=SimpleNamespace(global_step=0),
        reward_funcs=[function],
        reward_processing_classes=[None],
        reward_func_names=[function.__name__],
        environments=None,
        _log_completion_extra=lambda column, values: logged.setdefault(column, values),
        _log_metric=lambda name, value: logged.setdefault(name, value),
    )
    prompts = [example["prompt"] for example in inputs]
    completion_ids = [[1, 2, 3]] * len(completions)
    rewards = GRPOTrainer._calculate_rewards(trainer, inputs, prompts, completions, completion_ids)
    assert logged["rewardkit_status"]  # TRL's hooks reached
    return [float(x) for x in rewards[:, 0]]


def test_tool_calling_completions_score_through_trls_own_caller(rk_config: Any) -> None:
    """As TRL's tool loop leaves them: the assistant's calls, the tool's answer (name and
    content, no id), then the next assistant turn."""
    function = reward_func(rk_config)
    completions = [
        [_call("Paris")],
        [_call("Rome")],
        [
            _call("Paris"),
            {"role": "tool", "name": "get_weather", "content": "{'sky': 'sunny'}"},
            _call("Paris"),
        ],
        [{"role": "assistant", "content": "<tool_call>\n" + EXPECTED[1:-1] + "\n</tool_call>"}],
    ]
    inputs = [
        {"prompt": PROMPT, "ground_truth": EXPECTED, "data_source": "tool_call"}
        for _ in completions
    ]
    assert _calculate_rewards(function, inputs, completions) == [1.0, 0.0, 1.0, 1.0]


def test_conversational_completions_keep_scoring_text_verifiers(rk_config: Any) -> None:
    function = reward_func(rk_config)
    completions = [
        [{"role": "assistant", "content": "#### 72"}],
        [{"role": "assistant", "content": "#### 7"}],
        [
            _call("Paris"),
            {"role": "tool", "name": "get_weather", "content": "72"},
            {"role": "assistant", "content": [{"type": "text", "text": "#### 72"}]},
        ],
    ]
    inputs = [
        {"prompt": PROMPT, "ground_truth": "72", "data_source": "openai/gsm8k"} for _ in completions
    ]
    assert _calculate_rewards(function, inputs, completions) == [1.0, 0.0, 1.0]
