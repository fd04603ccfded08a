"""guards: the hedging rule: an answer offering two different values scores 0, in every family.

A restatement of the same value is never hedging, a different value is. The rule
(``rewardkit.verifiers._answer``'s docstring) compares a final answer with the other
answers its concluding section offers (boxes, ``<answer>`` tags, answer lines) inline,
with :func:`~rewardkit.verifiers._answer.same_value`. Its one promise that can cost a
correct answer is "False only for surely different values": these properties generate
spellings equal by construction (integers as fractions, decimals and roundings,
reordered sums) and check that no such pair is ever called different, and that distinct
exact numbers always are. The tables below hold the shapes a policy hunting reward
without the right answer writes, per family (math, GSM8K ``auto``, multiple choice) and
on math and GSM8K at once.

Each row is ``(gold, response, expected, reason)``; ``expected`` is what a careful human
grader gives, never more generous than math-verify reading the same answer. Every math
row expected 0 is also checked with ``fast_paths=False``. A hedge is checked against
both of its values where it matters: it must score 0 whichever one the gold is.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support.verifier_rows import (
    CHOICE,
    GSM8K,
    box,
    check_choice_row,
    check_gsm8k_row,
    check_math_and_gsm8k_row,
    check_math_row,
    score,
    table_params,
)
from rewardkit.verifiers._answer import same_value
from rewardkit.verifiers.base import Context
from rewardkit.verifiers.math import MathVerifier

V = MathVerifier()
STRICT = MathVerifier(extraction="strict")
CI = settings(
    max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _spellings(value: Fraction) -> list[str]:
    """Spellings of ``value`` a model might restate it in (all exactly ``value``)."""
    num, den = value.numerator, value.denominator
    out = [f"\\frac{{{num * 3}}}{{{den * 3}}}", f"{num * 2}/{den * 2}"]
    if den == 1:
        out += [str(num), f"{num}.0", f"\\frac{{{num}}}{{1}}", f"x = {num}"]
    else:
        out += [f"\\dfrac{{{num}}}{{{den}}}"]
        out += [_rounded(value, places) for places in (3, 6)]
    return out


def _rounded(value: Fraction, places: int) -> str:
    """``value`` rounded to ``places`` decimals, exactly (no float on the way)."""
    scaled = round(value * 10**places)
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


fractions = st.builds(
    Fraction, st.integers(-(10**12), 10**12), st.sampled_from([1, 1, 2, 3, 7, 8, 1000])
)


@CI
@given(fractions, st.data())
def test_two_spellings_of_one_value_are_never_called_different(
    value: Fraction, data: st.DataObject
) -> None:
    first = data.draw(st.sampled_from(_spellings(value)))
    second = data.draw(st.sampled_from(_spellings(value)))
    assert same_value(first, second) is not False, (first, second)
    response = f"So $\\boxed{{{first}}}$.\n\nThe answer is ${second}$."
    for verifier in (V, STRICT):
        assert "hedged" not in verifier.extract(response).extra, response


# One number written with and without its unit is one answer (a published Llama-3.1 dump
# boxes "120^\circ", "120" and "120 degrees" in one response); a factor is no unit
@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("120 degrees", "120^\\circ", True),
        ("120", "120^{\\circ}", True),
        ("4", "4 meters", True),
        ("4", "4\\text{ meters}", True),
        ("2x", "2", None),
        ("3 pi", "3", None),
        ("4 meters", "5 meters", None),
    ],
)
def test_a_number_with_and_without_its_unit_is_one_value(
    first: str, second: str, same: bool | None
) -> None:
    assert same_value(first, second) is same


@CI
@given(st.integers(-(10**15), 10**15), st.integers(1, 10**6))
def test_two_different_integers_are_always_hedging(first: int, gap: int) -> None:
    second = first + gap
    assert same_value(str(first), str(second)) is False
    for response in (
        f"So $\\boxed{{{first}}}$.\n\nAnswer: {second}",
        f"<answer>{first}</answer> The answer is {second}.",
        f"The answer is {first}.\nThe answer is {second}.",
        f"Answer: {first}, maybe {second}",
        f"I think {first}, maybe {second}",
    ):
        extracted = V.extract(response)
        assert extracted.extra.get("hedged") is True, response
        assert V.check(extracted, str(second)).score == 0.0
        assert V.check(extracted, str(first)).score == 0.0


@CI
@given(st.integers(-50, 50), st.integers(-50, 50))
def test_reordered_sums_are_one_value(a: int, b: int) -> None:
    first, second = f"x^2 + {a}x + {b}", f"{b} + {a}x + x^2"
    assert same_value(first, second) is True
    assert "hedged" not in V.extract(f"$\\boxed{{{first}}}$, i.e. $\\boxed{{{second}}}$").extra


# --- tables ---------------------------------------------------------------------------------

MATH: list[tuple[str, str, float, str]] = [
    # one box offering two values: math-verify reads one of them
    ("4", "\\boxed{3 \\\\ 4}", 0.0, "a line break between two values"),
    ("5", "\\boxed{3 \\\\ 4 \\\\ 5}", 0.0, "three values one a line"),
    ("4", "\\boxed{3 \\\\[2pt] 4}", 0.0, "a line break with spacing"),
    ("4", "\\boxed{3 \\vert 4}", 0.0, "\\vert as 'or'"),
    ("4", "\\boxed{3 \\to 4}", 0.0, "an arrow: from 3 to 4"),
    ("4", "\\boxed{3 \\Rightarrow 4}", 0.0, "an arrow"),
    ("4", "\\boxed{3 \\implies 4}", 0.0, "an implication"),
    ("4", "\\boxed{3 \\hspace{1cm} 4}", 0.0, "two values spaced apart"),
    ("3", "\\boxed{3 \\approx 4}", 0.0, "two values, math-verify reads the 3"),
    ("3.14", "\\boxed{3.14 \\approx 3.1}", 1.0, "a rounding restates the value"),
    ("4", "\\boxed{3 \\text{, } 4}", 0.0, "a comma in \\text"),
    (
        "\\begin{pmatrix}3\\\\4\\end{pmatrix}",
        "\\boxed{\\begin{pmatrix}3\\\\4\\end{pmatrix}}",
        1.0,
        "a vector's line breaks are not alternatives",
    ),
    ("4", "Final answer: 3 -> 4", 0.0, "an arrow on an answer line"),
    ("4", "Final answer: 3 → 4", 0.0, "a Unicode arrow"),
    # one box offering alternatives: math-verify reads the last value (mv: 1)
    ("4", box("3 \\vee 4"), 0.0, "'3 or 4' in logic notation: mv credits the 4"),
    ("4", box("3 \\lor 4"), 0.0, "\\lor: mv credits the 4"),
    ("4", box("3 \\text{ (or } 4)"), 0.0, "a parenthesised alternative: mv credits the 4"),
    ("4", "Answer: 3 (or 4)", 0.0, "an answer line with an alternative: mv credits the 4"),
    ("3", box("3 \\text{ (maybe 4)}"), 0.0, "a hedge in parentheses (mv: 1)"),
    ("p \\vee q", box("p \\vee q"), 1.0, "\\vee in the gold too: compared as usual"),
    # one box joining two values by a symbol: mv reads the last (mv: 1)
    ("6", box("5 \\& 6"), 0.0, "an ampersand"),
    ("6", box("5 & 6"), 0.0, "an alignment tab"),
    ("6", box("5 \\mid 6"), 0.0, "\\mid"),
    ("6", box("5 \\| 6"), 0.0, "a double bar"),
    ("6", box("5 \\cup 6"), 0.0, "a union of numbers"),
    ("6", box("5 \\sim 6"), 0.0, "a range written with \\sim"),
    ("6", box("5 \u6216 6"), 0.0, "'or' in Chinese"),
    ("6", box("5 \\text{ resp. } 6"), 0.0, "'respectively'"),
    ("6", box("5\\text{ / }6"), 0.0, "a slash in text"),
    ("6", box("5 \\text{ and/or } 6"), 0.0, "'and/or' in text"),
    ("12", box("\\begin{pmatrix}1 & 12\\end{pmatrix}"), 0.0, "a matrix is not its entry"),
    # <answer> tags
    ("3", "<answer>3</answer> <answer>4", 0.0, "a second answer, left open"),
    ("3", "<answer>3</answer>\n<answer>", 1.0, "an empty open tag offers nothing"),
    ("4", "<answer>3</answer>\n<answer>4</answer>", 0.0, "two closed tags, two values"),
    # a value with a unit of words is a value: two tags with different ones are two answers
    *(
        (gold, response, 0.0, why)
        for response, why in (
            (
                "is\n\n<answer>429\\text{ square centimeters}</answer>\n\n"
                "<answer>428\\text{ square centimeters}</answer>",
                "two unit tags, the gold last",
            ),
            (
                "is\n\n<answer>428\\text{ square centimeters}</answer>\n\n"
                "<answer>429\\text{ square centimeters}</answer>",
                "two unit tags, the gold first",
            ),
            (
                "<answer>428\\text{ square cm}</answer> <answer>429\\text{ cm}^2</answer>",
                "two tags, other units",
            ),
        )
        for gold in ("428\\text{ square centimeters}", "428")
    ),
    (
        "428\\text{ square centimeters}",
        "is\n\n<answer>428\\text{ square centimeters}</answer>"
        "\n\n<answer>428\\text{ square centimeters}</answer>",
        1.0,
        "the same unit value twice",
    ),
    (
        "428",
        "So 427.68 rounds to 428.\n\n<answer>428\\text{ square centimeters}</answer>",
        1.0,
        "one unit tag",
    ),
    (
        "428",
        "<answer>428\\text{ square centimeters}</answer>\n\n<answer>428</answer>",
        1.0,
        "the value with and without its unit",
    ),
    ("4", "<answer>3<answer>4</answer>", 0.0, "a tag inside an open one holding 3"),
    ("4", "<answer><answer>4</answer></answer>", 1.0, "a tag around a tag"),
    (
        "27",
        "So I get $7.29$. </think> <answer> $28$ <answer> $27$ <answer> $3$ <answer> $18$ </answer>",
        0.0,
        "four values in open tags (ei corpus, iter_1:221)",
    ),
    (
        "7",
        "$\\sqrt{36+64}-\\sqrt{25-16}$\n\\ =<answer> $\\sqrt{100}-\\sqrt{9} $\n\\ =<answer> $10-3 $\n"
        "\\ =<answer> $7 $</answer>",
        1.0,
        "a chain of steps in open tags (ei corpus, iter_1:990)",
    ),
    ("4", "I put it in <answer> tags.\n<answer>4</answer>", 1.0, "a tag named in prose"),
    # a derivation in a tag, lines broken by \\ (ei corpus, iter_1:530): no alternatives
    (
        "-1",
        "<answer> $$-2x - 7 = 7x + 2\\\\ -9x = 9\\\\ x = \\frac{-9}{9} =-1$$ </answer>",
        1.0,
        "line breaks in a derivation are not alternatives",
    ),
    # an <answer> tag offering two values: hedging (mv's extraction reads 5)
    ("5", "<answer>5 (or possibly 6)</answer>", 0.0, "an alternative in parentheses"),
    ("5", "<answer>either 5 or 6</answer>", 0.0, "'either ... or' (mv: 1)"),
    ("5", "<answer>5 or possibly 6</answer>", 0.0, "'or possibly'"),
    ("5", "<answer>I think 5, maybe 6</answer>", 0.0, "'maybe' (mv: 1)"),
    ("5", "<answer>It is 5 or 6.</answer>", 0.0, "'or' in a sentence (mv: 1)"),
    ("5", "<answer>5, perhaps 6</answer>", 0.0, "a hedge after a comma: never the 5 alone"),
    ("5", "<answer>5. Or 6.</answer>", 0.0, "alternatives across a sentence end"),
    ("6", "<answer>x = 5 or x = 6</answer>", 0.0, "named alternatives (mv: 1, reads the 6)"),
    ("5", "<answer>\n5\n6\n</answer>", 0.0, "two numbers one a line: a list (mv: 1)"),
    ("5, 6", "<answer>\n5\n6\n</answer>", 1.0, "the same list against the list"),
    ("-5, 4", "<answer>-5 or 4</answer>", 1.0, "just two values joined by 'or': the list"),
    ("4", "<answer>-5 or 4</answer>", 0.0, "the same list against one of its values"),
    ("\\frac{1}{3}", "<answer>P(1 or 2) = 1/3</answer>", 1.0, "'or' with a value after it"),
    # answer lines joined by 'or'
    ("3", "The final answer is $3$ or $4$.", 0.0, "two values offered on the answer line"),
    ("3", "Answer: $3$ (or $4$)", 0.0, "an alternative span in parentheses"),
    ("-5, 4", "The answer is $x=-5$ or $x=4$.", 1.0, "both roots, joined by 'or' (mv: 1)"),
    # an answer line: two math spans joined by other than ",", "and", "or" (mv reads the first too)
    ("5", "Answer: $5$ \\text{ or } $6$", 0.0, "\\text{ or } between spans"),
    ("5", "Answer: $5$ \\& $6$", 0.0, "an ampersand between spans"),
    ("5", "Answer: $5$/$6$", 0.0, "a slash between spans"),
    ("5", "Answer: $5$\\quad $6$", 0.0, "spacing between spans"),
    ("5", "Answer: $5$ ~ $6$", 0.0, "a tie between spans"),
    ("5", "Answer: $5$ \\mid $6$", 0.0, "\\mid between spans"),
    ("5", "**Final Answer**\n5\n6", 0.0, "a heading, then two numbers one a line"),
    ("5", "**Final Answer**\n\\[5\\]\n\\[6\\]", 0.0, "a heading, then two displays"),
    ("5", "**Final Answer**\n5\n\nThe 6 ways are listed above.", 1.0, "a later paragraph"),
    # a fallback passage offering two values (mv reads the last)
    ("6", "5 and/or 6", 0.0, "'and/or'"),
    ("6", "it's 5 or else 6", 0.0, "'or else'"),
    # several different final answers across forms: hedging
    ("9", "Hence $\\boxed{9}$.\n\nAnswer: 10", 0.0, "a box, then a line with another value"),
    ("10", "Hence $\\boxed{9}$.\n\nAnswer: 10", 0.0, "the same hedge against the line's value"),
    ("3", "<answer>3</answer> The answer is 4", 0.0, "a tag, then a line with another value"),
    ("4", "The answer is 3.\nThe answer is 4.", 0.0, "two answer lines, two values, one paragraph"),
    ("3", "The answer is $3$ $4$", 0.0, "two numbers side by side: a list, never the first"),
    ("4", "Answer: 3 | 4", 0.0, "a lone bar between two values (mv: 1, reads the 4)"),
    ("3", "Answer: 3 | 4", 0.0, "the same bar against the first value"),
    ("3", "Answer: 3, maybe 4", 0.0, "'maybe' on an answer line"),
    ("4", "I think 3, maybe 4", 0.0, "a fallback passage ending in a hedge (mv: 1)"),
    ("4", "3 or 4", 0.0, "a fallback passage: two values offered (mv: 1)"),
    ("4", "so x = -5 or x = 4", 0.0, "two values named alike in a passage (mv: 1)"),
    ("4", "$3 \\vee 4$", 0.0, "alternatives in the fallback passage (mv: 1)"),
    ("4", "The answer is 3, or maybe 4", 0.0, "a hedge in prose (mv: 1)"),
    ("4", "<answer>3</answer><answer>4</answer>", 0.0, "two tags, two values"),
    ("3", "So \\boxed{4}.\n\n<answer>3</answer>", 0.0, "a box, then a tag with another value"),
    ("4", "Hence \\boxed{3}.\n\n**Final Answer**\n4", 0.0, "a box, then a heading's value"),
    ("4", "I think it's 3. Or maybe 4.", 0.0, "alternatives across a sentence end (mv: 1)"),
    ("4", "It is 3. Perhaps 4.", 0.0, "'perhaps' in a passage (mv: 1)"),
    ("3", "The answer is $3$; maybe $4$.", 0.0, "'maybe' between math spans on a line"),
    ("4", "**Final Answer**\n\n$3$ or maybe $4$", 0.0, "a heading's value offering two"),
    ("3", "Answer: $3$ | $4$", 0.0, "a lone bar between math spans"),
    ("4", "The answer is 4, not 3.", 1.0, "a value ruled out is not offered"),
    # the same value restated in another form is not hedging
    ("5", "So $\\boxed{5}$.\n\nThe answer is $\\frac{10}{2}$.", 1.0, "5 restated as 10/2"),
    ("\\frac13", "So $\\boxed{\\frac13}$.\n\nAnswer: 0.333", 1.0, "a rounding restated"),
    ("\\frac12", "<answer>0.5</answer> The answer is $\\frac{1}{2}$.", 1.0, "a tag restated"),
    ("x^2+1", "So $\\boxed{x^2+1}$.\n\nAnswer: $1+x^2$", 1.0, "an expression reordered"),
    ("5", "So $\\boxed{5}$.\n\nAnswer: $x = 5$", 1.0, "a leading 'x =' is dropped: the same"),
    ("5", "So $\\boxed{5}$.\n\nThe answer is $2 + 3 = 5$.", 1.0, "an equation: cannot tell"),
    # a second final answer that cannot be told the same inline must be right too: 1.41
    # is no exact \sqrt{2} (decimals: exact), so two answers are offered and one is wrong
    ("\\sqrt{2}", "So $\\boxed{\\sqrt{2}}$.\n\nAnswer: 1.41", 0.0, "a decimal: inexact, wrong"),
    ("5", "The answer is $5$ $\\text{cm}$", 1.0, "a unit span after a number is no value"),
    ("-5, 4", "so $x = -5$ or $x = 4$", 1.0, "roots in spans: math-verify reads the set"),
    ("\\{x | x > 0\\}", "so the answer is $\\{x | x > 0\\}$", 1.0, "set-builder bar, no hedge"),
    # prose hedges after a final answer, in its paragraph: a word of possibility or
    # alternative right before a value, or words offering a value as another answer right
    # after it (``_common.OFFER_CUE`` and ``OFFER_PREDICATE``)
    ("18", "The answer is 18. 20 would also work", 0.0, "'would also work'"),
    ("18", "Answer: 18, though 20 could also be right", 0.0, "'could also be right'"),
    ("18", "The answer is $\\boxed{18}$ (or possibly 20)", 0.0, "after a box"),
    ("18", "The answer is $\\boxed{18}$ or maybe 20", 0.0, "'or maybe' after a box"),
    ("18", "The answer is $\\boxed{18}$, or $20$", 0.0, "', or' after a box"),
    ("18", "The answer is 18. Alternatively, 20.", 0.0, "'Alternatively'"),
    ("18", "$\\boxed{18}$. Alternatively, $\\frac{40}{2}$.", 0.0, "a LaTeX value offered"),
    ("18", "The answer is 18, 20 works too", 0.0, "'works too'"),
    ("18", "The answer is 18; 20 is also a valid answer", 0.0, "'is also a valid answer'"),
    ("18", "The answer is 18, although 20 is plausible", 0.0, "'is plausible'"),
    ("18", "The answer is 18, unless it is 20", 0.0, "'unless it is'"),
    ("18", "$\\boxed{18}$. Another possible answer is $20$.", 0.0, "'another possible answer'"),
    ("18", "<answer>18. Alternatively, 20.</answer>", 0.0, "inside a tag"),
    ("18", "<answer>18, unless it is 20</answer>", 0.0, "inside a tag"),
    ("18", "<answer>18, 20 works too</answer>", 0.0, "inside a tag, a passage"),
    ("20", "I think it's $18$. Alternatively, $20$.", 0.0, "a passage: mv reads 20"),
    ("20", "I think it's $18$, though $20$ could also be right", 0.0, "a passage"),
    ("20", "I think it's $18$; $20$ is also a valid answer", 0.0, "a passage"),
    ("20", "So it is $18$, $20$ works too", 0.0, "a passage"),
    # not hedging: the same value, a calculation, a check, an earlier paragraph
    ("18", "The answer is $\\boxed{18}$ (or possibly 18.0)", 1.0, "the same value restated"),
    (
        "18",
        "The answer is $\\boxed{18}$. Alternatively, $3 \\times 6 = 18$.",
        1.0,
        "another way to the same value is no other answer",
    ),
    (
        "18",
        "The answer is $\\boxed{18}$. Alternatively, using $n = 3$ rows of 6 we get 18.",
        1.0,
        "'Alternatively, using': no value right after the cue",
    ),
    ("18", "The answer is 18. This could be verified by $3 \\times 6$.", 1.0, "no value offered"),
    (
        "5",
        "$x = -1$ is extraneous and $x = 5$ is valid, so the answer is $\\boxed{5}$.",
        1.0,
        "a root checked valid (no 'also') is no offer",
    ),
    ("5", "The answer is $\\boxed{5}$; $x = -1$ is not valid.", 1.0, "a value ruled out"),
    ("18", "Maybe 20.\n\nThe answer is $\\boxed{18}$.", 1.0, "an earlier paragraph is a step"),
    ("5", "So $x = 5$ is also a solution.\n\nThe answer is $\\boxed{5}$.", 1.0, "a step"),
    # more shapes, hedged and not
    ("4", "<answer>\\boxed{4}</answer> \\boxed{3}", 0.0, "a box after the tag: hedged"),
    ("4", "The answer is 3. Wait, the answer is 4", 0.0, "one paragraph, two answers"),
    ("4", "The answer is 3.\n\nWait, actually the answer is 4.", 1.0, "a corrected paragraph"),
    ("C", "The answer is A, B, C, D", 0.0, "every option listed"),
    ("C", "\\boxed{A} \\boxed{B} \\boxed{C} \\boxed{D}", 0.0, "every option boxed"),
    ("1000", "The answer is 1,000.", 1.0, "a thousands comma"),
    ("18", "The answer is $18.00", 1.0, "dollars and cents"),
    ("-4", "\\boxed{-4}", 1.0, "a negative number"),
]

# GSM8K ``auto``; verl's strict rule (the last ``####``) credits ``#### 18`` ``#### 20``
# against 20, and ``method="strict"`` keeps it (test_gsm8k.py)
GSM8K_ROWS: list[tuple[str, str, float, str]] = [
    # two final numbers in one paragraph (verl strict: 1)
    ("20", "#### 18\n#### 20", 0.0, "two #### answers"),
    ("20", "\\boxed{18} \\boxed{20}", 0.0, "two boxes"),
    ("20", "\\boxed{18}\n#### 20", 0.0, "a box then a #### answer"),
    ("20", "#### 18\n\\boxed{20}", 0.0, "a #### answer then a box"),
    ("20", "The answer is 18. Wait, the answer is 20.", 0.0, "two answer lines"),
    ("20", "<answer>18</answer><answer>20</answer>", 0.0, "two tags"),
    ("20", "The answer is 18 dollars. #### 20", 0.0, "a line and a #### answer"),
    ("18", "The answer is 18.\n#### 18", 1.0, "the same number restated"),
    ("18", "The answer is $18.\n#### 18.00", 1.0, "restated in another spelling"),
    ("20", "#### 18\n\nWait, let me redo it.\n#### 20", 1.0, "a corrected paragraph"),
    # a box offering two numbers
    ("20", "\\boxed{18 \\text{ or } 20}", 0.0, "'or' in \\text"),
    ("20", "\\boxed{18 \\\\ 20}", 0.0, "a line break"),
    ("20", "\\boxed{18\\boxed{20}}", 0.0, "a box inside a box"),
    ("18", "\\boxed{18 \\text{ dollars}}", 1.0, "a unit in \\text"),
    ("18", "\\boxed{\\$18}", 1.0, "a dollar sign"),
    ("18", "\\boxed{x = 18}", 1.0, "a named value"),
    ("18", "\\boxed{2 \\times 9 = 18}", 1.0, "a calculation ending in the value"),
    # what follows the number
    ("18", "The answer is 18 | 20", 0.0, "a bar offers two values"),
    ("18", "The answer is 18 \\lor 20", 0.0, "'or' as a symbol"),
    ("18", "The answer is 18 \\pm 2", 0.0, "a range"),
    ("18", "The answer is 18 ± 2", 0.0, "a range"),
    ("18", "The answer is 18 20.", 0.0, "two numbers side by side"),
    ("18", "The answer is 18 1/2", 0.0, "a mixed number: 18.5"),
    ("18", "The answer is 18 \\frac12", 0.0, "a mixed number: 18.5"),
    ("18000", "The answer is 18 000", 0.0, "a space-grouped 18000 is not read as 18 or 18000"),
    ("18", "The answer is 18 2-liter bottles.", 1.0, "a number in the unit is no second value"),
    ("18", "The answer is 18 3rd graders.", 1.0, "an ordinal in the unit"),
    # not hedging: headings, thinking
    (
        "18",
        "The answer is 18.\n\n#### 4. Verification\nWe check that 18 works.",
        1.0,
        "a markdown heading is no #### answer",
    ),
    (
        "18",
        "#### 3. Final answer\nShe pays 18 dollars, so the answer is 18.",
        1.0,
        "a heading in the final paragraph",
    ),
    ("18", "<think>#### 20</think>\n#### 18", 1.0, "the thinking's number is a step"),
    ("20", "<think>The answer is 20</think>\nThe answer is 18.", 0.0, "the final part answers"),
    ("18", "\\boxed{18}\\boxed{18}", 1.0, "the same box twice"),
    ("18", "#### 18\n#### 18", 1.0, "the same #### answer twice"),
    ("18", "#### 18" + "\n" * 1_000_000, 1.0, "a megabyte of newlines after it"),
    # prose hedges after a final answer, in its paragraph
    ("18", "The answer is 18 but it could be 20", 0.0, "a second value offered"),
    ("20", "The answer is 18 but it could be 20", 0.0, "nor the offered one"),
    ("18", "The answer is 18.\nOr 20.", 0.0, "a line opening 'Or 20'"),
    ("18", "#### 18\nOr 20.", 0.0, "after a #### marker"),
    ("18", "The answer is 18. But it might be 20.", 0.0, "'might be'"),
    ("18", "The answer is 18, but it could also be 20.", 0.0, "'could also be'"),
    ("18", "The answer is 18. Perhaps 20.", 0.0, "'perhaps'"),
    ("18", "The answer is $\\boxed{18}$, or maybe 20.", 0.0, "after a box"),
    ("18", "18.\nOr 20.", 0.0, "no marker: the last number, 'Or 20', is no number"),
    ("20", "18.\nOr 20.", 0.0, "nor 20"),
    ("18", "The answer is 18 but it could be 18.0", 1.0, "the same value restated"),
    ("18", "The answer is 18.\n\nOr 20? No: it is 18.", 1.0, "a later paragraph decides"),
    (
        "18",
        "It could be 20 at first sight.\n\nThe answer is 18.",
        1.0,
        "a doubt in an earlier paragraph is a step",
    ),
    ("18", "The answer is 18. She has 3 boxes of 6.", 1.0, "numbers that explain, no offer"),
    ("18", "The answer is 18 apples, 6 more than Tom.", 1.0, "a comparison, no offer"),
    ("18", "The answer is 18. 20 would also work", 0.0, "'would also work'"),
    ("18", "The answer is 18, though 20 could also be right", 0.0, "'could also be right'"),
    ("18", "#### 18, though 20 could also be right", 0.0, "after ####"),
    ("18", "The answer is $\\boxed{18}$. 20 would also work", 0.0, "after a box"),
    ("18", "The answer is 18; 20 is also a valid answer", 0.0, "'is also a valid answer'"),
    ("18", "#### 18; 20 is also a valid answer", 0.0, "'is also a valid answer' after ####"),
    ("18", "The answer is 18, unless it is 20", 0.0, "'unless it is'"),
    ("18", "#### 18, unless it is 20", 0.0, "'unless it is' after ####"),
    ("18", "The answer is 18. Another possible answer is 20.", 0.0, "'another possible answer'"),
    ("18", "The answer is 18 (or possibly 20)", 0.0, "'(or possibly'"),
    ("18", "The answer is 18. Alternatively, 20.", 0.0, "'Alternatively'"),
    ("18", "The answer is 18 or maybe 20", 0.0, "'or maybe'"),
    # not hedging
    ("18", "The answer is 18. Alternatively, 3 x 6 = 18.", 1.0, "a calculation is no value"),
    ("18", "The answer is 18. Alternatively, 3 × 6 = 18.", 1.0, "a calculation is no value"),
    ("18", "The answer is 18. 18 is also correct as a check.", 1.0, "the same value"),
    ("18", "The answer is 18. 20 is not possible.", 1.0, "a value ruled out"),
    # more shapes, hedged and not
    ("1000", "#### 1,000", 1.0, "a thousands comma"),
    ("-5", "The answer is -5.", 1.0, "a negative number"),
    ("18", "#### $18.00", 1.0, "dollars and cents (verl strict: no match)"),
    ("18", "The answer is 18 or 20", 0.0, "two values offered"),
]

# "or" in other words: one shared word list (``_common.OR_WORD``), read wherever the
# English "or" is: "vs", "versus" and "or" in the languages models answer in
_OR_WORDS = ["vs", "vs.", "versus", "oder", "ou", "o", "или", "或", "of"]

CHOICE_ROWS: list[tuple[str, str, float, str]] = [
    # several letters offered
    ("A", "The answer is A, B, C, D", 0.0, "every option listed: the first was read"),
    ("A", "The answer is A or C", 0.0, "two options"),
    ("C", "The answer is C (or D)", 0.0, "an alternative in parentheses"),
    ("C", "The answer is (C)(D)", 0.0, "two labels side by side"),
    ("C", "The answer is C|D", 0.0, "a bar"),
    ("C", "The answer is C & D", 0.0, "an ampersand"),
    ("C", "The answer is C and D", 0.0, "'and'"),
    ("A", "\\boxed{A, C}", 0.0, "two letters in a box"),
    ("A", "\\boxed{\\text{A or C}}", 0.0, "two letters in a box's text"),
    ("D", "The answer is \\boxed{C} \\boxed{D}", 0.0, "two boxes"),
    ("C", "Answer: A\nAnswer: C", 0.0, "two stated answers in one paragraph"),
    ("A", "\\boxed{C}\nAnswer: A", 0.0, "a box and a stated answer differ"),
    ("C", "Answer: A\n\\boxed{C}", 0.0, "a stated answer and a box differ"),
    ("C", "**A** **B** **C**", 0.0, "bold letters listed"),
    ("C", "(A) (B) (C)", 0.0, "labels listed"),
    ("C", "A\nB\nC", 0.0, "lone letters on the last lines"),
    # prose hedges after a final answer, in its paragraph
    ("A", "The answer is A but C is also possible", 0.0, "another letter offered"),
    ("C", "The answer is A but C is also possible", 0.0, "nor the offered one"),
    ("A", "The answer is A. C is also possible.", 0.0, "in the next sentence"),
    ("A", "Answer: A, but C might also work", 0.0, "'might also work'"),
    ("B", "The answer is B. It could be D, though.", 0.0, "'could be D'"),
    ("B", "The answer is B.\nOr maybe D.", 0.0, "a line opening 'Or maybe D'"),
    ("B", "The answer is B. Perhaps option D.", 0.0, "'perhaps option D'"),
    ("B", "The answer is B. Or I might be wrong.", 1.0, "'I' before a word is a pronoun"),
    ("B", "The answer is B. A careful reader could be misled.", 1.0, "'A' is an article"),
    ("B", "The answer is B, as B is correct.", 1.0, "the same letter restated"),
    ("B", "The answer is B.\n\nC is also possible? No.\n\nThe answer is B.", 1.0, "last wins"),
    ("B", "Maybe C is correct.\n\nThe answer is B.", 1.0, "an earlier paragraph is a step"),
    ("B", "The answer is B. D would also work", 0.0, "'would also work'"),
    ("B", "The answer is B; D is also a valid answer", 0.0, "'is also a valid answer'"),
    ("B", "The answer is B, unless it is D", 0.0, "'unless it is'"),
    ("B", "The answer is B, D works too", 0.0, "'works too'"),
    ("B", "The answer is B - or D", 0.0, "'- or'"),
    ("B", "The answer is B, though D could also be right", 0.0, "'could also be right'"),
    ("B", "The answer is B. Alternatively, D.", 0.0, "'Alternatively'"),
    ("B", "The answer is B (or possibly D)", 0.0, "'(or possibly'"),
    # not hedging
    ("B", "The answer is B. D is not possible.", 1.0, "a letter ruled out"),
    ("B", "The answer is B. A careful check could be done.", 1.0, "'A' is an article"),
    # taken back, offered in the next paragraph, options restated
    ("A", "The answer is A? No, B.", 0.0, "taken back"),
    ("A", "The answer is A. Wait, no: B.", 0.0, "taken back"),
    ("A", "The answer is A. Actually, B.", 0.0, "taken back"),
    ("A", "Answer: A\n\nActually, B.", 0.0, "taken back in a new paragraph"),
    ("A", "Answer: A\n\nOr maybe C.", 0.0, "offered in the next paragraph"),
    ("A", "Answer: **A**, or maybe **C**", 0.0, "a bold letter offered"),
    ("B", "The answer is B. Option A would also work", 0.0, "'Option A': a letter"),
    ("A", "The answer is (A) and (C)", 0.0, "two letters"),
    ("A", "The answer is not A", 0.0, "ruled out"),
    ("A", "A is wrong, so B", 0.0, "ruled out"),
    ("D", "(A) 18 (B) 20 (C) 22 (D) 24", 0.0, "the options restated: no choice"),
    ("D", "(A) 18\n(B) 20\n(C) 22\n(D) 24", 0.0, "one a line"),
    ("D", "**A**: 18, **B**: 20, **C**: 22, **D**: 24", 0.0, "in bold"),
    ("A", "Answer: (A) 18 (B) 20 (C) 22 (D) 24", 0.0, "after 'Answer:'"),
    # not hedging
    ("D", "I pick (D) 24.", 1.0, "one label with its option text"),
    ("D", "(A) is wrong, (B) fails, (C) too, so (D).", 1.0, "options eliminated, then chosen"),
    ("A", "Answer: (A) 18. (B) is wrong, (C) is wrong.", 1.0, "chosen, then others discussed"),
    ("A", "The answer is A. Option A would also work", 1.0, "the same letter"),
    ("B", "The answer is B. No, A careful reader agrees.", 1.0, "'A' is an article"),
    ("A", "The answer is option A, not B", 1.0, "the other letter ruled out"),
    # bare answers one a paragraph
    ("D", "**B**\n\n**D**", 0.0, "two bold letters"),
    ("B", "The answer is **B**\n\n**D**", 0.0, "an answer line, then a bold letter"),
    ("B", "Answer: B\n\n**D**", 0.0, "an answer line, then a bold letter alone"),
    ("D", "Answer: B\n\nAnswer: D", 0.0, "two bare answer lines"),
    ("D", "The answer is $\\boxed{B}$.\n\n```\n\\boxed{D}\n```", 0.0, "a code block"),
    ("B", "**D**\nAnswer: B", 0.0, "a bold letter before the answer, same paragraph"),
    # not hedging
    ("B", "Answer: B\n\n**B**", 1.0, "the same letter"),
    ("B", "**Final Answer**\n\n**B**", 1.0, "a heading, then the letter"),
    ("B", "**A** is wrong since 2 > 1.\n\nAnswer: B", 1.0, "an option discussed in a step"),
    # conditional offers and answers in other languages
    ("B", "Answer: B (if rounding, D)", 0.0, "a conditional offer"),
    ("B", "Answer: B. Antwort: D.", 0.0, "another language"),
    # "Antwort:" after a stated answer offers another; alone, it states one
    ("B", "Antwort: B", 1.0, "a German answer line alone states its letter"),
    # more shapes, hedged and not
    (
        "C",
        "I think the answer is A.\n\nAfter checking, the answer is C.",
        1.0,
        "a corrected paragraph",
    ),
    ("C", "The answer is C, not A.", 1.0, "a negated letter is not offered"),
    ("C", "The answer is C. A photon has no mass.", 1.0, "'A' starting a sentence"),
    ("C", "The answer is C I think", 1.0, "'I' as a word"),
    ("C", "The answer is C.\nAnswer: C", 1.0, "the same letter restated"),
    ("C", "<think>Answer: A? No.</think>\nAnswer: C", 1.0, "the thinking's letter is a step"),
    *(
        (gold, shape.format(word), 0.0, f"'{word}' between two letters")
        for word in _OR_WORDS
        for shape in ("The answer is B {} D", "Answer: B {} D")
        for gold in ("B", "D")
    ),
    ("B", "The answer is B, not D", 1.0, "the other letter ruled out"),
    ("B", "The answer is B or I think so", 1.0, "'I' before a word is a pronoun"),
]

_FENCED = "The answer is $\\boxed{18}$.\n\n```\n\\boxed{20}\n```"
# checked on math and on GSM8K ``auto``
MATH_AND_GSM8K: list[tuple[str, str, float, str]] = [
    # a tag's value taken back or doubled by the words after it, however they are spelled
    ("5", "<answer>5 isn't right</answer>", 0.0, "negation with an apostrophe"),
    ("5", "<answer>5 isnt right</answer>", 0.0, "negation without one"),
    ("5", "<answer>5 is wrong</answer>", 0.0, "ruled out in the tag"),
    ("5", "<answer>5 aint it</answer>", 0.0, "ain't, unspelled"),
    ("5", "<answer>5 cannot be right</answer>", 0.0, "cannot"),
    ("6", "<answer>$5 \\) or 6$</answer>", 0.0, "a stray delimiter between two values"),
    ("5", "<answer>$5 \\) or 6$</answer>", 0.0, "a stray delimiter, the other value"),
    # near misses: the value stands
    ("5", "<answer>5 apples</answer>", 1.0, "a unit word"),
    ("5", "<answer>$5$ dollars</answer>", 1.0, "a span then a unit"),
    ("5", "<answer>5 is right</answer>", 1.0, "affirmed"),
    # tags no marker reads (a \\text{} unit): the earlier tags of the section are read as the last
    *(
        (gold, response, 0.0, why)
        for response, why in (
            (
                "<answer>5\\text{ apples}</answer> <answer>6\\text{ apples}</answer>",
                "two unit tags",
            ),
            (
                "is\n\n<answer>6\\text{ apples}</answer>\n\n<answer>5\\text{ apples}</answer>",
                "two unit tags, bare paragraphs",
            ),
            (
                "<answer>5 apples</answer> <answer>6\\text{ apples}</answer>",
                "a plain tag, a unit tag",
            ),
        )
        for gold in ("5", "6")
    ),
    ("5", "<answer>5\\text{ apples}</answer> <answer>5 apples</answer>", 1.0, "the value restated"),
    (
        "5",
        "<answer>5\\text{ apples}</answer> <answer>$5$ apples</answer>",
        1.0,
        "restated in a span",
    ),
    (
        "5",
        "<answer>4\\text{ apples}</answer>\n\nSo one more.\n\n<answer>5\\text{ apples}</answer>",
        1.0,
        "an earlier paragraph of words is a step",
    ),
    (
        "5",
        "<think><answer>4\\text{ x}</answer></think> <answer>5\\text{ apples}</answer>",
        1.0,
        "a tag in the thinking",
    ),
    # markup, scripts and corrections around two values
    ("20", "The answer is **18** or **20**", 0.0, "bold around two values"),
    ("18", "The answer is **18** or **20**", 0.0, "nor the first"),
    ("18", "The answer is **18**", 1.0, "bold around one value"),
    ("18", "The answer is 18 &amp; 20", 0.0, "an HTML-escaped '&' joins two"),
    ("18", "The answer is $\\boxed{18}$ or maybe ２０", 0.0, "fullwidth digits"),
    ("18", "#### 18, or maybe ٢٠", 0.0, "Arabic-Indic digits offered"),
    ("18", "The answer isn't 18.", 0.0, "ruled out"),
    ("18", "The answer is 18‰", 0.0, "per mille: 0.018"),
    ("18", "Final answer: 18 (if we count Tom) or 20", 0.0, "')' then 'or'"),
    ("18", "The answer is 18? No, 20.", 0.0, "taken back"),
    ("18", "The answer is 18. Wait, no: 20.", 0.0, "taken back"),
    ("18", "The answer is 18. Actually, 20.", 0.0, "taken back"),
    ("18", "The answer is 18. Sorry, I mean 20.", 0.0, "taken back"),
    ("18", "$\\boxed{18}$\n\nWait, actually it is 20.", 0.0, "taken back in a new paragraph"),
    ("18", "#### 18\n\nWait, actually it's 20.", 0.0, "taken back in a new paragraph"),
    ("18", "$\\boxed{18}$\n\nOr maybe 20.", 0.0, "offered in the next paragraph"),
    ("18", "#### 18\n\nPerhaps 20.", 0.0, "offered in the next paragraph"),
    ("20", "So <b>18</b> or <b>20</b>", 0.0, "HTML bold around two values"),
    ("20", "So \\textbf{18} or \\textbf{20}", 0.0, "\\textbf around two"),
    ("20", "So *18* or *20*", 0.0, "italics around two"),
    ("20", "So `18` or `20`", 0.0, "inline code around two"),
    ("20", "So 18 or\n20", 0.0, "'or' ends a line"),
    ("20", "So $18$ or maybe\n$20$", 0.0, "'or maybe' ends a line"),
    ("20", "So 18 [or 20]", 0.0, "'[or'"),
    ("20", "So 18 或 20", 0.0, "Chinese 'or'"),
    ("18", "The answer is 18 (20?)", 0.0, "a doubt in parentheses"),
    # not hedging
    ("14", "So 5*14", 0.0, "a product is no 14"),
    ("18", "She has **18** apples.", 1.0, "bold around one value"),
    ("18", "so 3 and\n18", 1.0, "'and' ending a line is no offer"),
    ("18", "$\\boxed{18}$\n\nOr 20? No: it is $\\boxed{18}$.", 1.0, "the next paragraph decides"),
    ("18", "The answer is 18, not 20", 1.0, "the other value ruled out"),
    ("18", "The answer is 18.\n\nActually, 18 checks out: 3 boxes of 6.", 1.0, "the same value"),
    ("18", "The answer is 18. There are no 20-year-olds here.", 1.0, "'no' before a word"),
    ("4", "$\\boxed{3}$ % \\boxed{4}", 0.0, "a LaTeX comment hides a second box: hedged"),
    # bare answers one a paragraph: a paragraph that is only answers is no step on the
    # way, so a run of them at the end is one concluding section (``_common.section_start``);
    # a bold value or ``#### n`` alone on its line is an answer, as a box is
    ("20", "**18**\n\n**20**", 0.0, "two bold answers"),
    ("18", "**18**\n\n**20**", 0.0, "nor the first"),
    ("18", "The answer is **18**\n\n**20**", 0.0, "an answer line, then a bold value"),
    ("18", "Final answer:\n\n**18**\n\n**20**", 0.0, "under a heading"),
    ("20", "Final answer:\n\n**18**\n\n**20**", 0.0, "under a heading"),
    ("20", _FENCED, 0.0, "a box in a code block after the answer"),
    ("20", _FENCED.replace("```\n", "```latex\n", 1), 0.0, "a fence with a language"),
    ("20", "#### 18\n\n#### 20", 0.0, "two '####'"),
    ("20", "#### 18\n\n```\n#### 20\n```", 0.0, "'####' in a code block"),
    ("20", "$\\boxed{18}$\n\n$\\boxed{20}$", 0.0, "two boxes alone"),
    ("18", "\\boxed{20}\n\nThe answer is 18.", 0.0, "a box, then an answer line"),
    # not hedging: the same value, a heading, a step with words between
    ("18", "**Final Answer**\n\n**18**", 1.0, "a heading, then the answer"),
    ("18", "**Final Answer**\n\n$\\boxed{18}$\n\n**18**", 1.0, "the same value restated"),
    ("18", "$\\boxed{18}$\n\n**18.0**", 1.0, "the same value in another form"),
    ("18", "**Step 2**\n\nSo the total is 18.\n\n**18**", 1.0, "a bold heading is no value"),
    # a bold value with math after it is a step highlighted, never the answer
    ("21", "Step 1: 3 times 6.\n**18**\nStep 2: add 3: 21 total.", 1.0, "a highlighted step"),
    ("18", "Step 1: 3 times 6.\n**18**\nStep 2: add 3: 21 total.", 0.0, "never the step"),
    ("18", "**18**\n\nWait, recompute: 3*7 = 21. So 21.", 0.0, "recomputed after it"),
    # conditional offers ("(if rounding, 20)") and answers in several languages
    ("18", "The answer is $\\boxed{18}$ (if rounding, 20)", 0.0, "'(if rounding, 20)' after a box"),
    ("18", "The answer is $\\boxed{18}$ (20 if rounding)", 0.0, "'(20 if rounding)' after a box"),
    (
        "18",
        "The answer is $\\boxed{18}$. If rounding, 20.",
        0.0,
        "'If rounding, 20.' in the next sentence",
    ),
    ("18", "Final Answer: 18 (if we count Tom, 20)", 0.0, "a condition, then another value"),
    ("18", "#### 18 (rounding up: 20)", 0.0, "a rounding offered after ####"),
    ("20", "#### 18 (rounding up: 20)", 0.0, "nor the rounded value"),
    ("18", "Answer: 18. Antwort: 20. Réponse: 20.", 0.0, "another language"),
    ("18", "Answer: 18\nОтвет: 20", 0.0, "Russian"),
    ("18", "Answer: 18\n答案：20", 0.0, "Chinese, a full-width colon"),
    # not hedging
    ("18", "The answer is $\\boxed{18}$ (18 if rounding)", 1.0, "the same value"),
    ("18", "The answer is $\\boxed{18}$. If we add 2, 20 remain.", 1.0, "a value going on"),
    ("18", "Answer: 18. Antwort: 18. Réponse: 18.", 1.0, "the same value in three languages"),
    ("18", "答案：18", 1.0, "a full-width colon read as a colon"),
    ("18", "Ответ: 18", 1.0, "an answer line in Russian"),
    # separators, long gaps and other joins, against both values
    *(
        (gold, response, 0.0, why)
        for response, why in (
            ("Answer: 18\n\n---\n\nAnswer: 20", "a rule between bare answers"),
            ("$\\boxed{18}$\n\n<br>\n\n$\\boxed{20}$", "a <br> between"),
            ("**18**\n\n" + "\n" * 2000 + "**20**", "2000 blank lines between"),
            ("The answer is 18 || 20", "'||'"),
            ("So it is 18 || 20", "'||' in a passage"),
            ("The answer is 18 — or 20", "'— or'"),
            ("The answer is 18; 20", "'; 20' lists another"),
            ("The answer is 18 (alt. 20)", "'(alt. 20)'"),
            ("The answer is 18 (sic: 20)", "'(sic: 20)'"),
            ("The answer is \\(18\\) oder \\(20\\)", "spans"),
        )
        for gold in ("18", "20")
    ),
    ("18", "Answer: 18\n\n---\n\nAnswer: 18", 1.0, "the same value across a rule"),
    ("18", "The answer is 18; that is all.", 1.0, "'; ' then words ends the value"),
]


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), table_params({"math": MATH}))
def test_math_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"gsm8k": GSM8K_ROWS})
)
def test_gsm8k_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_gsm8k_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"choice": CHOICE_ROWS})
)
def test_choice_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_choice_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"both": MATH_AND_GSM8K})
)
def test_math_and_gsm8k_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_and_gsm8k_row(gold, response, expected, reason)


# (shape, where the "or" word stands)
_OR_SHAPES = [
    ("The answer is 18 {} 20", "an answer line"),
    ("Answer: 18 {} 20.", "an answer line with a colon"),
    ("<answer>18 {} 20</answer>", "a tag"),
    ("<answer>So it is 18 {} 20</answer>", "a tag read as a passage"),
    ("So it is 18 {} 20", "a passage: math-verify reads the 20"),
    ("So it is $18$ {} $20$", "math spans"),
    ("#### 18 {} 20", "'####'"),
]
OR_WORDS: list[tuple[str, str, float, str]] = [
    (gold, shape.format(word), 0.0, f"'{word}': {why}")
    for word in _OR_WORDS
    for shape, why in _OR_SHAPES
    for gold in ("18", "20")
]
# after a box, the box is the answer: an offer reads as one ("\boxed{18} vs 20"), but
# "\boxed{18} of 20" reads as English (18 of the 20), and "of" opens no offer
OR_WORDS += [
    ("18", f"The answer is $\\boxed{{18}}$ {word} 20", 0.0, f"'{word}' after a box")
    for word in ("vs", "vs.", "versus", "oder", "ou", "o", "или", "或")
]
OR_WORDS += [
    ("18", "The answer is $\\boxed{18}$ of 20", 1.0, "a box, then English 'of 20'"),
    ("20", "The answer is $\\boxed{18}$ of 20", 0.0, "never the 20"),
    (
        "18",
        "The answer is 18 of 20 students.",
        0.0,
        "English '18 of 20' or Dutch '18 or 20': no bare 18",
    ),
    ("20", "There are 18 of 20 students.", 0.0, "nor the 20"),
    ("18", "So she keeps 2/5 of 60 = 24, total 18", 1.0, "'of' in a calculation is no offer"),
]


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), table_params({"or": OR_WORDS}))
def test_or_in_other_words(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_row(gold, response, expected, reason)
    if "\\boxed" not in response:  # GSM8K reads no box "of"
        check_gsm8k_row(gold, response, expected, reason)


# (gold, response, math, gsm8k, why): a step with words between two answers. GSM8K reads
# the later answer; math reads a box first, and any other answer after it in its section
# (to the end) hedges it
STEPS: list[tuple[str, str, float, float, str]] = [
    ("18", "\\boxed{20}\n\nSo 20 - 2 more.\n\nThe answer is 18.", 0.0, 1.0, "an answer line"),
    ("18", "\\boxed{20}\n\nSubtract 2.\n\n**18**", 0.0, 1.0, "a bold value after a box"),
    ("18", "So 20 - 2 more.\n\n**18**", 1.0, 1.0, "no box before: the bold value"),
]


@pytest.mark.parametrize(
    ("gold", "response", "math", "gsm8k", "why"), table_params({"step": STEPS})
)
def test_a_step_between_two_answers(
    gold: str, response: str, math: float, gsm8k: float, why: str
) -> None:
    check_math_row(gold, response, math, why)
    assert GSM8K.check(GSM8K.extract(response), gold).score == gsm8k, f"gsm8k: {why}"


# --- the ``hedged`` flag: a hedge says so, never a silent 0 ---------------------------------

# (response, hedged?, why): the ``hedged`` flag, with default and strict extraction
FLAG_ROWS = [
    ("It is \\boxed{3}, or maybe \\boxed{4}.", True, "two answers in one sentence"),
    ("Maybe \\boxed{7}? No: recomputing, \\boxed{5}.", True, "two answers in the last paragraph"),
    ("First $a=\\boxed{3}$.\n\nSo the answer is $\\boxed{4}$.", False, "a sub-result earlier"),
    ("<think>\\boxed{7}</think>\nSo \\boxed{5}.", False, "a box in the thinking"),
    ("<think>\\boxed{5}</think>\nSo \\boxed{5}.", False, "a restatement"),
    ("So \\boxed{5}, i.e. \\boxed{5.0}.", False, "the same value twice"),
    ("So \\boxed{\\phantom{2}} and then \\boxed{5}.", False, "a blank box"),
    ("The roots are \\boxed{2} and \\boxed{3}.", False, "one multi-part answer"),
    ("It is \\boxed{3} or \\boxed{3}.", False, "'or' between equal answers"),
    ("x = \\boxed{2}\n\n**Final Answer**\n\\boxed{3}. Or \\boxed{4}?", True, "at the end"),
    # across forms: a box, an <answer> tag, answer lines (the concluding section)
    ("So \\boxed{4}.\n\nAnswer: 3", True, "a later answer line with another value"),
    ("The answer is 3. So \\boxed{4}.", True, "an answer line before the box, one paragraph"),
    ("<answer>4</answer> The answer is 3.", True, "a tag, then a line with another value"),
    ("So \\boxed{4}.\n\nThe answer is $4.0$.", False, "the same value restated"),
    ("So \\boxed{4}.\n\nAnswer: $x = 4$", False, "a leading 'x =' is dropped: the same"),
    ("So \\boxed{1, 2}.\n\nAnswer: $a=1, b=2$", False, "named against unnamed: cannot tell"),
    ("First, the answer is 3.\n\nSo \\boxed{4}.", False, "a line in an earlier paragraph"),
    ("<think>The answer is 3.</think>\n\\boxed{4}", False, "a line in the thinking"),
    ("So \\boxed{4}.\n\nThe answer: 2 + 2 = 4.", False, "a check, not another answer"),
    ("So \\boxed{3 \\vee 4}.", True, "one box offering two values"),
    ("So \\boxed{\\frac12}.\n\nAnswer: 0.5", False, "a fraction restated as a decimal"),
    ("So \\boxed{x+1}, i.e. \\boxed{1+x}.", False, "boxes shown to be one value"),
    ("So \\boxed{0.5}, i.e. \\boxed{\\frac12}.", False, "a decimal and its fraction boxed"),
    ("So \\boxed{25\\%}.\n\nAnswer: 0.25", False, "a percent: cannot tell inline, no hedge"),
    ("So \\boxed{C}.\n\nAnswer: (D)", True, "another option label on the answer line"),
]


@pytest.mark.parametrize(("response", "hedged", "why"), FLAG_ROWS)
def test_hedging_is_several_different_final_answers(response: str, hedged: bool, why: str) -> None:
    for verifier in (V, STRICT):
        extracted = verifier.extract(response)
        assert bool(extracted.extra.get("hedged")) is hedged, why
        if hedged:
            assert extracted.answer is None
            verdict = verifier.quick_check(extracted, "4")
            assert verdict is not None and verdict.score == 0.0
            assert verdict.extra["hedged"] is True


@pytest.mark.parametrize(
    ("gold", "expected"),
    [("4", 0.0), ("3", 0.0), ("3, 4", 1.0), ("\\{4, 3\\}", 1.0), ("34", 0.0)],
)
def test_boxes_joined_by_or_are_one_answer_never_a_single_value(gold: str, expected: float) -> None:
    """math-verify reads "a or b" as the set {a, b}: right for "x = 3 or x = 4" when the
    roots are 3 and 4, never equal to one of them (offering two values earns nothing)."""
    extracted = V.extract("So $x = \\boxed{3}$ or $x = \\boxed{4}$.")
    assert (extracted.answer, extracted.extra["alternatives"]) == ("3, 4", True)
    assert "hedged" not in extracted.extra
    assert V.check(extracted, gold).score == expected


def test_hedged_verdict_says_so() -> None:
    extracted = V.extract("It is $\\boxed{5}$ or $\\boxed{7}$... final: $\\boxed{9}$")
    assert extracted.answer is None
    assert extracted.extra["hedged"] is True
    verdict = V.quick_check(extracted, "9")
    assert verdict is not None
    assert verdict.score == 0.0
    assert verdict.extra["hedged"] is True
    assert verdict.extra["pred"] == "9"


def test_a_hedged_box_says_so() -> None:
    result = V.quick_check(V.extract(box("3 \\vee 4")), "4")
    assert result is not None and result.score == 0.0
    assert result.extra.get("hedged") is True


def test_a_math_prose_hedge_says_so() -> None:
    extracted = V.extract("The answer is $\\boxed{18}$ or maybe 20")
    assert extracted.answer is None and extracted.extra["hedged"] is True
    assert V.check(extracted, "18").extra["hedged"] is True


def test_a_hedged_gsm8k_answer_says_so() -> None:
    verdict = GSM8K.check(GSM8K.extract("#### 18\n#### 20"), "20")
    assert verdict.score == 0.0
    assert verdict.extra["hedged"] is True


def test_a_hedged_choice_says_so() -> None:
    verdict = CHOICE.check(CHOICE.extract("Answer: A\n\\boxed{C}"), "C")
    assert verdict.score == 0.0
    assert verdict.extra["hedged"] is True


def test_a_prose_hedge_says_so_with_the_value_read() -> None:
    gsm8k = GSM8K.check(GSM8K.extract("The answer is 18 but it could be 20"), "18")
    choice = CHOICE.check(CHOICE.extract("The answer is A but C is also possible"), "A")
    assert gsm8k.extra["hedged"] and gsm8k.extra["pred"] == "18"
    assert choice.extra["hedged"] and choice.extra["pred"] == "A"


def test_bare_answers_say_hedged() -> None:
    for verifier in (V, GSM8K):
        extracted = verifier.extract("**18**\n\n**20**")
        assert extracted.answer is None and extracted.extra["hedged"] is True


def test_the_prompts_earlier_answers_boxed_again_are_no_hedge() -> None:
    """A multi-part problem gives the answers of its earlier parts (a published Minerva
    dump of the Qwen2.5-Math harness: "Subproblem 0: ... $\\boxed{6.4}$ ... Subproblem 1:
    ..."); a response that boxes them again beside the asked part's answer answers it."""
    prompt = (
        "Subproblem 0: Find the speed.\n\nSolution: the answer is $\\boxed{6.4}$.\n\n"
        "Final answer: The final answer is 6.4. I hope it is correct.\n\n"
        "Subproblem 1: Find the time."
    )
    response = "So the answers are:\n\n0. speed: $\\boxed{6.4}$\n1. time: $\\boxed{2.5}$"
    context = Context.of(prompt, None)
    assert score(V, response, "2.5", context) == 1.0
    assert score(V, response, "2.5", Context.of("Find the time.", None)) == 0.0  # two
    other = response.replace("\\boxed{6.4}", "\\boxed{7.1}")  # an earlier part answered anew
    assert score(V, other, "2.5", context) == 0.0
