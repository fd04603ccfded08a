"""guards: ``rewardkit sandbox`` holds against endless headers, slowloris and slow bodies.

The real CLI runs in a child process on a free 127.0.0.1 port, so its memory and its open
files are its own (the attacking sockets are this process's): each test runs the attack,
bounded in size and time, and checks the server's figures and that ``/v1/ping`` is
answered meanwhile.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import psutil
import pytest

MIB = 1 << 20
MAX_CONNECTIONS = 64
PROBES = 16  # rewardkit.http_guard.PROBE_CONNECTIONS


@dataclass
class Served:
    url: str
    address: tuple[str, int]
    process: psutil.Process


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rewardkit.cli", "sandbox", "--port", "0", "--max-concurrent", "1",
         "--allow-unisolated", "--max-connections", str(MAX_CONNECTIONS)],
        stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("rewardkit sandbox on http://127.0.0.1:"), line
        url = line.split()[3]
        parts = urlsplit(url)
        assert parts.hostname and parts.port
        yield Served(url, (parts.hostname, parts.port), psutil.Process(proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _ping(served: Served) -> int:
    return httpx.get(f"{served.url}/v1/ping", timeout=5, trust_env=False).status_code


def _answer(sock: socket.socket) -> bytes | None:
    """What the server sent (b"" if it closed), or None if nothing yet."""
    sock.setblocking(False)
    try:
        return sock.recv(4096)
    except BlockingIOError:
        return None
    except OSError:
        return b""
    finally:
        sock.setblocking(True)


def _send_buffer_max() -> int:
    """The most a TCP send buffer grows to on this machine (tcp_wmem's third field)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as handle:
            return int(handle.read().split()[2])
    except (OSError, IndexError, ValueError):
        return 4 * MIB  # Linux's default


def test_300_mib_of_headers_are_refused_at_the_header_cap(served: Served) -> None:
    # They were all accepted in 0.9 s, taking the server from 58 to 372 MiB.
    before = served.process.memory_info().rss
    line = b"X-Filler: " + b"a" * 1000 + b"\r\n"
    piece = line * 64  # 64 KiB a send
    sock = socket.create_connection(served.address, timeout=10)
    sent, answer = 0, None
    started = time.monotonic()
    try:
        sock.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n")
        while sent < 300 * MIB and time.monotonic() - started < 20:
            try:
                sock.sendall(piece)
            except OSError:
                break
            sent += len(piece)
            answer = _answer(sock)
            if answer is not None:
                break
        if not answer:
            sock.settimeout(2)
            answer = sock.recv(4096)
    finally:
        sock.close()
    elapsed = time.monotonic() - started
    grown = served.process.memory_info().rss - before
    assert answer.startswith(b"HTTP/1.1 431 "), answer
    # What the client sent, not what the server read: a loaded server answers late, and
    # meanwhile the kernel's send buffer takes up to tcp_wmem's maximum (4 MiB here).
    assert sent < _send_buffer_max() + 2 * MIB, f"{sent / MIB:.1f} MiB of headers sent"
    assert elapsed < 2.0
    assert grown < 16 * MIB, f"the server grew {grown / MIB:.0f} MiB"
    assert _ping(served) == 200


def test_500_slowloris_connections_are_cut_and_open_files_stay_bounded(served: Served) -> None:
    # All 500 were held for 20 s and the server's open files went from 17 to 517.
    fds_before = served.process.num_fds()
    socks: list[socket.socket] = []
    most_fds, pings = 0, []
    try:
        for i in range(500):
            sock = socket.create_connection(served.address, timeout=10)
            sock.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n")
            socks.append(sock)
            if i % 50 == 49:
                most_fds = max(most_fds, served.process.num_fds())
                pings.append(_ping(served))
        started = time.monotonic()
        open_ = list(socks)
        while open_ and time.monotonic() - started < 14:  # the header deadline is 10 s
            still = []
            for sock in open_:
                if _answer(sock) is not None:
                    continue
                try:
                    sock.sendall(b"X-More: 1\r\n")
                    still.append(sock)
                except OSError:
                    pass
            open_ = still
            most_fds = max(most_fds, served.process.num_fds())
            pings.append(_ping(served))
            time.sleep(0.5)
        held_s = time.monotonic() - started
    finally:
        for sock in socks:
            sock.close()
    assert not open_, f"{len(open_)} slowloris connections still held after {held_s:.0f}s"
    assert all(code == 200 for code in pings), pings
    assert most_fds - fds_before <= MAX_CONNECTIONS + PROBES + 8, (fds_before, most_fds)


def test_slow_bodies_are_cut_after_the_grace(served: Served) -> None:
    head = b"POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    socks = []
    try:
        for _ in range(20):
            sock = socket.create_connection(served.address, timeout=10)
            sock.sendall(head + f"Content-Length: {MIB}\r\n\r\n{{".encode())
            socks.append(sock)
        started = time.monotonic()
        answers: dict[int, bytes] = {}
        while len(answers) < len(socks) and time.monotonic() - started < 10:
            for i, sock in enumerate(socks):
                if i not in answers:
                    got = _answer(sock)
                    if got is not None:
                        answers[i] = got
                    else:
                        sock.sendall(b" ")
            time.sleep(0.5)
        elapsed = time.monotonic() - started
    finally:
        for sock in socks:
            sock.close()
    assert len(answers) == len(socks), f"{len(socks) - len(answers)} slow bodies still held"
    assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers.values())
    assert elapsed < 8.0
    assert _ping(served) == 200


def test_a_declared_body_over_the_cap_gets_413_before_it_is_sent(served: Served) -> None:
    sock = socket.create_connection(served.address, timeout=10)
    try:
        sock.sendall(b"POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n{")
        sock.settimeout(2)
        answer = sock.recv(4096)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413 "), answer
    assert b"max_request_bytes" in answer
