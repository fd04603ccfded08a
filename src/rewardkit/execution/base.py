"""What the engine needs of a worker pool, whichever backend runs it (a leaf module).

:class:`~rewardkit.execution.pool.WorkerPool` (local processes) and
:class:`~rewardkit.execution.ray_pool.RayWorkerPool` (Ray actors) both satisfy
:class:`Pool`, so the engine, ``/ready`` and ``/metrics`` are typed against this and
never against a backend.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol, runtime_checkable

from rewardkit.execution.health import Counted, Supervised

__all__ = ["Pool"]


@runtime_checkable
class Pool(Counted, Supervised, Protocol):
    """Killable workers behind ``await pool.run(fn, *args, timeout=...)``.

    ``stats`` counts ``tasks``, ``timeouts``, ``crashes`` and ``restarts`` for ``/metrics``.
    """

    async def start(self) -> None:
        """Start every worker; called once, on the caller's event loop."""
        ...

    async def close(self) -> None:
        """Stop every worker; tasks still waiting or running fail with ScorerError."""
        ...

    async def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float,
        affinity: Hashable | None = None,
    ) -> Any:
        """Run ``fn(*args)`` in a worker; raise ScorerTimeout, WorkerCrashed or ScorerError.

        ``affinity``: a hint that tasks with equal keys do best on the same worker (warm
        caches); a backend may ignore it, never wait for it.
        """
        ...
