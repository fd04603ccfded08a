"""guards: OpenRLHF never gets a reward for the prompt, a None reward, or a swallowed failure.

OpenRLHF's code is restated from OpenRLHF/OpenRLHF master 3c3be62 (2026-08-13); it
cannot be imported here (it pins vLLM and DeepSpeed):

* ``openrlhf/utils/agent.py:234``, ``SingleTurnAgentExecutor.execute``: a prompt longer
  than ``max_len - max_tokens`` keeps its last tokens, ``prompt_token_ids[-max_prompt_length:]``;
  the query is ``hf_tokenizer.decode(prompt_ids + action_ids, skip_special_tokens=False)``
  and the prompt is the untruncated text (:func:`openrlhf_query`).
* ``agent.py:281-301``: the reward call sits in ``try: ... except Exception as e:
  logger.info(...)``, leaving ``reward`` None; ``agent.py:303-319``
  (``_fetch_rewards_via_func``) calls ``reward_func([query], [prompt], [label])`` through
  ``asyncio.to_thread`` and ``asyncio.gather`` (:func:`execute_like_openrlhf`).
* ``agent.py:338-353`` (``_post_request``): an HTTP error status is retried five times,
  then a RuntimeError, caught by the same ``except Exception``: over HTTP no answer can
  stop the run, so ``/get_reward`` must answer numbers.
* ``openrlhf/trainer/ppo_utils/samples_generator.py:288``: ``torch.tensor([reward])``
  (a null reward: "Could not infer dtype of NoneType").
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

import httpx
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.serving import running_server
from rewardkit.config import load_config
from rewardkit.errors import ConfigError, QuerySplitError
from rewardkit.integrations.openrlhf import StopTraining, make_reward_func, split_response

SHOTS = "".join(
    f"Q: Tom has {i} boxes of 8 pens and {72 - 8 * i} loose pens. How many pens?\n"
    f"A: {i} * 8 = {8 * i}, and {8 * i} + {72 - 8 * i} = 72. #### 72\n\n"
    for i in range(1, 7)
)
PROMPT = SHOTS + "Q: Anna has 36 apples and buys 36 more. How many apples?\nA:"
RESPONSE = " I am not sure."
GSM8K = {"ground_truth": "72", "data_source": "openai/gsm8k"}

openrlhf_log = logging.getLogger("openrlhf.utils.agent")


@pytest.fixture(scope="module")
def bpe() -> Any:
    """A byte-level BPE tokenizer (lossless decode, as Qwen's and Llama 3's), trained here."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator([PROMPT, RESPONSE] * 4, trainer)
    return tokenizer


def openrlhf_query(bpe: Any, max_prompt_tokens: int) -> str:
    """OpenRLHF's query for PROMPT + RESPONSE when the prompt keeps its last tokens."""
    prompt_ids = bpe.encode(PROMPT).ids[-max_prompt_tokens:]
    return bpe.decode(prompt_ids + bpe.encode(RESPONSE).ids)


def execute_like_openrlhf(reward_func: Any, query: str, prompt: str, label: Any) -> dict:
    """SingleTurnAgentExecutor.execute's reward block (agent.py:281-319), one rollout."""
    output: dict[str, Any] = {"reward": None, "scores": None, "extra_logs": {}}

    async def execute() -> None:
        try:
            calls = [asyncio.to_thread(reward_func, [query], [prompt], [label])]
            rewards_info = (await asyncio.gather(*calls))[0]
            output.update(
                reward=rewards_info.get("rewards"),
                scores=rewards_info.get("scores"),
                extra_logs=rewards_info.get("extra_logs") or {},
            )
        except Exception as e:
            openrlhf_log.info(f"[SingleTurnExecutor] Failed to fetch reward from remote RM: {e}")

    asyncio.run(execute())
    return output


def test_a_left_truncated_few_shot_prompt_is_never_scored(bpe: Any, rk_config: Any) -> None:
    reward_func = make_reward_func(rk_config, on_failure="fill")
    full = len(bpe.encode(PROMPT).ids)
    found = invalid = 0
    for keep in (full - 3, full // 2, 60, 45):
        query = openrlhf_query(bpe, keep)
        assert not query.startswith(PROMPT) and "#### 72" in query  # scored whole: 1.0
        out = reward_func([query], [PROMPT], [GSM8K])
        assert out["rewards"].tolist() == [0.0], (keep, query)  # never the prompt's 72
        if out["extra_logs"]["rewardkit_ok"].item() == 1.0:
            found += 1
            assert split_response(query, PROMPT) == RESPONSE
        else:
            invalid += 1
            assert out["extra_logs"]["rewardkit_invalid"].item() == 1.0
    assert found >= 3  # a kept end part of the prompt at the query's start: found exactly
    # A query that holds no end part of the prompt is invalid, with the reason.
    with pytest.raises(StopTraining, match="prompt is not a prefix of the query"):
        make_reward_func(rk_config)(["72 #### 72" + RESPONSE], [PROMPT], [GSM8K])


def test_get_reward_never_scores_the_prompt(bpe: Any, rk_config: Any) -> None:
    queries = [openrlhf_query(bpe, 60), "#### 72" + RESPONSE, PROMPT + " #### 72"]
    body = {"query": queries, "prompts": [PROMPT] * 3, "labels": [GSM8K] * 3}
    with running_server(rk_config) as url:
        answer = httpx.post(f"{url}/get_reward", json=body, timeout=60).json()
    assert answer["rewards"] == [0.0, 0.0, 1.0]
    assert answer["extra_logs"]["rewardkit_invalid"] == [0.0, 1.0, 0.0]


def test_a_failure_stops_openrlhfs_executor_with_rewardkits_reason(rk_config: Any, caplog) -> None:
    reward_func = make_reward_func(rk_config)  # on_failure="raise"
    label = {"ground_truth": "72", "data_source": "no/such-source"}
    with caplog.at_level(logging.INFO):
        with pytest.raises(StopTraining, match=r"1 of 1 rows failed.*no/such-source"):
            execute_like_openrlhf(reward_func, PROMPT + " #### 72", PROMPT, label)
    assert "Failed to fetch reward" not in caplog.text  # not swallowed at INFO


def test_fill_gives_openrlhf_a_number_and_a_numeric_status(rk_config: Any) -> None:
    reward_func = make_reward_func(rk_config, on_failure="fill", fill_score=-1.0)
    label = {"ground_truth": "72", "data_source": "no/such-source"}
    out = execute_like_openrlhf(reward_func, PROMPT + " #### 72", PROMPT, label)
    assert torch.tensor([out["reward"]]).flatten().tolist() == [-1.0]  # samples_generator.py:288
    logs = {k: v.flatten()[0].item() for k, v in out["extra_logs"].items()}
    assert logs["rewardkit_ok"] == 0.0 and logs["rewardkit_invalid"] == 1.0
    assert logs["component/rule"] == 0.0  # a number even for a failed row


def test_drop_gives_openrlhf_a_number_to_train_on_and_a_nan_score_to_filter_on(
    rk_config: Any,
) -> None:
    reward_func = make_reward_func(rk_config, on_failure="drop", fill_score=0.0)
    label = {"ground_truth": "72", "data_source": "no/such-source"}
    out = execute_like_openrlhf(reward_func, PROMPT + " #### 72", PROMPT, label)
    assert torch.tensor([out["reward"]]).flatten().tolist() == [0.0]  # samples_generator.py:288
    assert math.isnan(out["scores"].item())  # dynamic filtering's mean: inside no range
    ok = execute_like_openrlhf(reward_func, PROMPT + " #### 72", PROMPT, GSM8K)
    assert ok["scores"].item() == ok["reward"].item() == 1.0


def test_get_reward_answers_a_number_for_a_failed_row(rk_config: Any) -> None:
    labels = [GSM8K, {"ground_truth": "72", "data_source": "no/such-source"}]
    body = {"query": ["Q: #### 72"] * 2, "prompts": ["Q:"] * 2, "labels": labels}
    with running_server({**rk_config, "server": {"failed_reward": -0.5}}) as url:
        answer = httpx.post(f"{url}/get_reward", json=body, timeout=60).json()
    assert answer["rewards"] == [1.0, -0.5]
    assert torch.tensor([answer["rewards"]]).shape == (1, 2)  # what OpenRLHF does with it
    assert answer["extra_logs"]["rewardkit_ok"] == [1.0, 0.0]
    assert load_config({}).server.failed_reward == 0.0  # the documented default


def test_a_null_failed_reward_is_refused_at_load() -> None:
    with pytest.raises(ConfigError, match=r"server.failed_reward: .*Could not infer dtype"):
        load_config({"server": {"failed_reward": None}})


TEXT = st.text(alphabet="ab #\n72:", max_size=40)  # few letters: many chance overlaps


@settings(max_examples=400, deadline=None)
@given(prompt=TEXT.filter(bool), response=TEXT, cut=st.integers(min_value=0, max_value=40))
def test_a_split_is_a_part_of_the_response_or_refused(prompt: str, response: str, cut: int) -> None:
    """Whatever OpenRLHF kept of the prompt, what is scored holds none of it."""
    query = prompt[cut:] + response
    try:
        got = split_response(query, prompt)
    except QuerySplitError:
        return
    assert response.endswith(got)
    if cut == 0:
        assert got == response
