"""One of several named reward models (``reward.reward_models.<name>``) as its own component.

    reward:
      reward_models:
        helpful: {backend: hf, model_path: /models/helpful-rm, weight: 1.0}
        safety: {kind: generative, backend: openai, url: http://judge:8000, weight: 0.5}

Each section builds the scorer a ``reward_model`` section would (local, remote, judge,
replicas), wrapped here so that its score is the component ``rm/<name>`` and the keys it
writes to ``extra`` are ``rm/<name>/<key>`` (two models' ``truncated`` or ``judge_raw``
never overwrite each other). A failure keeps its type and is prefixed with the component
by the engine (``rm/safety: ...``), so a row whose model failed says which one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardkit.models.base import ModelScore, ModelScorer
from rewardkit.types import Sample

__all__ = ["NamedScorer", "component_of"]


def component_of(name: str) -> str:
    """The component a named reward model writes: ``rm/<name>``."""
    return f"rm/{name}"


class NamedScorer:
    """A model scorer under its name: component ``rm/<name>``, its extra keys prefixed."""

    def __init__(self, name: str, inner: ModelScorer) -> None:
        self.name = name
        self.inner = inner
        self._component = component_of(name)

    @property
    def component(self) -> str:
        return self._component

    @property
    def weight(self) -> float:
        return self.inner.weight

    async def start(self) -> None:
        await self.inner.start()

    async def close(self) -> None:
        await self.inner.close()

    async def score(self, sample: Sample) -> ModelScore:
        try:
            result = await self.inner.score(sample)
        except Exception as exc:
            extra = getattr(exc, "extra", None)
            if isinstance(extra, Mapping):  # a judge's unparsable text, under this model's name
                exc.extra = self._prefixed(extra)  # type: ignore[attr-defined]
            raise
        return ModelScore(result.score, self._prefixed(result.extra), tokens=result.tokens)

    def _prefixed(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        return {f"{self._component}/{key}": value for key, value in extra.items()}

    def __getattr__(self, name: str) -> Any:
        """What else the inner scorer offers (``stats``, ``cost``, ``health``, ``actors``)."""
        if name == "inner":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
