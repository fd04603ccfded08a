"""How many workers a pool wants and has: what ``/ready``, ``/metrics`` and RewardLoop read.

    health = engine.pool.health()      # PoolHealth(desired=2, live=1, reason="...")
    problem = engine_problem(engine)   # None, or why rows that need a pool cannot be scored

The local WorkerPool is always whole (it replaces a dead process at once); a Ray pool can
be short of actors while a node is gone, and empty when no node can hold one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["Counted", "PoolHealth", "Supervised", "engine_problem", "refusals"]


@dataclass(frozen=True, slots=True)
class PoolHealth:
    """``live`` of ``desired`` workers (or actors) can take work; ``reason`` says why fewer."""

    desired: int
    live: int
    reason: str | None = None
    starting: bool = False  # its workers are starting: tasks wait for them

    @property
    def usable(self) -> bool:
        """At least one worker can take a task (or will: the workers are starting)."""
        return self.live > 0 or self.starting

    @property
    def full(self) -> bool:
        """Every worker the pool wants is there."""
        return self.live >= self.desired

    def describe(self) -> str:
        """One line for logs and ``/ready``: ``1 of 2 live (why)``."""
        why = f" ({self.reason})" if self.reason and not self.full else ""
        return f"{self.live} of {self.desired} live{why}"


@runtime_checkable
class Counted(Protocol):
    """A part that keeps counters for ``/metrics``: a pool, a model scorer."""

    @property
    def stats(self) -> Mapping[str, float]:
        """Event counts by name (``tasks``, ``timeouts``, ``batches``, ``unavailable``...)."""
        ...


@runtime_checkable
class Supervised(Protocol):
    """A part whose workers (processes, Ray actors, model replicas) can be short."""

    def health(self) -> PoolHealth:
        """Live workers against the number the part wants."""
        ...


def _parts(engine: Any) -> list[tuple[str, object]]:
    """The engine's pool and model scorers, named for messages (a stopped engine has none)."""
    parts: list[tuple[str, object]] = [("scoring pool", getattr(engine, "pool", None))]
    return parts + [(f"model {s.component}", s) for s in getattr(engine, "model_scorers", ())]


def refusals(engine: Any) -> int:
    """Rows refused so far because no actor was live (``stats["unavailable"]``, all pools)."""
    counted = [part.stats for _, part in _parts(engine) if isinstance(part, Counted)]
    return sum(int(stats.get("unavailable", 0)) for stats in counted)


def engine_problem(engine: Any) -> str | None:
    """Why ``engine`` cannot score rows that need its pool or model replicas; None when it can.

    Read by the server's ``/ready`` and by RewardLoop: a pool with no live worker would
    otherwise answer every row with an error, for as long as it stays empty.
    """
    for name, part in _parts(engine):
        if not isinstance(part, Supervised):
            continue
        health = part.health()
        if not health.usable:
            return f"{name}: no usable actor, {health.describe()}"
    return None
