"""guards: several named reward models at once (reward.reward_models, rewardkit.models.named):
components, weights, extra keys, concurrency, failures, and verl's metrics per component.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml

from _support.judge_server import COMPLETION_TOKENS, PROMPT_TOKENS, CountingJudge
from _support.model_fakes import build_tokenizer
from rewardkit import RewardLoop
from rewardkit.config import check_runnable, load_config
from rewardkit.errors import ConfigError
from rewardkit.integrations.openrlhf import make_reward_func
from rewardkit.integrations.trl import reward_func as trl_reward_func
from rewardkit.integrations.verl import RewardkitRewardManager, compute_score
from rewardkit.models import build_model_scorers
from rewardkit.report import ReportBuilder
from rewardkit.report_html import render
from rewardkit.summary import Summary

ROWS = [
    {"data_source": "chat", "prompt": "what is two plus two", "response": "the answer is four"},
    {"data_source": "chat", "prompt": "how many apples", "response": "i think three apples"},
]
TOKENS = PROMPT_TOKENS + COMPLETION_TOKENS


def api_judge(url: str, model: str = "judge-7", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "generative",
        "backend": "openai",
        "url": url,
        "model_name": model,
        "http": {"timeout_s": 10, "max_retries": 0},
        **extra,
    }


def local_rm(path: str, **extra: Any) -> dict[str, Any]:
    return {"backend": "hf", "model_path": path, "device": "cpu", **extra}


def test_named_models_beside_the_single_one_each_write_their_component(
    llama_rm: str, judge: tuple[str, CountingJudge]
) -> None:
    url, _ = judge
    reward = {
        "num_workers": 1,
        "reward_model": {"enable": True, **local_rm(llama_rm)},  # component rm, as before
        "reward_models": {
            "helpful": local_rm(llama_rm, weight=0.5),  # the same model under a name
            "safety": api_judge(url, weight=2.0),
        },
    }
    with RewardLoop({"reward": reward}) as loop:
        results = loop.score(ROWS)
    for result in results:
        assert result.status.value == "ok", result.error
        parts = result.components
        assert set(parts) == {"rm", "rm/helpful", "rm/safety"}
        assert parts["rm/helpful"] == pytest.approx(parts["rm"], abs=1e-5)
        assert parts["rm/safety"] == pytest.approx(0.7)  # [[7]] of 0..10
        expected = parts["rm"] + 0.5 * parts["rm/helpful"] + 2.0 * parts["rm/safety"]
        assert result.score == pytest.approx(expected)
        extra = result.extra
        # the single section's keys as before; a named model's under its component
        assert extra["rm_raw"] == pytest.approx(extra["rm/helpful/rm_raw"], abs=1e-5)
        assert extra["rm/helpful/truncated"] is False
        assert extra["rm/safety/judge_raw"] == 7.0
        assert extra["rm/safety/tokens"] == TOKENS  # from the answer's usage
        assert "judge_raw" not in extra and "rm/helpful/tokens" not in extra


def test_a_rows_models_are_scored_concurrently(judge: tuple[str, CountingJudge]) -> None:
    url, server = judge
    server.reset(delay_s=0.3)
    names = {name: api_judge(url) for name in ("a", "b", "c")}
    with RewardLoop({"reward": {"num_workers": 1, "reward_models": names}}) as loop:
        [result] = loop.score(ROWS[:1])
    assert result.status.value == "ok", result.error
    assert set(result.components) == {"rm/a", "rm/b", "rm/c"}
    assert result.score == pytest.approx(3 * 0.7)
    assert server.max_in_flight == 3  # one row, its three judges at once


def test_one_model_failing_fails_its_row_typed_and_names_the_model(
    judge: tuple[str, CountingJudge],
) -> None:
    url, _ = judge
    names = {"helpful": api_judge(url), "safety": api_judge(url, "judge-refuses")}
    with RewardLoop({"reward": {"num_workers": 1, "reward_models": names}}) as loop:
        results = loop.score(ROWS)
    for result in results:
        assert result.status.value == "error"
        assert result.score is None
        assert result.error.startswith("rm/safety: ") and "HTTP 400" in result.error
        assert result.components == {"rm/helpful": pytest.approx(0.7)}  # kept, not dropped


def test_a_named_model_can_be_switched_off(judge: tuple[str, CountingJudge]) -> None:
    url, _ = judge
    names = {"helpful": api_judge(url), "safety": api_judge(url, "judge-refuses", enable=False)}
    cfg = load_config({"reward": {"reward_models": names}})
    assert [key for key, _ in cfg.reward.model_sections()] == ["reward_models.helpful"]
    off = load_config(None, [f"reward.reward_models.helpful.url={url}",
                             "reward.reward_models.helpful.enable=false"])  # fmt: skip
    assert off.reward.model_sections() == []


@pytest.mark.parametrize(
    ("reward", "message"),
    [
        ({"reward_models": {"a.b": {}}}, r"reward.reward_models: .*'a.b' is not a model name"),
        ({"reward_models": {"rm/x": {}}}, r"'rm/x' is not a model name"),
        ({"reward_models": {"x": {"backend": "tei"}}}, r"reward_models.x.backend 'tei' needs reward_models.x.url"),
        ({"reward_models": {"x": {"backend": "hf"}}}, r"reward_models.x.enable with backend 'hf' needs reward_models.x.model_path"),
        ({"reward_models": {"x": {"wieght": 2}}}, r"reward.reward_models.x.wieght: unknown key \(did you mean 'weight'\?\)"),
        ({"reward_models": {"x": {"weight": "nan"}}}, r"reward.reward_models.x.weight: "),
        ({"reward_models": ["x"]}, r"reward.reward_models: Input should be a valid dictionary"),
    ],
)  # fmt: skip
def test_bad_named_sections_are_refused_naming_the_key(
    reward: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config({"reward": reward})


def test_check_runnable_names_the_named_models_key(tmp_path: Path) -> None:
    missing = load_config({"reward": {"reward_models": {"x": local_rm(str(tmp_path / "nope"))}}})
    with pytest.raises(ConfigError, match=r"reward.reward_models.x.model_path: .*no such path"):
        check_runnable(missing)
    routed = {"x": api_judge("verl://router")}
    with pytest.raises(ConfigError, match=r"reward.reward_models.x.url: verl://router"):
        check_runnable(load_config({"reward": {"reward_models": routed}}))


# ---------------------------------------------------------------------- verl's metrics


@dataclass
class _Batch:
    """The parts of verl's DataProto that RewardkitRewardManager reads."""

    batch: dict[str, torch.Tensor]
    non_tensor_batch: dict[str, np.ndarray]
    meta_info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return self.batch["responses"].shape[0]


def _verl_batch(tok: Any, rows: list[dict[str, Any]]) -> _Batch:
    """Prompts left-padded, responses right-padded with one eos, as verl lays them out."""
    ids = [
        (
            tok(r["prompt"], add_special_tokens=False)["input_ids"],
            tok(r["response"], add_special_tokens=False)["input_ids"] + [tok.eos_token_id],
        )
        for r in rows
    ]
    pw, rw, pad = max(len(p) for p, _ in ids), max(len(r) for _, r in ids), tok.pad_token_id
    objects = functools.partial(np.array, dtype=object)
    return _Batch(
        batch={
            "prompts": torch.tensor([[pad] * (pw - len(p)) + p for p, _ in ids]),  # [B, P]
            "responses": torch.tensor([r + [pad] * (rw - len(r)) for _, r in ids]),  # [B, R]
            "attention_mask": torch.tensor(
                [
                    [0] * (pw - len(p)) + [1] * (len(p) + len(r)) + [0] * (rw - len(r))
                    for p, r in ids
                ]
            ),  # [B, P + R]
        },
        non_tensor_batch={
            "data_source": objects([r["data_source"] for r in rows]),
            "reward_model": objects([{"ground_truth": None} for _ in rows]),
            "extra_info": objects([{} for _ in rows]),
        },
    )


def test_verls_reward_extra_info_has_each_named_component_and_its_tokens(
    judge: tuple[str, CountingJudge],
) -> None:
    url, _ = judge
    names = {
        "helpful": api_judge(url, weight=1.0),
        "safety": api_judge(url, "judge-no-usage", weight=-1.0,
                            http={"max_retries": 0, "estimated_tokens_per_request": 300}),
    }  # fmt: skip
    tok = build_tokenizer("llama")
    manager = RewardkitRewardManager(
        tokenizer=tok, rewardkit_config={"reward": {"num_workers": 1, "reward_models": names}}
    )
    try:
        out = manager(_verl_batch(tok, ROWS), return_dict=True)
    finally:
        manager._scorer().close()  # type: ignore[attr-defined]
    info = out["reward_extra_info"]
    assert info["status"] == ["ok", "ok"]
    assert info["component/rm/helpful"] == pytest.approx([0.7, 0.7])
    assert info["component/rm/safety"] == pytest.approx([0.7, 0.7])
    assert info["score"] == pytest.approx([0.0, 0.0])  # 0.7 - 0.7
    assert info["rm/helpful/tokens"] == [TOKENS, TOKENS]  # usage
    assert info["rm/safety/tokens"] == [300, 300]  # no usage: the estimate it was limited by
    numeric = [k for k in info if k.startswith("component/") or k.endswith("/tokens")]
    assert len(numeric) == 4  # verl averages each of them into a metric
    assert all(isinstance(x, float | int) for k in numeric for x in info[k])


def test_verls_router_address_reaches_a_named_judge(judge: tuple[str, CountingJudge]) -> None:
    url, server = judge
    names = {"safety": api_judge("verl://router"), "helpful": api_judge(url)}
    config = {"reward": {"num_workers": 1, "reward_models": names}}
    address = url.removeprefix("http://")
    out = compute_score("chat", "four", None, None, rewardkit_config=config,
                        reward_router_address=address)  # fmt: skip
    assert out["status"] == "ok" and out["score"] == pytest.approx(1.4)
    assert len(server.arrivals) == 2  # the router (here the same server) and helpful's url


# ---------------------------------------------------------------------- summary and report


def _scored(i: int, status: str = "ok") -> dict[str, Any]:
    """A row as `rewardkit score` writes it, scored by two named models."""
    ok = status == "ok"
    return {
        "data_source": "chat",
        "prompt": "q",
        "response": f"answer {i}",
        "status": status,
        "error": None if ok else "rm/safety: HTTP 400",
        "score": 0.5 + 0.1 * i if ok else None,
        "components": {"rm/helpful": 0.5, "rm/safety": 0.1 * i} if ok else {"rm/helpful": 0.5},
        "extra": {"rm/safety/tokens": 100, "rm/helpful/tokens": 10} if ok else {},
        "elapsed_s": 0.01,
    }


def test_the_summary_shows_each_named_models_mean_and_tokens() -> None:
    summary = Summary()
    for i, row in enumerate([_scored(1), _scored(3), _scored(5, "error")]):
        summary.add_row(row, i)
    assert summary.model_means() == pytest.approx({"rm/helpful": 0.5, "rm/safety": 0.2})
    text = summary.text(1.0)
    assert "reward models (mean over ok rows): rm/helpful 0.5000, rm/safety 0.2000" in text
    assert "API tokens: rm/safety 200, rm/helpful 20" in text
    data = summary.to_json(1.0)
    assert data["api_tokens"] == {"rm/safety": 200, "rm/helpful": 20}
    plain = Summary()
    plain.add_row(
        {"data_source": "x", "status": "ok", "score": 1.0, "components": {"rule": 1.0}}, 0
    )
    assert "reward models" not in plain.text(1.0)  # a rules-only run reads as before


def test_the_report_plots_each_named_component() -> None:
    builder = ReportBuilder()
    for row in [_scored(1), _scored(2), _scored(3)]:
        builder.add(row)
    page = render(builder.data(), "test")
    for column in ("score", "rm/helpful", "rm/safety"):
        assert f"chat: {column}" in page


def snippet(name: str) -> str:
    """The README's fenced block right after ``<!-- test: name -->``."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    match = re.search(rf"<!-- test: {name} -->\n```\w+\n(.*?)```", readme, re.DOTALL)
    assert match, f"README.md has no block tagged {name}"
    return match.group(1)


def test_the_readmes_example_builds_the_two_components_it_names() -> None:
    cfg = load_config(yaml.safe_load(snippet("named-models")))
    scorers = build_model_scorers(cfg.reward)
    assert [(s.component, s.weight) for s in scorers] == [("rm/helpful", 1.0), ("rm/safety", 0.5)]
    assert cfg.reward.reward_models["safety"].http.requests_per_minute == 600


# ---------------------------------------------------------------------- TRL and OpenRLHF


def test_trl_and_openrlhf_log_each_named_models_score_and_tokens(
    judge: tuple[str, CountingJudge],
) -> None:
    url, _ = judge
    names = {"helpful": api_judge(url), "safety": api_judge(url, weight=-1.0)}
    config = {"reward": {"num_workers": 1, "default_data_source": "chat", "reward_models": names}}
    metrics: dict[str, float] = {}
    trl_fn = trl_reward_func(config)
    rewards = trl_fn(
        prompts=["q", "q"],
        completions=["four", "three"],
        data_source=["chat", "chat"],
        log_metric=metrics.__setitem__,
    )
    assert rewards == pytest.approx([0.0, 0.0])
    # each component once, under the name every component has; tokens per API judge
    assert metrics["rewardkit/component/rm/helpful/mean"] == pytest.approx(0.7)
    assert metrics["rewardkit/component/rm/safety/mean"] == pytest.approx(0.7)
    assert metrics["rewardkit/rm/safety/tokens"] == 2 * TOKENS
    openrlhf_fn = make_reward_func(config)
    out = openrlhf_fn(["q four", "q three"], ["q", "q"], [None, None])
    logs = out["extra_logs"]
    assert logs["component/rm/helpful"].tolist() == pytest.approx([0.7, 0.7])
    assert logs["rewardkit_rm/safety_tokens"].tolist() == [TOKENS, TOKENS]


def test_a_named_model_cannot_be_a_group_judge() -> None:
    """A group judge gathers a call's rows by group: only the single reward_model may."""
    named = {"kind": "generative", "backend": "openai", "url": "http://127.0.0.1:9"}
    named["judge"] = {"group": {"mode": "listwise"}}
    with pytest.raises(ConfigError, match=r"g\.judge\.group: a group judge is the single"):
        load_config({"reward": {"reward_models": {"g": named}}})
