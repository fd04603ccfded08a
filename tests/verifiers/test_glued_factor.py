"""guards: a number followed by a factor is a product, never the number and a unit.

"Answer: 27π" was read as 27 (the π taken for a unit, as "12 apples" is 12), and so was
"2x", "3i", "5θ" and "3²": each credited against the gold 27, 2, 3, 5, 3. math-verify
reads ``\\boxed{27π}`` as 27π (not 27) and ``\\boxed{5m}`` as 5 (its normalisation drops
one-letter units m, g, s, h, l): the facts below are its verdicts on the boxed forms,
checked against ``math_verify`` itself. Its expression extraction on a passage reads 27
from "The area is 27π." (verl's ``math_verify`` scorer credits it): the passage fallback
refuses a value it reads where a factor follows it, or a root sign comes before it.
The audit's ``glued_factor`` family makes these from every correct row.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import check_gsm8k_row, check_math_row
from rewardkit.verifiers._latex import factor_first

# (response, gold, score): the factor keeps the value from being the bare number
MATH_ROWS = [
    ("Answer: 27π", "27", 0.0),
    ("Answer: 27 π", "27", 0.0),
    ("The answer is $27π$.", "27", 0.0),
    ("Answer: 27π", "27\\pi", 1.0),  # and the product is read: math-verify equal
    ("The answer is $27π$.", "27\\pi", 1.0),
    ("Answer: 3²", "3", 0.0),
    ("Answer: 2x", "2", 0.0),
    ("The answer is 2x.", "2", 0.0),
    ("Answer: 3i", "3", 0.0),
    ("The answer is 3 i", "3", 0.0),
    ("Answer: 5θ", "5", 0.0),
    ("The answer is 5 x.", "5", 0.0),
    ("The area is 27π.", "27", 0.0),  # math-verify's passage extraction reads 27 here
    ("So the total is 27π", "27", 0.0),
    ("</think> 27π", "27", 0.0),
    ("We find it.\n\nSo the result is 2√2.", "2", 0.0),  # read as the root's 2
    # units stay units: words, and the one-letter units math-verify drops
    ("The answer is 5 m.", "5", 1.0),
    ("Answer: 5cm", "5", 1.0),
    ("Answer: 12 apples", "12", 1.0),
    ("The answer is 12 units^2.", "12", 1.0),  # a unit of area (an outside red team's probe)
    ("The answer is 5 cm³.", "5", 1.0),
    ("The answer is 12 x^2.", "12", 0.0),  # a letter and a power: a product
    ("Answer: 5μm", "5", 1.0),
    ("Answer: 80살", "80", 1.0),
    ("Miss Maria has $30$ students.", "30", 1.0),
    ("Mary got a total of $762$ M&Ms.", "762", 1.0),  # a word, not a letter alone
    ("Each kid can have $7$ S'mores with the marshmallows left.", "7", 1.0),
    # an abbreviation after it opens an explanation, no imaginary unit (an outside red
    # team's finding: "12 i.e. 3 groups of 4" was read as 12i)
    ("The answer is 12 i.e. 3 groups of 4.", "12", 1.0),
    ("The answer is 12, i.e. twelve.", "12", 1.0),
    ("The answer is 13 i.e. 12 plus 1.", "12", 0.0),
]


@pytest.mark.parametrize(("response", "gold", "score"), MATH_ROWS)
def test_math_reads_a_factor_as_part_of_the_value(response: str, gold: str, score: float):
    check_math_row(gold, response, score, response)


@pytest.mark.parametrize(
    ("response", "gold", "score"),
    [
        ("Answer: 27π", "27", 0.0),
        ("The answer is $27π$.", "27", 0.0),
        ("Each box costs $20, so 20 * 11 = 220.\n\nSo the result is 220x.", "220", 0.0),
        ("He makes 2 trips. </think> <answer>2√2</answer>", "2", 0.0),
        ("He makes 18 trips. </think> <answer>18π</answer>", "18", 0.0),
        ("#### 18", "18", 1.0),
        ("The answer is 12 i.e. 3 groups of 4.", "12", 1.0),
        ("He drove 20m. </think> <answer>20m</answer>", "20", 1.0),
    ],
)
def test_gsm8k_reads_a_factor_as_no_number(response: str, gold: str, score: float):
    check_gsm8k_row(gold, response, score, response)


@pytest.mark.parametrize(
    ("after", "factor"),
    [
        ("π", True), (" π", True), ("θ", True), ("²", True), ("√2", True), ("x", True),
        (" i", True), ("x + 1", True), ("μ", True),
        ("μm", False), ("m", False), (" g", False), ("s", False), ("cm", False),
        (" apples", False), ("&Ms", False), ("'mores", False), ("", False), ("살", False),
    ],
)  # fmt: skip
def test_what_counts_as_a_factor(after: str, factor: bool):
    assert factor_first(after) is factor


def test_math_verify_agrees_on_the_boxed_forms():
    """The reference: math-verify's own verdicts on the boxed forms these rows rely on."""
    math_verify = pytest.importorskip("math_verify")

    def equal(answer: str, gold: str) -> bool:
        parsed = math_verify.parse("\\boxed{" + gold + "}")
        return math_verify.verify(parsed, math_verify.parse("\\boxed{" + answer + "}"))

    assert not equal("27π", "27") and equal("27π", "27\\pi")
    assert not equal("2x", "2") and not equal("3i", "3") and not equal("5θ", "5")
    assert equal("5m", "5") and equal("5 cm", "5") and equal("12 apples", "12")


@pytest.mark.parametrize(
    ("response", "gold", "score", "family"),
    [
        ("The answer is 18½.", "18", 0.0, "math"),
        ("So Tom has 18\\frac12 cups.", "18", 0.0, "math"),
        ("The answer is $18\\frac{1}{2}$.", "\\frac{37}{2}", 1.0, "math"),
        ("$\\boxed{18\\frac{1}{2}}$", "\\frac{37}{2}", 1.0, "math"),
        ("#### 18½", "18", 0.0, "gsm8k"),
        ("#### 18\\tfrac{1}{2}", "18", 0.0, "gsm8k"),
        ("#### 18", "18", 1.0, "gsm8k"),
        # a thin or no-break space between them is a space (visible() reads it so)
        ("The answer is 18\u2009½.", "18", 0.0, "math"),
        ("So Tom has 18\u00a0½ cups.", "18", 0.0, "math"),
        ("#### 18\u2009½", "18", 0.0, "gsm8k"),
        ("So Tom has 18\u202f½ cups.", "18", 0.0, "gsm8k"),
        # the fraction slash (U+2044) makes a fraction of the digits around it, raised or
        # lowered ones too: "18⁄₂" is 18/2, never 18 followed by a mark
        ("So Tom has 18\u2044\u2082 cups.", "18", 0.0, "math"),
        ("#### 18\u2044\u2082", "18", 0.0, "gsm8k"),
        ("So Tom has 18\u2044\u2082 cups.", "18", 0.0, "gsm8k"),
        ("The answer is 36\u2044\u2082.", "18", 1.0, "math"),
        ("#### 36\u20442", "18", 1.0, "gsm8k"),
        ("<answer>\u00b9\u2044\u2082</answer>", "\\frac{1}{2}", 1.0, "math"),
        ("<answer>\u00b9\u2044\u2082</answer>", "1", 0.0, "math"),
    ],
)
def test_a_mixed_number_is_never_its_integer_part(
    response: str, gold: str, score: float, family: str
) -> None:
    """A red-team probe found "18½" and "#### 18\\tfrac{1}{2}" credited against 18 (F14):
    the fraction after the number completes it, as a factor multiplies it."""
    check = check_math_row if family == "math" else check_gsm8k_row
    check(gold, response, score, "a mixed number")
