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
A malformed body is a 422 naming the field. See :mod:`rewardkit.execution.sandbox` for
the isolation of each run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from fastapi import FastAPI

from rewardkit.execution.sandbox import (
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
    Sandbox,
    SandboxOptions,
)

__all__ = ["create_sandbox_app", "serve_sandbox"]


def create_sandbox_app(
    sandbox: Sandbox | None = None,
    *,
    max_concurrent: int | None = None,
    options: SandboxOptions | None = None,
) -> FastAPI:
    """A FastAPI app serving ``/run_code`` and ``/v1/ping`` from one :class:`Sandbox`.

    Pass a sandbox to share it, or ``options``/``max_concurrent`` to build one. The app
    starts the sandbox (probing the machine) on startup and closes it on shutdown.
    """
    if sandbox is None:
        opts = options or SandboxOptions()
        if max_concurrent is not None:
            opts = replace(opts, max_concurrent=max_concurrent)
        sandbox = Sandbox(opts)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await sandbox.start()
        try:
            yield
        finally:
            await sandbox.close()

    app = FastAPI(title="rewardkit sandbox", lifespan=lifespan)
    app.state.sandbox = sandbox

    @app.get("/v1/ping")
    async def ping() -> str:
        return "pong"

    @app.post("/run_code", response_model=RunCodeResponse)
    async def run_code(request: RunCodeRequest) -> RunCodeResponse:
        try:
            return await sandbox.run_code(request)
        except Exception as exc:  # a bug of ours: still SandboxFusion's shape, never a 500
            return RunCodeResponse(
                status=RunStatus.SANDBOX_ERROR, message=f"{type(exc).__name__}: {exc}"
            )

    @app.get("/v1/isolation")
    async def isolation() -> dict[str, Any]:
        """What protects the host (mode, uid drop, network) and which languages run."""
        return sandbox.isolation

    return app


def serve_sandbox(
    host: str = "127.0.0.1", port: int = 8080, max_concurrent: int | None = None
) -> None:
    """Run the sandbox server until interrupted (``rewardkit sandbox``)."""
    import uvicorn

    app = create_sandbox_app(max_concurrent=max_concurrent)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
