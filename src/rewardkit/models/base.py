"""The interface between the scoring loop and a reward model.

A :class:`ModelScorer` is called once per row, concurrently, from the loop's event
loop. It gathers concurrent calls into batches itself (token budget, a short wait),
so the loop and the server never think about batching: ``await scorer.score(s)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from rewardkit.types import Sample

__all__ = ["ModelScore", "ModelScorer"]


@dataclass(frozen=True, slots=True)
class ModelScore:
    """One row's model score (before the component weight) and what to report in ``extra``."""

    score: float
    extra: Mapping[str, Any] = field(default_factory=dict)
    tokens: int | None = None
    """Tokens the row cost an API (prompt + completion, from the answer's ``usage`` when
    given, else estimated); the engine reports them as ``extra["<component>/tokens"]``."""


@runtime_checkable
class ModelScorer(Protocol):
    """A reward model behind an async, self-batching call."""

    @property
    def component(self) -> str:
        """The name of the component this scorer writes: ``rm`` or ``judge``."""
        ...

    @property
    def weight(self) -> float: ...

    async def start(self) -> None:
        """Load weights or open connections. Called once, on the loop's event loop."""
        ...

    async def close(self) -> None: ...

    async def score(self, sample: Sample) -> ModelScore:
        """Score one row; raise ScorerError (RemoteError for endpoints) on failure."""
        ...
