"""The functions a worker process runs. Module-level, so they pickle by reference."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardkit.custom import load_function
from rewardkit.verifiers.base import Extracted, Verdict, Verifier

__all__ = ["call_custom", "check"]

try:  # warm the heavy imports in the fork server, so workers fork with them loaded
    import math_verify  # noqa: F401
    import sympy  # noqa: F401
except ImportError:  # pragma: no cover - math-verify is a hard dependency
    pass


def check(verifier: Verifier, extracted: Extracted, ground_truth: Any) -> Verdict:
    """The slow path of a rule verifier."""
    return verifier.check(extracted, ground_truth)


def call_custom(path: str, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """A user's compute_score, loaded once per worker."""
    return load_function(path, name)(*args, **kwargs)
