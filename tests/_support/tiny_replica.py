"""A stand-in model server run as a real process: ``python tiny_replica.py PORT RANK [MODE]``.

It answers ``GET /health`` and any POST with a chat-completions-shaped answer naming
itself (``replica``); a POST body ``{"status": N}`` gets that HTTP status instead. On
start it launches a child (``sleep``) into its own process group and prints the child's
pid, so a test can check that stopping the replica reaches what the replica started.
MODE ``crash``: print a line and exit 3 before serving; ``mute``: never answer; ``slow``:
each POST takes 0.5 s (so that a batch is still in flight when a test kills a replica).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, RANK = int(sys.argv[1]), int(sys.argv[2])
MODE = sys.argv[3] if len(sys.argv) > 3 else "serve"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer(200, {"status": "ok", "replica": RANK})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if body.get("sleep") or MODE == "slow":
            time.sleep(float(body.get("sleep") or 0.5))
        status = int(body.get("status", 200))
        content = f"replica {RANK} says [[7]]"
        self._answer(status, {"replica": RANK, "choices": [{"message": {"content": content}}]})


if MODE == "crash":
    print("tiny replica: cannot load the model (on purpose)", flush=True)
    sys.exit(3)
if MODE == "mute":
    time.sleep(3600)
child = subprocess.Popen(["sleep", "3600"])
print(f"child {child.pid}", flush=True)
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
