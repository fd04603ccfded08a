"""guards: the reward server (rewardkit.server.app) over real HTTP: protocol, auth, limits,
metrics, drain, disconnects, bodies and rows it cannot read or encode."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from _support.serving import (
    in_thread,
    one_row_behind,
    running_server,
    serving_process,
    wait_queued,
)
from _support.user_functions import ASYNC_HOSTILE, NAP_UNTIL_GO, SLOW, custom_row
from _support.wrong_math import expected_math_scores, math_rows
from rewardkit import RemoteError, Status
from rewardkit.client import RewardClient

GSM8K = [
    {"data_source": "openai/gsm8k", "response": "so #### 72", "ground_truth": "72", "id": "a"},
    {"data_source": "openai/gsm8k", "response": "#### 7", "ground_truth": "72", "id": "b"},
    {"data_source": "nope", "response": "x", "ground_truth": "1", "id": "c"},
]


@pytest.fixture(scope="module")
def url(start_server) -> str:
    config = {
        "reward": {"num_workers": 2, "default_data_source": "openai/gsm8k"},
        "server": {"api_key": "secret", "max_request_bytes": 200_000, "max_queue": 50},
    }
    with start_server(config) as base:
        yield base


@pytest.fixture
def http(url: str) -> httpx.Client:
    with httpx.Client(
        base_url=url, headers={"Authorization": "Bearer secret"}, timeout=30
    ) as client:
        yield client


def test_score_round_trip_keeps_order_and_types(http: httpx.Client) -> None:
    answer = http.post("/v1/score", json={"samples": GSM8K})
    assert answer.status_code == 200
    results = answer.json()["results"]
    assert [r["id"] for r in results] == ["a", "b", "c"]
    assert [r["status"] for r in results] == ["ok", "ok", "invalid"]
    assert [r["score"] for r in results] == [1.0, 0.0, None]


def test_openrlhf_get_reward_strips_the_prompt(http: httpx.Client) -> None:
    body = {
        "query": ["Q: 6*12? A: #### 72<|im_end|>", "Q: 1+1? A: #### 3"],
        "prompts": ["Q: 6*12? A:", "Q: 1+1? A:"],
        "labels": ["72", "2"],
    }
    answer = http.post("/get_reward", json=body).json()
    assert answer["rewards"] == [1.0, 0.0] and answer["scores"] == answer["rewards"]
    logs = answer["extra_logs"]
    assert logs["rewardkit_ok"] == [1.0, 1.0] and logs["rewardkit_timeout"] == [0.0, 0.0]
    assert logs["component/rule"] == [1.0, 0.0]  # each component, unweighted
    assert all(
        isinstance(v, float) for values in logs.values() for v in values
    )  # OpenRLHF tensorizes them


def test_auth_is_required_everywhere_but_health(url: str) -> None:
    with httpx.Client(base_url=url, timeout=10) as anonymous:
        assert anonymous.get("/health").status_code == 200
        for method, path in [("GET", "/ready"), ("GET", "/metrics"), ("POST", "/v1/score")]:
            assert anonymous.request(method, path, json={"samples": []}).status_code == 401
        wrong = anonymous.post(
            "/v1/score", json={"samples": []}, headers={"Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401


def test_malformed_bodies_get_422_naming_the_field(http: httpx.Client) -> None:
    missing = http.post("/v1/score", json={"rows": []})
    assert missing.status_code == 422 and "samples" in json.dumps(missing.json())
    wrong_type = http.post("/get_reward", json={"query": "not a list"})
    assert wrong_type.status_code == 422 and "query" in json.dumps(wrong_type.json())
    mismatched = http.post("/get_reward", json={"query": ["a", "b"], "labels": ["1"]})
    assert mismatched.status_code == 422 and "labels" in mismatched.json()["detail"]
    not_json = http.post(
        "/v1/score", content=b"{oops", headers={"Content-Type": "application/json"}
    )
    assert not_json.status_code == 422
    # where the body stops being JSON (not "1: JSON decode error", a field named 1)
    cut = http.post(
        "/v1/score", content=b'{"samples": [', headers={"Content-Type": "application/json"}
    )
    assert cut.json()["detail"] == ["body: not valid JSON at character 13: Expecting value"]
    # JSON sent as another type (requests.post(url, data=json.dumps(body))): say which header
    for headers in ({"Content-Type": "text/plain"}, {}):
        typed = http.post(
            "/v1/score", content=json.dumps({"samples": []}).encode(), headers=headers
        )
        shown = headers.get("Content-Type", "none")
        assert typed.status_code == 422 and typed.json()["detail"] == [
            f"body: send JSON with the header Content-Type: application/json (got {shown})"
        ]


def test_oversized_bodies_get_413_declared_or_chunked(http: httpx.Client) -> None:
    big = {
        "samples": [{"data_source": "openai/gsm8k", "response": "x" * 300_000, "ground_truth": "1"}]
    }
    assert http.post("/v1/score", json=big).status_code == 413

    def chunks():
        for _ in range(30):
            yield b"x" * 10_000

    assert http.post("/v1/score", content=chunks()).status_code == 413
    assert http.post("/v1/score", json={"samples": GSM8K[:1]}).status_code == 200  # still serving


def test_more_rows_than_the_queue_holds_answers_413(http: httpx.Client) -> None:
    rows = [GSM8K[0]] * 51
    answer = http.post("/v1/score", json={"samples": rows})
    assert answer.status_code == 413 and "server.max_queue=50" in answer.json()["detail"]


def test_ready_and_metrics(http: httpx.Client) -> None:
    assert http.get("/ready").json() == {"ready": True}
    http.post("/v1/score", json={"samples": GSM8K})
    text = http.get("/metrics").text
    assert 'rewardkit_rows_total{data_source="openai/gsm8k",status="ok"}' in text
    assert 'rewardkit_requests_total{code="200",route="/v1/score"}' in text
    assert "rewardkit_request_seconds_bucket" in text and "rewardkit_queue_rows" in text
    assert 'rewardkit_engine_events_total{event="rows",source="engine"}' in text
    assert 'rewardkit_engine_events_total{event="timeouts",source="pool"}' in text


def test_python_client_round_trip(url: str) -> None:
    client = RewardClient(url, api_key="secret")
    assert client.ready()
    results = client.score(GSM8K)
    assert [r.status for r in results] == [Status.OK, Status.OK, Status.INVALID]
    assert results[0].score == 1.0 and results[0].row["id"] == "a"
    with pytest.raises(RemoteError):
        RewardClient(url).score(GSM8K)  # no key: 401


def test_a_row_json_cannot_carry_costs_the_client_only_that_row(url: str) -> None:
    """NaN and a lone surrogate are sent as the server reads them (httpx's strict encoding
    refused them, failing the whole call); a value JSON has no form for makes its row
    invalid here, saying so, and the others are still scored."""
    client = RewardClient(url, api_key="secret")
    rows = [
        dict(GSM8K[0]),
        {**GSM8K[0], "id": "nan", "extra_info": {"difficulty": float("nan")}},
        {**GSM8K[0], "id": "surrogate", "extra_info": {"note": "\ud800"}},
        {**GSM8K[0], "id": "set", "extra_info": {"tags": {"a"}}},
        dict(GSM8K[1]),
    ]
    results = client.score(rows)
    assert [r.index for r in results] == [0, 1, 2, 3, 4]
    assert [r.status for r in results] == [Status.OK] * 3 + [Status.INVALID, Status.OK]
    assert [r.score for r in results] == [1.0, 1.0, 1.0, None, 0.0]
    assert "cannot be sent as JSON" in (results[3].error or "") and "set" in results[3].error
    assert [r.row.get("id") for r in results] == ["a", "nan", "surrogate", None, "b"]
    only_bad = client.score([rows[3]])
    assert [r.status for r in only_bad] == [Status.INVALID]  # nothing sent at all


def test_a_client_that_disconnects_mid_request_costs_nothing(write_module, start_server) -> None:
    config = {
        "reward": {"num_workers": 1, "custom_reward_function": {"path": write_module("slow", SLOW)}}
    }
    with start_server(config) as base:
        host, port = urlsplit(base).hostname, urlsplit(base).port
        body = json.dumps(
            {"samples": [{"data_source": "x", "response": "sleep 1", "ground_truth": "1"}]}
        )
        with socket.create_connection((host, port), timeout=5) as raw:
            raw.sendall(
                f"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n{body}".encode()
            )
            wait_queued(base, 1)  # the request is being scored when the client goes
        answer = httpx.post(
            f"{base}/v1/score",
            json={"samples": [{"data_source": "x", "response": "1", "ground_truth": "1"}]},
            timeout=30,
        )
        assert answer.status_code == 200 and answer.json()["results"][0]["score"] == 1.0


def test_sigterm_drains_in_flight_requests_then_exits_zero(tmp_path: Path, write_module) -> None:
    path = write_module("slow", SLOW)
    overrides = ("reward.num_workers=1", f"reward.custom_reward_function.path={path}")
    piped = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    with serving_process(*overrides, **piped) as (server, base):
        body = {"samples": [{"data_source": "x", "response": "sleep 1.5", "ground_truth": "1"}]}
        request, answers = in_thread(lambda: httpx.post(f"{base}/v1/score", json=body, timeout=30))
        wait_queued(base, 1)  # in flight: SIGTERM must let it finish
        os.kill(server.pid, signal.SIGTERM)
        request.join(timeout=30)
        assert server.wait(timeout=30) == 0
        assert answers and answers[0].status_code == 200
        assert answers[0].json()["results"][0]["score"] == 0.0
        output = server.stdout.read()
        assert "loopback only" in output


GATED = """
import os, time

# Importing this module waits (bounded) for a file: the server's start is held up here.
deadline = time.monotonic() + 30
while not os.path.exists({flag!r}) and time.monotonic() < deadline:
    time.sleep(0.02)


def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    return 1.0
"""


def test_health_answers_while_the_engine_starts_and_ready_waits_for_it(
    tmp_path: Path, write_module, start_server
) -> None:
    flag = tmp_path / "loaded"
    path = write_module("gated", GATED.format(flag=str(flag)))
    config = {"reward": {"num_workers": 1, "custom_reward_function": {"path": path}}}
    row = {"data_source": "x", "response": "1", "ground_truth": "1"}
    with start_server(config, wait_ready=False) as base:
        assert httpx.get(f"{base}/health", timeout=10).status_code == 200
        ready = httpx.get(f"{base}/ready", timeout=10)
        assert ready.status_code == 503 and ready.json() == {"ready": False}
        early = httpx.post(f"{base}/v1/score", json={"samples": [row]}, timeout=10)
        assert early.status_code == 503 and early.headers["Retry-After"] == "1"
        flag.touch()
        deadline = time.monotonic() + 60
        while httpx.get(f"{base}/ready", timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "the engine never became ready"
            time.sleep(0.05)
        answer = httpx.post(f"{base}/v1/score", json={"samples": [row]}, timeout=30)
        assert answer.json()["results"][0]["score"] == 1.0


def test_an_engine_that_cannot_start_says_why_on_ready(tmp_path: Path, start_server) -> None:
    missing = str(tmp_path / "missing.py")
    config = {"reward": {"num_workers": 1, "custom_reward_function": {"path": missing}}}
    with start_server(config, wait_ready=False) as base:
        deadline = time.monotonic() + 30
        while "error" not in (body := httpx.get(f"{base}/ready", timeout=10).json()):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert body["ready"] is False and "missing.py" in body["error"]
        assert httpx.get(f"{base}/health", timeout=10).status_code == 200


def test_each_request_logs_one_logfmt_line_at_debug(
    http: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("DEBUG", logger="rewardkit.server"):
        http.post("/v1/score", json={"samples": GSM8K[:1]})
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("request ")]
    assert any(
        line.startswith("request method=POST route=/v1/score status=200 ms=") for line in lines
    )


def test_a_request_does_not_wait_for_an_unrelated_slow_one(
    write_module, start_server, tmp_path: Path
) -> None:
    path = write_module("nap_until_go", NAP_UNTIL_GO)
    config = {"reward": {"num_workers": 2, "custom_reward_function": {"path": path}}}
    go = tmp_path / "go"  # the slow row naps 3 s, or until the fast one is answered
    slow_row = {"data_source": "x", "response": f"nap 3 {go}", "ground_truth": "1"}
    with start_server(config) as base:
        # wait until the slow row is accepted (and going to a worker)
        fast_s, _, answers = one_row_behind(base, [slow_row], go, lambda: wait_queued(base, 1))
    assert fast_s < 2.0, f"the fast request waited {fast_s:.1f}s behind the slow one"
    assert answers and answers[0].json()["results"][0]["score"] == 0.0


@pytest.mark.parametrize("fast_paths", [True, False])
def test_wrong_math_answers_score_zero_through_the_server(fast_paths: bool) -> None:
    """And with fast_paths off, /metrics shows no row decided inline: all went to a worker."""
    config = {"reward": {"num_workers": 1, "verifiers": {"fast_paths": fast_paths}}}
    rows = math_rows()
    with running_server(config) as base:
        answer = httpx.post(f"{base}/v1/score", json={"samples": rows}, timeout=120)
        metrics = httpx.get(f"{base}/metrics", timeout=30).text
    assert answer.status_code == 200, answer.text
    results = answer.json()["results"]
    assert [r["status"] for r in results] == ["ok"] * len(rows)
    assert [r["score"] for r in results] == expected_math_scores()
    quick = _engine_event(metrics, "quick")
    assert quick == 0.0 if not fast_paths else quick > 0


def _engine_event(metrics: str, event: str) -> float:
    label = f'rewardkit_engine_events_total{{event="{event}",source="engine"}}'
    for line in metrics.splitlines():
        if line.startswith(label):
            return float(line.split()[-1])
    raise AssertionError(f"{label} not in /metrics")


@pytest.mark.parametrize("depth", [400, 900])  # past pydantic's encoder; past json's too
def test_a_row_too_deep_to_encode_costs_only_itself_on_the_server(depth: int) -> None:
    """A row whose ground truth (or any echoed field) nests a few hundred levels deep is
    parsed and scored, but cannot be encoded: the field is replaced by a note and the
    rest of the answer is sent (not a 500 for the whole request)."""
    deep: Any = 4
    for _ in range(depth):
        deep = [deep]
    rows = [
        {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"},
        {"data_source": "lighteval/MATH", "response": "\\boxed{4}", "ground_truth": deep},
        {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4", "meta": deep},
        {"data_source": "openai/gsm8k", "response": "#### 5", "ground_truth": "4"},
    ]
    body = json.dumps({"samples": rows}).encode()
    config = {"reward": {"num_workers": 1, "timeout_s": 10}}
    with running_server(config) as base, httpx.Client(base_url=base, timeout=60) as client:
        answer = client.post(
            "/v1/score", content=body, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 200, answer.text[:300]
        results = answer.json()["results"]
        assert [r["score"] for r in results] == [1.0, None, 1.0, 0.0]
        assert results[1]["status"] in ("invalid", "error") and results[1]["error"]
        note = "<not encodable as JSON: RecursionError>"
        assert results[1]["ground_truth"] in (deep, note)  # as sent, where it can be
        assert results[2]["status"] == "ok" and results[2]["meta"] in (deep, note)
        again = client.post("/v1/score", json={"samples": rows[:1]})
        assert again.status_code == 200 and again.json()["results"][0]["score"] == 1.0


def test_a_body_python_cannot_read_is_a_422_with_the_reason() -> None:
    """A body holding an integer of 5,000 digits (valid JSON, over Python's 4,300-digit
    limit) gets 422 with the reason, like any other malformed body (not FastAPI's 400
    "There was an error parsing the body"); the server answers the next request."""
    huge = '{"samples": [{"data_source": "gsm8k", "response": "1", "ground_truth": '
    body = (huge + "7" * 5000 + "}]}").encode()
    config = {"reward": {"num_workers": 1, "timeout_s": 10}}
    with running_server(config) as base, httpx.Client(base_url=base, timeout=60) as client:
        answer = client.post(
            "/v1/score", content=body, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 422, answer.text[:300]
        assert "not readable JSON" in answer.json()["detail"][0]
        assert "4300 digits" in answer.json()["detail"][0]
        assert client.get("/no/such/route").status_code == 404  # other HTTP errors unchanged
        row = {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"}
        again = client.post("/v1/score", json={"samples": [row]})
        assert again.status_code == 200 and again.json()["results"][0]["score"] == 1.0


@pytest.mark.slow
def test_the_server_answers_and_exits_on_sigterm_despite_a_stubborn_coroutine(
    write_module,
) -> None:
    """``asyncio.run`` waits for every task when the server stops: a scorer task that
    swallows cancellation kept ``rewardkit serve`` from exiting on SIGTERM."""
    path = write_module("async_hostile", ASYNC_HOSTILE)
    overrides = ("reward.num_workers=1", "reward.async_timeout_s=1")
    overrides += (f"reward.custom_reward_function.path={path}",)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with serving_process(*overrides, **quiet) as (server, base):
        rows = [custom_row("42"), custom_row("stubborn"), custom_row("41")]
        answer = httpx.post(f"{base}/v1/score", json={"samples": rows}, timeout=60)
        results = answer.json()["results"]
        assert [r["status"] for r in results] == ["ok", "timeout", "ok"]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0


def test_trajectories_score_and_echo_and_a_bad_one_costs_its_row(http: httpx.Client) -> None:
    call = {"type": "function", "function": {"name": "f", "arguments": '{"x": 5}'}}
    trajectory = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": "25"},
        {"role": "assistant", "content": "#### 25"},
    ]
    samples = [
        {
            "data_source": "tool_call",
            "response": trajectory[0],
            "ground_truth": [{"name": "f", "arguments": {"x": 5}}],
        },
        {"data_source": "openai/gsm8k", "response": trajectory, "ground_truth": "25"},
        {
            "data_source": "openai/gsm8k",
            "response": [{"role": "assistant"}, "x"],
            "ground_truth": "1",
        },
    ]
    answer = http.post("/v1/score", json={"samples": samples})
    assert answer.status_code == 200
    results = answer.json()["results"]
    assert [(r["status"], r["score"]) for r in results] == [
        ("ok", 1.0),
        ("ok", 1.0),
        ("invalid", None),
    ]
    assert results[0]["response"] == trajectory[0] and results[1]["response"] == trajectory
    assert (
        results[2]["error"] == "field 'response' message 1 must be a chat message object (got str)"
    )
    # the body limit holds for a trajectory as a whole: many small messages add up
    many = [{"role": "tool", "content": "x" * 1000}] * 300
    big = {"samples": [{"data_source": "openai/gsm8k", "response": many, "ground_truth": "1"}]}
    assert http.post("/v1/score", json=big).status_code == 413
