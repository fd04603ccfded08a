"""``rewardkit serve``'s uvicorn configuration: the shared connection and body guards of
:mod:`rewardkit.http_guard`, with the limits of the ``server.*`` config keys."""

from __future__ import annotations

from typing import Any

from rewardkit.config import ServerConfig
from rewardkit.http_guard import ConnectionLimits, fitted, protocol_for

__all__ = ["connection_limits", "uvicorn_config"]


def connection_limits(server: ServerConfig) -> ConnectionLimits:
    """The guards' limits from the ``server`` config section."""
    return ConnectionLimits(
        max_connections=server.max_connections,
        header_timeout_s=server.header_timeout_s,
        max_header_bytes=server.max_header_bytes,
        max_request_bytes=server.max_request_bytes,
        body_timeout_s=server.body_timeout_s,
        body_min_bytes_per_s=server.body_min_bytes_per_s,
        max_body_bytes_in_flight=server.max_body_bytes_in_flight,
        open_paths=frozenset({"/health", "/ready"}),
        key_prefix="server.",
    )


def uvicorn_config(app: Any, server: ServerConfig, **overrides: Any) -> Any:
    """The uvicorn configuration ``serve`` and the tests share: our limits, no access log."""
    import uvicorn

    options: dict[str, Any] = {
        "host": server.host,
        "port": server.port,
        "log_level": "warning",
        "timeout_graceful_shutdown": server.drain_timeout_s,
        "access_log": False,
        "http": protocol_for(fitted(connection_limits(server))),
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)
