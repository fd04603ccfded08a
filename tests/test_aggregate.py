"""guards: normalize_then_sum and scale_rewards give TRL's and verl's numbers; failed rows stay out.

TRL's aggregation is inline in ``GRPOTrainer._generate_and_score_completions`` (it cannot
be called as a function): :func:`trl_rewards` and :func:`trl_advantages` restate
``trl/trainer/grpo_trainer.py`` (TRL 1.16) lines 2756-2807 with TRL's own ``nanstd``.
verl's are called as functions in ``tests/compat/test_verl_gdpo.py``; here
:func:`verl_z` restates ``compute_grpo_outcome_advantage`` (verl 0.9.1
``trainer/ppo/core_algos.py``) for the main environment.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from trl.trainer.utils import nanstd

from rewardkit.aggregate import (
    RAW_SCORE_KEY,
    component_names,
    group_key,
    needs_groups,
    refuse_per_sample,
    rescore,
)
from rewardkit.config import load_config
from rewardkit.errors import ConfigError
from rewardkit.types import Result, Status

NAN = math.nan
WEIGHTS = {"rule": 1.0, "format": 0.5}

# 3 groups of 4 generations (TRL's layout: a group's rows are consecutive); NaN: no value.
# Group "b" holds a failed row (all NaN) and a row without a format score; group "c"'s
# rule scores are all equal (zero std); group "d" has one format score.
TABLE: list[tuple[str, float, float]] = [
    ("a", 1.0, 1.0),
    ("a", 0.0, 1.0),
    ("a", 1.0, 0.0),
    ("a", 0.0, 0.0),
    ("b", 1.0, 1.0),
    ("b", NAN, NAN),
    ("b", 0.0, NAN),
    ("b", 1.0, 0.0),
    ("c", 0.3, 1.0),
    ("c", 0.3, 0.0),
    ("c", 0.3, 1.0),
    ("c", 0.3, 1.0),
    ("d", 1.0, 1.0),  # the only format score of group d: TRL's nanstd of one value is NaN
    ("d", 0.0, NAN),
    ("d", NAN, NAN),
    ("d", 1.0, NAN),
]
G = 4


def section(**reward: Any) -> Any:
    return load_config(
        {"reward": {"rule_weight": 1.0, "format_reward": {"enable": True, "weight": 0.5}, **reward}}
    ).reward


def results(table: list[tuple[str, float, float]] = TABLE) -> list[Result]:
    out = []
    for i, (group, rule, fmt) in enumerate(table):
        row = {"data_source": "x", "prompt": "p", "extra_info": {"uid": group}}
        if math.isnan(rule):
            out.append(Result(i, Status.TIMEOUT, error="timed out", row=row))
            continue
        components = {"rule": rule} if math.isnan(fmt) else {"rule": rule, "format": fmt}
        score = math.fsum(WEIGHTS[k] * v for k, v in components.items())
        out.append(Result(i, Status.OK, score=score, components=components, row=row))
    return out


def per_func(table: list[tuple[str, float, float]] = TABLE) -> torch.Tensor:
    return torch.tensor([[rule, fmt] for _, rule, fmt in table], dtype=torch.float64)  # [B, K]


WEIGHT_VECTOR = torch.tensor([WEIGHTS["rule"], WEIGHTS["format"]], dtype=torch.float64)


def trl_rewards(rewards_per_func: torch.Tensor) -> torch.Tensor:
    """grpo_trainer.py 2791-2797: normalize_then_sum's summed rewards (before its last scaling)."""
    unscorable_mask = torch.isnan(rewards_per_func).all(dim=1)
    grouped = rewards_per_func.view(-1, G, rewards_per_func.shape[1])
    mean_k = torch.nanmean(grouped, dim=1, keepdim=True)
    std_k = nanstd(grouped, dim=1, keepdim=True)
    reward_k = ((grouped - mean_k) / (std_k + 1e-4)).view(-1, rewards_per_func.shape[1])
    rewards = (reward_k * WEIGHT_VECTOR.unsqueeze(0)).nansum(dim=1)
    rewards[unscorable_mask] = torch.nan
    return rewards


def trl_advantages(rewards_per_func: torch.Tensor, aggregation: str, scale: str) -> torch.Tensor:
    """grpo_trainer.py 2761-2807: the advantages TRL trains on."""
    unscorable_mask = torch.isnan(rewards_per_func).all(dim=1)
    if aggregation == "normalize_then_sum":
        rewards = trl_rewards(rewards_per_func)
        std_rewards = nanstd(rewards).expand_as(rewards)
        advantages = (rewards - torch.nanmean(rewards)) / (std_rewards + 1e-4)
        return torch.nan_to_num(advantages, nan=0.0)
    rewards = (rewards_per_func * WEIGHT_VECTOR.unsqueeze(0)).nansum(dim=1)
    rewards[unscorable_mask] = torch.nan
    mean_grouped = torch.nanmean(rewards.view(-1, G), dim=1).repeat_interleave(G, dim=0)
    if scale in ("group", "none"):
        std_rewards = nanstd(rewards.view(-1, G), dim=1).repeat_interleave(G, dim=0)
    else:
        std_rewards = nanstd(rewards).expand_as(rewards)
    advantages = rewards - mean_grouped
    if scale != "none":
        advantages = advantages / (std_rewards + 1e-4)
    return torch.nan_to_num(advantages, nan=0.0)


def scores(rescored: list[Result]) -> list[float | None]:
    return [r.score for r in rescored]


def assert_matches(rescored: list[Result], expected: torch.Tensor) -> None:
    for result, want in zip(rescored, expected.tolist(), strict=True):
        if not result.ok:
            assert result.score is None and result.status is Status.TIMEOUT
            continue
        assert result.score == pytest.approx(want, abs=1e-6), (
            result.index
        )  # nanstd: float32 n/(n-1)


def test_normalize_then_sum_is_trls_summed_rewards() -> None:
    rescored = rescore(results(), section(aggregation="normalize_then_sum"))
    assert_matches(rescored, trl_rewards(per_func()))
    # the zero-std rule column of group c adds exactly nothing; the raw sum is kept
    assert rescored[8].extra[RAW_SCORE_KEY] == pytest.approx(0.8)
    assert rescored[8].components == {"rule": 0.3, "format": 1.0}


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_weighted_sum_with_scale_rewards_is_trls_advantage(scale: str) -> None:
    rescored = rescore(results(), section(scale_rewards=scale))
    assert_matches(rescored, trl_advantages(per_func(), "sum_then_normalize", scale))


def test_normalize_then_sum_with_batch_scaling_is_trls_advantage() -> None:
    rescored = rescore(results(), section(aggregation="normalize_then_sum", scale_rewards="batch"))
    assert_matches(rescored, trl_advantages(per_func(), "normalize_then_sum", "batch"))


def verl_z(values: list[float], groups: list[str]) -> list[float]:
    """core_algos.py compute_grpo_outcome_advantage: group of one -> mean 0, std 1;
    else (x - mean) / (torch.std + epsilon), epsilon 1e-6."""
    out = []
    for value, group in zip(values, groups, strict=True):
        members = torch.tensor([v for v, g in zip(values, groups, strict=True) if g == group])
        if len(members) == 1:
            mean, std = torch.tensor(0.0), torch.tensor(1.0)
        else:
            mean, std = torch.mean(members), torch.std(members)
        out.append(float((value - mean) / (std + 1e-6)))
    return out


def test_verl_group_norm_is_verls_per_key_grpo_with_a_group_of_one() -> None:
    table = [("a", 1.0, 1.0), ("a", 0.0, 1.0), ("a", 1.0, 0.0), ("solo", 1.0, 1.0)]
    rescored = rescore(results(table), section(aggregation="normalize_then_sum", group_norm="verl"))
    groups = [g for g, _, _ in table]
    rule = verl_z([r for _, r, _ in table], groups)
    fmt = verl_z([f for _, _, f in table], groups)
    for result, r, f in zip(rescored, rule, fmt, strict=True):
        assert result.score == pytest.approx(1.0 * r + 0.5 * f, abs=1e-6)
    assert rescored[3].score == pytest.approx(1.5 / (1 + 1e-6))  # verl keeps a lone row's value


def test_trl_group_norm_gives_a_lone_row_zero() -> None:
    rescored = rescore(results([("solo", 1.0, 1.0)]), section(aggregation="normalize_then_sum"))
    assert rescored[0].score == 0.0


def test_weighted_sum_without_scaling_leaves_results_alone() -> None:
    given = results()
    assert not needs_groups(section())
    assert rescore(given, section()) == given


def test_groups_fall_back_to_group_then_to_prompt() -> None:
    assert group_key({"extra_info": {"uid": "u", "group": "g"}}) == ("group", "u")
    assert group_key({"extra_info": {"group": "g"}}) == ("group", "g")
    by_prompt = group_key({"data_source": "d", "prompt": [{"role": "user", "content": "q"}]})
    assert by_prompt == group_key(
        {"data_source": "d", "prompt": [{"content": "q", "role": "user"}]}
    )
    assert by_prompt != group_key(
        {"data_source": "e", "prompt": [{"role": "user", "content": "q"}]}
    )


def test_rows_without_group_ids_group_by_prompt() -> None:
    rows = [
        Result(i, Status.OK, score=s, components={"rule": s}, row={"data_source": "x", "prompt": p})
        for i, (p, s) in enumerate([("p", 1.0), ("q", 1.0), ("p", 0.0), ("q", 1.0)])
    ]
    rescored = rescore(rows, load_config({"reward": {"aggregation": "normalize_then_sum"}}).reward)
    std = math.sqrt(0.5)
    assert scores(rescored) == pytest.approx([0.5 / (std + 1e-4), 0.0, -0.5 / (std + 1e-4), 0.0])


def test_per_sample_entry_points_are_refused_naming_the_key() -> None:
    with pytest.raises(
        ConfigError, match=r"reward.aggregation=normalize_then_sum .* RewardLoop.ascore"
    ):
        refuse_per_sample(section(aggregation="normalize_then_sum"), "RewardLoop.ascore")
    with pytest.raises(ConfigError, match=r"reward.scale_rewards=group"):
        refuse_per_sample(section(scale_rewards="group"), "x")
    refuse_per_sample(section(), "x")  # weighted_sum: nothing to refuse


@pytest.mark.parametrize(
    ("reward", "message"),
    [
        ({"aggregation": "normalize_then_sum", "scale_rewards": "group"}, "always scales"),
        ({"aggregation": "normalize_then_sum", "scale_rewards": "none"}, "always scales"),
        ({"group_norm": "verl", "scale_rewards": "batch"}, "masked_whiten"),
        ({"aggregation": "sum"}, "reward.aggregation"),
        ({"on_failure": "skip"}, "reward.on_failure"),
        ({"fill_score": "nan"}, "reward.fill_score"),
    ],
)
def test_config_refuses_what_no_trainer_defines(reward: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config({"reward": reward})


def test_component_names_follow_the_config() -> None:
    assert component_names(section()) == ("rule", "format")
    judge = load_config(
        {
            "reward": {
                "reward_model": {
                    "enable": True,
                    "kind": "generative",
                    "backend": "openai",
                    "url": "http://127.0.0.1:1",
                },
                "overlong_buffer": {"enable": True, "len": 4, "max_resp_len": 8},
            }
        }
    ).reward
    assert component_names(judge) == ("rule", "judge", "overlong")


def test_a_row_with_no_group_and_no_prompt_is_invalid_not_lumped_with_others() -> None:
    rows = [
        Result(i, Status.OK, score=s, components={"rule": s}, row={"data_source": "x"})
        for i, s in enumerate([1.0, 0.0])
    ]
    rescored = rescore(rows, load_config({"reward": {"scale_rewards": "batch"}}).reward)
    assert [r.status for r in rescored] == [Status.INVALID, Status.INVALID]
    assert rescored[0].error is not None and rescored[0].error.startswith(
        "reward.scale_rewards=batch: the row names no prompt group (extra_info.uid"
    )
    assert rescored[0].extra[RAW_SCORE_KEY] == 1.0


@pytest.mark.parametrize(
    "reward",
    [
        {"scale_rewards": "group"},
        {"scale_rewards": "batch"},
        {"aggregation": "normalize_then_sum"},
    ],
)
def test_a_score_near_the_float_range_costs_no_row_of_the_batch(reward: dict[str, Any]) -> None:
    """A user function may return 1e200: its group's mean and std leave no exception (they
    raised OverflowError, and the whole batch was lost), and every row keeps a finite
    score, or gets an error of its own where its score divides into no number."""
    table = [
        ("g1", 1e200),
        ("g1", 0.0),
        ("g2", 0.5),
        ("g2", 1.0),
        ("g3", 1.7e308),
        ("g3", -1.7e308),
    ]
    rows = [
        Result(i, Status.OK, score=s, components={"rule": s}, row={"extra_info": {"uid": g}})
        for i, (g, s) in enumerate(table)
    ]
    rescored = rescore(rows, load_config({"reward": reward}).reward)
    assert len(rescored) == len(rows)
    for result in rescored:
        assert (result.ok and math.isfinite(result.score or 0.0)) or (
            result.status is Status.ERROR and "not finite" in (result.error or "")
        )
    if reward.get("scale_rewards") == "group":  # 1e200 and 0: one std apart, as 1 and 0 are
        assert rescored[0].score == pytest.approx(2**-0.5) and rescored[1].score == pytest.approx(
            -(2**-0.5)
        )
        assert rescored[2].score == pytest.approx(-0.7069, abs=1e-4)
