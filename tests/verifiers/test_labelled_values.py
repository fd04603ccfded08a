"""guards: labelled values are read in their labels' order, never in written order.

math-verify reads ``\\boxed{y = 3, x = -1}`` and ``\\boxed{(y, x) = (3, -1)}`` as the
tuple ``(3, -1)``: the right-hand sides in the order written (checked against
``math_verify`` itself, below). Both say ``(x, y) = (-1, 3)``; a policy that swaps the
coordinates of a wrong answer's pair and labels them was credited. The labels' own order
decides, where it is conventional (``x, y, z``; ``a, b, c, d``; ``p, q``; ``h, k``; ``m, n``;
``r, s``; ``u, v, w``; one letter with subscripts); other labels (``r, \\theta``; ``m, b``)
are left as written. A red team's family of 41 found it.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import check_math_row
from rewardkit.verifiers.math import _labels_in_order

# (response, gold, score)
MATH_ROWS = [
    ("The answer is $\\boxed{y = 3, x = -1}$.", "(3, -1)", 0.0),
    ("The answer is $\\boxed{y = 3, x = -1}$.", "(-1, 3)", 1.0),
    ("The answer is $\\boxed{x = 3, y = -1}$.", "(3, -1)", 1.0),
    ("The answer is $\\boxed{b = 3, a = -1}$.", "(3, -1)", 0.0),
    ("The answer is $\\boxed{b = 3, a = -1}$.", "(-1, 3)", 1.0),
    ("The solution is $\\boxed{(y, x) = (3, -1)}$.", "(3, -1)", 0.0),
    ("The solution is $\\boxed{(y, x) = (3, -1)}$.", "(-1, 3)", 1.0),
    ("The solution is $\\boxed{\\left(y, x\\right) = \\left(3, -1\\right)}$.", "(3, -1)", 0.0),
    ("The solution is $\\boxed{y=3 \\text{ and } x=-1}$.", "(3, -1)", 0.0),
    ("The solution is $\\boxed{x_2 = 3, x_1 = -1}$.", "(3, -1)", 0.0),
    ("The solution is $\\boxed{x_2 = 3, x_1 = -1}$.", "(-1, 3)", 1.0),
    ("The solution is $\\boxed{z = 1, y = 2, x = 3}$.", "(1, 2, 3)", 0.0),
    ("The solution is $\\boxed{z = 1, y = 2, x = 3}$.", "(3, 2, 1)", 1.0),
    ("The solution is $\\boxed{k = 3, h = -1}$.", "(3, -1)", 0.0),
    ("Final Answer: $y = 3, x = -1$", "(3, -1)", 0.0),
    ("<answer>$y = 3, x = -1$</answer>", "(3, -1)", 0.0),
    # labels without a conventional order stay as written (polar coordinates: r first)
    ("The answer is $\\boxed{r = 3, \\theta = \\frac{\\pi}{2}}$.", "(3, \\frac{\\pi}{2})", 1.0),
]


@pytest.mark.parametrize(("response", "gold", "score"), MATH_ROWS)
def test_labelled_values_are_read_in_their_labels_order(
    response: str, gold: str, score: float
) -> None:
    check_math_row(gold, response, score, response)


# (answer, as math-verify is given it)
REWRITES = [
    ("y = 3, x = -1", "x = -1, y = 3"),
    ("x = 3, y = -1", "x = 3, y = -1"),  # already in order: untouched
    ("(y, x) = (3, -1)", "x = -1, y = 3"),
    ("y = f(1, 2), x = 3", "x = 3, y = f(1, 2)"),  # a comma inside a value is no item
    ("x_{2} = 3, x_{1} = -1", "x_{1} = -1, x_{2} = 3"),
    ("m = 2, b = 3", "m = 2, b = 3"),  # slope and intercept: no order known
    ("b = 1, b = 2", "b = 1, b = 2"),  # a label twice
    ("x = 2, y = 3 = z", "x = 2, y = 3 = z"),  # a chain is no labelled value
    ("y = 3", "y = 3"),  # one value
    ("(y, x) = (3, -1, 4)", "(y, x) = (3, -1, 4)"),  # more values than labels
]


@pytest.mark.parametrize(("answer", "rewritten"), REWRITES)
def test_only_labels_with_a_known_order_are_reordered(answer: str, rewritten: str) -> None:
    assert _labels_in_order(answer) == rewritten


def test_math_verify_itself_reads_labelled_values_in_written_order() -> None:
    """The fact this module corrects: math-verify credits the swapped pair."""
    import math_verify

    assert math_verify.verify(
        math_verify.parse("$(3, -1)$"), math_verify.parse("$\\boxed{y = 3, x = -1}$")
    )
