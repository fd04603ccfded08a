"""guards: the reward server (rewardkit.server) serving a real reward model.

The reward server with a real (tiny) reward model: batching across requests, readiness,
and the model's batch metrics.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import torch
import transformers

from _support.model_fakes import build_tokenizer, llama_config, save_model

CLIENTS = 16
RM_ONLY = "rm-only"  # no verifier knows it: the reward model alone scores the row


@pytest.fixture(scope="module")
def rm_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    tok = build_tokenizer("llama")
    torch.manual_seed(0)
    model = transformers.LlamaForSequenceClassification(
        llama_config(len(tok), num_labels=1, pad_token_id=tok.pad_token_id)
    )
    return save_model(tmp_path_factory.mktemp("served") / "rm", model, tok)


@pytest.fixture(scope="module")
def url(start_server, rm_path: str) -> str:
    config = {
        "reward": {
            "num_workers": 1,
            "default_data_source": RM_ONLY,
            "reward_model": {"enable": True, "model_path": rm_path, "device": "cpu"},
        },
        # A wide window, so that requests sent together surely meet in one round.
        "server": {"max_batch_wait_ms": 200},
    }
    with start_server(config) as base:
        yield base


def row(i: int) -> dict[str, str]:
    # Same length for every i: rows meeting in a round can share one forward.
    return {
        "data_source": RM_ONLY,
        "prompt": "how many apples are there",
        "response": f"i think {i % 10} apples",
    }


def model_events(metrics: str) -> dict[str, float]:
    pattern = r'^rewardkit_engine_events_total\{event="(\w+)",source="model_rm"\} (\S+)$'
    return {m[1]: float(m[2]) for m in re.finditer(pattern, metrics, re.M)}


async def post_together(url: str, rows: list[dict[str, str]]) -> list[dict]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        answers = await asyncio.gather(
            *(client.post("/v1/score", json={"samples": [r]}) for r in rows)
        )
    assert all(a.status_code == 200 for a in answers)
    return [a.json()["results"][0] for a in answers]


def test_single_sample_requests_sent_together_share_forward_passes(url: str) -> None:
    assert httpx.get(f"{url}/ready", timeout=10).json() == {"ready": True}
    alone = [httpx.post(f"{url}/v1/score", json={"samples": [row(i)]}, timeout=60) for i in (3, 4)]
    before = model_events(httpx.get(f"{url}/metrics", timeout=10).text)

    together = asyncio.run(post_together(url, [row(i) for i in range(CLIENTS)]))

    metrics = httpx.get(f"{url}/metrics", timeout=10).text
    after = model_events(metrics)
    assert all(r["status"] == "ok" for r in together)
    rows = after["rows"] - before["rows"]
    batches = after["batches"] - before["batches"]
    assert rows == CLIENTS
    assert batches < CLIENTS / 2  # requests were batched together, not one forward each
    assert after["tokens"] > before["tokens"] and after["forward_seconds"] > 0
    assert 'rewardkit_model_padding_tokens{source="model_rm"}' in metrics
    # A row's score is the same alone as in a batch with other requests' rows.
    for i, answer in zip((3, 4), alone, strict=True):
        assert together[i]["score"] == pytest.approx(answer.json()["results"][0]["score"], abs=1e-5)


def test_openrlhf_route_scores_with_the_model(url: str) -> None:
    body = {
        "query": ["how many apples are there i think 3 apples"],
        "prompts": ["how many apples are there"],
    }
    answer = httpx.post(f"{url}/get_reward", json=body, timeout=60)
    assert answer.status_code == 200
    (reward,) = answer.json()["rewards"]
    assert isinstance(reward, float)


def test_a_missing_model_stops_the_server_at_start_naming_the_key(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "rewardkit.cli", "serve", "--port", "0"]
    argv += [
        "reward.reward_model.enable=true",
        f"reward.reward_model.model_path={tmp_path / 'nope'}",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "reward_model.model_path" in done.stderr and "is not a directory" in done.stderr


def test_classify_answers_as_vllm_with_the_models_raw_logit(url: str) -> None:
    """POST /classify (vLLM's pooling route, a conversation) gives the raw logit that
    /v1/score reports as rm_raw: what makes rewardkit serve a managed fleet's replica."""
    prompt, response = "how many apples are there", "i think 3 apples"
    scored = httpx.post(f"{url}/v1/score", json={"samples": [row(3)]}, timeout=60).json()
    messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
    answer = httpx.post(f"{url}/classify", json={"messages": messages}, timeout=60)
    assert answer.status_code == 200
    probs = answer.json()["data"][0]["probs"]
    assert probs[-1] == pytest.approx(scored["results"][0]["extra"]["rm_raw"], abs=1e-6)
    wrong = httpx.post(f"{url}/classify", json={"messages": messages[:1]}, timeout=60)
    assert wrong.status_code == 422 and "assistant" in wrong.json()["detail"]
