"""guards: rewardkit's components feed verl 0.9.1's GDPO, and group_norm verl is verl's formula.

verl's own functions are called: ``compute_grpo_outcome_advantage`` (per component) and
``compute_gdpo_outcome_advantage`` (per-key normalisation, weighted sum, then
``masked_whiten`` over response tokens), on the ``component/<name>`` keys rewardkit's
per-row dicts give verl's ``reward_extra_info``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rewardkit.integrations import verl as adapter

REWARD = {"num_workers": 1, "timeout_s": 10, "format_reward": {"enable": True, "weight": 0.5}}
# Group u1: four rows; u2: two; u3: one (verl: mean 0, std 1 for a group of one).
ROWS = [
    ("u1", "<think>a</think> #### 72"),
    ("u1", "#### 72"),
    ("u1", "<think>a</think> #### 7"),
    ("u1", "#### 7"),
    ("u2", "<think>a</think> #### 72"),
    ("u2", "#### 7"),
    ("u3", "<think>a</think> #### 72"),
]
KEYS = ["component/rule", "component/format"]
WEIGHTS = [1.0, 0.5]
P, R = 3, 5  # prompt and response widths
LENGTHS = [5, 2, 4, 3, 5, 1, 2]  # valid response tokens per row


def per_row_dicts() -> list[dict]:
    outs = adapter.compute_score(
        data_sources=["openai/gsm8k"] * len(ROWS),
        solution_strs=[response for _, response in ROWS],
        ground_truths=["72"] * len(ROWS),
        extra_infos=[{"uid": uid} for uid, _ in ROWS],
        rewardkit_config={"reward": REWARD},
    )
    assert isinstance(outs, list)
    return outs


def masks() -> tuple[torch.Tensor, torch.Tensor]:
    response_mask = torch.tensor([[1] * n + [0] * (R - n) for n in LENGTHS])  # [B, R]
    attention = torch.cat([torch.ones(len(LENGTHS), P, dtype=torch.long), response_mask], dim=1)
    return response_mask, attention  # [B, R], [B, P + R]


def verls_gdpo(outs: list[dict]) -> torch.Tensor:
    response_mask, attention = masks()
    non_tensor = {key: np.array([o[key] for o in outs], dtype=object) for key in KEYS}
    from verl.trainer.ppo.core_algos import compute_gdpo_outcome_advantage

    advantages, _ = compute_gdpo_outcome_advantage(
        token_level_rewards=torch.zeros(len(ROWS), R),
        response_mask=response_mask,
        index=np.array([uid for uid, _ in ROWS], dtype=object),
        config={"gdpo_reward_keys": KEYS, "gdpo_reward_weights": WEIGHTS},
        non_tensor_batch=non_tensor,
        batch={"prompts": torch.zeros(len(ROWS), P), "attention_mask": attention},
    )
    return advantages  # [B, R]


def test_rewardkits_components_are_what_verls_gdpo_reads() -> None:
    outs = per_row_dicts()
    assert [o["component/rule"] for o in outs] == [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    assert [o["component/format"] for o in outs] == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    advantages = verls_gdpo(outs)
    assert torch.isfinite(advantages).all()


def test_a_filled_rows_nan_component_spreads_over_verls_gdpo_batch() -> None:
    """Why the README keeps on_failure raise with verl's gdpo: a failed row's NaN."""
    outs = per_row_dicts()
    outs[0] = {**outs[0], "component/rule": float("nan")}  # as under on_failure fill
    assert torch.isnan(verls_gdpo(outs)).all()


def test_group_norm_verl_is_verls_per_component_grpo_then_its_whitening_is_gdpo() -> None:
    from rewardkit.loop import RewardLoop

    config = {"reward": {**REWARD, "aggregation": "normalize_then_sum", "group_norm": "verl"}}
    rows = [
        {
            "data_source": "openai/gsm8k",
            "response": response,
            "ground_truth": "72",
            "extra_info": {"uid": uid},
        }
        for uid, response in ROWS
    ]
    with RewardLoop(config) as loop:
        ours = [r.score for r in loop.score(rows)]
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage
    from verl.utils.torch_functional import masked_whiten

    response_mask, _ = masks()
    index = np.array([uid for uid, _ in ROWS], dtype=object)
    outs = per_row_dicts()
    expected = torch.zeros(len(ROWS))
    for key, weight in zip(KEYS, WEIGHTS, strict=True):
        scores = torch.zeros(len(ROWS), R)
        scores[:, 0] = torch.tensor([o[key] for o in outs])
        z, _ = compute_grpo_outcome_advantage(scores, torch.ones(len(ROWS), R), index)
        expected += weight * z[:, 0]
    assert ours == pytest.approx(expected.tolist(), abs=1e-6)
    assert ours[-1] == pytest.approx(1.5 / (1 + 1e-6))  # the group of one keeps its value
    # verl's last step over rewardkit's sums is verl's GDPO advantage
    whitened = masked_whiten(torch.tensor(ours).unsqueeze(-1) * response_mask, response_mask)
    assert torch.allclose(whitened * response_mask, verls_gdpo(outs), atol=1e-5)


def test_the_legacy_manager_groups_by_verls_uid_column(tokenizer) -> None:
    """Two groups with the same prompt text: verl's uid tells them apart, and so does
    rewardkit's manager (it passes the uid column on as extra_info.uid)."""
    from dataproto_rows import make_dataproto

    prompt = "what is 36 + 36 ?"
    rows = [("openai/gsm8k", prompt, r, "72") for r in ("so #### 72", "so #### 7", "#### 72", "72")]
    data = make_dataproto(tokenizer, rows)
    data.non_tensor_batch["uid"] = np.array(["a", "a", "b", "b"], dtype=object)
    config = {"reward": {"num_workers": 1, "aggregation": "normalize_then_sum"}}
    manager = adapter.RewardkitRewardManager(tokenizer, rewardkit_config=config)
    out = manager(data, return_dict=True)
    z = 0.5 / (2**-0.5 + 1e-4)
    assert out["reward_tensor"].sum(dim=-1).tolist() == pytest.approx([z, -z, 0.0, 0.0])
    # grouped by the prompt text alone, the last two rows would not score 0
    assert out["reward_extra_info"]["raw_score"] == [1.0, 0.0, 1.0, 1.0]
