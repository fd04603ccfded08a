"""Red team 7f: the combination of rewards (weights, overlong, KL) against hostile configs
and rows. Every ``found`` row was a real problem; its docstring says what happened before.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

from _support.model_fakes import build_tokenizer
from rewardkit import ConfigError, RewardLoop, Status
from rewardkit.config import load_config
from rewardkit.kl import AdaptiveKLController, FixedKLController, apply_kl_penalty

# Found: each of these was accepted. A NaN or infinite weight made the combined score
# NaN, which Result refuses, so the whole batch crashed (ExceptionGroup); an infinite
# penalty_factor or a buffer longer than max_resp_len failed every row as an "internal
# error"; an infinite kl_coef or target_kl gave NaN token rewards or a beta that only falls.
REFUSED = [
    (["reward.rule_weight=nan"], "reward.rule_weight"),
    (["reward.rule_weight=inf"], "reward.rule_weight"),
    (["reward.rule_weight=-inf"], "reward.rule_weight"),
    (["reward.format_reward.weight=nan"], "reward.format_reward.weight"),
    (["reward.reward_model.weight=inf"], "reward.reward_model.weight"),
    (["reward.overlong_buffer.penalty_factor=inf"], "reward.overlong_buffer.penalty_factor"),
    (["algorithm.kl_ctrl.kl_coef=inf"], "algorithm.kl_ctrl.kl_coef"),
    (["algorithm.kl_ctrl.kl_coef=nan"], "algorithm.kl_ctrl.kl_coef"),  # clean: ge=0 refused it
    (["algorithm.kl_ctrl.target_kl=inf"], "algorithm.kl_ctrl.target_kl"),
    # Found: a think_tag that is no tag name failed every row as an "internal error".
    (["reward.format_reward.think_tag=a b"], "reward.format_reward.think_tag"),
    (["reward.format_reward.think_tag=<think>"], "reward.format_reward.think_tag"),
    (
        [
            "reward.overlong_buffer.enable=true",
            "reward.overlong_buffer.len=200",
            "reward.overlong_buffer.max_resp_len=100",
        ],
        "overlong_buffer.len (200) must not exceed overlong_buffer.max_resp_len (100)",
    ),
]


@pytest.mark.parametrize(("overrides", "named"), REFUSED)
def test_non_finite_weights_and_impossible_buffers_are_refused_at_load(
    overrides: list[str], named: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, overrides)
    assert named in str(caught.value)


def test_zero_and_negative_weights_are_honoured() -> None:
    """Clean: 0 and negative weights are a user's choice, and each is applied as given."""
    config = {
        "reward": {
            "num_workers": 1,
            "rule_weight": -2.0,
            "format_reward": {"enable": True, "weight": 0.0},
        }
    }
    row = {
        "data_source": "openai/gsm8k",
        "response": "<think>a</think> #### 4",
        "ground_truth": "4",
    }
    with RewardLoop(config) as loop:
        (result,) = loop.score([row])
    assert result.ok and result.components == {"rule": 1.0, "format": 1.0}
    assert result.score == -2.0


def test_a_combined_score_that_overflows_fails_only_its_row() -> None:
    """Found: finite weights whose sum overflows (1e308 + 1e308) made Result refuse the
    infinite score and crashed the whole batch; now that row is an ``error``."""
    config = {
        "reward": {
            "num_workers": 1,
            "rule_weight": 1e308,
            "format_reward": {"enable": True, "weight": 1e308},
        }
    }
    gsm8k = {"data_source": "openai/gsm8k", "ground_truth": "4"}
    rows = [
        {**gsm8k, "response": "<think>a</think> #### 4"},  # rule 1, format 1: overflows
        {**gsm8k, "response": "#### 4"},  # rule 1, format 0: 1e308, finite
    ]
    with RewardLoop(config) as loop:
        overflowed, fine = loop.score(rows)
    assert overflowed.status is Status.ERROR and "not finite" in overflowed.error
    assert overflowed.components == {"rule": 1.0, "format": 1.0}
    assert fine.ok and fine.score == 1e308


@pytest.mark.parametrize("length", [-1, 12.5, "12", 2**53 + 1, 1e300])
def test_a_bad_response_length_is_invalid_even_with_a_tokenizer(
    tmp_path: Path, length: Any
) -> None:
    """Found: with ``overlong_buffer.tokenizer`` set, a bad ``extra_info.response_length``
    (negative, fractional, text) was silently replaced by a token count of the response
    (a clean row); a data bug must show. 1e300 tokens also passed as a length."""
    build_tokenizer().save_pretrained(tmp_path)
    config = {
        "reward": {
            "num_workers": 1,
            "overlong_buffer": {
                "enable": True,
                "len": 4,
                "max_resp_len": 14,
                "tokenizer": str(tmp_path),
            },
        }
    }
    row = {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"}
    with RewardLoop(config) as loop:
        bad, counted = loop.score([{**row, "extra_info": {"response_length": length}}, row])
    assert bad.status is Status.INVALID and "response_length" in bad.error
    assert counted.ok and counted.components["overlong"] == 0.0  # no length: counted


def _kl_inputs(logprob: list[float], ref: list[float], mask: list[int]) -> tuple[Any, ...]:
    width = len(logprob)
    return (
        torch.zeros(1, width),
        torch.tensor([logprob]),
        torch.tensor([ref]),
        torch.tensor([mask]),
    )


def test_padding_log_probs_never_reach_the_reward_or_beta() -> None:
    """Found: padding positions are multiplied by the mask, and -inf - -inf is NaN, NaN * 0
    is NaN: the padded token's reward was NaN, the KL metric NaN, and an adaptive beta NaN
    for the rest of training. verl multiplies too; here masked positions are zeroed."""
    ctrl = AdaptiveKLController(init_kl_coef=0.1, target_kl=0.1, horizon=100)
    scores, logp, ref, mask = _kl_inputs(
        [0.0, -math.inf, math.nan], [-1.0, -math.inf, 0.0], [1, 0, 0]
    )
    rewards, metrics = apply_kl_penalty(scores, logp, ref, mask, ctrl, "kl")
    assert rewards.tolist() == [[pytest.approx(-0.1), 0.0, 0.0]]
    assert metrics["actor/reward_kl_penalty"] == pytest.approx(1.0, rel=1e-6)
    assert math.isfinite(ctrl.value) and ctrl.value > 0.1


@pytest.mark.parametrize(
    ("logprob", "ref", "kind"),
    [
        ([-math.inf], [-1.0], "kl"),  # was: reward +inf, a gift to the policy
        ([0.0], [-math.inf], "kl"),  # was: reward -inf
        ([math.nan], [-1.0], "abs"),  # was: reward NaN
        ([-math.inf], [0.0], "mse"),
    ],
)
def test_a_non_finite_kl_at_a_valid_token_is_an_error(
    logprob: list[float], ref: list[float], kind: str
) -> None:
    """Found: k1 with a policy log-prob of -inf gave that token a reward of +inf (and
    the metric -inf); now the call raises, naming where."""
    ctrl = AdaptiveKLController(init_kl_coef=0.1, target_kl=0.1, horizon=100)
    with pytest.raises(
        ValueError, match=r"KL is not finite at 1 valid token\(s\), first at \[0, 0\]"
    ):
        apply_kl_penalty(*_kl_inputs(logprob, ref, [1]), ctrl, kind)
    assert ctrl.value == 0.1  # the controller was not touched


def test_low_var_kl_stays_finite_where_k1_would_not() -> None:
    """Clean: k3 clamps as verl does, so -inf log-probs are a KL of 10, no error."""
    ctrl = FixedKLController(0.5)
    rewards, _ = apply_kl_penalty(*_kl_inputs([-math.inf], [-1.0], [1]), ctrl, "k3")
    assert rewards.tolist() == [[-5.0]]


def test_adaptive_beta_refuses_poison_and_ignores_empty_batches() -> None:
    """Found: ``update(nan, n)`` set beta to NaN for good and a negative ``n_steps`` could
    zero it; both now raise. Clean: an empty batch (n_steps 0, KL 0) leaves beta alone."""
    ctrl = AdaptiveKLController(init_kl_coef=0.1, target_kl=0.1, horizon=100)
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="current_kl must be finite"):
            ctrl.update(bad, 10)
    with pytest.raises(ValueError, match="n_steps must be >= 0"):
        ctrl.update(1.0, -500)
    empty = torch.zeros(0, 3)
    _, metrics = apply_kl_penalty(empty, empty, empty, empty, ctrl, "kl")
    assert metrics["actor/reward_kl_penalty"] == 0.0 and ctrl.value == 0.1


def test_an_adaptive_beta_never_turns_negative() -> None:
    """Found: verl's update multiplies beta by ``1 + error * n_steps / horizon``; with a low
    KL (error -0.2) and a batch over five horizons the factor is negative, and a negative
    beta pays the policy for drifting (64 rows, horizon 10: beta 0.1 -> -0.028); at
    exactly five horizons beta became 0 and never moved again."""
    ctrl = AdaptiveKLController(init_kl_coef=0.1, target_kl=0.1, horizon=10)
    for rows in (64, 50):  # 50: exactly five horizons, beta 0 for good
        with pytest.raises(ValueError, match=r"horizon \(10\) must exceed n_steps / 5"):
            ctrl.update(0.0, rows)
    assert ctrl.value == 0.1
    ctrl.update(0.0, 40)  # four horizons: x0.2, still positive
    assert ctrl.value == pytest.approx(0.02)


def test_an_adaptive_beta_must_start_above_zero() -> None:
    """Found: ``type: adaptive`` with ``kl_coef: 0`` was accepted; beta is multiplied, so
    it stays 0 and target_kl and horizon are ignored. Refused, naming the keys."""
    with pytest.raises(ConfigError, match=r"kl_ctrl\.type adaptive needs kl_coef > 0"):
        load_config({"algorithm": {"kl_ctrl": {"type": "adaptive", "kl_coef": 0}}})
    with pytest.raises(ValueError, match="init_kl_coef must be > 0"):
        AdaptiveKLController(0.0, 0.1, 10)
    assert load_config({"algorithm": {"kl_ctrl": {"kl_coef": 0}}}).algorithm.kl_ctrl.kl_coef == 0
