"""guards: rewardkit.balancer: BalancedHttpClient against real HTTP servers, one per process
(killed for real).
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewardkit.balancer import BalancedHttpClient, make_http_client
from rewardkit.config import HealthCheckConfig, HttpOptions, load_config
from rewardkit.errors import ConfigError, RemoteError
from rewardkit.http import HttpClient, HttpStatusError

SERVER = r"""
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

name, port, delay, mode = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as model servers do

    def log_message(self, *args):
        pass

    def answer(self, code, payload):
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer(200 if self.path == "/health" else 404, {})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/invalid":
            return self.answer(422, {"detail": "bad input"})
        if mode == "busy":
            return self.answer(503, {"detail": "overloaded"})
        time.sleep(delay)
        self.answer(200, {"replica": name, "echo": body.get("x")})


ThreadingHTTPServer.allow_reuse_address = True
server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
"""

FAST = HttpOptions(
    timeout_s=5, connect_timeout_s=1, max_retries=3, backoff_base_s=0.05, backoff_max_s=0.2
)
QUICK_CHECKS = HealthCheckConfig(interval_s=0.2, timeout_s=0.5)


class Replicas:
    """Model-server stand-ins, each its own process, that a test can SIGKILL and restart."""

    def __init__(self, script: Path) -> None:
        self.script = script
        self.procs: dict[str, subprocess.Popen[str]] = {}
        self.ports: dict[str, int] = {}

    def start(self, name: str, *, delay: float = 0.0, mode: str = "ok") -> str:
        port = self.ports.get(name, 0)  # a restart takes the same port again
        proc = subprocess.Popen(
            [sys.executable, str(self.script), name, str(port), str(delay), mode],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        self.ports[name] = int(proc.stdout.readline())
        self.procs[name] = proc
        return self.url(name)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    def kill(self, name: str) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=5)

    def stop_all(self) -> None:
        for name in list(self.procs):
            self.kill(name)


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[Replicas]:
    script = tmp_path / "replica.py"
    script.write_text(SERVER)
    servers = Replicas(script)
    yield servers
    servers.stop_all()


async def _post_many(client: BalancedHttpClient, count: int, *, concurrency: int) -> list[dict]:
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> dict:
        async with gate:
            return await client.post_json("/score", {"x": i})

    return list(await asyncio.gather(*(one(i) for i in range(count))))


async def test_requests_go_to_the_least_loaded_replica(replicas: Replicas) -> None:
    urls = [
        replicas.start("slow", delay=0.3),
        replicas.start("a", delay=0.02),
        replicas.start("b", delay=0.02),
    ]
    async with BalancedHttpClient(urls, FAST, health=QUICK_CHECKS) as client:
        answers = await _post_many(client, 60, concurrency=6)
    assert sorted(a["echo"] for a in answers) == list(range(60))  # every request answered once
    counts = Counter(a["replica"] for a in answers)
    # Round robin would give 20 each; the slow replica holds its requests longer, so it gets few.
    assert counts["slow"] * 3 < counts["a"] and counts["slow"] * 3 < counts["b"], counts


async def test_a_killed_replica_is_taken_out_and_back_in_when_it_recovers(
    replicas: Replicas,
) -> None:
    urls = [replicas.start("a", delay=0.01), replicas.start("b", delay=0.01)]
    async with BalancedHttpClient(urls, FAST, health=QUICK_CHECKS) as client:
        before = await _post_many(client, 20, concurrency=4)
        assert {a["replica"] for a in before} == {"a", "b"}

        stream = asyncio.create_task(_post_many(client, 80, concurrency=4))
        await asyncio.sleep(0.1)
        replicas.kill("b")  # mid-stream: its in-flight and next requests move to 'a'
        during = await stream
        assert sorted(a["echo"] for a in during) == list(range(80))
        assert client.healthy == [replicas.url("a")]
        after = await _post_many(client, 10, concurrency=2)
        assert {a["replica"] for a in after} == {"a"}

        replicas.start("b", delay=0.01)  # the same port again
        deadline = time.monotonic() + 5
        while replicas.url("b") not in client.healthy:
            assert time.monotonic() < deadline, "the recovered replica never came back"
            await asyncio.sleep(0.05)
        back = await _post_many(client, 20, concurrency=4)
        assert {a["replica"] for a in back} == {"a", "b"}
        assert client.stats["marked_down"] >= 1 and client.stats["marked_up"] >= 1


async def test_every_replica_dead_ends_in_remote_error_without_hanging(replicas: Replicas) -> None:
    urls = [replicas.start("a"), replicas.start("b")]
    replicas.stop_all()
    started = time.monotonic()
    async with BalancedHttpClient(urls, FAST, health=QUICK_CHECKS) as client:
        with pytest.raises(RemoteError, match="no replica answered after 4 attempts"):
            await client.post_json("/score", {"x": 1})
        assert client.healthy == []
    assert time.monotonic() - started < 5


async def test_busy_replica_is_skipped_but_kept_and_client_errors_are_not_moved(
    replicas: Replicas,
) -> None:
    urls = [replicas.start("busy", mode="busy"), replicas.start("ok")]
    async with BalancedHttpClient(urls, FAST, health=QUICK_CHECKS) as client:
        answers = await _post_many(client, 10, concurrency=2)
        assert {a["replica"] for a in answers} == {"ok"}
        assert len(client.healthy) == 2  # 503 means alive but overloaded: not marked down
        moved = client.stats["moved"]
        with pytest.raises(HttpStatusError) as caught:
            await client.post_json("/invalid", {"x": 1})
        assert caught.value.status == 422
        assert client.stats["moved"] == moved  # the request itself is bad: no other replica tried


async def test_a_timed_out_request_is_not_sent_again(replicas: Replicas) -> None:
    urls = [replicas.start("stuck", delay=2.0), replicas.start("other", delay=2.0)]
    options = FAST.model_copy(update={"timeout_s": 0.3})
    async with BalancedHttpClient(urls, options, health=QUICK_CHECKS) as client:
        with pytest.raises(RemoteError, match=r"no answer within 0\.3s"):
            await client.post_json("/score", {"x": 1})
        assert client.stats["moved"] == 0
        assert len(client.healthy) == 2


def test_make_http_client_follows_url_and_urls() -> None:
    def rm(**keys: object):
        return load_config(
            {"reward": {"reward_model": {"enable": True, "backend": "vllm", **keys}}}
        ).reward.reward_model

    assert isinstance(make_http_client(rm(url="http://127.0.0.1:1")), HttpClient)
    balanced = make_http_client(
        rm(url="http://127.0.0.1:1", urls=["http://127.0.0.1:2", "http://127.0.0.1:1"])
    )
    assert isinstance(balanced, BalancedHttpClient)
    assert balanced.urls == ["http://127.0.0.1:1", "http://127.0.0.1:2"]
    with pytest.raises(ConfigError, match=r"needs reward_model\.url"):
        load_config({"reward": {"reward_model": {"enable": True, "backend": "vllm"}}})
    with pytest.raises(ConfigError):
        BalancedHttpClient([])
