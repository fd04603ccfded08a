"""The OpenRLHF adapter: its custom reward_func file convention, and its remote-URL route."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from pathlib import Path
from typing import Any

import pytest
import torch

import rewardkit.integrations.openrlhf as adapter
from rewardkit.errors import ScorerError
from rewardkit.integrations._backend import ENV_CONFIG
from rewardkit.integrations.openrlhf import make_reward_func, split_response

EXAMPLES = Path(__file__).parents[2] / "examples" / "integrations"
PROMPT = "<|im_start|>user\nWhat is 36 + 36?<|im_end|>\n<|im_start|>assistant\n"


def load_like_openrlhf(path: Path) -> Any:
    """What OpenRLHF's SingleTurnAgentExecutor does with a ``--remote_rm_url`` ending in .py."""
    spec = importlib.util.spec_from_file_location("reward_func", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


def test_the_documented_example_file():
    reward_func = load_like_openrlhf(EXAMPLES / "openrlhf_reward.py")
    queries = [PROMPT + "36 + 36 = 72\n#### 72<|im_end|>", PROMPT + "#### 7<|im_end|>"]
    out = reward_func(queries, [PROMPT, PROMPT], ["72", "72"])
    assert torch.equal(out["rewards"], torch.tensor([1.0, 0.0]))
    assert torch.equal(out["scores"], out["rewards"])
    assert torch.equal(out["extra_logs"]["rewardkit_ok"], torch.tensor([1.0, 1.0]))


def test_openrlhf_calls_it_one_row_at_a_time_from_threads():
    """OpenRLHF offloads each rollout's call with asyncio.to_thread, many at once."""
    reward_func = load_like_openrlhf(EXAMPLES / "openrlhf_reward.py")

    async def rollouts() -> list[dict[str, Any]]:
        calls = [
            asyncio.to_thread(reward_func, [PROMPT + f"#### {n}</s>"], [PROMPT], ["72"])
            for n in (72, 7, 72, 70)
        ]
        return await asyncio.gather(*calls)

    rewards = [out["rewards"].tolist() for out in asyncio.run(rollouts())]
    assert rewards == [[1.0], [0.0], [1.0], [0.0]]


def test_labels_may_carry_the_data_source():
    config = EXAMPLES / "reward.yaml"  # default_data_source: openai/gsm8k
    labels = ["72", {"ground_truth": "72", "data_source": "openai/gsm8k", "extra_info": {"k": 1}}]
    out = make_reward_func(config)(["q #### 72", "q #### 72"], ["q", "q"], labels)
    assert out["rewards"].tolist() == [1.0, 1.0]
    # a label's own data source wins over the default
    label = {"ground_truth": "72", "data_source": "no/such-source"}
    out = make_reward_func(config, on_failure="fill")(["q #### 72"], ["q"], [label])
    assert out["extra_logs"]["rewardkit_ok"].tolist() == [0.0]


def test_failures_raise_and_are_logged(rk_config, caplog):
    reward_func = make_reward_func(rk_config)
    with caplog.at_level(logging.ERROR, logger="rewardkit.integrations"):
        with pytest.raises(ScorerError, match=r"1 of 2 rows failed to score \(invalid: 1\)"):
            labels = [{"ground_truth": "72", "data_source": "openai/gsm8k"}, "72"]
            reward_func(["q #### 72", "q #### 72"], ["q", "q"], labels)
    assert "field 'data_source' is missing" in caplog.text


def test_fill_reports_failures_in_extra_logs(rk_config):
    reward_func = make_reward_func(rk_config, on_failure="fill", fill_score=0.0)
    out = reward_func(
        ["q #### 72"], ["q"], [{"ground_truth": "72", "data_source": "no/such-source"}]
    )
    assert out["rewards"].tolist() == [0.0]
    assert out["extra_logs"]["rewardkit_ok"].tolist() == [0.0]


def test_mismatched_lengths_are_an_error(rk_config):
    with pytest.raises(ValueError, match=r"differ in length \(2, 1, 1\)"):
        make_reward_func(rk_config)(["a", "b"], ["a"], ["1"])


@pytest.mark.parametrize(
    ("query", "prompt", "response"),
    [
        (PROMPT + "#### 72<|im_end|>", PROMPT, "#### 72"),
        (PROMPT + "#### 72<|im_end|>\n<|endoftext|>", PROMPT, "#### 72"),
        ("<s> Q: 1+1? A: #### 2</s>", "Q: 1+1? A:", " #### 2"),  # re-decoding added a prefix
        ("answer #### 2<eos>", "a prompt that was not kept", "answer #### 2"),
        ("no markers", "", "no markers"),
        ("x" * 10_000 + "<|im_end|>", "", "x" * 10_000),
    ],
)
def test_split_response(query, prompt, response):
    assert split_response(query, prompt) == response


def test_module_file_itself_reads_the_environment(monkeypatch):
    monkeypatch.setenv(ENV_CONFIG, str(EXAMPLES / "reward.yaml"))
    monkeypatch.setattr(adapter, "_DEFAULT", [])
    reward_func = load_like_openrlhf(Path(adapter.__file__))
    assert reward_func([PROMPT + "#### 72<|im_end|>"], [PROMPT], ["72"])["rewards"].tolist() == [
        1.0
    ]
