"""guards: the shared connection and body guard layer (rewardkit.http_guard) under a bare app.

A minimal ASGI app that reads every body runs behind :func:`protocol_for` on 127.0.0.1, so
what is checked is the layer alone: chunked bodies cut at the cap, the body budget given
back, eviction order, and the probe connections' own bound.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

from _support.serving import uvicorn_in_thread
from rewardkit.http_guard import PROBE_CONNECTIONS, ConnectionLimits, protocol_for

KIB = 1024


class BodyApp:
    """Reads each body whole, then answers 200 with its size; notes the most it held."""

    def __init__(self) -> None:
        self.most_held = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        if scope["path"] == "/slow":
            await asyncio.sleep(2.0)
        held, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            held += len(message.get("body", b""))
            self.most_held = max(self.most_held, held)
            more = message.get("more_body", False)
        body = str(held).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})


@contextmanager
def serving(limits: ConnectionLimits) -> Iterator[tuple[tuple[str, int], BodyApp, Any]]:
    app = BodyApp()
    protocol = protocol_for(limits)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, http=protocol, lifespan="off", log_level="warning"
    )
    with uvicorn_in_thread(config) as port:
        yield ("127.0.0.1", port), app, protocol


def _reply(sock: socket.socket, wait_s: float = 2.0) -> bytes:
    sock.settimeout(wait_s)
    try:
        return sock.recv(4096)
    except OSError:
        return b""


def test_a_chunked_body_is_cut_at_the_cap_with_413() -> None:
    limits = ConnectionLimits(max_request_bytes=256 * KIB, max_body_bytes_in_flight=1024 * KIB)
    with serving(limits) as (address, app, protocol):
        sock = socket.create_connection(address, timeout=5)
        try:
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"%x\r\n%s\r\n" % (16 * KIB, b"x" * 16 * KIB)
            for _ in range(64):  # 1 MiB offered
                try:
                    sock.sendall(chunk)
                except OSError:
                    break
            answer = _reply(sock)
        finally:
            sock.close()
        time.sleep(0.2)
        assert answer.startswith(b"HTTP/1.1 413 "), answer
        assert b"server.max_request_bytes" in answer
        assert app.most_held <= 256 * KIB
        assert protocol.bodies.in_flight == 0


def test_the_body_budget_is_given_back_after_each_request() -> None:
    limits = ConnectionLimits(max_request_bytes=64 * KIB, max_body_bytes_in_flight=64 * KIB)
    with serving(limits) as (address, _app, protocol):
        for _ in range(5):  # each takes the whole budget; each is let in after the last
            with socket.create_connection(address, timeout=5) as sock:
                sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n")
                sock.sendall(b"x" * 64 * KIB)
                answer = _reply(sock)
            assert answer.startswith(b"HTTP/1.1 200 "), answer
            assert b"\r\n65536\r\n" in answer
        time.sleep(0.2)
        assert protocol.bodies.in_flight == 0


def test_idle_connections_are_evicted_before_a_body_in_progress() -> None:
    limits = ConnectionLimits(max_connections=2, max_request_bytes=64 * KIB)
    with serving(limits) as (address, _app, _protocol):
        body = socket.create_connection(address, timeout=5)
        idle = socket.create_connection(address, timeout=5)
        try:
            body.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nx")
            time.sleep(0.1)
            idle.sendall(b"GET / HTTP/1.1\r\n")  # newer, but waiting on its headers
            time.sleep(0.1)
            with socket.create_connection(address, timeout=5) as newcomer:
                assert _reply(idle).startswith(b"HTTP/1.1 408 ")
                newcomer.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                assert _reply(newcomer).startswith(b"HTTP/1.1 200 ")
                body.sendall(b"x" * 999)
                assert _reply(body).startswith(b"HTTP/1.1 200 ")
        finally:
            body.close()
            idle.close()


@pytest.mark.parametrize("path", ["/health", "/elsewhere"])
def test_probes_past_the_cap_are_bounded_and_serve_only_open_paths(path: str) -> None:
    limits = ConnectionLimits(max_connections=1, max_request_bytes=64 * KIB)
    with serving(limits) as (address, _app, _protocol):
        busy = socket.create_connection(address, timeout=5)  # its request is being handled
        busy.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.2)
        probes = [socket.create_connection(address, timeout=5) for _ in range(PROBE_CONNECTIONS)]
        over = socket.create_connection(address, timeout=5)
        try:
            refused = _reply(over)
            for sock in probes:
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            answers = [_reply(sock) for sock in probes]
            assert _reply(busy, 5).startswith(b"HTTP/1.1 200 ")
        finally:
            for sock in [busy, over, *probes]:
                sock.close()
    assert refused.startswith(b"HTTP/1.1 503 "), refused
    expected = b"HTTP/1.1 200 " if path == "/health" else b"HTTP/1.1 503 "
    assert all(a.startswith(expected) for a in answers), answers


def test_nothing_pipelined_behind_a_refused_request_is_read() -> None:
    limits = ConnectionLimits(max_request_bytes=16 * KIB)
    with serving(limits) as (address, _app, _protocol):
        with socket.create_connection(address, timeout=5) as sock:
            sock.sendall(
                b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 20000\r\n\r\n"
                + b"x" * 20000
                + b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            received, started = b"", time.monotonic()
            while time.monotonic() - started < 5:
                chunk = _reply(sock, 3)
                if not chunk:
                    break
                received += chunk
    assert received.startswith(b"HTTP/1.1 413 "), received
    assert received.count(b"HTTP/1.1 ") == 1, received
