"""guards: request bodies against the reward server: slow, unfinished, too large, too many rows.

Each test runs the attack, bounded in size and time, against a real server on 127.0.0.1
(the guards of ``rewardkit serve``, from ``uvicorn_config``) and checks that it is cut
off, that memory stays within a figure, and that real clients are still served.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psutil
import pytest

from _support.serving import wait_queued
from rewardkit.config import load_config
from rewardkit.errors import ConfigError
from rewardkit.http_guard import BODY_GRACE_S

MIB = 1 << 20

SLOW = """
import time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    time.sleep(float(solution_str.split()[1]))
    return 1.0
"""

# The same, announcing each call first: "sleep 3 FOLDER" leaves a file there as it starts
STARTED = """
import os, time, uuid

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    _, seconds, folder = solution_str.split()
    open(os.path.join(folder, uuid.uuid4().hex), "w").close()
    time.sleep(float(seconds))
    return 1.0
"""


def _address(base: str) -> tuple[str, int]:
    parts = urlsplit(base)
    assert parts.hostname and parts.port
    return parts.hostname, parts.port


def _post_head(length: int, path: str = "/v1/score") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _answer(sock: socket.socket, wait_s: float) -> bytes | None:
    """What the server sent on ``sock`` within ``wait_s`` (b"" if it closed), or None."""
    sock.settimeout(wait_s)
    try:
        return sock.recv(4096)
    except TimeoutError:
        return None
    except OSError:
        return b""


def _get(url: str, timeout: float = 5) -> int:
    return httpx.get(url, timeout=timeout, trust_env=False).status_code


def test_slow_bodies_are_cut_and_health_is_answered_meanwhile(start_server) -> None:
    # 12 bodies trickling one byte every 0.3 s into 8 connection slots: every slot holds a
    # request in progress, which nothing used to evict, and /health got 503.
    config = {"reward": {"num_workers": 1}, "server": {"max_connections": 8}}
    with start_server(config) as base:
        slow = []
        for _ in range(12):
            sock = socket.create_connection(_address(base), timeout=5)
            sock.sendall(_post_head(MIB) + b"{")
            slow.append(sock)
            time.sleep(0.02)
        answers: dict[int, bytes] = {}
        health: list[int] = []
        started = time.monotonic()
        try:
            while len(answers) < len(slow) and time.monotonic() - started < BODY_GRACE_S + 5:
                for i, sock in enumerate(slow):
                    if i in answers:
                        continue
                    with_answer = _answer(sock, 0.001)
                    if with_answer is not None:
                        answers[i] = with_answer
                        continue
                    try:
                        sock.sendall(b" ")
                    except OSError:
                        answers[i] = b""
                if len(health) < 10:
                    health.append(_get(f"{base}/health", timeout=2))
                time.sleep(0.3)
            elapsed = time.monotonic() - started
        finally:
            for sock in slow:
                sock.close()
        assert health and all(code == 200 for code in health), health
        assert len(answers) == len(slow), f"{len(slow) - len(answers)} slow bodies still held"
        assert elapsed < BODY_GRACE_S + 3, f"slow bodies held {elapsed:.1f}s"
        assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers.values()), answers
        assert _get(f"{base}/health") == 200


def test_a_body_past_the_body_timeout_is_cut_whatever_its_rate(start_server) -> None:
    config = {
        "reward": {"num_workers": 1},
        "server": {"body_timeout_s": 1.5, "body_min_bytes_per_s": 0},
    }
    with start_server(config) as base:
        sock = socket.create_connection(_address(base), timeout=5)
        started = time.monotonic()
        answer = None
        try:
            sock.sendall(_post_head(MIB) + b"{")
            while answer is None and time.monotonic() - started < 6:
                answer = _answer(sock, 0.2)
                if answer is None:
                    sock.sendall(b" " * 100)
        finally:
            sock.close()
        elapsed = time.monotonic() - started
        assert answer is not None and answer.startswith(b"HTTP/1.1 408 "), answer
        assert b"server.body_timeout_s" in answer
        assert elapsed < 3.0, f"cut after {elapsed:.1f}s"


def test_health_and_ready_are_answered_when_every_connection_is_busy(
    write_module, start_server, tmp_path: Path
) -> None:
    # Two connections, both running a 3 s row: a third used to get 503 at once, even for
    # /health. Probes are answered; a request to score is refused with Retry-After.
    config = {
        "reward": {
            "num_workers": 2,
            "custom_reward_function": {"path": write_module("started", STARTED)},
        },
        "server": {"max_connections": 2},
    }
    started_rows = tmp_path / "started"
    started_rows.mkdir()
    row = {"data_source": "x", "response": f"sleep 3 {started_rows}", "ground_truth": "1"}
    with start_server(config) as base:
        answers: list[int] = []

        def score() -> None:
            with httpx.Client(base_url=base, timeout=30, trust_env=False) as client:
                answers.append(client.post("/v1/score", json={"samples": [row]}).status_code)

        busy = [threading.Thread(target=score) for _ in range(2)]
        for thread in busy:
            thread.start()
        # both connections have their request running: their rows have started (a poll of
        # /metrics, no open path, would be refused once they are: a third connection)
        deadline = time.monotonic() + 30
        while len(list(started_rows.iterdir())) < 2:
            assert time.monotonic() < deadline, "the two rows never started"
            time.sleep(0.02)
        started = time.monotonic()
        assert _get(f"{base}/health") == 200
        assert _get(f"{base}/ready") == 200
        probes_s = time.monotonic() - started
        refused = httpx.post(f"{base}/v1/score", json={"samples": [row]}, trust_env=False)
        for thread in busy:
            thread.join(timeout=30)
    assert probes_s < 2.0, f"/health and /ready took {probes_s:.1f}s"  # not behind the 3 s rows
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert answers == [200, 200]


def _unfinished_bodies(base: str, count: int, size: int) -> tuple[list[socket.socket], list[bytes]]:
    """``count`` connections that declare ``size`` bytes and send all but the last MiB;
    those refused at the headers are answered and closed (their answers are returned)."""
    chunk = b" " * MIB
    held, refusals = [], []
    for _ in range(count):
        sock = socket.create_connection(_address(base), timeout=30)
        sock.sendall(_post_head(size))
        answer = _answer(sock, 0.3)
        if answer is not None:
            refusals.append(answer)
            sock.close()
            continue
        for _ in range(size // MIB - 1):
            sock.sendall(chunk)
        held.append(sock)
    return held, refusals


def test_unfinished_large_bodies_stay_within_the_budget_and_memory_comes_back(
    start_server,
) -> None:
    # 20 unfinished 60 MiB bodies took the server from 78 to 1,277 MiB, kept after the
    # connections closed; a second round took it to 1,632 MiB. The server runs in this
    # process, so this process's RSS is the server's (the client reuses one 1 MiB buffer).
    config = {"reward": {"num_workers": 1}, "server": {"max_body_bytes_in_flight": 128 * MIB}}
    me = psutil.Process()
    with start_server(config) as base:
        before = me.memory_info().rss
        for attack in range(2):
            held, refusals = _unfinished_bodies(base, 20, 60 * MIB)
            time.sleep(0.5)
            during = me.memory_info().rss - before
            assert _get(f"{base}/health") == 200
            for sock in held:
                sock.close()
            time.sleep(2.0)  # the server sees the closes, frees and trims
            after = me.memory_info().rss - before
            assert len(held) == 2, f"round {attack}: {len(held)} bodies of 60 MiB let in"
            assert len(refusals) == 18
            assert all(a.startswith(b"HTTP/1.1 503 ") for a in refusals)
            assert b"server.max_body_bytes_in_flight" in refusals[0]
            assert during < 300 * MIB, f"round {attack}: RSS grew {during / MIB:.0f} MiB"
            assert after < 32 * MIB, f"round {attack}: {after / MIB:.0f} MiB kept after close"


def test_a_request_over_max_queue_rows_gets_413_naming_the_limit(start_server) -> None:
    config = {"reward": {"num_workers": 1}, "server": {"max_queue": 4}}
    rows = [{"data_source": "openai/gsm8k", "response": "#### 1", "ground_truth": "1"}] * 5
    with start_server(config) as base, httpx.Client(base_url=base, trust_env=False) as client:
        too_many = client.post("/v1/score", json={"samples": rows}, timeout=30)
        openrlhf = client.post("/get_reward", json={"query": ["q"] * 5}, timeout=30)
        fits = client.post("/v1/score", json={"samples": rows[:4]}, timeout=30)
    for answer in (too_many, openrlhf):
        assert answer.status_code == 413, answer.text
        detail = answer.json()["detail"]
        assert "server.max_queue=4" in detail and "raise server.max_queue" in detail
    assert fits.status_code == 200
    assert [r["score"] for r in fits.json()["results"]] == [1.0] * 4


def test_a_body_budget_below_one_body_is_refused() -> None:
    with pytest.raises(ConfigError, match="max_body_bytes_in_flight"):
        load_config({"server": {"max_request_bytes": 2 * MIB, "max_body_bytes_in_flight": MIB}})


def test_a_full_queue_still_answers_429_with_retry_after(write_module, start_server) -> None:
    # 413 is for a request that could never fit; one that would fit later is told to retry.
    config = {
        "reward": {
            "num_workers": 1,
            "custom_reward_function": {"path": write_module("slow", SLOW)},
        },
        "server": {"max_queue": 2},
    }
    rows = [{"data_source": "x", "response": "sleep 2", "ground_truth": "1"}] * 2
    with start_server(config) as base:
        answers: list[int] = []

        def score() -> None:
            with httpx.Client(base_url=base, timeout=30, trust_env=False) as client:
                answers.append(client.post("/v1/score", json={"samples": rows}).status_code)

        busy = threading.Thread(target=score)
        busy.start()
        wait_queued(base, 2, within_s=30)  # its two rows fill the queue
        full = httpx.post(f"{base}/v1/score", json={"samples": rows[:1]}, trust_env=False)
        busy.join(timeout=30)
    assert full.status_code == 429 and full.headers["retry-after"] == "1"
    assert answers == [200]
