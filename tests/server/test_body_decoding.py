"""body decoding: a large JSON body is read as json.loads reads it, without holding the loop.

``rewardkit.server.body.loads`` walks the body's top two levels itself and hands the
event loop back between members. These tests hold it to ``json.loads`` (the same value or
the same error position, on valid, broken and mutated documents) and check that a real
server answers ``/health`` while it decodes a body that ``json.loads`` would take a large
fraction of a second on.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from typing import Any

import httpx
import pytest

from rewardkit.server.body import loads

DOCUMENTS = [
    '{"samples": [{"a": 1}, {"b": [1, 2]}, "x", 3.5, null, true, false]}',
    ' \n{"samples":[],"other":{}} \t',
    '{"a": {"b": {"c": [1, {"d": 2}]}}, "a": 5}',  # a repeated key: first place, last value
    '[1, [2, [3, [4]]], {"k": "\\u00e9\\ud800"}]',
    '{"n": NaN, "i": -Infinity, "big": 1e400}',
    '"just a string"',
    "17",
    '{"s": "a \\" quote, a ] bracket and a } brace"}',
]

BROKEN = [
    '{"samples": [1, 2,]}',
    '{"samples": [1 2]}',
    '{"samples": [1, 2]',
    '{"samples" [1]}',
    "{samples: [1]}",
    '{"samples": [1]} extra',
    '{"a": 1,}',
    '{"a": tru}',
    "",
    "   ",
    "[",
    '{"a": "unterminated}',
    '\ufeff{"a": 1}',
]


def _decoded(text: str, step_chars: int) -> tuple[str, Any]:
    try:
        return "value", json.dumps(asyncio.run(loads(text, step_chars=step_chars)))
    except json.JSONDecodeError as exc:
        return "error", exc.pos


def _expected(text: str) -> tuple[str, Any]:
    try:
        return "value", json.dumps(json.loads(text))
    except json.JSONDecodeError as exc:
        return "error", exc.pos


@pytest.mark.parametrize("text", DOCUMENTS + BROKEN)
@pytest.mark.parametrize("step_chars", [0, 1, 7, 1 << 20])
def test_a_document_decodes_as_json_loads_decodes_it(text: str, step_chars: int) -> None:
    assert _decoded(text, step_chars) == _expected(text)


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.3:
        return rng.choice([1, -2.5, "x\u00e9", "", None, True, False, '"q"', "\\", float("nan")])
    if kind < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice("abc"): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _mutated(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(chars))
        what = rng.random()
        if what < 0.4 and chars:
            del chars[min(at, len(chars) - 1)]
        else:
            chars.insert(at, rng.choice('{}[],:" \n0123456789.e-tfn\\'))
    return "".join(chars)


def test_random_and_mutated_documents_decode_as_json_loads_decodes_them() -> None:
    rng = random.Random(20261129)
    differ = []
    for _ in range(1500):
        text = json.dumps(_random_value(rng), indent=rng.choice([None, 1]))
        if rng.random() < 0.6:
            text = _mutated(rng, text)
        if _decoded(text, 1) != _expected(text):
            differ.append(text)
    assert not differ, differ[:5]


def test_bytes_are_decoded_as_json_loads_decodes_them() -> None:
    for body in ['{"a": "é"}'.encode(), '{"a": "é"}'.encode("utf-16"), b'\xef\xbb\xbf{"a": 1}']:
        assert asyncio.run(loads(body, step_chars=1)) == json.loads(body)


def test_the_loop_runs_between_the_members_of_a_large_body() -> None:
    body = json.dumps({"samples": [{"response": "x" * 1000, "n": i} for i in range(2000)]})

    async def decode_while_ticking() -> tuple[Any, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0)
        before = ticks
        value = await loads(body, step_chars=100_000)
        ticker.cancel()
        return value, ticks - before

    value, ticks = asyncio.run(decode_while_ticking())
    assert value == json.loads(body)
    assert ticks >= len(body) // 100_000 - 1  # one turn of the loop per step of text


def test_health_is_answered_while_a_large_body_is_decoded(start_server) -> None:
    # Each row carries 10,000 numbers in extra_info: json.loads spends a long time on the
    # body while making few objects the collector walks. One json.loads call used to hold
    # the loop that long; /health waited behind it.
    pad = [0.123456789] * 10_000
    rows = [
        {
            "data_source": "openai/gsm8k",
            "response": "#### 72",
            "ground_truth": "72",
            "extra_info": {"pad": pad},
        }
        for _ in range(150)
    ]
    body = json.dumps({"samples": rows}).encode()
    began = time.perf_counter()
    json.loads(body)
    decode_s = time.perf_counter() - began
    with start_server({"reward": {"num_workers": 1}}) as base:
        latencies: list[float] = []
        done = threading.Event()

        def poll() -> None:
            with httpx.Client(trust_env=False, timeout=30) as client:
                while not done.is_set():
                    asked = time.perf_counter()
                    assert client.get(f"{base}/health").status_code == 200
                    latencies.append(time.perf_counter() - asked)
                    time.sleep(0.01)

        poller = threading.Thread(target=poll)
        poller.start()
        try:
            answer = httpx.post(
                f"{base}/v1/score",
                content=body,
                timeout=120,
                trust_env=False,
                headers={"content-type": "application/json"},
            )
        finally:
            done.set()
            poller.join()
    assert answer.status_code == 200
    results = answer.json()["results"]
    assert [r["score"] for r in results] == [1.0] * len(rows)
    assert results[0]["extra_info"]["pad"] == pad  # echoed whole
    assert len(latencies) > 5
    assert max(latencies) < decode_s / 2, (max(latencies), decode_s)
