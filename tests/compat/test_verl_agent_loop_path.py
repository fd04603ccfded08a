"""guards: rewardkit in verl 0.9.1's agent-loop reward path: each sample scored as its rollout ends, concurrently, with the agent-loop fields.

verl's AgentLoopWorker, once a sample's rollout ends, builds a one-sample DataProto
(``AgentLoopWorker._compute_score``: ``__num_turns__``, ``tool_extra_fields``, the
dataset's columns) and awaits ``compute_score.remote`` on a ``RewardLoopWorker`` actor,
which awaits its reward manager's ``run_single``. Here verl's own code runs on both
sides: ``_compute_score`` and ``_agent_loop_postprocess`` of an AgentLoopWorker that has
no rollout engine (nothing else of it is needed to score), a real ``RewardLoopWorker``
that loads rewardkit's manager (or verl's naive manager calling rewardkit's
``compute_score_async``) from verl's config, and ``_postprocess``, which assembles the
step's batch from the per-sample results. Only Ray's transport is replaced: the handle
awaits the worker's coroutine in this process.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from dataproto_rows import verl_config

from rewardkit.integrations import verl as adapter

ROOT = Path(__file__).parents[2]
AGENT_FUNCTION = ROOT / "tests" / "_support" / "agent_reward.py"
SLOW_S = 1.0
KEYS = [
    "score", "status", "error", "rewardkit_ok", *adapter.EXTRA_KEYS, "component/rule",
    *adapter.AGENT_KEYS,
]  # fmt: skip
PROMPT = "what is 36 + 36 ?"


class Handle:
    """What the agent loop awaits of a reward-loop actor handle: ``compute_score.remote(data)``."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        self.calls = 0
        self.compute_score = SimpleNamespace(remote=self._remote)

    def _remote(self, data: Any) -> Any:
        self.calls += 1
        return self.worker.compute_score(data)


def agent_worker(tokenizer: Any, handle: Handle) -> Any:
    """verl's AgentLoopWorker as far as scoring needs it: text only, no rollout engine."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    worker = AgentLoopWorker.__new__(AgentLoopWorker)  # its __init__ connects to servers
    worker.reward_loop_worker_handles = [handle]
    worker.tokenizer = tokenizer
    worker.processor = None
    worker.mm_processor_kwargs = {}
    worker.distillation_enabled = False
    worker.rollout_config = SimpleNamespace(prompt_length=8, response_length=8)
    return worker


def sample(tokenizer: Any, response: str, *, turns: int, tool_rewards: list[float], **extra) -> Any:
    """One finished rollout (verl's AgentLoopOutput) and the dataset row it came from."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput

    response_ids = tokenizer(response, add_special_tokens=False)["input_ids"]
    output = AgentLoopOutput(
        prompt_ids=tokenizer(PROMPT, add_special_tokens=False)["input_ids"],
        response_ids=response_ids,
        response_mask=[1] * len(response_ids),
        num_turns=turns,
        metrics=AgentLoopMetrics(),
        extra_fields={"turn_scores": [], "tool_rewards": tool_rewards},
    )
    kwargs = {
        "data_source": "openai/gsm8k",
        "reward_model": {"ground_truth": "72", "style": "rule"},
        "extra_info": {"index": 0, **extra},
        "raw_prompt": [{"role": "user", "content": PROMPT}],
    }
    return output, kwargs


@pytest.fixture(scope="module")
def manager_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A module with a rewardkit manager, as a verl user writes one (README: Agent loop)."""
    config = {
        "reward": {
            "num_workers": 1,
            "timeout_s": 20,
            "rollout_reward_weight": 0.5,
            "custom_reward_function": {"path": str(AGENT_FUNCTION)},
        }
    }
    path = tmp_path_factory.mktemp("agent") / "agent_reward_manager.py"
    path.write_text(
        "from rewardkit.integrations import verl\n\n\n"
        "class AgentRewardManager(verl.RewardkitRewardManager):\n"
        f"    rewardkit_config = {json.dumps(config)}\n"
    )
    return path


def reward_loop_worker(config: Any) -> Any:
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    return RewardLoopWorker(config, None)  # what RewardLoopManager starts as a Ray actor


async def finish(worker: Any, samples: list[tuple[Any, dict]], began: float) -> list[float]:
    """Each sample's verl post-processing (scoring included) in a task of its own, as
    verl's agent loop runs them; the time each one finished."""
    done = [0.0] * len(samples)

    async def one(i: int) -> Any:
        output, kwargs = samples[i]
        internal = await worker._agent_loop_postprocess(output, False, **kwargs)
        done[i] = time.perf_counter() - began
        return internal

    internals = await asyncio.gather(*(one(i) for i in range(len(samples))))
    samples[:] = [
        (internal, kwargs) for internal, (_, kwargs) in zip(internals, samples, strict=True)
    ]
    return done


def test_agent_loop_streams_each_sample_through_rewardkits_manager(
    tokenizer, tokenizer_dir, rk_yaml, manager_file
):
    """One slow sample does not delay the others; verl assembles the step's batch from
    the per-sample results (the same keys on every row, numbers for the agent fields)."""
    manager_cfg = {
        "source": "importlib",
        "name": "AgentRewardManager",
        "module": {"path": str(manager_file)},
    }
    function = {"path": str(AGENT_FUNCTION), "name": "compute_score", "reward_kwargs": {}}
    config = verl_config(
        tokenizer_dir, rk_yaml, reward_manager=manager_cfg, custom_reward_function=function
    )
    handle = Handle(reward_loop_worker(config))
    assert isinstance(handle.worker.reward_manager, adapter.RewardkitRewardManager)
    worker = agent_worker(tokenizer, handle)
    samples = [sample(tokenizer, "so #### 72", turns=4, tool_rewards=[1.0], slow=SLOW_S)]
    samples += [sample(tokenizer, "#### 7", turns=2, tool_rewards=[])]
    samples += [sample(tokenizer, "so #### 72", turns=6, tool_rewards=[0.5, -0.25])]

    async def main() -> list[float]:
        warm = [sample(tokenizer, "#### 72", turns=2, tool_rewards=[])]
        await finish(worker, warm, time.perf_counter())  # rewardkit's loop started
        return await finish(worker, samples, time.perf_counter())

    done = asyncio.run(main())
    assert handle.calls == 4  # one call per sample, as its rollout ended
    assert done[0] >= SLOW_S and max(done[1:]) < done[0] - 0.5 * SLOW_S, done
    batch = worker._postprocess([internal for internal, _ in samples])
    assert batch.batch["rm_scores"].sum(dim=-1).tolist() == [1.5, 0.0, 1.125]
    assert batch.meta_info["reward_extra_keys"] == KEYS
    assert list(batch.non_tensor_batch["num_turns"]) == [4.0, 2.0, 6.0]
    assert list(batch.non_tensor_batch["tool_reward"]) == [1.0, 0.0, 0.25]
    assert list(batch.non_tensor_batch["status"]) == ["ok", "ok", "ok"]


def test_verls_naive_manager_hands_rewardkit_the_agent_fields(tokenizer, tokenizer_dir, rk_yaml):
    """verl's own reward-loop manager (naive) with rewardkit's compute_score_async: verl
    puts num_turns and the tool fields in extra_info, rewardkit scores them."""
    function = {
        "path": "pkg://rewardkit.integrations.verl",
        "name": "compute_score_async",
        "reward_kwargs": {"rewardkit_config": rk_yaml},
    }
    config = verl_config(tokenizer_dir, rk_yaml, custom_reward_function=function)
    samples = [
        sample(tokenizer, "so #### 72", turns=5, tool_rewards=[0.25]),
        sample(tokenizer, "#### 7", turns=3, tool_rewards=[]),
    ]

    async def main() -> Any:
        # verl's managers keep the loop they were built on (a Ray actor's own): built here
        worker = agent_worker(tokenizer, Handle(reward_loop_worker(config)))
        await finish(worker, samples, time.perf_counter())
        return worker

    worker = asyncio.run(main())
    batch = worker._postprocess([internal for internal, _ in samples])
    assert batch.batch["rm_scores"].sum(dim=-1).tolist() == [1.25, 0.0]
    assert batch.meta_info["reward_extra_keys"] == KEYS
    assert list(batch.non_tensor_batch["num_turns"]) == [5.0, 3.0]


def test_a_sample_the_agent_loop_scored_is_not_sent_for_scoring(
    tokenizer, tokenizer_dir, rk_yaml, manager_file
):
    """verl skips the reward loop for a sample whose agent set reward_score: rewardkit is
    never called for it. With prescored_extra_info as its reward_extra_info, verl
    assembles a step mixing it with samples rewardkit scored."""
    manager_cfg = {
        "source": "importlib",
        "name": "AgentRewardManager",
        "module": {"path": str(manager_file)},
    }
    config = verl_config(tokenizer_dir, rk_yaml, reward_manager=manager_cfg)
    handle = Handle(reward_loop_worker(config))
    worker = agent_worker(tokenizer, handle)
    output, kwargs = sample(tokenizer, "#### 7", turns=3, tool_rewards=[])
    output.reward_score = 0.75
    output.extra_fields["reward_extra_info"] = adapter.prescored_extra_info(0.75, num_turns=3)
    samples = [(output, kwargs), sample(tokenizer, "so #### 72", turns=2, tool_rewards=[])]
    asyncio.run(finish(worker, samples, time.perf_counter()))
    assert handle.calls == 1  # the second sample only
    internals = [internal for internal, _ in samples]
    batch = worker._postprocess(internals)
    assert batch.batch["rm_scores"].sum(dim=-1).tolist() == [0.75, 1.0]
    assert batch.meta_info["reward_extra_keys"] == KEYS
    assert list(batch.non_tensor_batch["prescored"]) == [1.0, 0.0]
    assert list(batch.non_tensor_batch["num_turns"]) == [3.0, 2.0]
    # Why the helper: without its keys the prescored sample breaks verl's assembly.
    bare = internals[0].model_copy(
        update={"extra_fields": {**internals[0].extra_fields, "reward_extra_info": {}}}
    )
    with pytest.raises(KeyError):
        worker._postprocess([internals[1], bare])
