"""guards: rewardkit.http: the shared HTTP client against a real server that misbehaves on request."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from rewardkit.config import HttpOptions
from rewardkit.errors import RemoteError
from rewardkit.http import HttpClient, HttpStatusError

QUICK = HttpOptions(
    timeout_s=2, connect_timeout_s=1, max_retries=3, backoff_base_s=0.01, backoff_max_s=0.05
)


class Misbehaving:
    """``/echo`` answers the body; ``/flaky/<key>`` 503 twice, then answers; ``/stall`` never
    answers; ``/garbage`` answers 200 with HTML; ``/status/<code>`` answers that code;
    ``/slow`` answers after 0.3 s while counting how many requests are in flight."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.inflight = 0
        self.peak = 0
        self.headers: list[dict[str, str]] = []
        self.app = Starlette(routes=[Route("/{path:path}", self.handle, methods=["GET", "POST"])])

    async def handle(self, request: Request) -> Response:
        path = "/" + request.path_params["path"]
        self.hits[path] += 1
        self.headers.append(dict(request.headers))
        body = await request.body()
        if path == "/echo":
            return JSONResponse({"got": json.loads(body or b"null")})
        if path.startswith("/flaky/"):
            if self.hits[path] <= 2:
                return JSONResponse(
                    {"error": "busy"}, status_code=503, headers={"Retry-After": "0"}
                )
            return JSONResponse({"ok": True, "attempt": self.hits[path]})
        if path == "/stall":
            await asyncio.sleep(3600)
        if path == "/garbage":
            return PlainTextResponse("<html>502 Bad Gateway</html>")
        if path.startswith("/status/"):
            return JSONResponse({"error": "nope"}, status_code=int(path.rsplit("/", 1)[1]))
        if path == "/slow":
            self.inflight += 1
            self.peak = max(self.peak, self.inflight)
            await asyncio.sleep(0.3)  # long enough that two requests sent together overlap
            self.inflight -= 1
            return JSONResponse({"ok": True})
        return JSONResponse({"error": "no route"}, status_code=404)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Misbehaving]]:
    fake = Misbehaving()
    config = uvicorn.Config(fake.app, host="127.0.0.1", port=0, log_level="error", lifespan="off")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "test server did not start"
        time.sleep(0.01)
    port = uv.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}", fake
    uv.should_exit = uv.force_exit = True
    thread.join(timeout=5)


async def test_post_json_round_trip_with_headers(server: tuple[str, Misbehaving]) -> None:
    url, fake = server
    options = HttpOptions(api_key="sk-test", headers={"X-Team": "rl"})
    async with HttpClient(url + "/", options) as client:
        assert await client.post_json("/echo", {"a": [1, "ü"]}) == {"got": {"a": [1, "ü"]}}
        assert await client.get_json("echo") == {"got": None}
    assert fake.headers[-1]["authorization"] == "Bearer sk-test"
    assert fake.headers[-1]["x-team"] == "rl"


async def test_503_twice_then_answer_is_retried(server: tuple[str, Misbehaving]) -> None:
    url, fake = server
    async with HttpClient(url, QUICK) as client:
        answer = await client.post_json("/flaky/a", {})
    assert answer == {"ok": True, "attempt": 3}
    assert fake.hits["/flaky/a"] == 3


async def test_retry_budget_is_respected(server: tuple[str, Misbehaving]) -> None:
    url, fake = server
    options = QUICK.model_copy(update={"max_retries": 1})
    async with HttpClient(url, options) as client:
        with pytest.raises(HttpStatusError, match="HTTP 503 after 2 attempts") as info:
            await client.post_json("/flaky/b", {})
    assert info.value.status == 503 and fake.hits["/flaky/b"] == 2


@pytest.mark.parametrize("code", [400, 404, 422, 500])
async def test_non_transient_statuses_are_not_retried(
    server: tuple[str, Misbehaving], code: int
) -> None:
    url, fake = server
    async with HttpClient(url, QUICK) as client:
        with pytest.raises(HttpStatusError) as info:
            await client.post_json(f"/status/{code}", {})
    assert info.value.status == code and '"nope"' in info.value.body
    assert fake.hits[f"/status/{code}"] == 1


@pytest.mark.parametrize("code", [429, 502, 504])
async def test_transient_statuses_are_retried(server: tuple[str, Misbehaving], code: int) -> None:
    url, fake = server
    async with HttpClient(url, QUICK) as client:
        with pytest.raises(HttpStatusError):
            await client.post_json(f"/status/{code}?t", {})
    assert fake.hits[f"/status/{code}"] == 1 + QUICK.max_retries


async def test_stalled_server_times_out_without_retrying(server: tuple[str, Misbehaving]) -> None:
    url, fake = server
    options = QUICK.model_copy(update={"timeout_s": 0.3})
    started = time.monotonic()
    async with HttpClient(url, options) as client:
        with pytest.raises(RemoteError, match=r"no answer within 0\.3s"):
            await client.post_json("/stall", {})
    assert time.monotonic() - started < 2
    assert fake.hits["/stall"] == 1


async def test_garbage_answer_is_a_remote_error(server: tuple[str, Misbehaving]) -> None:
    url, _ = server
    async with HttpClient(url, QUICK) as client:
        with pytest.raises(RemoteError, match="not JSON") as info:
            await client.post_json("/garbage", {})
    assert not isinstance(info.value, HttpStatusError)


async def test_dead_endpoint_gives_remote_error_after_the_budget() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    async with HttpClient(f"http://127.0.0.1:{port}", QUICK) as client:
        with pytest.raises(RemoteError, match=r"ConnectError.*after 4 attempts"):
            await client.post_json("/x", {})
    assert time.monotonic() - started < 2


async def test_server_that_closes_the_connection_is_retried_then_fails() -> None:
    """A listener that accepts and hangs up at once (a crashing server)."""
    attempts = 0

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal attempts
        attempts += 1
        await reader.read(100)
        writer.close()

    listener = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        async with HttpClient(f"http://127.0.0.1:{port}", QUICK) as client:
            with pytest.raises(RemoteError, match="after 4 attempts"):
                await client.post_json("/x", {})
    finally:
        listener.close()
    assert attempts == 4


async def test_max_concurrent_bounds_requests_in_flight(server: tuple[str, Misbehaving]) -> None:
    url, fake = server
    fake.peak = 0
    async with HttpClient(url, HttpOptions(max_concurrent=2)) as client:
        await asyncio.gather(*(client.post_json("/slow", {}) for _ in range(6)))
    assert fake.peak == 2


@pytest.mark.parametrize(
    ("options", "tokens"),
    [(HttpOptions(requests_per_minute=1200), 0), (HttpOptions(tokens_per_minute=12_000), 10)],
)
async def test_rate_limits_pace_requests(
    server: tuple[str, Misbehaving], options: HttpOptions, tokens: int
) -> None:
    """20 requests/s, or 200 tokens/s at 10 tokens a request: a burst of 20 goes at once,
    the next 10 follow at the rate, so 30 requests take about half a second."""
    url, _ = server
    async with HttpClient(url, options) as client:
        started = time.monotonic()
        await asyncio.gather(*(client.post_json("/echo", {}, tokens=tokens) for _ in range(30)))
        elapsed = time.monotonic() - started
    assert 0.4 <= elapsed < 3


async def test_invalid_url_is_a_remote_error() -> None:
    async with HttpClient("not a url", QUICK) as client:
        with pytest.raises(RemoteError):
            await client.post_json("/x", {})


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        HttpOptions(timeout_s=0)
    with pytest.raises(ValueError, match=r"unknown|extra"):
        HttpOptions(retries=3)  # type: ignore[call-arg]
