"""The reward server: ``rewardkit serve`` (FastAPI + uvicorn).

    rewardkit serve -c reward.yaml --port 8000

Routes (DESIGN.md, "Reward server"): ``POST /v1/score``, OpenRLHF's ``POST
/get_reward``, ``GET /health``, ``GET /ready``, ``GET /metrics``.

Each row of each request is handed to one :class:`~rewardkit.scoring.engine.RewardEngine`
running on the server's own event loop. Rows from concurrent requests therefore
meet inside the engine: CPU verifiers share the worker pool, and model rows are
gathered by the model scorers into token-budget batches. No request waits for an
unrelated slow one. Binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import hmac
import json
import logging
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError, to_json
from starlette.exceptions import HTTPException

from rewardkit.aggregate import (
    component_logs,
    component_names,
    needs_groups,
    refuse_per_sample,
    rescore,
)
from rewardkit.config import RewardConfig
from rewardkit.errors import ConfigError, RewardkitError
from rewardkit.execution.health import Supervised, engine_problem
from rewardkit.scoring.engine import RewardEngine
from rewardkit.server.body import STEP_CHARS, YieldingRoute
from rewardkit.server.metrics import EngineCollector, ServerMetrics, SourceLabels
from rewardkit.server.protocol import uvicorn_config
from rewardkit.trainer_rows import model_logs, rows_from_request
from rewardkit.types import BadRow, Result, Sample, Status, finite_json

__all__ = ["SafeJSONResponse", "create_app", "serve"]

log = logging.getLogger("rewardkit.server")


class ScoreRequest(BaseModel):
    """Body of ``POST /v1/score``. Rows are validated one by one: a bad row is ``invalid``."""

    model_config = ConfigDict(extra="forbid")
    samples: list[Any]  # as many as server.max_queue allows (413 naming it past that)


class ClassifyRequest(BaseModel):
    """Body of ``POST /classify`` as vLLM's pooling API takes a conversation: the last
    message is the response (the assistant's turn), the ones before it the prompt."""

    model_config = ConfigDict(extra="allow")  # vLLM's own fields (model, use_activation, ...)
    messages: list[dict[str, Any]] = Field(min_length=1)


class OpenRLHFRequest(BaseModel):
    """Body of OpenRLHF's ``POST /get_reward`` (``--remote_rm_url``)."""

    model_config = ConfigDict(extra="allow")
    query: list[str]
    prompts: list[str] | None = None
    labels: list[Any] | None = None


class SafeJSONResponse(JSONResponse):
    """JSON that any row can go through: text UTF-8 cannot carry (a lone surrogate in a
    row's response) is sent \\u-escaped, NaN as null, unknown objects as text. A row that
    cannot be encoded as UTF-8 would otherwise fail the whole answer (500), not itself."""

    def render(self, content: Any) -> bytes:
        try:
            return _encode(content)
        except _UNENCODABLE:  # a row nested too deep for either encoder: that row only
            results = content.get("results") if isinstance(content, dict) else None
            if not isinstance(results, list):
                raise
            return _encode({**content, "results": [_encodable_row(r) for r in results]})


_UNENCODABLE = (ValueError, RecursionError)  # what json.dumps raises past its depth


def _encode(content: Any) -> bytes:
    try:  # pydantic's encoder: fast, UTF-8, NaN as null; it refuses lone surrogates
        return to_json(content, inf_nan_mode="null", fallback=str)
    except PydanticSerializationError:
        return json.dumps(finite_json(content), default=str, separators=(",", ":")).encode()


async def _results_response(rows: list[Any]) -> Response:
    """``{"results": rows}`` as SafeJSONResponse would send it, encoded row by row with the
    loop handed back between rows: the rows echo their inputs, so the answer to a 60 MB
    request is as large, and one encoding call would hold every other request."""
    parts = []
    encoded = handed_back = 0
    for row in rows:
        try:
            part = _encode(row)
        except _UNENCODABLE:
            part = _encode(_encodable_row(row))
        parts.append(part)
        encoded += len(part)
        if encoded - handed_back >= STEP_CHARS:
            handed_back = encoded
            await asyncio.sleep(0)
    return Response(b'{"results":[' + b",".join(parts) + b"]}", media_type="application/json")


def _encodable_row(row: Any) -> Any:
    """A result row whose fields can all be sent: a field that cannot (an echoed input
    nested hundreds of levels deep) is replaced by a note saying so; the row's score,
    status and error, and every other row of the answer, are sent as they are."""
    try:
        _encode(row)
        return row
    except _UNENCODABLE:
        if not isinstance(row, dict):
            return f"<not encodable as JSON: {type(row).__name__}>"
    out = {}
    for key, value in row.items():
        try:
            _encode(value)
            out[key] = value
        except _UNENCODABLE as exc:
            out[key] = f"<not encodable as JSON: {type(exc).__name__}>"
    return out


class _State:
    """What the routes share: the engine, the queue count, the metrics."""

    def __init__(self, config: RewardConfig) -> None:
        self.config = config
        self.engine: RewardEngine | None = None
        self.startup_error: BaseException | None = None
        self.in_queue = 0
        self.metrics = ServerMetrics()
        self.metrics.registry.register(EngineCollector(lambda: self.engine))
        self.sources = SourceLabels(config.reward.default_data_source)


def create_app(
    config: RewardConfig, *, on_startup_error: Callable[[BaseException], None] | None = None
) -> FastAPI:
    """The ASGI app. The engine (workers, models) starts in the background once the server
    listens: ``/health`` answers at once, ``/ready`` (and scoring) only when the engine is up,
    which for a large model can take minutes. If the engine cannot start, ``/ready`` answers
    503 with the reason and ``on_startup_error`` is called (``serve`` stops the server)."""
    state = _State(config)

    async def start_engine() -> None:
        try:
            state.engine = await RewardEngine.create(config)
        except Exception as exc:
            state.startup_error = exc
            log.error("rewardkit server cannot start: %s", exc)
            if on_startup_error is not None:
                on_startup_error(exc)
            return
        # Everything loaded so far (sympy, math-verify, torch, the model) lives as long as the
        # server: frozen, the collector's full passes skip it. Unfrozen, each full pass walks
        # millions of objects and stalls every request in flight (a p99 of ~5x p50 here).
        gc.collect()
        gc.freeze()
        log.info("rewardkit server ready")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        starting = asyncio.create_task(start_engine(), name="rewardkit-engine-start")
        try:
            yield
        finally:
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            engine, state.engine = state.engine, None
            if engine is not None:
                await engine.close()

    app = FastAPI(title="rewardkit", version="0.1.0", lifespan=lifespan)
    app.router.route_class = YieldingRoute  # a large body is decoded between other requests
    app.state.rewardkit = state
    app.exception_handler(RequestValidationError)(_validation_error)
    app.exception_handler(HTTPException)(_unreadable_body)  # Starlette's: FastAPI raises it
    app.exception_handler(Busy)(_busy)
    app.exception_handler(TooManyRows)(_too_many_rows)
    # The last added runs first: the guard refuses (401, 503) before a body is read.
    app.add_middleware(BodyLimit, limit=config.server.max_request_bytes)
    app.add_middleware(Guard, state=state)
    _routes(app, state)
    return app


def _model_replicas(engine: RewardEngine) -> dict[str, dict[str, Any]]:
    """``{component: {live, desired}}`` for each model served by replicas (a managed fleet,
    Ray copies): what ``/ready`` reports, ready or not, while one is being restarted."""
    found = {}
    for scorer in engine.model_scorers:
        if isinstance(scorer, Supervised):
            health = scorer.health()
            name = str(getattr(scorer, "component", "model"))
            found[name] = {"live": health.live, "desired": health.desired}
    return found


def _routes(app: FastAPI, state: _State) -> None:
    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/ready")
    async def ready() -> JSONResponse:
        if state.engine is None:
            body: dict[str, Any] = {"ready": False}
            if state.startup_error is not None:
                body["error"] = str(state.startup_error)
            return JSONResponse(body, status_code=503)
        problem = engine_problem(state.engine)  # e.g. no Ray actor live: rows would all fail
        replicas = _model_replicas(state.engine)
        extra = {"replicas": replicas} if replicas else {}
        if problem is not None:
            return JSONResponse({"ready": False, "error": problem, **extra}, status_code=503)
        return JSONResponse({"ready": True, **extra})

    @app.get("/metrics")
    async def metrics() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.post("/v1/score")
    async def score(body: ScoreRequest) -> Any:
        results = rescore(await _score_rows(state, body.samples), state.config.reward)
        return await _results_response([r.to_row() for r in results])

    @app.post("/classify")
    async def classify(body: ClassifyRequest) -> Any:
        """vLLM's ``/classify`` for the discriminative model served here, read as verl and
        rewardkit read vLLM's (``data[0].probs[-1]``: the raw logit): what makes a
        ``rewardkit serve`` a replica of a managed fleet (``rollout.name: transformers``)."""
        return await _classify(state, body)

    @app.post("/get_reward")
    async def get_reward(body: OpenRLHFRequest) -> Any:
        if needs_groups(state.config.reward):  # OpenRLHF sends one rollout per request
            try:
                refuse_per_sample(state.config.reward, "POST /get_reward (OpenRLHF)")
            except ConfigError as exc:
                return JSONResponse({"detail": str(exc)}, status_code=422)
        rows = _openrlhf_rows(state.config, body)
        if isinstance(rows, JSONResponse):
            return rows
        results = await _score_rows(state, rows)
        return _openrlhf_answer(state.config, results)


async def _classify(state: _State, body: ClassifyRequest) -> JSONResponse:
    engine = state.engine
    assert engine is not None  # the guard answers 503 before startup completes
    models = [s for s in engine.model_scorers if s.component == "rm"]
    if not models:
        return JSONResponse(
            {"detail": "/classify needs a discriminative reward model (reward.reward_model)"},
            status_code=404,
        )
    *prompt, last = body.messages
    if last.get("role") != "assistant" or not isinstance(last.get("content"), str):
        return JSONResponse(
            {"detail": "the last message must be the assistant's response (text)"},
            status_code=422,
        )
    turns: list[Mapping[str, Any]] = list(prompt)
    sample = Sample(data_source="classify", prompt=turns, response=last["content"])
    try:
        scored = await models[0].score(sample)
    except RewardkitError as exc:  # this row's failure, not the server's: never retried
        return JSONResponse({"detail": str(exc)}, status_code=422)
    raw = scored.extra.get("rm_raw", scored.score)
    return JSONResponse({"object": "list", "data": [{"index": 0, "probs": [raw]}]})


async def _score_rows(state: _State, rows: list[Any]) -> list[Result]:
    engine = state.engine
    assert engine is not None  # the guard answers 503 before startup completes
    limit = state.config.server.max_queue
    if len(rows) > limit:  # would never fit, however long the client waits: not a 429
        raise TooManyRows(len(rows), limit)
    if state.in_queue + len(rows) > state.config.server.max_queue:
        raise Busy()
    state.in_queue += len(rows)
    state.metrics.queue_depth.inc(len(rows))
    try:
        results = await engine.score_many(rows)
    finally:
        state.in_queue -= len(rows)
        state.metrics.queue_depth.dec(len(rows))
    for result in results:
        source = result.row.get("data_source") if hasattr(result.row, "get") else None
        state.metrics.rows.labels(state.sources.label(source), result.status.value).inc()
    return results


def _openrlhf_rows(
    config: RewardConfig, body: OpenRLHFRequest
) -> list[dict[str, Any] | BadRow] | JSONResponse:
    """OpenRLHF sends the full text (prompt + response) as ``query``; the response is the rest."""
    n = len(body.query)
    for name in ("prompts", "labels"):
        values = getattr(body, name)
        if values is not None and len(values) != n:
            return JSONResponse(
                {"detail": f"'{name}' has {len(values)} items but 'query' has {n}"}, status_code=422
            )
    return rows_from_request(body.query, body.prompts, body.labels)  # one conversion, shared


def _openrlhf_answer(config: RewardConfig, results: list[Result]) -> dict[str, Any]:
    """OpenRLHF turns every reward and extra_logs value into a tensor: numbers only, a
    failed row's reward is ``server.failed_reward`` and its status is in ``rewardkit_*``;
    ``component/<name>`` holds each component (0.0 where a row has none)."""
    failed = config.server.failed_reward
    rewards = [r.score if r.ok else failed for r in results]
    extra_logs = {
        f"rewardkit_{status.value}": [float(r.status is status) for r in results]
        for status in Status
    }
    extra_logs.update(component_logs(results, component_names(config.reward)))
    tokens = model_logs(results)  # each API judge's tokens (its score is a component above)
    extra_logs.update({k: v for k, v in tokens.items() if k.endswith("_tokens")})
    for result in results:
        if not result.ok:
            log.warning("row %d %s: %s", result.index, result.status.value, result.error)
    return {"rewards": rewards, "scores": rewards, "extra_logs": extra_logs}


class Busy(Exception):
    """The queue is full: answered 429 with Retry-After."""


class TooManyRows(Exception):
    """A request with more rows than the queue holds at all: answered 413, naming the limit."""

    def __init__(self, rows: int, limit: int) -> None:
        super().__init__(
            f"the request has {rows} rows, more than server.max_queue={limit} (the rows the "
            f"server holds at once): send at most {limit} rows per request, or raise "
            "server.max_queue"
        )


# ---------------------------------------------------------------------- middleware


class Guard:
    """Auth, readiness, metrics and the per-request log line, as plain ASGI middleware
    (Starlette's ``BaseHTTPMiddleware`` runs each request in a task group of its own,
    which cost about a third of the server's time per small request)."""

    def __init__(self, app: Any, state: _State) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        route, method = scope["path"], scope["method"]
        status = 500  # what the log says if the app fails before it answers
        answered = False

        async def send_and_note(message: Any) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status, answered = message["status"], True
            await send(message)

        refusal = self._refusal(scope)
        try:
            if refusal is not None:
                await refusal(scope, receive, send_and_note)
            else:
                await self.app(scope, receive, send_and_note)
        except asyncio.CancelledError:
            # uvicorn cancels the requests still running when server.drain_timeout_s has
            # passed on shutdown (it cancels request tasks for nothing else). Unanswered, the
            # client would get uvicorn's plain-text 500: say why instead. The task is ending
            # anyway, so the cancellation stops here.
            if answered:  # the answer had started: nothing to add
                raise
            status = 503
            await self._stopped(send)
        finally:
            self._record(method, route, status, time.perf_counter() - started)

    async def _stopped(self, send: Any) -> None:
        drain = self.state.config.server.drain_timeout_s
        detail = (
            f"the server stopped before this request finished (server.drain_timeout_s={drain:g})"
        )
        response = JSONResponse({"detail": detail}, status_code=503, headers={"Retry-After": "1"})
        await response({"type": "http"}, _replay([]), send)

    def _refusal(self, scope: Any) -> Response | None:
        """401 without the key (every route but /health), 503 for POSTs before the engine is up."""
        key = self.state.config.server.api_key
        if scope["path"] != "/health" and key and not _authorized(scope, key):
            return JSONResponse(
                {"detail": "missing or wrong bearer token"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        if scope["method"] == "POST" and self.state.engine is None:
            return JSONResponse(
                {"detail": "not ready"}, status_code=503, headers={"Retry-After": "1"}
            )
        return None

    def _record(self, method: str, route: str, status: int, elapsed: float) -> None:
        label = route if route in _ROUTES else "other"
        self.state.metrics.requests.labels(label, str(status)).inc()
        self.state.metrics.latency.labels(label).observe(elapsed)
        # One logfmt line per request, for log pipelines that parse key=value.
        log.debug(
            "request method=%s route=%s status=%d ms=%.1f", method, route, status, elapsed * 1000
        )


_ROUTES = frozenset({"/health", "/ready", "/metrics", "/v1/score", "/get_reward", "/classify"})


class BodyLimit:
    """413 for a body over ``limit`` bytes, declared (Content-Length) or streamed (chunked)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                return await self._reject(send)
            return await self.app(scope, receive, send)
        chunks, size, more = [], 0, True
        while more:  # no declared length: buffer up to the limit, then replay
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, _replay([message]), send)
            size += len(message.get("body", b""))
            if size > self.limit:
                return await self._reject(send)
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([body]), send)

    async def _reject(self, send: Any) -> None:
        response = JSONResponse({"detail": f"body over {self.limit} bytes"}, status_code=413)
        await response({"type": "http"}, _replay([]), send)


def _replay(messages: list[dict[str, Any]]) -> Callable[[], Awaitable[dict[str, Any]]]:
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        await asyncio.Event().wait()  # like a client that sends nothing more
        return {"type": "http.disconnect"}

    return receive


def _authorized(scope: Any, key: str) -> bool:
    header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
    scheme, _, token = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.encode(), key.encode())


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    typed = request.headers.get("content-type", "").split(";")[0].strip().lower()
    problems = [_problem(err, typed) for err in exc.errors()]
    return SafeJSONResponse({"detail": problems}, status_code=422)


def _problem(err: Mapping[str, Any], content_type: str) -> str:
    """One line of a 422: the field, then what is wrong with it; a body that is no JSON
    says where it stops being JSON, and a JSON body sent as another type says so."""
    if err.get("type") == "json_invalid":  # its loc holds the byte offset, not a field
        at = next((p for p in err["loc"] if isinstance(p, int)), None)
        reason = (err.get("ctx") or {}).get("error", "not valid JSON")
        return f"body: not valid JSON{'' if at is None else f' at character {at}'}: {reason}"
    where = ".".join(str(p) for p in err["loc"] if p != "body") or "body"
    if where == "body" and not (content_type.endswith("json") or content_type.endswith("+json")):
        shown = content_type or "none"
        return f"body: send JSON with the header Content-Type: application/json (got {shown})"
    return f"{where}: {err['msg']}"


async def _unreadable_body(request: Request, exc: HTTPException) -> Response:
    """FastAPI answers 400 "There was an error parsing the body" for JSON that is valid but
    that Python's reader refuses (an integer over 4,300 digits, nesting past the recursion
    limit): a malformed body, so 422 with the reason, as for any other."""
    cause = exc.__cause__
    if exc.status_code == 400 and isinstance(cause, ValueError | RecursionError):
        reason = str(cause).splitlines()[0][:200] if str(cause) else type(cause).__name__
        return SafeJSONResponse({"detail": [f"body: not readable JSON: {reason}"]}, status_code=422)
    return await http_exception_handler(request, exc)


async def _busy(request: Request, exc: Busy) -> JSONResponse:
    return JSONResponse(
        {"detail": "queue full, retry later"}, status_code=429, headers={"Retry-After": "1"}
    )


async def _too_many_rows(request: Request, exc: TooManyRows) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=413)


# ---------------------------------------------------------------------- serve


def serve(config: RewardConfig) -> int:
    """Run until SIGINT/SIGTERM, then drain: stop accepting, finish in-flight requests, exit 0."""
    import uvicorn

    server = config.server
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    loopback = server.host.startswith("127.") or server.host in ("localhost", "::1")
    reach = (
        "loopback only; pass --host to expose it" if loopback else "reachable from other machines"
    )
    sock = _bind(server.host, server.port)  # before announcing: a port in use is one line, exit 2
    port = sock.getsockname()[1]  # the real one for server.port=0
    log.info("rewardkit serve on http://%s:%d (%s)", server.host, port, reach)
    if server.api_key is None:
        log.info(
            "no server.api_key: every client that reaches the port may score and read /metrics"
        )
    failed: list[BaseException] = []

    def stop(exc: BaseException) -> None:
        failed.append(exc)
        uv_server.should_exit = True

    uv_config = uvicorn_config(create_app(config, on_startup_error=stop), server)
    uv_server = uvicorn.Server(uv_config)
    # uvicorn drains on SIGTERM, restores the previous handler and re-raises the signal.
    # Making that previous handler a no-op turns a drained shutdown into exit status 0.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        uv_server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    if failed:
        raise failed[0]  # the CLI prints it as an error, naming the config key, and exits 2
    log.info("rewardkit server stopped")
    return 0


def _bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` as uvicorn binds one (``Config.bind_socket``), or
    ConfigError naming ``server.port`` / ``server.host``: uvicorn itself would log the
    error after our start-up lines and exit 1."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"server.port: {host}:{port} is already in use (another rewardkit serve?); "
                "stop it or pass --port"
            ) from exc
        reason = exc.strerror or str(exc)
        raise ConfigError(f"server.host: cannot listen on {host}:{port}: {reason}") from exc
    sock.set_inheritable(True)
    return sock
