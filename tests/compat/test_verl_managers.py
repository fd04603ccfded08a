"""guards: the verl adapter inside verl 0.9.1's own reward managers and Ray workers.

rewardkit inside verl 0.9.1's own reward code paths, on real DataProto batches.

Each test builds what verl builds (its managers, its config tree, its Ray workers) and
plugs rewardkit in the way the README says. The batch mixes verifiers whose extras
differ (gsm8k, math_dapo on verl's -1/+1 scale, Search-R1 exact match) and holds a row
rewardkit cannot score (an unknown data source): the cases most likely to break.
"""

from __future__ import annotations

import asyncio
import functools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dataproto_rows import make_dataproto, verl_config

from rewardkit.integrations import verl as adapter

ROOT = Path(__file__).parents[2]
ROWS = [
    ("openai/gsm8k", "what is 36 + 36 ?", "so #### 72", "72"),
    ("math_dapo", "what is ?", "the answer \\boxed{3}", "4"),
    ("searchR1_nq", "what is ?", "<answer> Paris </answer>", {"target": np.array(["Paris"])}),
    ("no/such-source", "36 + 36 ?", "#### 72", "72"),  # rewardkit cannot score it: invalid
]
SCORES = [1.0, -1.0, 1.0, 0.0]  # the failed row filled with fill_score=0.0
KEYS = ["score", "status", "error", "rewardkit_ok", "acc", "pred", "component/rule"]


def _check_extra_info(info: dict[str, Any]) -> None:
    assert sorted(info) == sorted(KEYS)
    assert all(len(values) == len(ROWS) for values in info.values())
    assert list(info["score"]) == SCORES
    assert list(info["status"]) == ["ok", "ok", "ok", "invalid"]
    assert list(info["rewardkit_ok"]) == [1.0, 1.0, 1.0, 0.0]  # numeric: verl's metrics keep it
    assert math.isnan(info["acc"][3]) and info["pred"][3] == ""


def test_verls_legacy_naive_manager_with_rewardkits_compute_score(tokenizer, rk_yaml):
    from verl.workers.reward_manager.naive import NaiveRewardManager

    fn = functools.partial(adapter.compute_score, rewardkit_config=rk_yaml, on_failure="fill")
    out = NaiveRewardManager(tokenizer, 0, compute_score=fn)(
        make_dataproto(tokenizer, ROWS), return_dict=True
    )
    _check_extra_info(out["reward_extra_info"])
    assert out["reward_tensor"].sum(dim=-1).tolist() == SCORES


def test_verls_batch_manager_calls_compute_score_with_lists(tokenizer, rk_yaml):
    from verl.workers.reward_manager.batch import BatchRewardManager

    # BatchRewardManager passes its reward_kwargs on to compute_score.
    manager = BatchRewardManager(
        tokenizer, 0, adapter.compute_score, rewardkit_config=rk_yaml, on_failure="fill"
    )
    data = make_dataproto(tokenizer, ROWS)
    out = manager(data, return_dict=True)
    _check_extra_info(out["reward_extra_info"])
    assert data.batch["acc"].tolist() == SCORES


def test_legacy_manager_returns_precomputed_rm_scores(tokenizer, rk_yaml):
    """verl's trainer hands managers batches that already hold the reward loop's rm_scores."""
    import torch
    from verl.workers.reward_manager.naive import NaiveRewardManager

    data = make_dataproto(tokenizer, ROWS)
    data.batch["rm_scores"] = torch.full(data.batch["responses"].shape, 0.25)
    data.non_tensor_batch["acc"] = np.array([1.0, 0.0, 1.0, 0.0], dtype=object)
    data.meta_info["reward_extra_keys"] = ["acc"]
    ours = adapter.RewardkitRewardManager(tokenizer=tokenizer, rewardkit_config=rk_yaml)
    theirs = NaiveRewardManager(tokenizer, 0)
    mine, verls = ours(data, return_dict=True), theirs(data, return_dict=True)
    assert torch.equal(mine["reward_tensor"], verls["reward_tensor"])
    assert mine["reward_extra_info"]["acc"] == list(verls["reward_extra_info"]["acc"])


def test_rewardkits_manager_loaded_the_way_verl_loads_custom_managers(
    tokenizer, tokenizer_dir, rk_yaml
):
    """reward.reward_manager.source=importlib with the README's example file."""
    from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
    from verl.trainer.ppo.reward import load_reward_manager

    manager_cfg = {
        "source": "importlib",
        "name": "RewardManager",
        "module": {"path": str(ROOT / "examples" / "integrations" / "verl_reward.py")},
    }
    config = verl_config(tokenizer_dir, rk_yaml, reward_manager=manager_cfg)
    manager = load_reward_manager(
        config, tokenizer, reward_router_address=None, reward_model_tokenizer=None
    )
    assert isinstance(manager, adapter.RewardkitRewardManager)
    data = make_dataproto(tokenizer, ROWS[:3])  # the example config raises on failures
    outs = [asyncio.run(manager.run_single(data[i : i + 1])) for i in range(3)]
    assert [o["reward_score"] for o in outs] == SCORES[:3]
    scores = [o["reward_score"] for o in outs]
    placed = RewardManagerBase.assemble_rm_scores(data, scores)
    assert placed.equal(type(manager).assemble_rm_scores(data, scores))
    assert placed.equal(manager(data))  # the legacy interface agrees


@pytest.fixture(scope="module")
def local_ray():
    import ray

    # address="local": a fresh Ray of our own, never a cluster another process left running.
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.parametrize("on_failure", ["fill", "raise"])
def test_reward_loop_manager_compute_rm_score(
    local_ray, tokenizer, tokenizer_dir, rk_yaml, on_failure
):
    """verl's default reward-loop path: Ray workers await rewardkit's compute_score_async."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    function = {
        "path": "pkg://rewardkit.integrations.verl",
        "name": "compute_score_async",
        "reward_kwargs": {"rewardkit_config": rk_yaml, "on_failure": on_failure},
    }
    manager = RewardLoopManager(
        verl_config(tokenizer_dir, rk_yaml, custom_reward_function=function)
    )
    data = make_dataproto(tokenizer, ROWS)
    if on_failure == "raise":
        with pytest.raises(Exception, match=r"rows failed to score \(invalid: 1\)"):
            manager.compute_rm_score(data)
        return
    out = manager.compute_rm_score(data)
    assert out.batch["rm_scores"].sum(dim=-1).tolist() == SCORES
    assert out.meta_info["reward_extra_keys"] == KEYS
    _check_extra_info({k: list(out.non_tensor_batch[k]) for k in KEYS})


def test_with_a_real_dataproto_agrees_with_verls_own_managers(tokenizer, rk_yaml):
    """The test that skipped in the main environment (verl not installed), run here: verl's
    naive manager calling rewardkit's compute_score, rewardkit's manager loaded by verl's
    loader, and verl's own score placement must give the same tensor."""
    import torch
    from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
    from verl.utils.import_utils import load_extern_object
    from verl.workers.reward_manager.naive import NaiveRewardManager

    good = ROWS[:3]
    data = make_dataproto(tokenizer, good)
    cls = load_extern_object("pkg://rewardkit.integrations.verl", "RewardkitRewardManager")
    ours = cls(tokenizer=tokenizer, num_examine=0, rewardkit_config=rk_yaml)(data, return_dict=True)
    bound = functools.partial(adapter.compute_score, rewardkit_config=rk_yaml)
    theirs = NaiveRewardManager(tokenizer, 0, compute_score=bound)(data, return_dict=True)
    assert torch.equal(ours["reward_tensor"], theirs["reward_tensor"])
    assert ours["reward_extra_info"]["score"] == list(theirs["reward_extra_info"]["score"])
    assert ours["reward_extra_info"]["score"] == SCORES[:3]
    placed = RewardManagerBase.assemble_rm_scores(data, SCORES[:3])
    assert torch.equal(placed, adapter.RewardkitRewardManager.assemble_rm_scores(data, SCORES[:3]))


def test_reward_loop_manager_with_rewardkits_manager(local_ray, tokenizer, tokenizer_dir, rk_yaml):
    """The README's recommended path: verl's reward loop calling RewardManager.run_single
    (reward.reward_manager.source=importlib, the example file), on a mixed batch."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    manager_cfg = {
        "source": "importlib",
        "name": "RewardManager",
        "module": {"path": str(ROOT / "examples" / "integrations" / "verl_reward.py")},
    }
    config = verl_config(tokenizer_dir, rk_yaml, reward_manager=manager_cfg)
    out = RewardLoopManager(config).compute_rm_score(make_dataproto(tokenizer, ROWS[:3]))
    assert out.batch["rm_scores"].sum(dim=-1).tolist() == SCORES[:3]
    assert out.meta_info["reward_extra_keys"] == KEYS
    assert list(out.non_tensor_batch["status"]) == ["ok", "ok", "ok"]
