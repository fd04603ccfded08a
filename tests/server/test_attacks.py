"""guards: the reward server under attack: each attack, bounded in size and time, is
contained by a real server on 127.0.0.1, and real clients are still served."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from _support.serving import in_thread, one_row_behind, serving_process, wait_queued
from _support.user_functions import NAP_UNTIL_GO, SLOW
from rewardkit.cli import main as cli_main
from rewardkit.config import load_config
from rewardkit.errors import ConfigError

GSM8K_ROW = {"data_source": "openai/gsm8k", "response": "#### 72", "ground_truth": "72"}


def _address(base: str) -> tuple[str, int]:
    parts = urlsplit(base)
    assert parts.hostname and parts.port
    return parts.hostname, parts.port


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether the server answered (408, 431) or closed this connection."""
    timeout = sock.gettimeout()
    sock.setblocking(False)  # a socket with a timeout would wait for data
    try:
        return sock.recv(4096) is not None  # an answer, or b"" at the end
    except BlockingIOError:  # nothing to read: still open
        return False
    except OSError:
        return True
    finally:
        sock.settimeout(timeout)


class Slowloris(threading.Thread):
    """Keeps ``n`` connections open, each sending one more header line every ``every_s``
    and never finishing its headers; reconnects the ones the server closes."""

    def __init__(self, address: tuple[str, int], n: int, every_s: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.address, self.n, self.every_s = address, n, every_s
        self.stop = threading.Event()
        self.opened = 0
        self.lifetimes: list[
            float
        ] = []  # seconds each connection lived before the server closed it

    def run(self) -> None:
        open_: dict[socket.socket, float] = {}
        try:
            while not self.stop.is_set():
                while len(open_) < self.n and not self.stop.is_set():
                    sock = socket.create_connection(self.address, timeout=5)
                    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                    open_[sock] = time.monotonic()
                    self.opened += 1
                for sock, since in list(open_.items()):
                    try:
                        if _closed_by_peer(sock):
                            raise ConnectionResetError
                        sock.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        self.lifetimes.append(time.monotonic() - since)
                        del open_[sock]
                        sock.close()
                self.stop.wait(self.every_s)
        finally:
            for sock in open_:
                sock.close()


def test_slowloris_and_endless_headers_are_cut_off_and_real_clients_served(start_server) -> None:
    config = {
        "reward": {"num_workers": 1, "default_data_source": "openai/gsm8k"},
        "server": {"max_connections": 32, "header_timeout_s": 1, "max_header_bytes": 16_384},
    }
    with start_server(config) as base:
        attack = Slowloris(_address(base), n=200)
        attack.start()
        rss_before = _rss_bytes()
        sent = _endless_headers(_address(base), limit=16 * 1024 * 1024)
        latencies = []
        try:
            deadline = time.monotonic() + 3  # three header timeouts of attack
            while time.monotonic() < deadline:
                started = time.monotonic()
                health = _as_a_client("GET", f"{base}/health")
                score = _as_a_client("POST", f"{base}/v1/score", json={"samples": [GSM8K_ROW]})
                latencies.append(time.monotonic() - started)
                assert health.status_code == 200
                assert score.status_code == 200 and score.json()["results"][0]["score"] == 1.0
                time.sleep(0.2)
        finally:
            attack.stop.set()
            attack.join(timeout=30)
        grown = _rss_bytes() - rss_before
    assert max(latencies) < 3.0, f"a real client waited {max(latencies):.1f}s under attack"
    # 200 connections against a cap of 32: the server kept closing the slow ones.
    assert attack.opened > 200 and len(attack.lifetimes) >= 100
    assert max(attack.lifetimes) < 1 + 3.0, "a slow connection outlived server.header_timeout_s"
    # The endless-header connection was refused after ~max_header_bytes, not read for ever.
    assert sent < 4 * 1024 * 1024, f"the server read {sent:,} header bytes"
    assert grown < 64 * 1024 * 1024, f"the server grew {grown / 2**20:.0f} MiB"


def _as_a_client(method: str, url: str, **kwargs) -> httpx.Response:
    """One request on a new connection, retrying a 503 after its Retry-After, as
    RewardClient does (a newcomer is refused while every slot is too new to close)."""
    while True:
        answer = httpx.request(method, url, timeout=10, trust_env=False, **kwargs)
        if answer.status_code != 503:
            return answer
        time.sleep(float(answer.headers["Retry-After"]))


def _endless_headers(address: tuple[str, int], limit: int) -> int:
    """Stream header lines until the server stops reading (or ``limit`` bytes): bytes sent."""
    line = b"X-Pad: " + b"a" * 1000 + b"\r\n"
    sent = 0
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        try:
            while sent < limit:
                sock.sendall(line)
                sent += len(line)
        except OSError:
            return sent  # reset by the server: it stopped reading
        answer = b""
        try:
            answer = sock.recv(4096)
        except OSError:
            pass
    assert b"431" in answer, f"the server read {sent:,} header bytes and answered {answer[:80]!r}"
    return sent


def test_an_endless_header_line_gets_431_in_bounded_memory(start_server) -> None:
    config = {"reward": {"num_workers": 1}, "server": {"max_header_bytes": 8192}}
    with start_server(config) as base, socket.create_connection(_address(base), 5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 64_000)
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 431 ")
        assert b"server.max_header_bytes" in answer
        assert httpx.get(f"{base}/health", timeout=10, trust_env=False).status_code == 200


def test_headers_over_the_limit_that_arrive_in_one_read_get_431(start_server) -> None:
    """The whole request head in one send: counted as parsed, not only per unfinished read
    (a 70 KB head got 200 under an 8 KB limit: a red team's finding)."""
    config = {"reward": {"num_workers": 1}, "server": {"max_header_bytes": 8192}}
    head = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 20_000 + b"\r\n\r\n"
    with start_server(config) as base, socket.create_connection(_address(base), 5) as sock:
        sock.sendall(head)
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
        small = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 4000 + b"\r\n\r\n"
        with socket.create_connection(_address(base), 5) as other:
            other.sendall(small)
            assert other.recv(4096).startswith(b"HTTP/1.1 200 ")


def test_a_client_that_sends_nothing_is_closed_after_the_header_timeout(start_server) -> None:
    config = {"reward": {"num_workers": 1}, "server": {"header_timeout_s": 0.5}}
    with start_server(config) as base, socket.create_connection(_address(base), 10) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        answer = sock.recv(4096)
        waited = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408 ") and b"server.header_timeout_s" in answer
        assert 0.4 < waited < 5


def test_a_huge_ground_truth_runs_off_the_loop_under_the_hard_timeout(start_server) -> None:
    # 300,000 items: checked inline this held the event loop (and /health) for seconds.
    huge = {"data_source": "lighteval/MATH", "response": r"\boxed{-5}"}
    huge["ground_truth"] = [str(i) for i in range(300_000)]
    config = {"reward": {"num_workers": 2, "timeout_s": 1.0}}
    with start_server(config) as base, httpx.Client(base_url=base, trust_env=False) as client:
        request, answers = in_thread(
            lambda: client.post("/v1/score", json={"samples": [huge, GSM8K_ROW]}, timeout=60)
        )
        worst = 0.0
        while request.is_alive():
            started = time.monotonic()
            assert client.get("/health", timeout=10).status_code == 200
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.02)
        request.join()
    results = answers[0].json()["results"]
    assert results[0]["status"] == "timeout" and "1s" in results[0]["error"]
    assert results[1]["status"] == "ok" and results[1]["score"] == 1.0
    # the body's own parse runs on the loop (tenths of a second, more under load); the
    # check of 300,000 golds held it for many seconds
    assert worst < 1.5, f"/health waited {worst:.2f}s while the big row was checked"


def test_rows_too_big_to_check_inline_are_scored_as_inline_ones_are(start_server) -> None:
    # Each big row (over the engine's inline bounds) next to its small twin: same verdict.
    long_text = "step " * 30_000  # 150,000 characters
    gt_5000 = [str(i) for i in range(5_000)]
    rows = [
        {"data_source": "lighteval/MATH", "response": r"\boxed{4999}", "ground_truth": gt_5000},
        {"data_source": "lighteval/MATH", "response": r"\boxed{4999}", "ground_truth": ["4999"]},
        {"data_source": "lighteval/MATH", "response": r"\boxed{7}", "ground_truth": gt_5000[:2]},
        {"data_source": "openai/gsm8k", "response": long_text + "#### 72", "ground_truth": "72"},
        {"data_source": "openai/gsm8k", "response": long_text + "#### 7", "ground_truth": "72"},
        {"data_source": "mcq", "response": "(B)", "ground_truth": ["Z"] * 5_000},
        {"data_source": "mcq", "response": "(B)", "ground_truth": ["Z"]},
    ]
    with start_server({"reward": {"num_workers": 1}}) as base:
        answer = httpx.post(f"{base}/v1/score", json={"samples": rows}, timeout=60)
    results = answer.json()["results"]
    assert [r["score"] for r in results[:5]] == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert results[3]["extra"] == {"method": "auto", "acc": True, "pred": "72"}  # as inline
    assert [r["status"] for r in results[5:]] == ["invalid", "invalid"]
    assert "not a letter" in results[5]["error"] and len(results[5]["error"]) < 300


def test_a_lone_surrogate_costs_only_its_own_row(start_server) -> None:
    body = (
        '{"samples": ['
        '{"data_source": "openai/gsm8k", "response": "#### 72\\ud800", "ground_truth": "72"},'
        '{"data_source": "x\\udc00", "response": "#### 7", "ground_truth": "7"},'
        '{"data_source": "openai/gsm8k", "response": "#### 7", "ground_truth": "7"}]}'
    )
    with start_server({"reward": {"num_workers": 1}}) as base:
        answer = httpx.post(
            f"{base}/v1/score",
            content=body,
            headers={"Content-Type": "application/json"},
            timeout=30,
            trust_env=False,
        )
        assert answer.status_code == 200
        results = answer.json()["results"]  # escaped as \ud800: valid JSON, row kept as sent
        assert results[0]["status"] == "ok" and results[0]["score"] == 1.0
        assert results[0]["response"] == "#### 72\ud800"
        assert results[1]["status"] == "invalid" and results[1]["data_source"] == "x\udc00"
        assert results[2]["score"] == 1.0
        bad_key = httpx.post(
            f"{base}/v1/score",
            content='{"samples": [], "\\ud800": 1}',
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        assert bad_key.status_code == 422
        metrics = httpx.get(f"{base}/metrics", timeout=30)
        assert metrics.status_code == 200 and 'data_source="other"' in metrics.text


def test_made_up_data_sources_do_not_grow_metrics(start_server) -> None:
    rows = [
        {"data_source": f"made-up-{i}", "response": "1", "ground_truth": "1"} for i in range(5000)
    ]
    with start_server({"reward": {"num_workers": 1}}) as base:
        first = httpx.post(f"{base}/v1/score", json={"samples": rows}, timeout=60)
        assert first.status_code == 200
        assert {r["status"] for r in first.json()["results"]} == {"invalid"}
        httpx.post(f"{base}/v1/score", json={"samples": [GSM8K_ROW]}, timeout=30)
        text = httpx.get(f"{base}/metrics", timeout=30).text
    assert len(text) < 64 * 1024, f"/metrics is {len(text):,} bytes"
    assert 'rewardkit_rows_total{data_source="other",status="invalid"} 4936.0' in text
    assert 'rewardkit_rows_total{data_source="made-up-0",status="invalid"} 1.0' in text
    assert 'rewardkit_rows_total{data_source="openai/gsm8k",status="ok"} 1.0' in text


def test_slow_rows_of_one_request_do_not_delay_another_requests_row(
    write_module, start_server, tmp_path: Path
) -> None:
    # 10 rows of 2 s on 2 workers: first come, first served, the other request's row
    # would wait about 10 s; shared fairly, it takes the first worker to free up. Once
    # the fast row is answered, the go file cuts the slow rows' naps short.
    path = write_module("nap_until_go", NAP_UNTIL_GO)
    config = {"reward": {"num_workers": 2, "custom_reward_function": {"path": path}}}
    go = tmp_path / "go"
    slow_rows = [
        {"data_source": "x", "response": f"nap 2 {go} row{i}", "ground_truth": "1"}
        for i in range(10)
    ]
    with start_server(config) as base:
        # both workers are busy with slow rows, eight more are queued
        fast_s, _, answers = one_row_behind(base, slow_rows, go, lambda: time.sleep(0.5))
    assert fast_s < 4.5, f"the fast request waited {fast_s:.1f}s behind another's slow rows"
    assert [r["score"] for r in answers[0].json()["results"]] == [0.0] * 10


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_api_key_is_refused(value: str) -> None:
    with pytest.raises(ConfigError, match=r"server\.api_key: .*empty"):
        load_config({"server": {"api_key": value}})


def test_an_unset_environment_variable_as_api_key_is_refused(capsys) -> None:
    # `rewardkit serve server.api_key=$RK_KEY` with RK_KEY unset: the shell passes "=".
    assert cli_main(["serve", "server.api_key="]) == 2
    assert "server.api_key: is empty" in capsys.readouterr().err


def test_a_key_is_never_printed_in_config_errors(capsys) -> None:
    assert cli_main(["serve", "server.api_key=12345", "server.port=oops"]) == 2
    err = capsys.readouterr().err
    assert "server.api_key" in err and "12345" not in err
    assert cli_main(["serve", "server.api_key=s3cret-typo", "reward.timeout_s=[["]) == 2
    assert "s3cret-typo" not in capsys.readouterr().err


def test_a_request_past_the_drain_timeout_gets_a_json_503(tmp_path: Path, write_module) -> None:
    overrides = ("reward.num_workers=1", "reward.timeout_s=60", "server.drain_timeout_s=1")
    overrides += (f"reward.custom_reward_function.path={write_module('slow', SLOW)}",)
    piped = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    with serving_process(*overrides, **piped) as (server, base):
        body = {"samples": [{"data_source": "x", "response": "sleep 30", "ground_truth": "1"}]}
        request, answers = in_thread(lambda: httpx.post(f"{base}/v1/score", json=body, timeout=60))
        wait_queued(base, 1)  # in flight when SIGTERM comes
        stopped = time.monotonic()
        os.kill(server.pid, signal.SIGTERM)
        request.join(timeout=30)
        assert server.wait(timeout=30) == 0
        assert time.monotonic() - stopped < 15
    assert answers and answers[0].status_code == 503
    assert "server.drain_timeout_s=1" in answers[0].json()["detail"]


def test_connections_past_the_cap_close_the_longest_waiting_first(start_server) -> None:
    config = {"reward": {"num_workers": 1}, "server": {"max_connections": 4}}
    with start_server(config) as base:
        idle = [socket.create_connection(_address(base), timeout=5) for _ in range(4)]
        try:
            for sock in idle:  # slow clients: a request line, then nothing
                sock.sendall(b"GET /health HTTP/1.1\r\n")
                time.sleep(0.05)
            answer = httpx.get(f"{base}/health", timeout=10, trust_env=False)
            assert answer.status_code == 200
            assert idle[0].recv(4096).startswith(b"HTTP/1.1 408 ")  # the oldest made room
            time.sleep(0.2)
            assert not any(_closed_by_peer(sock) for sock in idle[1:])
        finally:
            for sock in idle:
                sock.close()
