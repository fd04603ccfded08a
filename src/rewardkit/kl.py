"""KL in the reward: per-token estimators, coefficient controllers, and the penalty itself.

With ``algorithm.use_kl_in_reward`` the trainer subtracts ``beta * KL`` from every
valid token's reward (PPO à la Ziegler et al. 2019), where KL is estimated per token
from the policy's and the reference model's log-probabilities of the sampled token.
The estimators follow J. Schulman, "Approximating KL divergence" (2020), named as verl
names them so that a verl config carries over unchanged::

    controller = build_kl_controller(cfg.algorithm)
    token_rewards, metrics = apply_kl_penalty(
        token_scores, old_logprob, ref_logprob, response_mask, controller, cfg.algorithm.kl_penalty
    )

verl's straight-through variants (``k3+``) only matter for a KL *loss*'s gradient; in
the reward nothing is differentiated, so they are not accepted here.
"""

from __future__ import annotations

import math
from typing import Protocol

import torch

from rewardkit.config import AlgorithmConfig, KLControllerConfig

__all__ = [
    "KL_KINDS",
    "AdaptiveKLController",
    "FixedKLController",
    "KLController",
    "apply_kl_penalty",
    "build_kl_controller",
    "kl_penalty",
]

KL_KINDS: tuple[str, ...] = ("kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3")
"""Estimator names accepted by :func:`kl_penalty` (pairs are aliases: kl/k1, mse/k2, low_var_kl/k3)."""


def kl_penalty(logprob: torch.Tensor, ref_logprob: torch.Tensor, kind: str = "kl") -> torch.Tensor:
    """Per-token KL estimate of policy vs reference: ``[B, R], [B, R] -> [B, R]``.

    - ``kl`` / ``k1``: ``logprob - ref_logprob`` (unbiased, high variance, can be negative)
    - ``abs``: ``|logprob - ref_logprob|``
    - ``mse`` / ``k2``: ``0.5 * (logprob - ref_logprob) ** 2``
    - ``low_var_kl`` / ``k3``: with ``d = ref_logprob - logprob``, ``exp(d) - d - 1``,
      clamped to ``[-10, 10]`` as verl does (``d`` is first clamped to ``[-20, 20]``,
      also as verl does, so that a ``-inf`` log-prob gives 10 rather than NaN).
    """
    if logprob.shape != ref_logprob.shape:
        raise ValueError(
            f"logprob {list(logprob.shape)} and ref_logprob {list(ref_logprob.shape)} differ in shape"
        )
    if kind in ("kl", "k1"):
        return logprob - ref_logprob
    if kind == "abs":
        return (logprob - ref_logprob).abs()
    if kind in ("mse", "k2"):
        return 0.5 * (logprob - ref_logprob).square()
    if kind in ("low_var_kl", "k3"):
        log_ratio = torch.clamp(ref_logprob - logprob, min=-20, max=20)  # [B, R]
        kld = torch.exp(log_ratio) - log_ratio - 1  # [B, R], >= 0
        return torch.clamp(kld, min=-10, max=10)
    raise ValueError(f"unknown KL estimator {kind!r}; expected one of {', '.join(KL_KINDS)}")


class KLController(Protocol):
    """Holds the KL coefficient ``value`` (beta) and adapts it after each batch."""

    @property
    def value(self) -> float: ...

    def update(self, current_kl: float, n_steps: int) -> None: ...


class FixedKLController:
    """A constant coefficient: ``update`` does nothing."""

    __slots__ = ("_value",)

    def __init__(self, kl_coef: float) -> None:
        if kl_coef < 0:
            raise ValueError(f"kl_coef must be >= 0, got {kl_coef}")
        self._value = float(kl_coef)

    @property
    def value(self) -> float:
        return self._value

    def update(self, current_kl: float, n_steps: int) -> None:
        """No-op: the coefficient is fixed."""

    def __repr__(self) -> str:
        return f"FixedKLController(kl_coef={self._value})"


class AdaptiveKLController:
    """The proportional controller of Ziegler et al. (2019), as verl and TRL implement it.

    After a batch with mean KL ``current_kl``, the error ``clip(current_kl / target_kl - 1,
    -0.2, 0.2)`` moves the coefficient by ``value *= 1 + error * n_steps / horizon``:
    too much KL raises beta, too little lowers it, at most 20 % per horizon.
    """

    __slots__ = ("_value", "horizon", "target_kl")

    def __init__(self, init_kl_coef: float, target_kl: float, horizon: int) -> None:
        if not init_kl_coef > 0:  # beta only ever multiplies: from 0 it never moves
            raise ValueError(f"init_kl_coef must be > 0 for an adaptive beta, got {init_kl_coef}")
        if target_kl <= 0:
            raise ValueError(f"target_kl must be > 0, got {target_kl}")
        if horizon <= 0:
            raise ValueError(f"horizon must be > 0, got {horizon}")
        self._value = float(init_kl_coef)
        self.target_kl = float(target_kl)
        self.horizon = int(horizon)

    @property
    def value(self) -> float:
        return self._value

    def update(self, current_kl: float, n_steps: int) -> None:
        """Adapt the coefficient after ``n_steps`` samples whose mean KL was ``current_kl``.

        ValueError for a non-finite ``current_kl`` or a negative ``n_steps`` (either would
        set beta to NaN or 0 for the rest of training), and for a batch over five horizons
        with low KL, which verl's formula would turn into a beta <= 0. ``n_steps=0``,
        an empty batch, is a no-op.
        """
        if not math.isfinite(current_kl):
            raise ValueError(f"current_kl must be finite, got {current_kl}")
        if n_steps < 0:
            raise ValueError(f"n_steps must be >= 0, got {n_steps}")
        error = min(max(current_kl / self.target_kl - 1.0, -0.2), 0.2)
        factor = 1.0 + error * n_steps / self.horizon
        if factor <= 0:  # beta < 0 pays the policy for drifting; beta 0 never moves again
            raise ValueError(
                f"a batch of {n_steps} with KL {current_kl:.3g} would make beta <= 0: "
                f"algorithm.kl_ctrl.horizon ({self.horizon}) must exceed n_steps / 5"
            )
        self._value *= factor

    def __repr__(self) -> str:
        return (
            f"AdaptiveKLController(value={self._value}, target_kl={self.target_kl}, "
            f"horizon={self.horizon})"
        )


def build_kl_controller(cfg: AlgorithmConfig | KLControllerConfig) -> KLController:
    """The controller that ``algorithm.kl_ctrl`` describes (``type: fixed | adaptive``)."""
    ctrl = cfg.kl_ctrl if isinstance(cfg, AlgorithmConfig) else cfg
    if ctrl.type == "adaptive":
        return AdaptiveKLController(ctrl.kl_coef, ctrl.target_kl, ctrl.horizon)
    return FixedKLController(ctrl.kl_coef)


@torch.no_grad()
def apply_kl_penalty(
    token_scores: torch.Tensor,
    logprob: torch.Tensor,
    ref_logprob: torch.Tensor,
    response_mask: torch.Tensor,
    controller: KLController,
    kind: str = "kl",
) -> tuple[torch.Tensor, dict[str, float]]:
    """Subtract ``beta * KL`` from every valid token: ``-> (token_rewards [B, R], metrics)``.

    Then feed the batch's KL to the controller (``n_steps`` = batch size, as verl does).
    Positions outside ``response_mask`` never matter (even NaN there); a non-finite KL at
    a valid token is a ValueError. ``metrics`` has verl's names: ``actor/reward_kl_penalty`` (per-row masked mean KL,
    averaged over rows) and ``actor/reward_kl_penalty_coeff`` (the beta that was applied,
    i.e. before this update).
    """
    shapes = {
        "token_scores": token_scores.shape,
        "logprob": logprob.shape,
        "ref_logprob": ref_logprob.shape,
        "response_mask": response_mask.shape,
    }
    if len(set(shapes.values())) != 1 or token_scores.dim() != 2:
        described = ", ".join(f"{name} {list(shape)}" for name, shape in shapes.items())
        raise ValueError(
            f"apply_kl_penalty needs four [B, R] tensors of one shape, got {described}"
        )
    valid = response_mask != 0  # [B, R]
    mask = valid.to(logprob.dtype)  # [B, R]
    # where, not * mask: padding's log-probs may be -inf or NaN, and NaN * 0 is NaN.
    kld = torch.where(valid, kl_penalty(logprob, ref_logprob, kind), 0.0)  # [B, R]
    _check_finite(kld)
    beta = controller.value
    token_rewards = token_scores - beta * kld  # [B, R]
    # verl's masked mean: an empty row counts as KL 0 rather than NaN.
    row_kl = kld.sum(dim=-1) / (mask.sum(dim=-1) + 1e-8)  # [B]
    current_kl = row_kl.mean().item() if row_kl.numel() else 0.0
    controller.update(current_kl, n_steps=token_scores.shape[0])
    metrics = {"actor/reward_kl_penalty": current_kl, "actor/reward_kl_penalty_coeff": beta}
    return token_rewards, metrics


def _check_finite(kld: torch.Tensor) -> None:
    """A NaN or infinite KL at a valid token would give that token a NaN or +-inf reward
    (k1 with a -inf policy log-prob: +inf) and poison an adaptive beta; refuse it."""
    bad = ~torch.isfinite(kld)  # [B, R]
    if bool(bad.any()):
        row, col = (int(i) for i in bad.nonzero()[0])
        raise ValueError(
            f"KL is not finite at {int(bad.sum())} valid token(s), first at [{row}, {col}] "
            f"({kld[row, col].item()}): check logprob and ref_logprob there"
        )
