"""Red-team rows for the math verifier: answers a policy rewarded by it could learn.

Each row is ``(gold, response, expected score, reason)``; the expected score is the
correct verdict, and the reason names what math-verify alone says (``mv``: its
``parse``/``verify`` on the same answer) and what rewardkit said before the fix. A false
positive (a wrong answer scored 1) is the worst bug, so every row expected 0 is also
checked with ``fast_paths=False``: no reading may credit it.

The hedging rows (several different final answers across a box, an ``<answer>`` tag
and answer lines, or two values offered as alternatives) follow ``_answer``'s rule.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import V, check_both_phases, check_math_row
from _support.verifier_rows import box as _box
from _support.verifier_rows import row_ids as _ids
from rewardkit import RewardLoop, Status
from rewardkit.errors import InvalidSampleError

# (gold, response, expected, reason)
ROWS: list[tuple[str, str, float, str]] = [
    # --- percents on both sides compare as their numbers (decided inline, no worker) ---
    ("55\\%", _box("45\\%"), 0.0, "two different percents"),
    ("55\\%", _box("55\\%"), 1.0, "the same percent"),
    ("5\\%", _box("0.05\\%"), 0.0, "5% is not 0.05%"),
    ("0.05", _box("5\\%"), 1.0, "one side only has the percent: math-verify decides (mv: 1)"),
    # --- number words: a strict grammar, never a sum of words (before: 1, mv: 0) ---
    ("5", _box("-five"), 0.0, "a sign before a number word: -5, not 5"),
    ("5", _box("- five"), 0.0, "a sign, spaced, before a number word"),
    ("5", _box("\\text{-five}"), 0.0, "a sign inside \\text before a number word"),
    ("5", _box("\\text{--five}"), 0.0, "two hyphens are no number"),
    ("5", _box("\\text{five-}"), 0.0, "a trailing hyphen is no number"),
    ("3", _box("\\text{two one}"), 0.0, "two number words are two numbers (or 21), never 3"),
    ("3", _box("two one"), 0.0, "two bare number words are never their sum"),
    ("3", _box("oneandtwo"), 0.0, "'one and two' glued: a list, never 3"),
    ("12", _box("\\text{ten two}"), 0.0, "'ten two' is not twelve"),
    ("10", _box("\\text{five five}"), 0.0, "'five five' is not ten"),
    ("20300", _box("\\text{two hundred three hundred}"), 0.0, "not one number"),
    ("2000", _box("\\text{thousand thousand}"), 0.0, "a repeated scale is not a sum"),
    ("21", _box("\\text{twenty-one}"), 1.0, "a hyphenated number word still reads (mv: 0)"),
    ("12", _box("\\text{twelve}"), 1.0, "a number word is its number (mv: 0, a symbol)"),
    ("105", _box("\\text{one hundred five}"), 1.0, "hundreds then units (mv: 0)"),
    ("2005", _box("\\text{two thousand five}"), 1.0, "scales in order (mv: 0)"),
    # --- option labels (before: 1, mv: 0) ---
    ("A", _box("(A) \\text{ or } (B)"), 0.0, "two options offered: a hedge"),
    ("A", _box("(A)(B)"), 0.0, "two option labels glued"),
    ("A", _box("(A), (B)"), 0.0, "two options listed"),
    ("A", _box("\\text{(A) or (B)}"), 0.0, "two options inside one \\text"),
    ("A", _box("(A) \\text{ and } (B)"), 0.0, "two options joined by 'and'"),
    ("A", _box("\\text{(A) } 5 \\text{ or (B) } 6"), 0.0, "two labelled values offered"),
    ("(C) 12", _box("(D) 12"), 0.0, "another option with the same value (before: 1 via mv)"),
    ("\\text{(C) } 12", _box("\\text{(D) } 12"), 0.0, "another option, labels in \\text"),
    ("C", _box("(C) 12"), 1.0, "the right label with its value (mv: 0)"),
    ("(C) 12", _box("12"), 1.0, "the value of the right option (mv: 0)"),
    ("(C) 12", _box("(C)"), 1.0, "the right option without its value (before: 0, mv: 0)"),
    ("(C) 12", _box("(D)"), 0.0, "another option without its value"),
    ("C", _box("\\text{(c)}"), 1.0, "a lower-case label (before: 0, mv: 1)"),
    ("C", _box("\\{C\\}"), 1.0, "a label in braces (before: 0, mv: 1)"),
    ("C", _box("\\{D\\}"), 0.0, "another label in braces"),
    # --- mixed numbers and exponents (before: 1, mv: 0) ---
    ("32", _box("4^2\\frac{1}{2}"), 0.0, "4^2 times 1/2 is 8; never 4^{5/2} = 32"),
    ("8", _box("4^2\\frac{1}{2}"), 1.0, "an unbraced exponent is one digit (before: 0, mv: 1)"),
    ("32", _box("4^2\\frac12"), 0.0, "the same with \\frac12"),
    ("\\frac{9x}{4}", _box("2\\frac{1}{4}x"), 0.0, "a mixed number among factors is ambiguous"),
    ("\\frac{x}{2}", _box("2\\frac{1}{4}x"), 1.0, "read as math-verify reads it (before: 0)"),
    ("\\frac{9}{4}", _box("2\\frac{1}{4}"), 1.0, "a lone mixed number is still 9/4 (mv: 1)"),
    ("-\\frac{9}{4}", _box("-2\\frac{1}{4}"), 1.0, "a negative mixed number (mv: 1)"),
    # --- one box offering alternatives: math-verify reads the last value (mv: 1) ---
    ("4", _box("3 \\vee 4"), 0.0, "'3 or 4' in logic notation: mv credits the 4"),
    ("4", _box("3 \\lor 4"), 0.0, "\\lor: mv credits the 4"),
    ("4", _box("3 \\text{ (or } 4)"), 0.0, "a parenthesised alternative: mv credits the 4"),
    ("4", "Answer: 3 (or 4)", 0.0, "an answer line with an alternative: mv credits the 4"),
    ("3", _box("3 \\text{ (maybe 4)}"), 0.0, "a hedge in parentheses (before: 1, mv: 1)"),
    ("p \\vee q", _box("p \\vee q"), 1.0, "\\vee in the gold too: compared as usual"),
    # --- a relation or negation with no left side: "not 12" (before: 1, mv: 1) ---
    ("12", _box("\\neq 12"), 0.0, "'not equal to 12': mv reads the 12"),
    ("12", _box("\\ne 12"), 0.0, "\\ne: mv reads the 12"),
    ("12", _box("\\neg 12"), 0.0, "'not 12': mv reads the 12"),
    ("12", _box("< 12"), 0.0, "'less than 12': mv reads the 12"),
    ("12", _box("\\le 12"), 0.0, "'at most 12': mv reads the 12"),
    ("12", _box("= 12"), 1.0, "an equals sign is harmless (mv: 1)"),
    ("\\ge 12", _box("\\geq 12"), 1.0, "a relation in the gold too: compared as usual"),
    # --- answer lines joined by 'or' (before: the first span alone, 1) ---
    ("3", "The final answer is $3$ or $4$.", 0.0, "two values offered on the answer line"),
    ("3", "Answer: $3$ (or $4$)", 0.0, "an alternative span in parentheses"),
    ("-5, 4", "The answer is $x=-5$ or $x=4$.", 1.0, "both roots, joined by 'or' (mv: 1)"),
    # --- rows that held already: attack shapes a policy might try (all mv: 0) ---
    ("2^{64}", _box("18446744073709551617"), 0.0, "big integers compare exactly"),
    ("\\frac{1}{3}", _box("0.333"), 0.0, "a short decimal is not 1/3"),
    ("\\frac{1}{3}", _box("0.3333"), 0.0, "nor four digits"),
    ("1000", _box("1, 000"), 0.0, "a comma and a space separate two numbers"),
    ("(1,2]", _box("[1,2)"), 0.0, "swapped interval brackets"),
    ("x=1, y=2", _box("x=2, y=1"), 0.0, "named values keep their names"),
    ("3+4i", _box("4+3i"), 0.0, "complex parts swapped"),
    ("1011_2", _box("1101_2"), 0.0, "another base-2 number"),
    ("\\pm 2", _box("2"), 0.0, "one of the two signs"),
    ("(1,2), (3,4)", _box("(1,2), (4,3)"), 0.0, "ordered pairs inside a set"),
    ("10^{-6}", _box("0"), 0.0, "a tiny number is not zero"),
    ("12", _box("12 - 1\\text{ dollars}"), 0.0, "a unit after an expression is not dropped"),
    ("3", _box("3\\text{ or }4"), 0.0, "two values in one box"),
    ("3", "\\boxed{3} $\\boxed{}$ \\boxed{4}", 0.0, "a blank box between two answers: hedging"),
    ("3", "\\boxed{3}\\text{ (or }\\boxed{4}\\text{)}", 0.0, "a second box in a parenthesis"),
    # --- exact values rewardkit credits and math-verify does not (correct, mv: 0) ---
    ("\\frac{1}{3}", _box("0.\\overline{3}"), 1.0, "a repeating decimal is exactly 1/3"),
    ("1", _box("0.\\overline{9}"), 1.0, "0.999... is exactly 1"),
    ("\\frac{11}{9}", _box("1\\overline{2}"), 0.0, "a bar without a point: a numeral (before: 1)"),
    ("\\frac{1}{3}", _box("0\\overline{3}"), 0.0, "no decimal point, no repeating decimal"),
    ("\\frac{1}{2}", _box("\\frac{2}{1}\\frac{1}{4}"), 1.0, "a product of fractions (mv: 9/4)"),
    # --- several different final answers across forms: hedging (before: 1) ---
    ("9", "Hence $\\boxed{9}$.\n\nAnswer: 10", 0.0, "a box, then a line with another value"),
    ("10", "Hence $\\boxed{9}$.\n\nAnswer: 10", 0.0, "the same hedge against the line's value"),
    ("3", "<answer>3</answer> The answer is 4", 0.0, "a tag, then a line with another value"),
    ("4", "The answer is 3.\nThe answer is 4.", 0.0, "two answer lines, two values, one paragraph"),
    ("3", "The answer is $3$ $4$", 0.0, "two numbers side by side: a list, never the first"),
    ("4", "Answer: 3 | 4", 0.0, "a lone bar between two values (mv: 1, reads the 4)"),
    ("3", "Answer: 3 | 4", 0.0, "the same bar against the first value"),
    ("3", "Answer: 3, maybe 4", 0.0, "'maybe' on an answer line (before: 1, the 3 alone)"),
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
    # --- the same value restated in another form is not hedging ---
    ("5", "So $\\boxed{5}$.\n\nThe answer is $\\frac{10}{2}$.", 1.0, "5 restated as 10/2"),
    ("\\frac13", "So $\\boxed{\\frac13}$.\n\nAnswer: 0.333", 1.0, "a rounding restated"),
    ("\\frac12", "<answer>0.5</answer> The answer is $\\frac{1}{2}$.", 1.0, "a tag restated"),
    ("x^2+1", "So $\\boxed{x^2+1}$.\n\nAnswer: $1+x^2$", 1.0, "an expression reordered"),
    ("5", "So $\\boxed{5}$.\n\nAnswer: $x = 5$", 1.0, "a leading 'x =' is dropped: the same"),
    ("5", "So $\\boxed{5}$.\n\nThe answer is $2 + 3 = 5$.", 1.0, "an equation: cannot tell"),
    ("\\sqrt{2}", "So $\\boxed{\\sqrt{2}}$.\n\nAnswer: 1.41", 1.0, "a decimal: cannot tell"),
    ("5", "The answer is $5$ $\\text{cm}$", 1.0, "a unit span after a number is no value"),
    ("-5, 4", "so $x = -5$ or $x = 4$", 1.0, "roots in spans: math-verify reads the set"),
    ("\\{x | x > 0\\}", "so the answer is $\\{x | x > 0\\}$", 1.0, "set-builder bar, no hedge"),
]


# math-verify's own false positives that the fast path now refuses (mv: 1, before: 1).
# math-verify rounds a decimal and an exact value to 6 places before comparing, so any
# decimal below 5e-7 "equals" any tiny exact value. With fast_paths=False math-verify's
# verdict stands (the user asked for it), so these rows check the default verifier only.
ROUNDING_ROWS: list[tuple[str, str, float, str]] = [
    ("10^{-7}", _box("0.0"), 0.0, "0.0 is zero, not 10^{-7}"),
    ("10^{-7}", _box("0.0000002"), 0.0, "twice the value"),
    ("\\frac{1}{2^{30}}", _box("0.000000001"), 0.0, "1e-9 is 7% off 2^{-30}"),
    ("\\frac{1}{3000000}", _box("0.0000003"), 0.0, "one significant digit, 10% off"),
    ("\\frac{\\pi}{10^7}", _box("0.0"), 0.0, "an expression with pi, against zero"),
    ("(10^{-7}, 1)", _box("(0.0, 1)"), 0.0, "inside an interval"),
    ("10^{-7}, 1", _box("0.0, 1"), 0.0, "inside a set"),
    # exact by default (reward.verifiers.math.decimals: exact): a rounding is no exact value
    ("\\frac{1}{3}", _box("0.3333333"), 0.0, "a good rounding is still a rounding"),
    ("\\frac{1}{70000}", _box("0.0000143"), 0.0, "three significant digits: inexact"),
    ("\\frac{1}{1024}", _box("0.000977"), 0.0, "a tiny value rounded well: inexact"),
]


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), ROWS, ids=_ids(ROWS))
def test_redteam_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), ROUNDING_ROWS, ids=_ids(ROUNDING_ROWS)
)
def test_rounding_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_both_phases(gold, response, expected, reason)


@pytest.mark.parametrize("gold", ["\\text{}", "$", "\\$", ".", "\\,", "\\text{ }", "~"])
def test_a_gold_blank_once_normalised_is_an_invalid_row(gold: str) -> None:
    """Before: ``\\boxed{.}`` scored 1 against ``\\text{}`` (both normalise to nothing)."""
    with pytest.raises(InvalidSampleError, match="blank once normalised"):
        V.check(V.extract(_box(".")), gold)


def test_a_blank_gold_is_an_invalid_row_through_the_loop() -> None:
    rows = [
        {"data_source": "lighteval/MATH", "response": _box("."), "ground_truth": "\\text{}"},
        {"data_source": "lighteval/MATH", "response": _box("1"), "ground_truth": "1"},
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        blank, fine = loop.score(rows)
    assert (blank.status, blank.score) == (Status.INVALID, None)
    assert "blank once normalised" in (blank.error or "")
    assert (fine.status, fine.score) == (Status.OK, 1.0)


def test_hedged_alternatives_say_so() -> None:
    """A box offering alternatives is marked hedged, not silently wrong."""
    result = V.quick_check(V.extract(_box("3 \\vee 4")), "4")
    assert result is not None and result.score == 0.0
    assert result.extra.get("hedged") is True


def test_a_passage_and_a_box_with_the_same_text_are_not_one_check() -> None:
    """The loop's dedup key once ignored how an answer was found: a fallback passage
    (math-verify reads its last value: 3) and a box holding the same text (0) shared one
    check, so a row's score depended on which came first in the batch."""
    passage = "x is 4 but 3 is wrong"
    rows = [
        {"data_source": "lighteval/MATH", "response": passage, "ground_truth": "3"},
        {"data_source": "lighteval/MATH", "response": f"\\boxed{{{passage}}}", "ground_truth": "3"},
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        first = [result.score for result in loop.score(rows)]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        second = [result.score for result in loop.score(rows[::-1])][::-1]
    own = [V.check(V.extract(row["response"]), "3").score for row in rows]
    assert first == second == own
