"""A verifier's 0..1 verdict mapped onto another scale (verl's +1/-1 for DAPO-style math).

verl scores ``math_dapo``, ``math`` and ``aime*`` rows 1.0 when right and -1.0 when wrong
(or unanswered); rewardkit's verifiers say 1.0 and 0.0. The registry wraps those data
sources' verifier in :class:`Scaled` so a verl user's reward scale does not silently
change; ``reward.score_scale=unit`` keeps 0..1. The mapping is linear,
``low + (high - low) * score``, so a partial score keeps its place between the ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rewardkit.verifiers.base import NO_CONTEXT, Context, Extracted, Verdict, Verifier, extract_with

__all__ = ["Scaled"]


@dataclass(frozen=True, slots=True)
class Scaled:
    """``inner``'s verdicts, with 0 mapped to ``low`` and 1 to ``high``."""

    inner: Verifier
    low: float = -1.0
    high: float = 1.0

    @property
    def key(self) -> str:
        return f"{self.inner.key}[{self.low:g},{self.high:g}]"

    @property
    def fast_paths(self) -> bool:
        """The inner verifier's own ``fast_paths`` (True when it applies none): what its
        quick verdicts are (see ``rewardkit.scoring.rows.quick_decides``)."""
        return getattr(self.inner, "fast_paths", True) is not False

    @property
    def reads_context(self) -> bool:
        return bool(getattr(self.inner, "reads_context", False))

    def extract(self, response: str, context: Context = NO_CONTEXT) -> Extracted:
        return extract_with(self.inner, response, context)

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        verdict = self.inner.quick_check(extracted, ground_truth)
        return None if verdict is None else self._map(verdict)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        return self._map(self.inner.check(extracted, ground_truth))

    def _map(self, verdict: Verdict) -> Verdict:
        return Verdict(self.low + (self.high - self.low) * verdict.score, verdict.extra)
