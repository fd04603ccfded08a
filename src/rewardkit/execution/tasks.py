"""The functions a worker process runs. Module-level, so they pickle by reference."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardkit.custom import load_function
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.base import Extracted, Verdict, Verifier

__all__ = ["call_custom", "check", "inline_phases", "verify_whole"]


def check(verifier: Verifier, extracted: Extracted, ground_truth: Any) -> Verdict:
    """The slow path of a rule verifier."""
    return verifier.check(extracted, ground_truth)


def call_custom(path: str, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """A user's compute_score, loaded once per worker."""
    return load_function(path, name)(*args, **kwargs)


def verify_whole(
    verifier: Verifier, response: str, ground_truth: Any, fast_paths: bool
) -> tuple[Verdict, dict[str, Any]] | str:
    """Every phase of a rule verifier, for a row too big to check on the event loop.

    Returns the verdict and what extraction saw, or a string: why the ground truth is
    unusable (the row is then ``invalid``, as it is when checked inline).
    """
    extracted = verifier.extract(response)
    try:
        verdict = verifier.quick_check(extracted, ground_truth)
    except InvalidSampleError as exc:  # anything else is a bug: the row's status is error
        return str(exc)
    if verdict is None or not fast_paths:
        verdict = verifier.check(extracted, ground_truth)
    return verdict, dict(extracted.extra)


def inline_phases(rows: list[tuple[Verifier, str, Any]]) -> list[tuple[str, Any]]:
    """``extract`` and ``quick_check`` of many rows: a large batch's inline phases, spread
    over the workers (``RewardEngine.score_into``). Per row: ``("ok", (extracted, verdict
    or None))``, ``("invalid", why)`` for a ground truth the verifier refuses, or
    ``("bug", "Type: message")``; one row's failure never costs the others."""
    out: list[tuple[str, Any]] = []
    for verifier, response, ground_truth in rows:
        try:
            extracted = verifier.extract(response)
            out.append(("ok", (extracted, verifier.quick_check(extracted, ground_truth))))
        except InvalidSampleError as exc:
            out.append(("invalid", str(exc)))
        except Exception as exc:
            out.append(("bug", f"{type(exc).__name__}: {exc}"))
    return out
