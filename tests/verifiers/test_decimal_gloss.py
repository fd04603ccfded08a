"""guards: an exact value glossed with its decimal ("\\sqrt{2} \\approx 1.414") is the exact
value; a gloss that is no rounding of it, or a relation alone, is not.

An outside red team's finding: a box, an answer line or a stated sentence holding
``\\sqrt{2} \\approx 1.414`` scored 0 (the decimal read as an inexact answer) where
math-verify credits it, reading the value before the relation.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import check_math_row
from rewardkit.verifiers import _answer, _numeric

GLOSS_ROWS = [
    # (gold, response, expected, reason)
    ("\\sqrt{2}", "\\boxed{\\sqrt{2} \\approx 1.414}", 1.0, "rounded to its last place"),
    ("\\frac{1}{3}", "\\boxed{\\frac{1}{3} \\approx 0.333}", 1.0, "cut"),
    ("\\frac{2}{3}", "\\boxed{\\frac{2}{3} \\approx 0.667}", 1.0, "rounded up"),
    ("\\frac{2}{3}", "\\boxed{\\frac{2}{3} ≈ 0.666}", 1.0, "cut, the Unicode sign"),
    ("2\\pi", "The answer is $2\\pi \\approx 6.28$.", 1.0, "an answer line"),
    ("\\sqrt{2}", "So the side is $\\sqrt{2} \\approx 1.414$.", 1.0, "a stated sentence"),
    ("\\sqrt{2}", "\\boxed{\\sqrt{3} \\approx 1.732}", 0.0, "another value, glossed right"),
    ("\\sqrt{2}", "\\boxed{\\sqrt{2} \\approx 1.7}", 0.0, "no rounding of it: no gloss"),
    ("2", "\\boxed{2 \\approx 3.5}", 0.0, "a false statement"),
    ("\\sqrt{2}", "\\boxed{x \\approx 1.414}", 0.0, "no exact value: a decimal"),
    ("\\sqrt{2}", "\\boxed{\\approx 1.414}", 0.0, "a relation alone"),
    ("1.414", "\\boxed{\\sqrt{2} \\approx 1.414}", 0.0, "a decimal gold: not the exact value"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), GLOSS_ROWS)
def test_an_exact_value_glossed_with_its_decimal(
    gold: str, response: str, expected: float, reason: str
) -> None:
    check_math_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("decimal", "exact", "expected"),
    [
        ("1.414", "\\sqrt{2}", True),
        ("1.4142", "\\sqrt{2}", True),
        ("1.41", "\\sqrt{2}", True),
        ("1.42", "\\sqrt{2}", True),  # one unit of the last place: a rounding or a cut
        ("1.43", "\\sqrt{2}", False),
        ("3.14", "\\pi", True),
        ("0.5", "x", False),  # a variable: no value
        ("0.5", "0.5", False),  # a decimal: nothing exact to gloss
    ],
)
def test_what_approximates_an_exact_value(decimal: str, exact: str, expected: bool) -> None:
    assert _numeric.approximates(decimal, _numeric.prepare(exact) or exact) is expected


def test_a_long_answer_is_read_in_linear_time() -> None:
    assert _answer.glossed(" " * 100_000 + "x \\approx 1.5") is None
    assert _answer.glossed("\\approx 1.5" * 10_000) is None
