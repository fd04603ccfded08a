"""Prometheus metrics of the reward server, on a registry of its own (one per app)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["ServerMetrics"]


class ServerMetrics:
    """Requests, latency, queue depth and rows by data_source and status."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "rewardkit_requests", "HTTP requests by route and status code",
            ["route", "code"], registry=self.registry,
        )
        self.latency = Histogram(
            "rewardkit_request_seconds", "Request latency by route", ["route"], registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        self.queue_depth = Gauge(
            "rewardkit_queue_rows", "Rows accepted and not yet answered", registry=self.registry,
        )
        self.rows = Counter(
            "rewardkit_rows", "Scored rows by data_source and status",
            ["data_source", "status"], registry=self.registry,
        )
        self.model_batch_rows = Histogram(
            "rewardkit_model_batch_rows", "Rows per reward-model forward batch", registry=self.registry,
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
        )
        self.model_tokens = Counter(
            "rewardkit_model_tokens", "Tokens through the reward model", registry=self.registry,
        )
