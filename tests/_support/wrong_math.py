"""Math answers that a fast path or an extraction once scored as right, as rows for the
CLI and the server (each must score 0), and two right ones beside them."""

from __future__ import annotations

from typing import Any

__all__ = ["WRONG_MATH", "expected_math_scores", "math_rows"]

# (response's answer, ground truth, why it must score 0)
WRONG_MATH = [
    ("x=2,y=1", "x=1,y=2", "named values swapped: the set {1, 2} is equal, the solution is not"),
    ("a=1, b=2", "a=2, b=1", "the same with spaces after the comma"),
    ("2^{31}", "2^{31}-1", "a float comparison calls them equal (relative error 5e-10)"),
    ("10^{-10}", "0", "a tolerance calls a tiny number zero"),
    (r"2\frac{1}{4}", r"\frac{1}{2}", "a mixed number read as a product: 2 * 1/4"),
    ("32, 349", "32349", "a list of two numbers read as one number with a thousands comma"),
    (r"\text{for}", "f", "a word read as the product f*o*r, or its first letter"),
]
# and right ones, so that a verifier scoring everything 0 fails
RIGHT_MATH = [("x=1,y=2", "x=1,y=2"), (r"2\frac{1}{4}", r"\frac{9}{4}")]


def math_rows() -> list[dict[str, Any]]:
    """The WRONG_MATH rows, then the RIGHT_MATH ones, each answer boxed."""
    pairs = [(a, g) for a, g, _ in WRONG_MATH] + RIGHT_MATH
    return [
        {"id": str(i), "data_source": "lighteval/MATH", "response": f"So $\\boxed{{{a}}}$.",
         "ground_truth": g}
        for i, (a, g) in enumerate(pairs)
    ]  # fmt: skip


def expected_math_scores() -> list[float]:
    return [0.0] * len(WRONG_MATH) + [1.0] * len(RIGHT_MATH)
