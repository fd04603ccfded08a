"""Red team 9: the math verifier's inline fast path against math-verify, false positives first.

Each ``ROWS`` row is ``(answer, gold, expected, why)``: ``answer`` is the boxed text,
``expected`` what a careful grader says and never more generous than math-verify. The
contract under test: ``quick_check`` either defers (None) or says what ``fast_paths=False``
(math-verify, after rewardkit's own pre-normalisation) says, and the full check scores
``expected``. ``before`` in a reason is what the inline path said before the fix.

Found by a generator of (answer, gold) pairs per family (percent signs, named values
against bare expressions, radicals, units and currency, degrees and radians, ``\\pi``
approximations, exponents, intervals with infinity, unions, dots, empty sets, booleans,
mixed numbers, scientific notation, text and font wrappers) and a mutation fuzzer over
the real-output corpus's golds, comparing the two paths.
"""

from __future__ import annotations

import contextlib
import time

import pytest

from _support.verifier_rows import box, check_against_math_verify, check_stricter, row_ids
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.base import Extracted
from rewardkit.verifiers.math import MathVerifier

V = MathVerifier()

# (answer, gold, expected, why)
ROWS: list[tuple[str, str, float, str]] = [
    # --- a percent sign on one side only. math-verify credits "N%" against N only when
    # both are sympy Integers (grader.py, "9% == 9"): positive whole numbers. ---
    ("1.5\\%", "1.5", 0.0, "a decimal percent is no 1.5 to math-verify (before: 1)"),
    ("1.5", "1.5\\%", 0.0, "the reverse: a gold of 1.5% (before: 1)"),
    ("1.5%", "1.5", 0.0, "a bare percent sign (before: 1)"),
    ("1.5\\,\\%", "1.5", 0.0, "a thin space before the sign (before: 1)"),
    ("-12\\%", "-12", 0.0, "a negative percent (before: 1)"),
    ("-12", "-12\\%", 0.0, "the reverse (before: 1)"),
    ("-1.5\\%", "-1.5", 0.0, "negative and decimal (before: 1)"),
    ("150.0\\%", "150", 0.0, "a whole value written as a decimal (before: 1)"),
    ("75.0\\%", "75", 0.0, "was a deliberate fast-path credit; now math-verify's 0 (before: 1)"),
    ("150\\%", "150.0", 0.0, "a gold written as a decimal (before: 1)"),
    ("2.50\\%", "2.5", 0.0, "trailing zero (before: 1)"),
    ("1.50", "1.5\\%", 0.0, "the reverse with a trailing zero (before: 1)"),
    ("1,000\\%", "1000", 0.0, "a thousands comma: math-verify reads no Integer (before: 1)"),
    ("3/2\\%", "3/2", 0.0, "a fraction percent (before: 1)"),
    ("\\frac{3}{2}\\%", "1.5", 0.0, "a fraction percent against the decimal (before: 1)"),
    ("\\frac{25}{2}\\%", "12.5", 0.0, "12.5 written as a fraction (before: 1)"),
    ("\\{1.5\\%\\}", "1.5", 0.0, "in set braces (before: 1)"),
    ("2^{3}\\%", "8", 0.0, "a power: no Integer when parsed (before: 1)"),
    ("10^{2}\\%", "100", 0.0, "the same at 100 (before: 1)"),
    ("1.5\\%\\text{ increase}", "1.5", 0.0, "a unit word after the sign (before: 1)"),
    ("150\\%", "150", 1.0, "a positive whole number: math-verify's 9% == 9"),
    ("150", "150\\%", 1.0, "the reverse"),
    ("12\\%", "12", 1.0, "the same at 12"),
    ("1000\\%", "1000", 1.0, "and at 1000"),
    ("0.015", "1.5\\%", 1.0, "the value of 1.5% (math-verify decides)"),
    ("1.5\\%", "0.015", 1.0, "the reverse (math-verify decides)"),
    ("150\\%", "1.5", 1.0, "150% is 1.5 (math-verify decides)"),
    ("155 \\text{rad}\\%", "155", 0.0, "a word before the sign: no N% (fuzzer; before: 1)"),
    ("12\\%\\%", "12\\%", 0.0, "two signs against one (math-verify decides)"),
    ("12\\%", "12\\%\\%", 0.0, "one sign against two (math-verify decides)"),
    ("12 \\%", "12", 1.0, "a space before the sign is still N%"),
    ("0.5\\%", "0.5", 0.0, "a probability misread, as before"),
    # --- as many percent signs on both sides, but after other items of a list ---
    ("1.5\\%, 12", "1.5, 12\\%", 0.0, "1.5% and 12 are no 1.5 and 12% (before: 1)"),
    ("12\\%, 15", "12, 15\\%", 0.0, "whole numbers too (before: 1)"),
    ("(1.5\\%, 2)", "(1.5, 2\\%)", 0.0, "in a pair (before: 1)"),
    ("x = 1.5\\%, y = 2", "x = 1.5, y = 2\\%", 0.0, "named values (before: 1)"),
    ("45\\%, 55\\%", "55\\%, 45\\%", 1.0, "the signs on every item, in another order"),
    ("45 \\%, 55\\%", "45\\%, 55\\%", 1.0, "the same items marked"),
    ("1.5\\%, 12", "1.5\\%, 12", 1.0, "the same item marked"),
    # --- "\text{percent}" (also "percentage", "pct"), no space inside: math-verify
    # turns it into a percent sign; "\text{ percent}" is a unit it drops ---
    ("0.5\\text{percent}", "0.5", 0.0, "0.5% is 0.005: no 0.5 (before: 1)"),
    ("0.5\\text{percentage}", "0.5", 0.0, "the same word as a noun (before: 1)"),
    ("0.5\\text{pct}", "0.5", 0.0, "abbreviated (before: 1)"),
    ("1.5\\text{percent}", "1.5", 0.0, "a decimal above 1, as with the sign (before: 1)"),
    ("-12\\text{percent}", "-12", 0.0, "negative (before: 1)"),
    ("x = 0.5\\text{percent}", "0.5", 0.0, "after a name (before: 1)"),
    ("0.5\\text{percent}^2", "0.5", 0.0, "squared (before: 1)"),
    ("0.5\\text{percent}^3", "0.5\\text{percent}^2", 0.0, "cubed is not squared (before: 1)"),
    ("0.5\\text{percent}", "0.005", 1.0, "0.5% is 0.005 (before: 0)"),
    ("0.5\\text{ percent}", "0.5", 1.0, "with a space: a unit math-verify drops, as before"),
    ("12\\text{percent}", "12\\%", 1.0, "the word against the sign"),
    ("12\\%", "13", 0.0, "another number"),
    # --- "pi" in words after a value: 2 pi, no 2 and a unit (math-verify dropped it; now
    # refused before math-verify, with fast paths on and off) ---
    ("2\\text{ pi}", "2", 0.0, "2 pi is no 2 (before: 1, both paths)"),
    ("2\\text{pi}", "2", 0.0, "no space (before: 1)"),
    ("\\frac{1}{2}\\text{ pi radians}", "\\frac12", 0.0, "with a unit after it (before: 1)"),
    ("2\\text{ pizzas}", "2", 1.0, "a word that starts with pi is a unit"),
    # --- a number ending in a point, then more: an item's number ("2. \frac14" answers
    # item 2 with 1/4, as math-verify reads it) or a cut mixed number, no product ---
    ("2.\\frac14", "\\frac12", 0.0, "2.\\frac14 is no 2 times 1/4 (before: 1)"),
    ("2. \\frac{1}{4}", "\\frac12", 0.0, "an enumeration: item 2, answer 1/4 (before: 1)"),
    ("2.\\cdot\\frac{1}{4}", "\\frac12", 0.0, "a point then a product sign (before: 1)"),
    ("3.\\sqrt{2}", "3\\sqrt2", 0.0, "item 3, answer sqrt 2 (before: 1)"),
    ("12.\\pi", "12\\pi", 0.0, "item 12, answer pi (before: 1)"),
    ("2.x", "2x", 0.0, "item 2, answer x (before: 1)"),
    ("2. \\frac{1}{4}", "\\frac14", 1.0, "math-verify reads the item's answer"),
    ("2.5\\frac14", "\\frac58", 1.0, "a decimal times a fraction still reads inline"),
    # --- an ellipsis ending the answer: a series or a decimal that goes on, no full
    # stop (normalising stripped every trailing point; the fuzzer found these) ---
    ("1+2+3...", "6", 0.0, "an endless series is no 6 (before: 1)"),
    ("0.9...", "0.9", 0.0, "0.9... goes on: no 0.9 (before: 1)"),
    ("3.14...", "3.14", 0.0, "pi's digits, cut: no 3.14 (before: 1)"),
    ("9+0...", "9", 0.0, "fuzzer: a sum that goes on (before: 1)"),
    ("40\\sqrt{10}...", "40\\sqrt{10}", 0.0, "fuzzer: a product that goes on (before: 1)"),
    ("750.......", "750", 0.0, "fuzzer: many points (before: 1)"),
    ("6. . .", "6", 0.0, "spaced points (before: 1)"),
    ("\\text{6...}", "6", 0.0, "points inside a text wrapper (before: 1)"),
    ("0.333...", "\\frac13", 0.0, "math-verify cannot read it, as before"),
    ("1+2+3...\\text{ cm}", "6", 0.0, "an ellipsis before a unit (before: 1)"),
    ("40/9...\\text{ cm}", "40/9", 0.0, "fuzzer: the same (before: 1)"),
    # --- membership in a number with a thousands comma: math-verify reads the set
    # {114, 200}; the inline path read 114200 ---
    ("x \\in 114,200", "114,200", 0.0, "fuzzer: x in {114, 200} is no 114200 (before: 1)"),
    ("x \\in 114,200", "114200", 0.0, "the same against the bare number (before: 1)"),
    ("x \\in 114, 200", "114, 200", 1.0, "the set of two numbers, as both read it"),
    # --- an option letter dropped with a trailing "unit" against a gold of letters ---
    ("\\text{A,C}\\text{ plus D}", "\\text{A,C}", 0.0, "a third statement added (before: 1)"),
    ("\\text{A,C}\\text{ plus D}", "A, C", 0.0, "against the bare letters (before: 1)"),
    ("(C) 12\\text{ plus E}", "(C)", 0.0, "another option after the value (math-verify: 0)"),
    # --- ... or any word against a gold that is a word: a second answer dropped as a unit ---
    ("\\text{Monday}\\text{ Tuesday}", "\\text{Monday}", 0.0, "two days offered (before: 1)"),
    ("\\text{yes}\\text{ no}", "\\text{yes}", 0.0, "yes and no: a hedge (before: 1)"),
    ("\\text{odd}\\text{ even}", "\\text{odd}", 0.0, "both parities (before: 1)"),
    ("\\text{True}\\text{ False}", "\\text{True}", 0.0, "both truth values (before: 1)"),
    ("\\text{north}\\text{ south}", "\\text{north}", 0.0, "two directions (before: 1)"),
    ("\\text{Monday}\\text{ }", "\\text{Monday}", 1.0, "an empty wrapper drops no word"),
    ("\\textbf{Monday}", "\\text{Monday}", 1.0, "another wrapper, the same word"),
    # --- a guarded pair (an exponent tower) is decided by its normalised text, which
    # had lost a percent sign; fast_paths=False takes the same guard ---
    ("9^{9^{9}}\\%", "9^{9^{9}}", 0.0, "a tower percent is no tower (before: 1, both paths)"),
    ("9^{9^{9}}", "9^{9^{9}}\\%", 0.0, "the reverse (before: 1, both paths)"),
    ("9^{9^{9}}\\%", "9^{9^{9}}\\%", 1.0, "the same text"),
    ("y = 9^{9^{9}}", "9^{9^{9}}", 1.0, "a name first, as fast_paths=False reads it (before: 0)"),
    # --- "\frac 1 2": TeX's 1/2 (one token per argument), which the spaced-numbers
    # guard read as the numbers 1 and 2 shown apart, with fast paths on and off ---
    ("\\frac 1 2", "\\frac12", 1.0, "TeX's one-token arguments (before: 0, both paths)"),
    ("\\dfrac 3 4", "0.75", 1.0, "\\dfrac too (before: 0)"),
    ("x = \\frac 1 2", "\\frac12", 1.0, "after a name (before: 0)"),
    ("2 \\frac 1 2", "\\frac52", 1.0, "a mixed number (before: 0)"),
    ("\\frac 1 2", "3", 0.0, "no sum of the digits"),
    ("\\frac 1 2 3", "\\frac32", 0.0, "1/2 and 3 shown apart: still two numbers"),
    ("\\frac 12 3", "\\frac32", 0.0, "the same with the digits glued"),
    ("\\frac 1 2 .5", "\\frac14", 0.0, "a decimal after the fraction"),
]


@pytest.mark.parametrize(("answer", "gold", "expected", "why"), ROWS, ids=row_ids(ROWS))
def test_row(answer: str, gold: str, expected: float, why: str) -> None:
    extracted = V.extract(box(answer))
    assert extracted.answer == answer, "the box is read whole"
    check_against_math_verify(extracted, gold, expected, why)


# math-verify's own false positives that the inline path refuses (mv: 1, it drops the
# degree sign as a unit). A radian value with a degree sign is another angle: a quarter of
# pi degrees is about 0.8 degrees, not pi/4 radians. With fast_paths=False math-verify's
# verdict stands.
STRICTER_ROWS: list[tuple[str, str, float, str]] = [
    ("\\frac{\\pi}{4}^\\circ", "\\frac{\\pi}{4}", 0.0, "pi/4 degrees is no pi/4 radians"),
    ("\\frac{\\pi}{4}°", "\\frac{\\pi}{4}", 0.0, "a Unicode degree sign"),
    ("2\\pi^\\circ", "2\\pi", 0.0, "2 pi degrees"),
    ("\\frac{\\pi}{4}\\text{ degrees}", "\\frac{\\pi}{4}", 0.0, "the word"),
    ("\\frac{\\pi}{4}", "\\frac{\\pi}{4}^\\circ", 0.0, "the sign on the gold's side"),
    ("\\frac{\\pi}{4}^\\circ", "\\frac{\\pi}{4}^\\circ", 1.0, "degrees on both sides"),
    ("\\frac{\\pi}{4}\\text{ rad}", "\\frac{\\pi}{4}", 1.0, "radians named"),
    ("30^\\circ", "30", 1.0, "no pi: a gold in degrees without the sign, as before"),
]


@pytest.mark.parametrize(
    ("answer", "gold", "expected", "why"), STRICTER_ROWS, ids=row_ids(STRICTER_ROWS)
)
def test_stricter_than_math_verify(answer: str, gold: str, expected: float, why: str) -> None:
    check_stricter(answer, gold, expected, why)


@pytest.mark.parametrize(
    "answer",
    [
        "." * 5000,
        "1" + " " * 5000 + ".",
        ". " * 2500,
        "\\text{percent}" * 300,
        "\\frac 1 2" * 500,
        "1" * 3000 + "\\%",
        "2." * 1500 + "x",
        "x \\in " + "1,000" * 500,
    ],
    ids=lambda answer: repr(answer[:10]),
)
def test_hostile_input_is_decided_quickly(answer: str) -> None:
    """The new checks are linear: long inputs cost milliseconds, never a hang."""
    started = time.perf_counter()
    for gold in ("12", "150\\%", "\\text{A,C}", "9^{9^{9}}"):
        V.quick_check(Extracted(answer, {"source": "boxed"}), gold)
        with contextlib.suppress(InvalidSampleError):  # a gold of points alone is blank
            V.quick_check(Extracted(gold, {"source": "boxed"}), answer[:4000])
    assert time.perf_counter() - started < 2.0
