"""guards: Unicode math a model writes as plain text (``¾``, ``3√2``, ``2³``) is read as its
LaTeX, in every answer form of the MATH verifier.

An outside red team's finding: "The answer is ¾." scored 0 against ``\\frac{3}{4}`` (and
``3√2``, ``2³``); math-verify reads none of them but ``1²``, which it credited for 1 where
rewardkit did not.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import check_math_row
from rewardkit.verifiers._latex import unicode_math

ROWS = [
    # (gold, response, expected, reason)
    ("\\frac{3}{4}", "The answer is ¾.", 1.0, "a vulgar fraction"),
    ("\\frac{1}{4}", "The answer is ¾.", 0.0, "another fraction"),
    ("3\\sqrt{2}", "The answer is 3√2.", 1.0, "a root sign"),
    ("\\sqrt{3}", "The answer is 3√2.", 0.0, "another root"),
    ("8", "The answer is 2³.", 1.0, "a superscript power"),
    ("1", "The answer is 1².", 1.0, "math-verify credits it too"),
    ("2", "The answer is 1².", 0.0, "1 squared is no 2"),
    ("\\sqrt{x+1}", "\\boxed{√(x+1)}", 1.0, "a root of a group"),
    ("3", "\\boxed{∛27}", 1.0, "a cube root"),
    ("2\\pi", "\\boxed{2π}", 1.0, "pi"),
    ("12", "\\boxed{3×4}", 1.0, "a times sign"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), ROWS)
def test_unicode_math_is_read_as_its_latex(
    gold: str, response: str, expected: float, reason: str
) -> None:
    check_math_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("¾", "\\frac{3}{4}"),
        ("18½", "18\\frac{1}{2}"),  # a mixed number, as MATH's golds write it
        ("½ ¼", "\\frac{1}{2}, \\frac{1}{4}"),  # two values, never their product
        ("x⁻¹", "x^{-1}"),
        ("√(x+1)", "\\sqrt{x+1}"),
        ("∛27", "\\sqrt[3]{27}"),
        ("plain 12", "plain 12"),
    ],
)
def test_what_unicode_math_becomes(text: str, latex: str) -> None:
    assert unicode_math(text) == latex


def test_a_long_answer_is_read_in_linear_time() -> None:
    assert unicode_math("√" * 100_000 + "2").endswith("\\sqrt{2}")
