"""guards: verl's rate_limited keys (reward.max_concurrent, max_rpm, max_tpm,
estimated_tokens_per_request, timeout) on an API judge, kept against a real server that
counts requests, and a judge's token use per component.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from _support.judge_server import COMPLETION_TOKENS, PROMPT_TOKENS, CountingJudge
from rewardkit.config import RATE_LIMITED_KEYS, load_config
from rewardkit.errors import ConfigError
from rewardkit.models import build_model_scorers
from rewardkit.models.base import ModelScore
from rewardkit.models.judge import _used_tokens
from rewardkit.scoring.engine import RewardEngine
from rewardkit.server.metrics import EngineCollector
from rewardkit.types import Sample

ROW = Sample("chat", prompt="what is two plus two", response="the answer is four")


def rate_limited(url: str, model: str = "judge-7", **keys: Any) -> dict[str, Any]:
    """A verl-style reward section: the rate_limited manager, its keys, one API judge."""
    judge = {"kind": "generative", "backend": "openai", "url": url, "model_name": model}
    return {
        "reward": {
            "reward_manager": {"name": "rate_limited"},
            **keys,
            "reward_model": {"enable": True, **judge, "http": {"max_retries": 0}},
        }
    }


async def score_all(config: dict[str, Any], rows: int) -> list[ModelScore | BaseException]:
    [scorer] = build_model_scorers(load_config(config).reward)
    await scorer.start()
    try:
        return await asyncio.gather(
            *(scorer.score(ROW) for _ in range(rows)), return_exceptions=True
        )
    finally:
        await scorer.close()


# ---------------------------------------------------------------------- the keys


def test_verls_keys_become_the_judges_http_options() -> None:
    cfg = load_config(
        rate_limited("http://127.0.0.1:9", max_concurrent=4, max_rpm=600, max_tpm=60000,
                     estimated_tokens_per_request=500, timeout=30)
    )  # fmt: skip
    http = cfg.reward.reward_model.http
    assert (http.max_concurrent, http.requests_per_minute, http.tokens_per_minute) == (
        4,
        600,
        60000,
    )
    assert (http.estimated_tokens_per_request, http.timeout_s) == (500, 30)
    assert set(RATE_LIMITED_KEYS) == {
        "max_concurrent", "max_rpm", "max_tpm", "estimated_tokens_per_request", "timeout"
    }  # fmt: skip


def test_verls_defaults_apply_where_neither_side_says() -> None:
    http = load_config(rate_limited("http://127.0.0.1:9")).reward.reward_model.http
    assert (http.max_concurrent, http.timeout_s) == (1, 300)  # verl: 1 in flight, 300 s
    assert http.requests_per_minute is None and http.tokens_per_minute is None
    assert http.estimated_tokens_per_request is None  # only counts under max_tpm
    tpm = load_config(rate_limited("http://127.0.0.1:9", max_tpm=1000)).reward.reward_model.http
    assert tpm.estimated_tokens_per_request == 2000  # verl's default estimate
    own = rate_limited("http://127.0.0.1:9")
    own["reward"]["reward_model"]["http"]["max_concurrent"] = 8  # the judge's own key stands
    assert load_config(own).reward.reward_model.http.max_concurrent == 8


def test_verl_style_overrides_reach_a_named_judge() -> None:
    cfg = load_config(
        None,
        [
            "reward.reward_manager.name=rate_limited",
            "+reward.max_rpm=120",  # verl's command lines add these keys with '+'
            "++reward.max_concurrent=3",
            "reward.reward_models.safety.kind=generative",
            "reward.reward_models.safety.backend=openai",
            "reward.reward_models.safety.url=http://127.0.0.1:9",
        ],
    )
    http = cfg.reward.reward_models["safety"].http
    assert (http.requests_per_minute, http.max_concurrent) == (120, 3)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"manager": "naive", "max_rpm": 5}, r"reward.max_rpm: read by verl's rate_limited manager only"),
        ({"max_rpm": 5, "http": {"requests_per_minute": 6}}, r"reward.max_rpm=5 .* reward.reward_model.http.requests_per_minute=6 disagree"),
        ({"max_rpm": 0}, r"reward.reward_model.http.requests_per_minute: Input should be greater than 0"),
        ({"manager_key": "max_rpm"}, r"reward.reward_manager.max_rpm: verl's rate_limited manager reads it from reward.max_rpm"),
        ({"timeout": "soon"}, r"reward.reward_model.http.timeout_s: Input should be a valid number"),
        ({"kind": "discriminative", "backend": "vllm"}, r"reward_manager.name: verl's 'rate_limited' manager throttles calls to an API"),
        ({"second": True}, r"2 API judges are enabled \(reward.reward_model, reward.reward_models.other\)"),
    ],
)  # fmt: skip
def test_misplaced_or_clashing_keys_are_refused_naming_them(
    change: dict[str, Any], message: str
) -> None:
    config = rate_limited("http://127.0.0.1:9")
    reward, judge = config["reward"], config["reward"]["reward_model"]
    if "manager" in change:
        reward["reward_manager"]["name"] = change["manager"]
    if "manager_key" in change:
        reward["reward_manager"][change["manager_key"]] = 5
    for key in ("max_rpm", "timeout"):
        if key in change:
            reward[key] = change[key]
    judge["http"].update(change.get("http", {}))
    judge.update({k: change[k] for k in ("kind", "backend") if k in change})
    if change.get("second"):
        reward["reward_models"] = {"other": {**judge}}
    with pytest.raises(ConfigError, match=message):
        load_config(config)


# ---------------------------------------------------------------------- kept on a real server


async def test_max_concurrent_is_kept(judge: tuple[str, CountingJudge]) -> None:
    url, server = judge
    server.reset(delay_s=0.2)
    outcomes = await score_all(rate_limited(url, max_concurrent=2), rows=6)
    assert all(isinstance(o, ModelScore) and o.score == pytest.approx(0.7) for o in outcomes)
    assert server.max_in_flight == 2
    assert len(server.arrivals) == 6


async def test_max_rpm_is_kept(judge: tuple[str, CountingJudge]) -> None:
    url, server = judge
    start = time.monotonic()
    outcomes = await score_all(rate_limited(url, max_concurrent=16, max_rpm=240), rows=6)
    assert all(isinstance(o, ModelScore) for o in outcomes)
    # 4 a second, bursts of 4 (as verl's bucket): the last 2 wait 0.25 s each. Measured from
    # the start, not from the first arrival (as the tpm test below): a loaded machine delays
    # the burst's first request more than the rest, which shortened the span measured
    arrivals = sorted(t - start for t in server.arrivals)
    assert arrivals[4] >= 0.2 and arrivals[5] >= 0.45
    assert sum(t < 0.2 for t in arrivals) <= 4


async def test_max_tpm_takes_the_estimate_per_request_and_counts_usage(
    judge: tuple[str, CountingJudge],
) -> None:
    url, server = judge
    config = rate_limited(url, max_concurrent=16, max_tpm=12000, estimated_tokens_per_request=50)
    start = time.monotonic()
    outcomes = await score_all(config, rows=6)  # 200 tokens a second: 4 requests a second
    # A burst of 4 (200 tokens), then one every 0.25 s. Measured from the start, not from
    # the first arrival: a loaded machine may delay the first request more than the rest.
    arrivals = sorted(t - start for t in server.arrivals)
    assert arrivals[4] >= 0.2 and arrivals[5] >= 0.45
    assert [o.tokens for o in outcomes] == [PROMPT_TOKENS + COMPLETION_TOKENS] * 6  # type: ignore[union-attr]


async def test_without_usage_the_estimate_is_the_count(judge: tuple[str, CountingJudge]) -> None:
    url, _ = judge
    [flat] = await score_all(rate_limited(url, "judge-no-usage", max_tpm=10**6,
                                          estimated_tokens_per_request=300), rows=1)  # fmt: skip
    assert isinstance(flat, ModelScore) and flat.tokens == 300
    [guessed] = await score_all(rate_limited(url, "judge-no-usage"), rows=1)
    assert isinstance(guessed, ModelScore)
    assert guessed.tokens is not None and guessed.tokens > 512  # prompt/4 + max_tokens


async def test_verls_timeout_bounds_each_call(judge: tuple[str, CountingJudge]) -> None:
    url, server = judge
    server.reset(delay_s=3.0)
    [outcome] = await score_all(rate_limited(url, timeout=0.4), rows=1)
    assert isinstance(outcome, Exception) and "no answer within 0.4s" in str(outcome)


async def test_token_use_is_in_extra_and_the_stats_per_component(
    judge: tuple[str, CountingJudge],
) -> None:
    url, _ = judge
    judge_section = {"kind": "generative", "backend": "openai", "url": url, "model_name": "judge-7"}
    config = load_config(
        {"reward": {"num_workers": 1, "reward_model": {"enable": True, **judge_section},
                    "reward_models": {"safety": judge_section}}}
    )  # fmt: skip
    engine = await RewardEngine.create(config)
    try:
        results = await engine.score_many([ROW.to_row()] * 3)
        [events, *_] = EngineCollector(lambda: engine).collect()
    finally:
        await engine.close()
    tokens = PROMPT_TOKENS + COMPLETION_TOKENS
    for result in results:
        assert result.status.value == "ok", result.error
        assert result.extra["judge/tokens"] == tokens  # the single section: component judge
        assert result.extra["rm/safety/tokens"] == tokens
    stats = {scorer.component: scorer.stats["tokens"] for scorer in engine.model_scorers}
    assert stats == {"judge": 3 * tokens, "rm/safety": 3 * tokens}
    exported = {  # rewardkit serve's /metrics: rewardkit_engine_events_total{source, event}
        s.labels["source"]: s.value for s in events.samples if s.labels["event"] == "tokens"
    }
    assert exported == {"model_judge": 3 * tokens, "model_rm/safety": 3 * tokens}


@pytest.mark.parametrize(
    ("usage", "counted"),
    [
        ({"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 99}, 35),
        ({"total_tokens": 9}, 9),  # only a total
        ({"prompt_tokens": -5, "completion_tokens": 5}, 77),  # nonsense: the estimate
        ({"prompt_tokens": True, "completion_tokens": 5}, 77),
        ({"prompt_tokens": 1.5, "completion_tokens": 5, "total_tokens": "6"}, 77),
        ("lots", 77),
        (None, 77),
    ],
)
def test_usage_is_read_only_where_it_holds_counts(usage: Any, counted: int) -> None:
    assert _used_tokens(usage, 77) == counted
