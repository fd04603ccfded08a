"""guards: values offered side by side as the last word are a list, never the last value.

"$17$, $16$" or "17 \\quad 16" as a response's last line offers two answers. math-verify's
extraction (and a last-number reader such as GSM8K's flexible one) reads the last alone
and credits it; rewardkit reads the list, as it reads "The answer is 17, 16.", in every
family that reads a final answer from free text, whatever was answered before it.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import score
from rewardkit.verifiers import _final
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

MATH, GSM8K, CHOICE = MathVerifier(), GSM8KVerifier(), ChoiceVerifier()
STEPS = "Each box costs $4. She buys 4 boxes, so 4 * 4 = 16."

SIDE_BY_SIDE = ["$17$, $16$", "17, 16", "17 16", "$17$ $16$", "17 \\quad 16", "\\(17\\) \\(16\\)"]


@pytest.mark.parametrize("last", SIDE_BY_SIDE)
@pytest.mark.parametrize(
    "before",
    ["", "\n\nThe answer is 16.", "\n\n<answer>16</answer>", "\n\nSo the answer is $\\boxed{16}$."],
)
@pytest.mark.parametrize("verifier", [MATH, GSM8K], ids=["math", "gsm8k"])
def test_two_values_offered_last_are_no_answer_of_one(verifier, before, last):
    assert score(verifier, f"{STEPS}{before}\n\n{last}", "16") == 0.0
    assert score(verifier, f"{STEPS}{before}\n\n16", "16") == 1.0  # one value: its answer


@pytest.mark.parametrize("last", ["$D$, $C$", "D, C", "$D$ $C$"])
def test_two_letters_offered_last_are_no_choice(last):
    response = f"About 78% of the atmosphere is nitrogen.\n\nThe answer is (C).\n\n{last}"
    assert score(CHOICE, response, "C") == 0.0
    assert score(CHOICE, response.rpartition("\n\n")[0], "C") == 1.0


def test_a_list_of_values_is_a_list_gold():
    assert score(MATH, f"{STEPS}\n\n$2$, $3$", "2, 3") == 1.0
    assert score(MATH, f"{STEPS}\n\n$\\frac{{3}}{{2}}$, $\\frac{{1}}{{2}}$", "\\frac{1}{2}") == 0.0


@pytest.mark.parametrize(
    ("line", "values"),
    [
        ("$17$, $16$", ["17", "16"]),
        ("17 \\quad 16", ["17", "16"]),
        ("$A$, $B$, $C$", ["A", "B", "C"]),
        ("$429\\text{ cm}$, $428\\text{ cm}$", ["429\\text{ cm}", "428\\text{ cm}"]),
        ("$26\\%$, $25\\%$", ["26\\%", "25\\%"]),
        # LaTeX values without a span, apart by a comma or wide spacing
        ("\\frac{3}{2} \\quad \\frac{1}{2}", ["\\frac{3}{2}", "\\frac{1}{2}"]),
        ("\\frac{3}{2}, \\frac{1}{2}", ["\\frac{3}{2}", "\\frac{1}{2}"]),
        ("\\sqrt{2}, 2\\sqrt{3}", ["\\sqrt{2}", "2\\sqrt{3}"]),
        ("3 \\qquad \\dfrac{1}{2}", ["3", "\\dfrac{1}{2}"]),
        ("\\frac{3}{2} \\enspace \\frac{1}{2}", ["\\frac{3}{2}", "\\frac{1}{2}"]),
        ("\\frac{3}{2} \\\\ \\frac{1}{2}", ["\\frac{3}{2}", "\\frac{1}{2}"]),  # a line break
        ("\\frac{3}{2} \\frac{1}{2}", None),  # glued by a blank: a product, as math-verify reads it
        ("3 \\frac{1}{2}", None),  # a mixed number
        ("200\\,000", None),  # thin spacing groups digits: one number
        # one value, not two: a factor after a number, a unit in its own span, digits
        # grouped by thousands, a decimal comma, a product written glued
        ("8 $\\sqrt{2}$", None),
        ("$3$ $\\text{cm}$", None),
        ("200 000", None),
        ("1,200", None),
        ("1,2", None),
        ("2$x$", None),
        ("16", None),
        ("A B C D", None),  # letters apart by blanks only: one answer, as a tag reads it
        ("So 17, 16", None),  # words: the rules for sentences read it
    ],
)
def test_what_is_values_side_by_side(line, values):
    assert _final.values_side_by_side(line) == values


@pytest.mark.parametrize(
    "last",
    [
        "\\frac{3}{2} \\quad \\frac{1}{2}",
        "\\frac{3}{2}, \\frac{1}{2}",
        "\\{\\frac{3}{2}, \\frac{1}{2}\\}",
    ],
)
def test_latex_values_without_a_span_are_no_answer_of_one(last):
    """math-verify's extraction reads the last of them alone (an outside red team's
    finding: ``\\frac{3}{2} \\quad \\frac{1}{2}`` credited for 1/2)."""
    response = f"So the candidates are:\n\n{last}"
    assert score(MATH, response, "\\frac{1}{2}") == 0.0
    assert score(MATH, "So the candidates are:\n\n\\frac{1}{2}", "\\frac{1}{2}") == 1.0


@pytest.mark.parametrize(
    ("last", "gold", "expected"),
    [
        ("\\{3, 4\\}", "4", 0.0),  # a set of two is no 4 (math-verify reads the 4 alone)
        ("\\{3, 4\\}", "\\{3, 4\\}", 1.0),
        ("\\{3, 4\\}", "3, 4", 1.0),
        ("3 \\cdots 4", "4", 0.0),  # a run, no one value (math-verify reads the 4)
    ],
)
def test_a_set_or_a_run_as_the_last_line_is_read_whole(last, gold, expected):
    assert score(MATH, f"So we get:\n\n{last}", gold) == expected


@pytest.mark.parametrize(
    ("box", "gold", "expected"),
    [
        ("\\frac{3}{2} \\hspace{1em} \\frac{1}{2}", "\\frac{1}{2}", 0.0),  # math-verify: the last
        ("\\frac{3}{2} \\enspace \\frac{1}{2}", "\\frac{1}{2}", 0.0),
        ("\\frac{3}{2} \\frac{1}{2}", "\\frac{3}{4}", 1.0),  # glued: a product, as before
        ("A, B", "\\text{A,B}", 1.0),  # a list gold: compared as lists, as before
    ],
)
def test_values_side_by_side_in_a_box_are_no_answer_of_one(box, gold, expected):
    """An outside red team's probe: spacing math-verify drops made the box its last value."""
    assert score(MATH, f"So \\boxed{{{box}}}.", gold) == expected
