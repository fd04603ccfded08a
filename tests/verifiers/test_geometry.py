"""guards: geometry.py's Geometry3K score (verl's geo3k: 0.9 * accuracy + 0.1 * format).

Rows a policy could try for credit it did not earn; where the format bonus is paid for a
wrong answer, it is verl's rule, kept on purpose.
"""

from __future__ import annotations

import pytest

from rewardkit.verifiers.geometry import GeometryVerifier

GEOMETRY = GeometryVerifier()


def _geometry(response: str, truth: str = "5") -> float:
    return GEOMETRY.check(GEOMETRY.extract(response), truth).score


# (response, expected, why): verl's geo3k = 0.9 * acc + 0.1 * format (its regex
# <think>.*</think>.*\\boxed\{.*\}.*, full match, DOTALL).
GEOMETRY_ROWS = [
    # As verl: the format bonus needs no right answer, nor a non-empty box (0.1 of it).
    ("<think></think>\\boxed{}", 0.1, "empty box: the format bonus only, as verl"),
    ("<think>x</think>\\boxed{7}", 0.1, "wrong answer: format bonus only"),
    ("<think>x</think>\\boxed{5}", 1.0, "right, formatted"),
    ("\\boxed{5}", 0.9, "right, unformatted"),
    ("<think>x\\boxed{5}", 0.9, "unclosed think: no bonus"),
    ("<think>\\boxed{5}</think>", 0.9, "box inside think only: no bonus"),
    (" <think>x</think>\\boxed{5}", 0.9, "text before <think>: no bonus, as verl's fullmatch"),
    ("<think>x</think>\\boxed{5", 0.0, "unclosed box: no answer, and no '}' for the format"),
    ("<think>x</think>\\boxed{5}\\boxed{7}", 0.1, "the last box counts"),
    ("<think>x</think>\\boxed{5 or 7}", 0.1, "two candidates in one box"),
]


@pytest.mark.parametrize(("response", "expected", "why"), GEOMETRY_ROWS)
def test_geometry_rows(response: str, expected: float, why: str) -> None:
    assert _geometry(response) == pytest.approx(expected), why
