"""The embedded sandbox over HTTP, speaking SandboxFusion's API.

``rewardkit sandbox --port 8080`` serves ``POST /run_code`` and ``GET /v1/ping`` so that
the ``sandbox-fusion`` client package and verl's ``sandbox_fusion.url`` (set it to
``http://127.0.0.1:8080/run_code``) work against it unchanged::

    from sandbox_fusion import RunCodeRequest, run_code, set_sandbox_endpoint
    set_sandbox_endpoint("http://127.0.0.1:8080")
    run_code(RunCodeRequest(code="print(1 + 1)", language="python")).run_result.stdout  # '2\\n'

As in SandboxFusion, every answer to a well-formed ``/run_code`` is HTTP 200 and the
outcome is in its ``status``: ``Success``, ``Failed`` (the program failed or timed out) or
``SandboxError`` (the sandbox could not run it: language not installed, queue full).
A malformed body is a 422 naming the field, a body over ``max_body_bytes`` a 413. With an
API key, every route but ``/v1/ping`` needs ``Authorization: Bearer <key>`` (else 401).
See :mod:`rewardkit.sandbox` for the isolation of each run.
"""

from __future__ import annotations

import asyncio
import hmac
import socket
import sys
from collections.abc import AsyncIterator, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from rewardkit.http_guard import ConnectionLimits, fitted, protocol_for
from rewardkit.sandbox import (
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
    Sandbox,
    SandboxOptions,
)

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONNECTIONS",
    "check_isolation",
    "create_sandbox_app",
    "sandbox_limits",
    "sandbox_uvicorn_config",
    "serve_sandbox",
]

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
"""Largest ``/run_code`` body accepted (code, stdin and files, base64): 32 MiB."""

DEFAULT_MAX_CONNECTIONS = 256
"""Open client connections (see :mod:`rewardkit.http_guard` for who is closed past it)."""


def sandbox_limits(
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    **overrides: Any,
) -> ConnectionLimits:
    """The connection and body guards of ``rewardkit sandbox``: those of ``rewardkit serve``
    (:mod:`rewardkit.http_guard`; header deadline 10 s and 64 KiB, body deadline 120 s and
    64 KiB/s after 5 s, 256 MiB of bodies in flight) with this body cap and connection cap;
    ``/v1/ping`` is the path never starved."""
    budget = max(256 * 1024 * 1024, max_body_bytes)
    return ConnectionLimits(
        **{
            "max_connections": max_connections,
            "max_request_bytes": max_body_bytes,
            "max_body_bytes_in_flight": budget,
            "open_paths": frozenset({"/v1/ping"}),
            "key_prefix": "sandbox ",
            **overrides,
        }
    )


def sandbox_uvicorn_config(app: Any, limits: ConnectionLimits | None = None, **options: Any) -> Any:
    """A uvicorn configuration serving ``app`` behind the guards (``serve_sandbox`` and the
    tests share it)."""
    import uvicorn

    settings: dict[str, Any] = {"log_level": "warning", "access_log": False}
    settings.update(options)
    settings["http"] = protocol_for(fitted(limits or sandbox_limits()))
    return uvicorn.Config(app, **settings)


def create_sandbox_app(
    sandbox: Sandbox | None = None,
    *,
    max_concurrent: int | None = None,
    options: SandboxOptions | None = None,
    api_key: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    on_start: Callable[[Sandbox], None] | None = None,
) -> Any:
    """An ASGI app serving ``/run_code`` and ``/v1/ping`` from one :class:`Sandbox`.

    Pass a sandbox to share it, or ``options``/``max_concurrent`` to build one. The app
    starts the sandbox (probing the machine) on startup, then calls ``on_start``, and
    closes it on shutdown. ``api_key`` (non-empty) guards every route but ``/v1/ping``.
    """
    if api_key is not None and not api_key:
        raise ValueError("api_key is empty: pass a key, or None for no authentication")
    if sandbox is None:
        opts = options or SandboxOptions()
        if max_concurrent is not None:
            opts = replace(opts, max_concurrent=max_concurrent)
        sandbox = Sandbox(opts)
    box = sandbox

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await box.start()
        if on_start is not None:
            on_start(box)
        try:
            yield
        finally:
            await box.close()

    app = FastAPI(title="rewardkit sandbox", lifespan=lifespan)
    app.state.sandbox = box

    @app.get("/v1/ping")
    async def ping() -> str:
        return "pong"

    @app.post("/run_code", response_model=RunCodeResponse)
    async def run_code(request: RunCodeRequest) -> RunCodeResponse:
        try:
            return await box.run_code(request)
        except Exception as exc:  # a bug of ours: still SandboxFusion's shape, never a 500
            return RunCodeResponse(
                status=RunStatus.SANDBOX_ERROR, message=f"{type(exc).__name__}: {exc}"
            )

    @app.get("/v1/isolation")
    async def isolation() -> dict[str, Any]:
        """What protects the host (mode, uid drop, network) and which languages run."""
        return box.isolation

    return _Guard(app, api_key, max_body_bytes)


class _Guard:
    """ASGI wrapper: bearer-key check (not for /v1/ping), then the body limit (413)."""

    def __init__(self, app: FastAPI, api_key: str | None, limit: int) -> None:
        self.app = app
        self.state = app.state
        self.api_key = api_key
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        if self.api_key and scope["path"] != "/v1/ping" and not _authorized(headers, self.api_key):
            return await _reply(send, 401, "missing or wrong bearer token", _BEARER)
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            return await _reply(send, 413, f"body over {self.limit} bytes")
        refused = False
        seen = 0

        async def bounded() -> dict[str, Any]:  # a streamed (chunked) body is counted too
            nonlocal seen, refused
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit and not refused:
                refused = True
                await _reply(send, 413, f"body over {self.limit} bytes")
            return {"type": "http.disconnect"} if refused else message

        async def send_unless_refused(message: MutableMapping[str, Any]) -> None:
            if not refused:
                await send(message)

        await self.app(scope, bounded, send_unless_refused)


_BEARER = {"WWW-Authenticate": "Bearer"}


async def _reply(
    send: Any, status: int, detail: str, headers: dict[str, str] | None = None
) -> None:
    response = JSONResponse({"detail": detail}, status_code=status, headers=headers)

    async def nothing() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    await response({"type": "http"}, nothing, send)


def _authorized(headers: dict[bytes, bytes], key: str) -> bool:
    scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.encode(), key.encode())


def check_isolation(options: SandboxOptions) -> str:
    """Start and close a sandbox once: its one-line isolation report, or RuntimeError (e.g.
    no isolation possible here and ``allow_unisolated`` off)."""

    async def probe() -> str:
        async with Sandbox(options) as box:
            return box.describe()

    return asyncio.run(probe())


def serve_sandbox(
    host: str = "127.0.0.1",
    port: int = 8080,
    max_concurrent: int | None = None,
    *,
    options: SandboxOptions | None = None,
    api_key: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> None:
    """Run the sandbox server until interrupted (``rewardkit sandbox``).

    Binds first (a busy port fails at once), then prints one line with the address and the
    isolation mode once the sandbox is up; raises RuntimeError if the sandbox refuses.
    """
    import uvicorn

    opts = options or SandboxOptions()
    if max_concurrent is not None:
        opts = replace(opts, max_concurrent=max_concurrent)
    check_isolation(opts)  # refuse before binding anything, with the reason
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    # Listening before the sandbox starts: a client that reads the address line and connects
    # at once waits in the backlog instead of being refused (uvicorn listens only later).
    sock.listen(2048)
    bound = sock.getsockname()[1]
    auth = "bearer key" if api_key else "none"

    def announce(box: Sandbox) -> None:
        line = f"rewardkit sandbox on http://{host}:{bound} ({box.describe()}; auth: {auth})"
        print(line, file=sys.stderr, flush=True)

    app = create_sandbox_app(
        options=opts, api_key=api_key, max_body_bytes=max_body_bytes, on_start=announce
    )
    config = sandbox_uvicorn_config(app, sandbox_limits(max_body_bytes, max_connections))
    uvicorn.Server(config).run(sockets=[sock])
