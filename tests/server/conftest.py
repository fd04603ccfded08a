"""A real reward server on 127.0.0.1, on a port the OS picks."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

from rewardkit.config import load_config
from rewardkit.server.app import create_app


@contextmanager
def running_server(config: dict[str, Any]) -> Iterator[str]:
    """Serve ``config`` in a background thread; yield the base URL; stop and join."""
    app = create_app(load_config(config))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="session")
def start_server():
    """The ``running_server`` context manager, as a fixture (test modules don't import conftest)."""
    return running_server
