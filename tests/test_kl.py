"""KL estimators, controllers and the in-reward penalty, against hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch

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
