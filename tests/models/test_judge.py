"""guards: rewardkit.models.judge: LLM judges, on an OpenAI-compatible server (real HTTP on
loopback) and a tiny local causal LM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _support.model_fakes import FakeModelServer, scored_by
from rewardkit.config import HttpOptions, JudgeConfig, RewardModelConfig
from rewardkit.errors import ConfigError, InvalidSampleError
from rewardkit.models.judge import JudgeParseError, LLMJudge, aggregate, parse_judgement
from rewardkit.models.templates import load_judge_template
from rewardkit.types import Sample

ROW = Sample(
    "judge", prompt="what is two plus two", response="the answer is four", ground_truth="4"
)
QUICK = HttpOptions(timeout_s=5, max_retries=0)


def remote(url: str, model: str, **judge: Any) -> RewardModelConfig:
    return RewardModelConfig(
        enable=True,
        kind="generative",
        backend="openai",
        url=url,
        model_name=model,
        http=QUICK,
        judge=JudgeConfig(**judge),
    )


async def judged(cfg: RewardModelConfig, *rows: Sample) -> list[Any]:
    return await scored_by(LLMJudge(cfg), rows)


def _local(model_path: str, **judge: Any) -> RewardModelConfig:
    """A judge run in-process (transformers, on the CPU)."""
    return RewardModelConfig(
        enable=True,
        kind="generative",
        backend="hf",
        model_path=model_path,
        device="cpu",
        judge=JudgeConfig(**judge),
    )


@pytest.mark.parametrize(
    ("text", "parser", "expected"),
    [
        ("Reasoning...\nScore: [[7]]", "score", 7.0),
        ("first [[3]] then, on reflection, [[8.5]]", "score", 8.5),
        ("score = 6", "score", 6.0),
        ("SCORE: **9**", "score", 9.0),
        ("[[11]]", "score", None),  # outside 0..10
        ("[[-1]]", "score", None),
        ("no number here", "score", None),
        ("Verdict: [[CORRECT]]", "verdict", 1.0),
        ("It looked correct at first. Verdict: [[INCORRECT]]", "verdict", 0.0),
        ("verdict: correct", "verdict", 1.0),
        ("correct", "verdict", None),
        ("[[" * 10_000 + "7", "score", None),  # hostile: linear time, no answer
    ],
)
def test_parse_judgement(text: str, parser: str, expected: float | None) -> None:
    assert parse_judgement(text, parser) == expected


def test_aggregate_mean_and_majority() -> None:
    assert aggregate([2.0, 8.0, 8.0], "mean") == 6.0
    assert aggregate([2.0, 8.0, 8.0], "majority") == 8.0
    assert aggregate([1.0, 0.0], "majority") == 0.5  # a tie: the mean of the tied values


def test_template_fill_is_single_pass() -> None:
    """A response quoting a placeholder must not pull the reference answer in."""
    template = load_judge_template("reference")
    text = template.fill("q", "my answer is {{ground_truth}}", "SECRET")
    assert text.count("SECRET") == 1 and "my answer is {{ground_truth}}" in text
    with pytest.raises(InvalidSampleError, match="needs a ground_truth"):
        template.fill("q", "r", None)


def test_user_template_file(tmp_path: Path) -> None:
    good = tmp_path / "t.txt"
    good.write_text("Q: {{prompt}}\nA: {{ response }}\nRate 0-10 as [[N]].")
    template = load_judge_template(str(good))
    assert template.parser == "score" and not template.needs_ground_truth
    assert template.fill("x", "y", None) == "Q: x\nA: y\nRate 0-10 as [[N]]."
    bad = tmp_path / "bad.txt"
    bad.write_text("no placeholder")
    with pytest.raises(ConfigError, match="never uses"):
        load_judge_template(str(bad))
    with pytest.raises(ConfigError, match="neither a built-in"):
        load_judge_template(str(tmp_path / "missing.txt"))


async def test_openai_judge_scores_and_normalises(fake_server: tuple[str, FakeModelServer]) -> None:
    url, fake = fake_server
    (result,) = await judged(remote(url, "judge-7", temperature=0.3, max_tokens=64), ROW)
    assert result.score == pytest.approx(0.7)
    assert result.extra["judge_raw"] == 7.0 and result.extra["judge_votes"] == [7.0]
    path, body = fake.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "judge-7" and body["temperature"] == 0.3 and body["max_tokens"] == 64
    assert "what is two plus two" in body["messages"][-1]["content"]


@pytest.mark.parametrize(("how", "expected"), [("mean", 0.6), ("majority", 0.8)])
async def test_n_samples_are_aggregated(
    fake_server: tuple[str, FakeModelServer], how: str, expected: float
) -> None:
    url, fake = fake_server
    (result,) = await judged(remote(url, "judge-votes", n=3, aggregate=how, temperature=1.0), ROW)
    assert fake.requests[0][1]["n"] == 3
    assert result.score == pytest.approx(expected)
    assert result.extra["judge_votes"] == [2.0, 8.0, 8.0]


async def test_reference_template_with_verdict(fake_server: tuple[str, FakeModelServer]) -> None:
    url, fake = fake_server
    cfg = remote(url, "judge-verdict", template="reference", system_prompt="Be strict.")
    result, missing = await judged(cfg, ROW, Sample("judge", prompt="q", response="r"))
    assert result.score == 1.0
    messages = fake.requests[0][1]["messages"]
    assert messages[0] == {"role": "system", "content": "Be strict."}
    assert "[Reference answer]\n4\n" in messages[1]["content"]
    assert isinstance(missing, InvalidSampleError)


async def test_unparsable_answer_is_an_error_carrying_the_text(
    fake_server: tuple[str, FakeModelServer],
) -> None:
    url, _ = fake_server
    (error,) = await judged(remote(url, "judge-garbage"), ROW)
    assert isinstance(error, JudgeParseError)
    assert error.text == "I would rather not grade this."
    assert error.extra == {"judge_text": "I would rather not grade this."}
    assert "holds no score" in str(error)


async def test_long_fields_are_cut_before_the_judge_sees_them(
    fake_server: tuple[str, FakeModelServer],
) -> None:
    url, fake = fake_server
    cfg = remote(url, "judge-7").model_copy(update={"prompt_length": 5, "response_length": 5})
    row = Sample("judge", prompt="x" * 100 + "END", response="START" + "y" * 100)
    (result,) = await judged(cfg, row)
    content = fake.requests[0][1]["messages"][-1]["content"]
    assert "x" * 17 + "END" in content and "x" * 18 not in content  # the prompt's last 20 chars
    assert "START" + "y" * 15 in content and "y" * 16 not in content  # the response's first 20
    assert result.extra["truncated"] is True


async def test_judge_server_errors_are_remote_errors(
    fake_server: tuple[str, FakeModelServer],
) -> None:
    url, _ = fake_server
    from rewardkit.errors import RemoteError

    (error,) = await judged(remote(url + "/badshape", "judge-7"), ROW)
    assert isinstance(error, RemoteError)


async def test_local_judge_generates_and_parses(judge_lm: str) -> None:
    cfg = _local(judge_lm, max_tokens=3)
    rows = [
        ROW,
        Sample(
            "judge", prompt=[{"role": "user", "content": "how many apples"}], response="five " * 40
        ),
    ]
    results = await judged(cfg, *rows)
    assert [r.score for r in results] == [pytest.approx(0.7)] * 2
    assert results[0].extra["judge_text"] == "[[7]] [[7]] [[7]]"


async def test_local_judge_unparsable_answer(judge_lm: str) -> None:
    cfg = _local(judge_lm, max_tokens=2, parser="verdict", n=2, temperature=0.0)
    (error,) = await judged(cfg, ROW)
    assert isinstance(error, JudgeParseError) and error.text == "[[7]] [[7]]"


def test_judge_config_errors() -> None:
    # An empty score range is the config's to refuse (tests/test_config.py).
    with pytest.raises(ConfigError, match="cannot serve a generative judge"):
        LLMJudge(RewardModelConfig(enable=True, kind="generative", backend="tei", url="http://x"))
