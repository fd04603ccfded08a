"""How long a large legal request holds ``rewardkit serve``'s event loop.

    .venv/bin/python benchmarks/large_body.py                 # 57 MB, 200 rows
    .venv/bin/python benchmarks/large_body.py --turns 1000    # 38 MB

Starts ``rewardkit serve`` (2 workers) on a free 127.0.0.1 port, then posts one
``/v1/score`` body of ``--rows`` GSM8K rows, each a trajectory of ``--turns`` tool calls
and tool answers ending in "#### 72" (the shape an outside red team sent), while a thread
asks ``/health`` every 50 ms. Prints the body's size, the request's time and the slowest
``/health`` answer: what every other client of the server waited at worst. No figure is
written anywhere; README ("Large legal bodies") quotes one run.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
import time

import httpx


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _body(rows: int, turns: int) -> bytes:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    answer = {"role": "tool", "tool_call_id": "c", "content": "1"}
    messages = [call, answer] * turns + [{"role": "assistant", "content": "#### 72"}]
    row = {"data_source": "openai/gsm8k", "response": messages, "ground_truth": "72"}
    return json.dumps({"samples": [row] * rows}).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--turns", type=int, default=1500)
    args = parser.parse_args()
    body = _body(args.rows, args.turns)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    argv = [
        sys.executable,
        "-m",
        "rewardkit.cli",
        "serve",
        "--port",
        str(port),
        "reward.num_workers=2",
    ]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(trust_env=False, timeout=60) as client:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if client.get(f"{base}/ready").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not get ready in 120 s")
                time.sleep(0.2)
        latencies: list[float] = []
        done = threading.Event()

        def poll() -> None:
            with httpx.Client(trust_env=False, timeout=60) as client:
                while not done.is_set():
                    asked = time.perf_counter()
                    client.get(f"{base}/health")
                    latencies.append(time.perf_counter() - asked)
                    time.sleep(0.05)

        poller = threading.Thread(target=poll)
        poller.start()
        began = time.perf_counter()
        try:
            answer = httpx.post(
                f"{base}/v1/score",
                content=body,
                timeout=300,
                trust_env=False,
                headers={"content-type": "application/json"},
            )
        finally:
            done.set()
            poller.join()
        took = time.perf_counter() - began
        scores = {r["score"] for r in answer.json()["results"]}
        print(
            f"body {len(body) / 1e6:.1f} MB, {args.rows} rows: HTTP {answer.status_code}, "
            f"scores {sorted(scores)}, {took:.2f} s; /health asked {len(latencies)} times, "
            f"slowest {max(latencies):.3f} s"
        )
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
