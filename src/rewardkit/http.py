"""The one HTTP client for every remote call rewardkit makes (model servers, judges, sandboxes).

One pooled ``httpx.AsyncClient`` per endpoint, a hard limit on every attempt, retries on
*transient* failures only (connection errors, HTTP 429/502/503/504) with jittered
exponential backoff, and optional rate limits. A dead or stalled endpoint ends in
:class:`~rewardkit.errors.RemoteError` after a bounded time, never a hang::

    async with HttpClient("http://127.0.0.1:8000", HttpOptions(timeout_s=30)) as client:
        answer = await client.post_json("/classify", {"input": ["..."]})

Create and use a client on one event loop (its semaphore and connections belong to it).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Mapping
from typing import Any

import httpx

from rewardkit._closing import AsyncClosing
from rewardkit.config import HttpOptions
from rewardkit.errors import HttpStatusError, RemoteError  # re-exported: its old home

__all__ = ["HttpClient", "HttpOptions", "HttpStatusError"]

RETRY_STATUSES = frozenset({429, 502, 503, 504})
# Failures before the server could have acted on the request, or a dropped connection:
# safe to repeat. A timeout is deliberately absent (see HttpOptions.timeout_s).
_TRANSIENT_ERRORS = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.RemoteProtocolError,
    httpx.ReadError,
    httpx.WriteError,
)
_SNIPPET = 300


class _Encoded(bytes):
    """A request body already encoded as JSON (:meth:`HttpClient.post_encoded`)."""


class HttpClient(AsyncClosing):
    """A pooled JSON client for one base URL, with timeouts, retries and rate limits."""

    def __init__(
        self,
        base_url: str,
        options: HttpOptions | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.options = options or HttpOptions()
        opts = self.options
        all_headers = {"Accept": "application/json", **opts.headers, **(headers or {})}
        if opts.api_key:
            all_headers["Authorization"] = f"Bearer {opts.api_key}"
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=all_headers,
            timeout=httpx.Timeout(opts.timeout_s, connect=opts.connect_timeout_s),
            limits=httpx.Limits(
                max_connections=opts.max_concurrent, max_keepalive_connections=opts.max_concurrent
            ),
            trust_env=False,  # a proxy from the environment must not capture calls to local servers
        )
        self._slots = asyncio.Semaphore(opts.max_concurrent)
        self._requests = _Bucket.make(opts.requests_per_minute)
        self._tokens = _Bucket.make(opts.tokens_per_minute)

    async def post_json(self, path: str, body: Any, *, tokens: int = 0) -> Any:
        """POST ``body`` as JSON and return the decoded JSON answer.

        ``tokens`` is the request's estimated token cost for ``tokens_per_minute``
        (``estimated_tokens_per_request``, when set, stands for any nonzero estimate).
        Raises HttpStatusError for a non-2xx answer and RemoteError for everything else
        (unreachable, timed out, not JSON).
        """
        return await self._request("POST", path, body, tokens)

    async def post_encoded(self, path: str, content: bytes) -> Any:
        """POST ``content``, a JSON document encoded by the caller (who chose how: a
        rewardkit server reads NaN and escaped lone surrogates, which the strict encoding
        of :meth:`post_json` refuses), and return the decoded JSON answer (same errors)."""
        return await self._request("POST", path, _Encoded(content), 0)

    async def get_json(self, path: str) -> Any:
        """GET ``path`` and return the decoded JSON answer (same errors as post_json)."""
        return await self._request("GET", path, None, 0)

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._client.aclose()

    async def _request(self, method: str, path: str, body: Any, tokens: int) -> Any:
        url = f"{self.base_url}/{path.lstrip('/')}"
        opts = self.options
        if tokens > 0 and opts.estimated_tokens_per_request is not None:
            tokens = opts.estimated_tokens_per_request  # verl's rate_limited: a flat cost
        for attempt in range(opts.max_retries + 1):
            last = attempt == opts.max_retries
            await self._requests.take(1)
            await self._tokens.take(tokens)
            try:
                async with self._slots:
                    response = await self._attempt(method, url, body)
            except _TRANSIENT_ERRORS as exc:
                if last:
                    raise RemoteError(
                        f"{method} {url}: {_describe(exc)} after {attempt + 1} attempts"
                    ) from exc
                await asyncio.sleep(self._backoff(attempt))
                continue
            except httpx.HTTPError as exc:  # not worth repeating: a bad URL, a broken answer
                raise RemoteError(f"{method} {url}: {_describe(exc)}") from exc
            if response.status_code in RETRY_STATUSES and not last:
                await asyncio.sleep(self._backoff(attempt, response.headers.get("retry-after")))
                continue
            return _decode(method, url, response, attempt + 1)
        raise AssertionError("unreachable")  # pragma: no cover - the last attempt returns or raises

    async def _attempt(self, method: str, url: str, body: Any) -> httpx.Response:
        """One attempt under a hard total limit (httpx's own timeouts are per phase)."""
        limit = self.options.timeout_s
        try:
            async with asyncio.timeout(limit):
                if isinstance(body, _Encoded):
                    headers = {"content-type": "application/json"}
                    return await self._client.request(method, url, content=body, headers=headers)
                return await self._client.request(method, url, json=body)
        except (TimeoutError, httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout) as exc:
            raise RemoteError(f"{method} {url}: no answer within {limit:g}s") from exc
        except httpx.InvalidURL as exc:
            raise RemoteError(f"{method} {url}: invalid URL ({exc})") from exc

    def _backoff(self, attempt: int, retry_after: str | None = None) -> float:
        opts = self.options
        ceiling = min(opts.backoff_max_s, opts.backoff_base_s * 2**attempt)
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)  # equal jitter: spread, never ~0
        hinted = _seconds(retry_after)
        if hinted is not None:
            delay = max(delay, hinted)
        return min(delay, opts.backoff_max_s)


def _decode(method: str, url: str, response: httpx.Response, attempts: int) -> Any:
    if not response.is_success:
        body = response.text[:_SNIPPET]
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        raise HttpStatusError(
            f"{method} {url}: HTTP {response.status_code}{tries}: {body}",
            status=response.status_code,
            body=body,
        )
    try:
        return json.loads(response.content)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RemoteError(
            f"{method} {url}: answer is not JSON: {response.text[:_SNIPPET]!r}"
        ) from exc


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _seconds(retry_after: str | None) -> float | None:
    """A Retry-After header in seconds (the HTTP-date form is ignored)."""
    if retry_after is None:
        return None
    try:
        value = float(retry_after)
    except ValueError:
        return None
    return value if value >= 0 else None


class _Bucket:
    """A token bucket: ``rate`` units per second, bursts up to one second's worth (at least 1).

    A take larger than the burst waits for a full bucket and then leaves it in debt, so
    big requests are paced rather than refused.
    """

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate)
        self.level = self.capacity
        self.stamp = time.monotonic()
        self._lock = asyncio.Lock()

    @classmethod
    def make(cls, per_minute: float | None) -> _Bucket | _NoLimit:
        return _NoLimit() if per_minute is None else cls(per_minute / 60.0)

    async def take(self, amount: float) -> None:
        if amount <= 0:
            return
        async with self._lock:  # FIFO: one waiter refills at a time
            while True:
                now = time.monotonic()
                self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
                self.stamp = now
                need = min(amount, self.capacity)
                if self.level >= need:
                    self.level -= amount
                    return
                await asyncio.sleep((need - self.level) / self.rate)


class _NoLimit:
    async def take(self, amount: float) -> None:
        return None
