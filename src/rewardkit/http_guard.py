"""Connection and body limits uvicorn lacks, shared by ``rewardkit serve`` and ``rewardkit sandbox``.

uvicorn (with httptools) waits for request headers and bodies forever, keeps every header
byte it is sent, and lets the app buffer a body of any size, so a few hundred clients that
send one byte every few seconds (slowloris, on headers or on bodies) hold every slot and
file descriptor, and a few unfinished large bodies grow the server by gigabytes.
:class:`GuardedHttpToolsProtocol` adds, per connection (the names are the ``server.*``
config keys of ``rewardkit serve``):

- ``header_timeout_s``: the request line and headers must arrive within it (timed from the
  connection, or from the first byte of a later keep-alive request); else 408 and close.
- ``max_header_bytes``: a request whose line and headers run past it gets 431 and is closed
  (checked after each read, so memory stays within it plus one read, and on the parsed
  line and headers once they are complete: headers that arrive whole in one read too).
- ``max_request_bytes``: a body declared larger gets 413 before any of it is read; a
  chunked body is counted as it arrives and cut with 413 there.
- ``body_timeout_s`` and ``body_min_bytes_per_s``: a body must arrive within the first, and
  after :data:`BODY_GRACE_S` at no less than the second on average; else 408 and close.
  Time the server itself stops reading (the app is not ready for more) does not count.
- ``max_body_bytes_in_flight``: the bodies being received or handled, across all
  connections, hold at most this many bytes (a declared length is reserved when the headers
  arrive); a request that would pass it gets 503 with Retry-After before its body is read.
  When a large amount is given back, free memory is returned to the system.
- ``max_connections``: past it, a new connection closes the one that has waited longest
  without a request being handled: slow or idle (headers, keep-alive) first, then those
  still sending a body. When every connection is having its request handled, up to
  :data:`PROBE_CONNECTIONS` more are let in to read their headers: a probe of an *open
  path* (``/health``, ``/ready``; ``/v1/ping`` for the sandbox) is answered, anything else
  gets 503 with Retry-After. Probes are never starved by load or by an attack.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import itertools
import json
import logging
import resource
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = [
    "BODY_GRACE_S",
    "PROBE_CONNECTIONS",
    "ConnectionLimits",
    "GuardedHttpToolsProtocol",
    "fitted",
    "protocol_for",
]

log = logging.getLogger("rewardkit.http")

# Orders connections by when they last started waiting (loop.time() ties within one pass).
_ORDER = itertools.count()
_REQUEST_LINE_EXTRA = 16  # a request line's method, version and spaces beside its target

# A new connection that has sent nothing yet is not closed for a newcomer for this long.
_GRACE_S = 1.0

BODY_GRACE_S = 5.0
"""Seconds a body may take before ``body_min_bytes_per_s`` applies to it."""

PROBE_CONNECTIONS = 16
"""Connections let in past ``max_connections`` when no connection can be closed for them,
only to be answered on an open path (``/health``) or refused with 503."""

# Seconds a probe connection may take to send its headers.
_PROBE_HEADER_S = 2.0

# After a refusal while the client may still be sending, the socket is closed this late.
_LINGER_S = 1.0

# Body bytes given back since the last trim that make a trim worth it.
_TRIM_AFTER_BYTES = 64 * 1024 * 1024

# Seconds after a large release before the trim (at most one trim per this long).
_TRIM_DELAY_S = 1.0

# File descriptors kept free beyond the connections: worker pipes, model files, logs.
_FD_RESERVE = 256


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The bounds; the defaults are ``rewardkit serve``'s (see the module docstring)."""

    max_connections: int = 1000
    header_timeout_s: float = 10.0
    max_header_bytes: int = 64 * 1024
    max_request_bytes: int = 64 * 1024 * 1024
    body_timeout_s: float = 120.0
    body_min_bytes_per_s: int = 64 * 1024
    max_body_bytes_in_flight: int = 256 * 1024 * 1024
    open_paths: frozenset[str] = field(default=frozenset({"/health", "/ready"}))
    key_prefix: str = "server."
    """How the limits are named in messages (``server.max_request_bytes``)."""

    def name(self, limit: str) -> str:
        return f"{self.key_prefix}{limit}"


class _Bodies:
    """Body bytes held across one server's connections (the in-flight budget)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.released = 0
        self.trim_pending = False


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits above (see the module docstring)."""

    limits: ClassVar[ConnectionLimits]
    bodies: ClassVar[_Bodies]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._header_bytes = 0
        self._head_bytes = 0  # the request line's and headers' bytes, as parsed
        self._reading_headers = True
        self._waiting_since = 0  # order in which it last started waiting on the client
        self._made_at = 0.0
        self._probe = False  # let in past max_connections: open paths only
        self._refused = False
        # the body in progress: bytes seen, reading time, its deadline tick
        self._body_pending = False
        self._body_seen = 0
        self._body_active = 0.0
        self._body_timer: asyncio.TimerHandle | None = None
        self._chunked = False
        self._reserved = 0  # body bytes of this connection counted in the budget

    # ------------------------------------------------------------------ asyncio protocol

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._waiting_since = next(_ORDER)
        self._made_at = self.loop.time()
        if len(self.connections) > self.limits.max_connections and not self._evict_one():
            probes = sum(1 for c in self.connections if getattr(c, "_probe", False))
            if probes >= PROBE_CONNECTIONS:
                self._refuse(503, "too many connections, retry later", retry_after=True)
                return
            self._probe = True
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        self._stop_body_timer()
        self._release()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:  # answered already: drop what is still coming
            return
        super().data_received(data)
        if self._reading_headers and not self.transport.is_closing() and not self._refused:
            # Counted after parsing so a body arriving with its headers is never counted;
            # a chunk that leaves headers unfinished is all header bytes.
            self._header_bytes += len(data)
            if self._header_bytes > self.limits.max_header_bytes:
                limit = self.limits.name("max_header_bytes")
                self._refuse(431, f"request line and headers over {limit}", linger=True)

    # ------------------------------------------------------------------ parser callbacks

    def on_message_begin(self) -> None:
        if self._refused:  # a request pipelined behind the refused one: never read
            return
        super().on_message_begin()
        self._reading_headers = True
        self._header_bytes = 0
        self._head_bytes = 0
        self._arm_header_timer()

    def on_url(self, url: bytes) -> None:
        if not self._refused:
            self._head_bytes += len(url) + _REQUEST_LINE_EXTRA
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._refused:
            self._head_bytes += len(name) + len(value) + 4  # ": " and the line's end
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        self._reading_headers = False
        self._disarm_header_timer()
        if self._head_bytes > self.limits.max_header_bytes:
            # headers that arrived whole in one read were never counted by data_received
            limit = self.limits.name("max_header_bytes")
            self._refuse(431, f"request line and headers over {limit}", linger=True)
            return
        refusal = self._refusal()
        if refusal is not None:
            self._refuse(*refusal[:2], retry_after=refusal[2], linger=True)
            return
        if self._body_pending:
            self._waiting_since = next(_ORDER)
            self._start_body_timer()
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self._refused:
            return
        self._body_seen += len(body)
        if self._chunked:  # no declared length: counted and reserved as it arrives
            if self._body_seen > self.limits.max_request_bytes:
                limit = self.limits.max_request_bytes
                name = self.limits.name("max_request_bytes")
                self._refuse(413, f"body over {limit} bytes ({name})", linger=True)
                return
            if not self._reserve(len(body)):
                self._refuse(503, self._budget_message(), retry_after=True, linger=True)
                return
        super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._body_pending = False
        self._stop_body_timer()
        super().on_message_complete()

    def on_response_complete(self) -> None:
        # A body still arriving (the app answered without reading it all) keeps its deadline.
        self._waiting_since = next(_ORDER)
        if not self.pipeline:
            self._release()
        super().on_response_complete()
        if self._probe and not self.transport.is_closing():
            self.transport.close()  # a probe's slot is not kept for keep-alive

    # ------------------------------------------------------------------ requests

    def _refusal(self) -> tuple[int, str, bool] | None:
        """Why this request is answered before the app sees it: (status, reason, retry)."""
        if self._probe and _path(self.url) not in self.limits.open_paths:
            return 503, "too many connections, retry later", True
        length: int | None = None
        self._chunked = False
        for name, value in self.headers:
            if name == b"content-length" and value.strip().isdigit():
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                self._chunked = True
        self._body_seen, self._body_active = 0, 0.0
        self._body_pending = self._chunked or bool(length)
        if length is not None and not self._chunked:
            if length > self.limits.max_request_bytes:
                limit = self.limits.name("max_request_bytes")
                return 413, f"body over {self.limits.max_request_bytes} bytes ({limit})", False
            if length and not self._reserve(length):
                return 503, self._budget_message(), True
        return None

    def _budget_message(self) -> str:
        name = self.limits.name("max_body_bytes_in_flight")
        return f"too many request bodies in flight ({name}), retry later"

    def _reserve(self, n: int) -> bool:
        bodies = self.bodies
        if bodies.in_flight + n > self.limits.max_body_bytes_in_flight:
            return False
        bodies.in_flight += n
        self._reserved += n
        return True

    def _release(self) -> None:
        if not self._reserved:
            return
        bodies = self.bodies
        bodies.in_flight -= self._reserved
        bodies.released += self._reserved
        self._reserved = 0
        if bodies.released >= _TRIM_AFTER_BYTES and not bodies.trim_pending:
            bodies.trim_pending = True
            self.loop.call_later(_TRIM_DELAY_S, _trim, bodies)  # once the request has ended

    # ------------------------------------------------------------------ deadlines

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:  # a keep-alive request's deadline starts at its first byte
            timeout = self.limits.header_timeout_s
            if self._probe:
                timeout = min(timeout, _PROBE_HEADER_S)
            self._header_timer = self.loop.call_later(timeout, self._headers_too_slow)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self._reading_headers and not self.transport.is_closing():
            limit = self.limits.name("header_timeout_s")
            self._refuse(408, f"request headers not received within {limit}")

    def _start_body_timer(self) -> None:
        self._stop_body_timer()
        self._body_timer = self.loop.call_later(_TICK_S, self._body_tick)

    def _stop_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_tick(self) -> None:
        self._body_timer = None
        if not self._body_pending or self.transport.is_closing():
            return
        if not self.flow.read_paused:  # time the server is not reading is not the client's
            self._body_active += _TICK_S
        limits = self.limits
        answered = self.cycle is not None and self.cycle.response_complete
        too_slow = self._body_active > limits.body_timeout_s or (
            self._body_active > BODY_GRACE_S
            and self._body_seen / self._body_active < limits.body_min_bytes_per_s
        )
        if answered and too_slow:  # the rest of a body the app did not need: just close
            self._body_pending = False
            self.transport.close()
            return
        if self._body_active > limits.body_timeout_s:
            self._refuse(408, f"request body not received within {limits.name('body_timeout_s')}")
            return
        rate = self._body_seen / self._body_active if self._body_active else 0.0
        if self._body_active > BODY_GRACE_S and rate < limits.body_min_bytes_per_s:
            name = limits.name("body_min_bytes_per_s")
            self._refuse(408, f"request body slower than {name}")
            return
        self._body_timer = self.loop.call_later(_TICK_S, self._body_tick)

    # ------------------------------------------------------------------ the connection cap

    def _idle(self) -> bool:
        """No request in progress: reading headers, or between keep-alive requests."""
        return self.cycle is None or (self.cycle.response_complete and not self.pipeline)

    def _evictable(self, now: float) -> tuple[int, int] | None:
        """Its place in the eviction order, or None: idle connections (oldest first), then
        those still sending a body (oldest first); never a connection so new that its
        request may not have been read yet (under a flood of connections a real client's
        would otherwise be closed unread), nor one whose request is being handled."""
        if self.transport.is_closing():
            return None
        fresh = self._reading_headers and not self._header_bytes and now - self._made_at < _GRACE_S
        if fresh:
            return None
        if self._reading_headers or self._idle():
            return (0, self._waiting_since)
        if self._body_pending:
            return (1, self._waiting_since)
        return None

    def _evict_one(self) -> bool:
        """Close the connection that has waited longest on its client."""
        now = self.loop.time()
        best: tuple[tuple[int, int], GuardedHttpToolsProtocol] | None = None
        for c in self.connections:
            if c is self or not isinstance(c, GuardedHttpToolsProtocol):
                continue
            rank = c._evictable(now)
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, c)
        if best is None:
            return False
        oldest = best[1]
        if oldest._reading_headers:
            oldest._refuse(408, "closed for a new connection: headers too slow")
        elif oldest._body_pending:
            oldest._refuse(408, "closed for a new connection: request body too slow")
        else:
            oldest._disarm_header_timer()
            oldest.transport.close()
        return True

    def _refuse(
        self, status: int, reason: str, *, retry_after: bool = False, linger: bool = False
    ) -> None:
        """Answer a JSON error and close, whatever state the parser is in. With ``linger``
        (the client may still be sending) the answer is followed by end-of-file at once but
        the socket is closed only after :data:`_LINGER_S`, reading nothing more: closed with
        unread bytes, it would send a reset that can destroy the answer before the client
        reads it."""
        self._disarm_header_timer()
        self._stop_body_timer()
        self._reading_headers = False
        self._body_pending = False
        self._refused = True
        self._release()
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app, if it runs, answers no one
            self.cycle.message_event.set()
        body = json.dumps({"detail": reason}).encode()
        head = [
            f"HTTP/1.1 {status} {_REASONS[status]}",
            "content-type: application/json",
            f"content-length: {len(body)}",
            "connection: close",
        ]
        if retry_after:
            head.append("retry-after: 1")
        self.transport.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        if linger and self.transport.can_write_eof():
            self.transport.write_eof()
            self.flow.pause_reading()  # what still comes waits in the kernel, unread
            self.loop.call_later(_LINGER_S, self.transport.close)
        else:
            self.transport.close()
        log.debug("connection refused status=%d reason=%s", status, reason)


_TICK_S = 0.5

_REASONS = {
    408: "Request Timeout",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}


def _path(url: bytes) -> str:
    try:
        return httptools.parse_url(url).path.decode("latin-1")
    except (httptools.HttpParserInvalidURLError, ValueError):
        return ""


def _trim(bodies: _Bodies) -> None:
    """Free what the bodies' requests left and give the heap back to the system. A body
    cut off mid-read lives on in a reference cycle (the disconnect's traceback holds the
    frame holding its chunks) that only a full collection frees, and glibc keeps freed
    heap otherwise: a second attack would find the first one's memory still held."""
    bodies.trim_pending = False
    bodies.released = 0
    gc.collect()  # the server freezes what it loaded at startup: this walks only the new
    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return
    trim.argtypes = [ctypes.c_size_t]
    trim(0)


def protocol_for(limits: ConnectionLimits) -> type[GuardedHttpToolsProtocol]:
    """A protocol class bound to ``limits`` and a body budget of its own (uvicorn
    instantiates the class it is given, once per connection)."""
    return type(
        "BoundGuardedHttpToolsProtocol",
        (GuardedHttpToolsProtocol,),
        {"limits": limits, "bodies": _Bodies()},
    )


def fitted(limits: ConnectionLimits) -> ConnectionLimits:
    """Raise the open-file limit to hold ``max_connections`` (and the probes), or lower the
    cap to fit it: past the limit accept() fails and every client is refused."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = limits.max_connections + PROBE_CONNECTIONS + _FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return limits
    room = soft - _FD_RESERVE - PROBE_CONNECTIONS
    if room >= limits.max_connections:
        return limits
    cap = max(1, room)
    log.warning(
        "%s=%d does not fit the open-file limit (%d): using %d",
        limits.name("max_connections"),
        limits.max_connections,
        soft,
        cap,
    )
    return replace(limits, max_connections=cap)
