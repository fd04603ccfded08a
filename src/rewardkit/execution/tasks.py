"""The functions a worker process runs. Module-level, so they pickle by reference."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardkit.custom import load_function
from rewardkit.verifiers.base import Extracted, Verdict, Verifier
from rewardkit.verifiers.math import warm_up

__all__ = ["call_custom", "check"]

# This module is imported by the fork server: warming math-verify here (imports, parser
# tables, one comparison) means every worker, and every replacement after a timeout,
# forks with it ready instead of paying about half a second on its first row.
warm_up()


def check(verifier: Verifier, extracted: Extracted, ground_truth: Any) -> Verdict:
    """The slow path of a rule verifier."""
    return verifier.check(extracted, ground_truth)


def call_custom(path: str, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """A user's compute_score, loaded once per worker."""
    return load_function(path, name)(*args, **kwargs)
