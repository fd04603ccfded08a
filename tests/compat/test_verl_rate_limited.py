"""guards: verl 0.9.1's rate_limited keys read as verl's own RateLimitedRewardManager reads them.

verl's manager is built from the same ``reward`` section that rewardkit loads; each limit
it sets up (concurrency, request and token buckets, per-request estimate, timeout) must
equal the judge's ``http`` option rewardkit sets from that section, defaults included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from omegaconf import DictConfig

from rewardkit.config import load_config

JUDGE = {
    "enable": True,
    "kind": "generative",
    "backend": "openai",
    "url": "http://127.0.0.1:9",
}


@pytest.fixture
def verl_manager() -> Iterator[Any]:
    """verl's class, its process-wide limiters reset before and after (they are class state)."""
    from verl.experimental.reward_loop.reward_manager.limited import RateLimitedRewardManager

    RateLimitedRewardManager._class_initialized = False
    yield RateLimitedRewardManager
    RateLimitedRewardManager._class_initialized = False


def _both(manager: Any, keys: dict[str, Any]) -> tuple[Any, Any]:
    """verl's manager and rewardkit's judge options from the same reward section."""
    verl = manager(DictConfig({"reward": dict(keys)}), tokenizer=object(), compute_score=None)
    ours = load_config(
        {"reward": {"reward_manager": {"name": "rate_limited"}, **keys, "reward_model": JUDGE}}
    )
    return verl, ours.reward.reward_model.http


@pytest.mark.parametrize(
    "keys",
    [
        {},  # verl's defaults
        {"max_tpm": 6000},  # the default estimate counts
        {"max_concurrent": 3, "max_rpm": 120, "max_tpm": 6000,
         "estimated_tokens_per_request": 50, "timeout": 7.5},
    ],
)  # fmt: skip
def test_each_limit_is_verls(verl_manager: Any, keys: dict[str, Any]) -> None:
    verl, http = _both(verl_manager, keys)
    assert verl._max_concurrent == http.max_concurrent
    assert verl.timeout == http.timeout_s
    rpm = verl._rpm_limiter
    assert (rpm.rate_limit * 60 if rpm else None) == pytest.approx(http.requests_per_minute)
    tpm = verl._tpm_limiter
    assert (tpm.rate_limit * 60 if tpm else None) == pytest.approx(http.tokens_per_minute)
    if tpm is not None:  # verl's estimate only counts under max_tpm
        assert verl._estimated_tokens_per_request == http.estimated_tokens_per_request
