"""Geometry3K (``hiyouga/geometry3k``): a boxed answer plus a format bonus, as verl scores it.

verl's ``geo3k`` reward is ``0.9 * accuracy + 0.1 * format``: accuracy grades the
content of the last ``\\boxed{}`` against the ground truth; format is 1 when the whole
response is ``<think>...</think>`` followed by text containing a ``\\boxed{...}``.
Accuracy here uses rewardkit's MATH equivalence (fast paths, then math-verify) where
verl uses mathruler's grader; the side-by-side test in ``tests/compat`` lists where
the two disagree. Extraction and the format check are linear scans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rewardkit.verifiers import _repetition
from rewardkit.verifiers.base import Extracted, Verdict
from rewardkit.verifiers.math import MathVerifier

__all__ = ["GeometryVerifier", "last_boxed", "think_then_boxed"]

_FORMAT_WEIGHT = 0.1  # verl's geo3k format_score
_BOX = "\\boxed{"
_MATH = MathVerifier()


def last_boxed(response: str) -> str | None:
    """The content of the last ``\\boxed{...}`` with balanced braces (None: none, or unclosed)."""
    start = response.rfind(_BOX)
    if start < 0:
        return None
    depth, begin = 1, start + len(_BOX)
    for index in range(begin, len(response)):
        char = response[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return response[begin:index]
    return None


def think_then_boxed(response: str) -> bool:
    """verl's ``<think>.*</think>.*\\boxed\\{.*\\}.*`` full match, without backtracking."""
    if not response.startswith("<think>"):
        return False
    closed = response.find("</think>", len("<think>"))
    if closed < 0:
        return False
    box = response.find(_BOX, closed + len("</think>"))
    return box >= 0 and response.find("}", box + len(_BOX)) >= 0


@dataclass(frozen=True, slots=True)
class GeometryVerifier:
    """``0.9 * (last boxed answer == ground truth) + 0.1 * (<think>...</think> ... \\boxed{})``."""

    @property
    def key(self) -> str:
        return "geometry3k"

    def extract(self, response: str) -> Extracted:
        response = _repetition.unpadded(response)
        if _repetition.degenerate(response):  # a loop to the end: no answer, no format
            return Extracted(None, {"format": False, "degenerate": 1})
        answer = last_boxed(response)
        return Extracted(answer, {"format": think_then_boxed(response)})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        inner = _MATH.quick_check(_as_math(extracted), ground_truth)
        return None if inner is None else _combine(inner, extracted)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        return _combine(_MATH.check(_as_math(extracted), ground_truth), extracted)


def _as_math(extracted: Extracted) -> Extracted:
    return Extracted(extracted.answer, {"source": "boxed"})


def _combine(inner: Verdict, extracted: Extracted) -> Verdict:
    fmt = bool(extracted.extra.get("format"))
    score = (1.0 - _FORMAT_WEIGHT) * inner.score + _FORMAT_WEIGHT * float(fmt)
    return Verdict(score, {"acc": bool(inner.score), "pred": inner.extra.get("pred")})
