"""guards: several rewards per row reach TRL, verl and OpenRLHF as numbers, aggregated per group, failures kept out.

Each trainer is called by its own convention (TRL's reward-function keywords, verl's
``compute_score`` and ``BatchRewardManager`` calls, OpenRLHF's ``reward_func(queries,
prompts, labels)``). OpenRLHF's group filter is restated from OpenRLHF master
``openrlhf/trainer/ppo_utils/dynamic_filtering.py`` (``should_keep_group``): it cannot
be imported here (it pins vLLM and DeepSpeed).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from rewardkit.errors import ConfigError, ScorerError, StopTraining
from rewardkit.integrations import openrlhf, trl, verl
from rewardkit.integrations._backend import FailurePolicy
from rewardkit.types import Result, Status

BASE = {"num_workers": 1, "timeout_s": 10, "format_reward": {"enable": True, "weight": 0.5}}
GDPO = {"reward": {**BASE, "aggregation": "normalize_then_sum"}}
TWO = {"reward": BASE}
GSM8K = "openai/gsm8k"

# Group u1: rule [1, 1, 0, 0], format [1, 0, 1, 0] and a row that fails (no ground truth);
# group u2: both rows right and well formed (zero std: both components add 0).
ROWS = [
    ("u1", "<think>a</think> #### 72", "72"),
    ("u1", "#### 72", "72"),
    ("u1", "<think>a</think> #### 7", "72"),
    ("u1", "#### 7", "72"),
    ("u1", "#### 72", None),
    ("u2", "<think>a</think> #### 72", "72"),
    ("u2", "<think>b</think> #### 72", "72"),
]
A = 0.5 / (math.sqrt(1 / 3) + 1e-4)  # (x - mean) / (std + 1e-4), x in {0, 1}, two of each
EXPECTED = [1.5 * A, 0.5 * A, -0.5 * A, -1.5 * A, None, 0.0, 0.0]


def trl_columns() -> dict[str, Any]:
    return {
        "prompts": ["q"] * len(ROWS),
        "completions": [response for _, response, _ in ROWS],
        "ground_truth": [truth for *_, truth in ROWS],
        "data_source": ["openai/gsm8k"] * len(ROWS),
        "extra_info": [{"uid": uid} for uid, *_ in ROWS],
    }


def close(got: list[float | None], want: list[float | None]) -> bool:
    return all(
        (g is None and w is None) or (g is not None and w is not None and abs(g - w) < 1e-9)
        for g, w in zip(got, want, strict=True)
    )


def test_trl_gets_group_normalized_sums_none_for_the_failed_row_and_metrics() -> None:
    metrics: dict[str, float] = {}
    rewards = trl.reward_func(GDPO)(**trl_columns(), log_metric=metrics.__setitem__)
    assert close(rewards, EXPECTED)
    assert metrics["rewardkit/component/rule/mean"] == pytest.approx(4 / 6)
    assert metrics["rewardkit/component/format/mean"] == pytest.approx(4 / 6)
    assert metrics["rewardkit/raw_score/mean"] == pytest.approx((1.5 + 1 + 0.5 + 0 + 1.5 + 1.5) / 6)
    assert metrics["rewardkit/invalid_frac"] == pytest.approx(1 / 7)


def test_trls_async_function_scores_the_whole_group_too() -> None:
    import asyncio

    rewards = asyncio.run(trl.areward_func(GDPO)(**trl_columns()))
    assert close(rewards, EXPECTED)


@pytest.mark.parametrize(
    ("on_failure", "failed"), [("drop", None), ("fill", -1.0), ("raise", ScorerError)]
)
def test_trl_on_failure_from_the_config(on_failure: str, failed: Any) -> None:
    fn = trl.reward_func(TWO, on_failure=on_failure, fill_score=-1.0)
    columns = {**trl_columns(), "extra_info": [None] * len(ROWS)}
    if failed is ScorerError:
        with pytest.raises(ScorerError, match="1 of 7 rows failed"):
            fn(**columns)
        return
    rewards = fn(**columns)
    assert rewards[4] == failed and rewards[:4] == [1.5, 1.0, 0.5, 0.0]


def verl_batch(**kwargs: Any) -> Any:
    return verl.compute_score(
        data_sources=["openai/gsm8k"] * len(ROWS),
        solution_strs=[response for _, response, _ in ROWS],
        ground_truths=[truth for *_, truth in ROWS],
        extra_infos=[{"uid": uid} for uid, *_ in ROWS],
        **kwargs,
    )


def test_verl_batch_call_normalizes_and_every_row_has_numeric_components() -> None:
    outs = verl_batch(rewardkit_config=GDPO, on_failure="fill", fill_score=0.0)
    assert close([o["score"] for o in outs], [0.0 if e is None else e for e in EXPECTED])
    assert {tuple(o) for o in outs} == {
        (
            "score",
            "status",
            "error",
            "rewardkit_ok",
            "acc",
            "pred",
            "component/rule",
            "component/format",
        )
    }
    assert [o["component/rule"] for o in outs[:4]] == [1.0, 1.0, 0.0, 0.0]  # unweighted, raw
    assert [o["component/format"] for o in outs[:4]] == [1.0, 0.0, 1.0, 0.0]
    assert math.isnan(outs[4]["component/rule"]) and outs[4]["rewardkit_ok"] == 0.0


def test_verls_batch_manager_call_without_group_ids_fails_loudly() -> None:
    """verl's BatchRewardManager passes neither uid nor prompt: the rows cannot be grouped,
    so they are invalid (raise: the step stops naming the key), never one big group."""
    with pytest.raises(
        ScorerError, match=r"reward.aggregation=normalize_then_sum: the row names no"
    ):
        verl.compute_score(
            data_sources=["openai/gsm8k"] * 2,
            solution_strs=["#### 72", "#### 7"],
            ground_truths=["72", "72"],
            extra_infos=[{"index": 0}, {"index": 1}],
            rewardkit_config=GDPO,
        )


def test_verls_per_sample_calls_refuse_group_normalization_naming_key_and_call() -> None:
    import asyncio

    with pytest.raises(
        ConfigError,
        match=r"reward.aggregation=normalize_then_sum .* verl's compute_score on one row",
    ):
        verl.compute_score("openai/gsm8k", "#### 72", "72", {"uid": "u"}, rewardkit_config=GDPO)
    with pytest.raises(ConfigError, match="compute_score_async"):
        asyncio.run(
            verl.compute_score_async("openai/gsm8k", "#### 72", "72", rewardkit_config=GDPO)
        )


def test_verl_refuses_drop_and_offers_raise_and_fill(tiny_tokenizer: Any) -> None:
    with pytest.raises(ConfigError, match=r"on_failure='drop'.*filter_groups.*'raise'.*'fill'"):
        verl.compute_score("openai/gsm8k", "#### 72", "72", rewardkit_config=TWO, on_failure="drop")
    dropping = {"reward": {**BASE, "on_failure": "drop"}}
    with pytest.raises(ConfigError, match=r"on_failure='drop' \(reward.on_failure\)"):
        verl.RewardkitRewardManager(tiny_tokenizer, rewardkit_config=dropping)


def test_verl_takes_on_failure_from_rewardkits_config() -> None:
    filling = {"reward": {**BASE, "on_failure": "fill", "fill_score": -2.0}}
    outs = verl_batch(rewardkit_config=filling)
    assert outs[4]["score"] == -2.0 and outs[4]["status"] == "invalid"
    with pytest.raises(ScorerError):  # the argument wins over the config
        verl_batch(rewardkit_config=filling, on_failure="raise")


def should_keep_group(
    scores: list[float], reward_range: tuple[float, float], std_threshold: float = 0.0
) -> bool:
    """OpenRLHF's dynamic_filtering.should_keep_group, restated."""
    min_r, max_r = reward_range
    mean = sum(scores) / len(scores)
    if not (min_r < mean < max_r):
        return False
    variance = sum((s - mean) ** 2 for s in scores) / len(scores)
    return bool(variance**0.5 > std_threshold)


def test_openrlhf_drop_is_a_nan_score_its_dynamic_filter_drops_with_the_group() -> None:
    reward_func = openrlhf.make_reward_func(TWO, on_failure="drop", fill_score=0.0)
    answers = [
        reward_func([f"q{response}"], ["q"], [{"ground_truth": truth, "data_source": GSM8K}])
        for _, response, truth in ROWS[:5]  # group u1, called one rollout at a time
    ]
    rewards = [a["rewards"].item() for a in answers]
    scores = [a["scores"].item() for a in answers]
    assert rewards == [1.5, 1.0, 0.5, 0.0, 0.0]  # a number for every rollout
    assert scores[:4] == rewards[:4] and math.isnan(scores[4])
    assert should_keep_group(scores[:4], (-0.01, 1.51))
    assert not should_keep_group(scores, (-0.01, 1.51))  # the failed row takes its group out
    logs = answers[4]["extra_logs"]
    assert logs["component/rule"].tolist() == [0.0] and logs["rewardkit_ok"].tolist() == [0.0]
    assert answers[0]["extra_logs"]["component/format"].tolist() == [1.0]
    assert all(isinstance(v, torch.Tensor) for v in logs.values())


def test_openrlhf_refuses_group_normalization_it_cannot_give() -> None:
    with pytest.raises(ConfigError, match="OpenRLHF's reward_func \\(one rollout per call\\)"):
        openrlhf.make_reward_func(GDPO)
    with pytest.raises(StopTraining):  # the config's on_failure is read: raise by default
        openrlhf.make_reward_func(TWO)(["q#### 72"], ["q"], [{"data_source": GSM8K}])


def test_failure_policy_values() -> None:
    rows = [Result(0, Status.OK, score=1.0), Result(1, Status.TIMEOUT, error="t")]
    assert FailurePolicy("drop").values(rows) == [1.0, None]
    assert FailurePolicy("fill", -1.0).scores(rows) == [1.0, -1.0]
    with pytest.raises(ConfigError, match="needs one"):
        FailurePolicy("drop").scores(rows)
    with pytest.raises(ConfigError, match="'raise', 'fill' or 'drop'"):
        FailurePolicy("skip")  # type: ignore[arg-type]


def test_through_a_server_batches_are_aggregated_and_single_rows_refused() -> None:
    """The server aggregates each /v1/score request; an adapter sending one row at a
    time to it is refused (its row comes back aggregated as a group of one), and
    /get_reward (OpenRLHF, one rollout a call) answers 422 naming the key."""
    import asyncio

    import httpx

    from _support.serving import running_server

    with running_server(GDPO) as base:
        columns = trl_columns()
        assert close(asyncio.run(trl.areward_func(url=base)(**columns)), EXPECTED)
        outs = verl_batch(rewardkit_url=base, on_failure="fill")
        assert close([o["score"] for o in outs], [0.0 if e is None else e for e in EXPECTED])
        with pytest.raises(ConfigError, match="verl's compute_score on one row"):
            verl.compute_score("openai/gsm8k", "#### 72", "72", rewardkit_url=base)
        with pytest.raises(ConfigError, match=r"per-sample call \(ascore\)"):
            asyncio.run(
                verl.compute_score_async("openai/gsm8k", "#### 72", "72", rewardkit_url=base)
            )
        refused = httpx.post(f"{base}/get_reward", json={"query": ["#### 72"]}, timeout=30)
    assert refused.status_code == 422
    assert "reward.aggregation=normalize_then_sum" in refused.json()["detail"]
