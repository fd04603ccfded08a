"""Prometheus metrics of the reward server, on a registry of its own (one per app)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from rewardkit.execution.health import Counted, Supervised

__all__ = ["EngineCollector", "ServerMetrics", "SourceLabels"]


class ServerMetrics:
    """Requests, latency, queue depth and rows by data_source and status."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "rewardkit_requests",
            "HTTP requests by route and status code",
            ["route", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "rewardkit_request_seconds",
            "Request latency by route",
            ["route"],
            registry=self.registry,
            buckets=(
                0.001,
                0.0025,
                0.005,
                0.01,
                0.025,
                0.05,
                0.1,
                0.25,
                0.5,
                1,
                2.5,
                5,
                10,
                30,
                60,
            ),
        )
        self.queue_depth = Gauge(
            "rewardkit_queue_rows",
            "Rows accepted and not yet answered",
            registry=self.registry,
        )
        self.rows = Counter(
            "rewardkit_rows",
            "Scored rows by data_source and status",
            ["data_source", "status"],
            registry=self.registry,
        )


class SourceLabels:
    """The ``data_source`` label of a row, bounded: each label value is a time series kept
    for the server's life, so 5,000 made-up sources per request would grow ``/metrics``
    without end. The built-in sources and ``reward.default_data_source`` are always their
    own label; the first :attr:`MAX_OTHERS` other sources seen are too; the rest are
    ``"other"``, as is anything longer than :attr:`MAX_CHARS` or not plain printable text."""

    MAX_OTHERS = 64
    MAX_CHARS = 100

    def __init__(self, default_source: str | None = None) -> None:
        from rewardkit.verifiers.registry import KNOWN_DATA_SOURCES

        self._known = {s for s in KNOWN_DATA_SOURCES if not s.endswith("*")}
        if default_source:
            self._known.add(default_source)
        self._others: set[str] = set()

    def label(self, source: Any) -> str:
        if source is None or source == "":
            return "(none)"
        if not isinstance(source, str) or not _plain(source, self.MAX_CHARS):
            return "other"
        if source in self._known or source in self._others:
            return source
        if len(self._others) < self.MAX_OTHERS:
            self._others.add(source)
            return source
        return "other"


def _plain(text: str, max_chars: int) -> bool:
    """Short, printable and encodable: a label must survive the UTF-8 text exposition."""
    if len(text) > max_chars or not text.isprintable():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class EngineCollector(Collector):
    """Reads the engine's own counters at scrape time: work avoided, pool faults, model batches.

    ``rewardkit_engine_events_total{source="engine",event="deduplicated"}`` and so on:
    the engine (rows, quick, cache_hits, deduplicated, pool, spread), the worker pool (tasks,
    timeouts, crashes, restarts, and on Ray retried, actors_lost, ...) and each model
    scorer's ``stats`` (batches, rows, tokens, ...).
    """

    def __init__(self, get_engine: Callable[[], Any]) -> None:
        self._get_engine = get_engine

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        family = CounterMetricFamily(
            "rewardkit_engine_events",
            "Counters kept by the scoring engine",
            labels=["source", "event"],
        )
        engine = self._get_engine()
        if engine is not None:
            parts = [("pool", engine.pool)]
            parts += [(f"model_{s.component}", s) for s in engine.model_scorers]
            sources: list[tuple[str, Any]] = [("engine", engine.stats)]
            sources += [(name, p.stats) for name, p in parts if isinstance(p, Counted)]
            for source, stats in sources:
                for event, value in _numbers(stats):
                    family.add_metric([source, event], value)
        yield family
        yield self._padding(engine)
        yield self._workers(engine)

    @staticmethod
    def _workers(engine: Any) -> GaugeMetricFamily:
        """Live and desired workers of each pool: Ray actors fall short while a node is gone."""
        family = GaugeMetricFamily(
            "rewardkit_pool_workers",
            "Workers (Ray actors, model replicas) a pool has live and wants",
            labels=["source", "state"],
        )
        parts = [("pool", engine.pool)] if engine is not None else []
        parts += [(f"model_{s.component}", s) for s in engine.model_scorers] if engine else []
        for source, part in parts:
            if isinstance(part, Supervised):
                health = part.health()
                family.add_metric([source, "live"], health.live)
                family.add_metric([source, "desired"], health.desired)
        return family

    @staticmethod
    def _padding(engine: Any) -> GaugeMetricFamily:
        """Each local model's current padding allowance (reward_model.max_padding_tokens)."""
        family = GaugeMetricFamily(
            "rewardkit_model_padding_tokens",
            "Padding a model's batch may carry before another forward pass is cheaper",
            labels=["source"],
        )
        for scorer in engine.model_scorers if engine is not None else ():
            cost = getattr(scorer, "cost", None)
            if cost is not None:
                family.add_metric([f"model_{scorer.component}"], cost.padding_tokens())
        return family


def _numbers(stats: Any) -> Iterator[tuple[str, float]]:
    if not isinstance(stats, Mapping):
        return
    for key, value in stats.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            yield str(key), float(value)
