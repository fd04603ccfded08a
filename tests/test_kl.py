"""guards: rewardkit.kl: KL estimators, controllers and the in-reward penalty, against
hand-computed values, and the non-finite inputs that must never reach a reward or beta."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from rewardkit import ConfigError
from rewardkit.config import load_config
from rewardkit.kl import (
    AdaptiveKLController,
    FixedKLController,
    apply_kl_penalty,
    build_kl_controller,
    kl_penalty,
)

LOGP = torch.tensor([[-1.0, -2.0, -0.5]])
REF = torch.tensor([[-1.5, -1.0, -0.5]])


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (("kl", "k1"), [0.5, -1.0, 0.0]),
        (("abs",), [0.5, 1.0, 0.0]),
        (("mse", "k2"), [0.125, 0.5, 0.0]),
        # d = ref - logp = [-0.5, 1, 0]; exp(d) - d - 1
        (("low_var_kl", "k3"), [math.exp(-0.5) - 0.5, math.e - 2.0, 0.0]),
    ],
)
def test_estimators(kinds, expected):
    for kind in kinds:
        assert kl_penalty(LOGP, REF, kind).tolist()[0] == pytest.approx(expected, abs=1e-6)


def test_low_var_kl_is_clamped_and_never_nan():
    logp = torch.tensor([[-30.0, 0.0, -math.inf, -1.0]])
    ref = torch.tensor([[0.0, -30.0, -1.0, -math.inf]])
    assert kl_penalty(logp, ref, "k3").tolist() == [[10.0, 10.0, 10.0, 10.0]]


def test_unknown_estimator_and_shape_mismatch():
    with pytest.raises(ValueError, match=r"unknown KL estimator 'k4'.*low_var_kl"):
        kl_penalty(LOGP, REF, "k4")
    with pytest.raises(ValueError, match="differ in shape"):
        kl_penalty(LOGP, REF[:, :2], "kl")


def test_fixed_controller_never_moves():
    ctrl = FixedKLController(0.2)
    ctrl.update(current_kl=5.0, n_steps=100)
    assert ctrl.value == 0.2
    with pytest.raises(ValueError, match="kl_coef"):
        FixedKLController(-1.0)


def test_adaptive_controller_hand_computed():
    ctrl = AdaptiveKLController(init_kl_coef=0.1, target_kl=0.05, horizon=100)
    ctrl.update(current_kl=0.055, n_steps=10)  # error 0.1 -> x(1 + 0.1 * 10 / 100)
    assert ctrl.value == pytest.approx(0.101)
    ctrl.update(current_kl=1.0, n_steps=10)  # error clipped to +0.2 -> x1.02
    assert ctrl.value == pytest.approx(0.101 * 1.02)
    ctrl.update(current_kl=0.0, n_steps=50)  # error clipped to -0.2 -> x0.9
    assert ctrl.value == pytest.approx(0.101 * 1.02 * 0.9)


def test_adaptive_controller_validates():
    with pytest.raises(ValueError, match="target_kl"):
        AdaptiveKLController(0.1, 0.0, 10)
    with pytest.raises(ValueError, match="horizon"):
        AdaptiveKLController(0.1, 0.1, 0)


def test_build_from_algorithm_config():
    fixed = build_kl_controller(load_config({"algorithm": {"kl_ctrl": {"kl_coef": 0.3}}}).algorithm)
    assert isinstance(fixed, FixedKLController) and fixed.value == 0.3
    cfg = load_config(
        {
            "algorithm": {
                "kl_ctrl": {"type": "adaptive", "kl_coef": 0.2, "target_kl": 2, "horizon": 5}
            }
        }
    )
    adaptive = build_kl_controller(cfg.algorithm)
    assert isinstance(adaptive, AdaptiveKLController)
    assert (adaptive.value, adaptive.target_kl, adaptive.horizon) == (0.2, 2.0, 5)
    assert isinstance(build_kl_controller(cfg.algorithm.kl_ctrl), AdaptiveKLController)


SCORES = torch.tensor([[0.0, 0.0, 1.0], [0.0, 2.0, 0.0]])
MASK = torch.tensor([[1, 1, 1], [1, 1, 0]])
LOGPS = torch.tensor([[-1.0, -2.0, -0.5], [-1.0, -1.0, -3.0]])
REFS = torch.tensor([[-1.5, -1.0, -0.5], [-2.0, -1.0, -1.0]])


def test_apply_kl_penalty_hand_computed():
    # k1 = [[0.5, -1, 0], [1, 0, (-2 masked)]]; beta = 0.1
    rewards, metrics = apply_kl_penalty(SCORES, LOGPS, REFS, MASK, FixedKLController(0.1), "kl")
    expected = torch.tensor([[-0.05, 0.1, 1.0], [-0.1, 2.0, 0.0]])
    assert torch.allclose(rewards, expected)
    # row means: -0.5 / 3 and 1 / 2; batch mean 1/6
    assert metrics["actor/reward_kl_penalty"] == pytest.approx(1 / 6)
    assert metrics["actor/reward_kl_penalty_coeff"] == 0.1


def test_apply_kl_penalty_updates_the_controller_after_reporting_beta():
    ctrl = AdaptiveKLController(init_kl_coef=0.1, target_kl=0.1, horizon=10)
    _, metrics = apply_kl_penalty(SCORES, LOGPS, REFS, MASK, ctrl, "k1")
    assert metrics["actor/reward_kl_penalty_coeff"] == 0.1
    # error = clip((1/6) / 0.1 - 1) = 0.2; n_steps = batch size 2 -> x(1 + 0.2 * 2 / 10)
    assert ctrl.value == pytest.approx(0.104)


def test_apply_kl_penalty_empty_row_counts_as_zero_kl():
    mask = torch.tensor([[1, 1, 1], [0, 0, 0]])
    rewards, metrics = apply_kl_penalty(SCORES, LOGPS, REFS, mask, FixedKLController(1.0), "abs")
    assert torch.equal(rewards[1], SCORES[1])
    assert metrics["actor/reward_kl_penalty"] == pytest.approx((0.5 + 1.0) / 3 / 2)


def test_apply_kl_penalty_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"response_mask \[2, 2\]"):
        apply_kl_penalty(SCORES, LOGPS, REFS, MASK[:, :2], FixedKLController(0.1))


def _kl_inputs(logprob: list[float], ref: list[float], mask: list[int]) -> tuple[Any, ...]:
    width = len(logprob)
    return (
        torch.zeros(1, width),
        torch.tensor([logprob]),
        torch.tensor([ref]),
        torch.tensor([mask]),
    )


def test_padding_log_probs_never_reach_the_reward_or_beta() -> None:
    """Masked positions are zeroed, not multiplied by the mask (as verl does): -inf - -inf
    is NaN and NaN * 0 is NaN, which would make the padded token's reward NaN, the KL
    metric NaN, and an adaptive beta NaN for the rest of training."""
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
        ([-math.inf], [-1.0], "kl"),  # else a reward of +inf, a gift to the policy
        ([0.0], [-math.inf], "kl"),  # else -inf
        ([math.nan], [-1.0], "abs"),  # else NaN
        ([-math.inf], [0.0], "mse"),
    ],
)
def test_a_non_finite_kl_at_a_valid_token_is_an_error(
    logprob: list[float], ref: list[float], kind: str
) -> None:
    """k1 with a policy log-prob of -inf would give that token a reward of +inf (and the
    metric -inf): the call raises, naming where."""
    ctrl = AdaptiveKLController(init_kl_coef=0.1, target_kl=0.1, horizon=100)
    with pytest.raises(
        ValueError, match=r"KL is not finite at 1 valid token\(s\), first at \[0, 0\]"
    ):
        apply_kl_penalty(*_kl_inputs(logprob, ref, [1]), ctrl, kind)
    assert ctrl.value == 0.1  # the controller was not touched


def test_low_var_kl_stays_finite_where_k1_would_not() -> None:
    """k3 clamps as verl does, so -inf log-probs are a KL of 10, no error."""
    ctrl = FixedKLController(0.5)
    rewards, _ = apply_kl_penalty(*_kl_inputs([-math.inf], [-1.0], [1]), ctrl, "k3")
    assert rewards.tolist() == [[-5.0]]


def test_adaptive_beta_refuses_poison_and_ignores_empty_batches() -> None:
    """``update(nan, n)`` would set beta to NaN for good and a negative ``n_steps`` could
    zero it: both raise. An empty batch (n_steps 0, KL 0) leaves beta alone."""
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
    """verl's update multiplies beta by ``1 + error * n_steps / horizon``; with a low KL
    (error -0.2) and a batch over five horizons the factor is negative, and a negative
    beta pays the policy for drifting (64 rows, horizon 10: beta 0.1 -> -0.028); at
    exactly five horizons beta would be 0 and never move again. Both raise."""
    ctrl = AdaptiveKLController(init_kl_coef=0.1, target_kl=0.1, horizon=10)
    for rows in (64, 50):  # 50: exactly five horizons, beta 0 for good
        with pytest.raises(ValueError, match=r"horizon \(10\) must exceed n_steps / 5"):
            ctrl.update(0.0, rows)
    assert ctrl.value == 0.1
    ctrl.update(0.0, 40)  # four horizons: x0.2, still positive
    assert ctrl.value == pytest.approx(0.02)


def test_an_adaptive_beta_must_start_above_zero() -> None:
    """``type: adaptive`` with ``kl_coef: 0`` is refused, naming the keys: beta is
    multiplied, so it would stay 0 and target_kl and horizon be ignored."""
    with pytest.raises(ConfigError, match=r"kl_ctrl\.type adaptive needs kl_coef > 0"):
        load_config({"algorithm": {"kl_ctrl": {"type": "adaptive", "kl_coef": 0}}})
    with pytest.raises(ValueError, match="init_kl_coef must be > 0"):
        AdaptiveKLController(0.0, 0.1, 10)
    assert load_config({"algorithm": {"kl_ctrl": {"kl_coef": 0}}}).algorithm.kl_ctrl.kl_coef == 0
