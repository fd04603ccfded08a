"""A real reward server on 127.0.0.1, on a port the OS picks: in a background thread, or
as `rewardkit serve` in a subprocess. Shared by the tests that talk to the server.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import uvicorn

from _support.cli import CLI
from rewardkit.config import RewardConfig, ServerConfig, load_config
from rewardkit.server.app import create_app
from rewardkit.server.protocol import uvicorn_config

T = TypeVar("T")

__all__ = [
    "free_port",
    "in_thread",
    "one_row_behind",
    "running_app",
    "running_server",
    "serving_process",
    "uvicorn_in_thread",
    "wait_queued",
]


@contextmanager
def running_server(
    config: RewardConfig | dict[str, Any], *, wait_ready: bool = True, timeout_s: float = 90
) -> Iterator[str]:
    """Serve ``config`` in a background thread; yield the base URL (once /ready says so,
    unless ``wait_ready`` is false; within ``timeout_s``); stop and join."""
    cfg = load_config(config)
    app = create_app(cfg)
    with running_app(
        app, api_key=cfg.server.api_key, wait_ready=wait_ready, timeout_s=timeout_s
    ) as base:
        yield base


@contextmanager
def running_app(
    app: Any, *, api_key: str | None = None, wait_ready: bool = True, timeout_s: float = 90
) -> Iterator[str]:
    """``running_server`` for an app already made (a test that looks into its state), with
    the connection limits and drain timeout of its ``server.*`` config, as ``serve`` has."""
    state = getattr(app.state, "rewardkit", None)
    server_cfg = state.config.server if state is not None else ServerConfig()
    config = uvicorn_config(app, server_cfg, host="127.0.0.1", port=0)
    with uvicorn_in_thread(config, timeout_s) as port:
        base = f"http://127.0.0.1:{port}"
        if wait_ready:
            _wait_ready(base, api_key, time.monotonic() + timeout_s)
        yield base


@contextmanager
def uvicorn_in_thread(config: uvicorn.Config, timeout_s: float = 30) -> Iterator[int]:
    """Run a uvicorn server of ``config`` (port 0: the OS picks) in a daemon thread; yield
    its port once it listens; ask it to exit and join it."""
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _wait_ready(base: str, api_key: str | None, deadline: float) -> None:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    while True:
        body = httpx.get(f"{base}/ready", headers=headers, timeout=10, trust_env=False).json()
        if body["ready"]:
            return
        if "error" in body or time.monotonic() > deadline:
            raise RuntimeError(f"the test server did not become ready: {body}")
        time.sleep(0.02)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving_process(
    *overrides: str, port: int | None = None, within_s: float = 60, **popen: Any
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`rewardkit serve --port PORT OVERRIDES...` in a subprocess (``popen``: Popen's
    keywords); yield it and its base URL once /ready answers 200 (within ``within_s``).
    Killed at the end if it still runs."""
    port = free_port() if port is None else port
    server = subprocess.Popen([*CLI, "serve", "--port", str(port), *overrides], text=True, **popen)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + within_s
        while True:
            try:
                if httpx.get(f"{base}/ready", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "server did not start"
            time.sleep(0.1)
        yield server, base
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def in_thread(call: Callable[[], T]) -> tuple[threading.Thread, list[T]]:
    """Start ``call()`` in a thread (a request left in flight while the test goes on); the
    list holds what it returned once the thread is done."""
    out: list[T] = []
    thread = threading.Thread(target=lambda: out.append(call()))
    thread.start()
    return thread, out


def wait_queued(base: str, rows: int, within_s: float = 60.0) -> None:
    """Wait until the server holds ``rows`` rows not yet answered (its own gauge)."""
    deadline = time.monotonic() + within_s
    line = f"rewardkit_queue_rows {float(rows)}"
    while line not in httpx.get(f"{base}/metrics", timeout=10).text.splitlines():
        assert time.monotonic() < deadline, f"the server never held {rows} row(s)"
        time.sleep(0.02)


def one_row_behind(
    base: str, slow_rows: list[dict[str, Any]], go: Path, wait: Callable[[], None]
) -> tuple[float, httpx.Response, list[httpx.Response]]:
    """Send ``slow_rows`` in one request, ``wait()`` until the server holds them, then time
    a one-row request sent behind it. Touching ``go`` then cuts the slow rows' naps short.
    Returns the fast request's seconds and response, and the slow request's response."""
    fast_row = {"data_source": "x", "response": "1", "ground_truth": "1"}
    with httpx.Client(base_url=base, timeout=60) as client:
        slow, answers = in_thread(lambda: client.post("/v1/score", json={"samples": slow_rows}))
        wait()
        started = time.monotonic()
        fast = client.post("/v1/score", json={"samples": [fast_row]})
        fast_s = time.monotonic() - started
        go.touch()
        slow.join(timeout=60)
    assert fast.json()["results"][0]["score"] == 1.0
    return fast_s, fast, answers
