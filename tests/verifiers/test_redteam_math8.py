"""Red team 8: the math verifier's inline fast path against math-verify, false positives first.

Each ``ROWS`` row is ``(answer, gold, expected, why)``: ``answer`` is the boxed text,
``expected`` what a careful grader says and never more generous than math-verify. The
contract under test: ``quick_check`` either defers (None) or says what ``fast_paths=False``
(math-verify, after rewardkit's own pre-normalisation) says, and the full check scores
``expected``. ``before`` in a reason is what the inline path said before the fix (``mv``:
math-verify's verdict before the fix).

Found by a generator of (answer, gold) pairs per family (scientific notation, repeating
decimals, ``\\pm``, complex numbers, matrices, intervals and sets, roots, logs, factorials,
bases, infinity, decimals, signs, products, fractions, ratios, signs after a group,
Unicode look-alikes, spaced numbers) and a random mutation fuzzer, comparing the two
paths.

``LETTER_ROWS`` are the exception the brief allows: a multi-select gold
(``\\text{A,B,C,D}``, MATH's "enter the letters of the true statements, separated by
commas") against an answer listing letters. math-verify scores every such answer 0; the
inline path compares the letters as a set (the question asks which statements are true,
so the order is not part of the answer). A subset, a superset, other letters, letters
not separated by commas or with words added stay 0.
"""

from __future__ import annotations

import time

import pytest

from _support.verifier_rows import box, check_against_math_verify, check_math_row, check_stricter, row_ids
from rewardkit.verifiers.base import Extracted
from rewardkit.verifiers.math import (
    MathVerifier,
    _for_math_verify,
    _letter_list,
    _spaced_integers,
)

V = MathVerifier()
OFF = MathVerifier(fast_paths=False)

# (answer, gold, expected, why)
ROWS: list[tuple[str, str, float, str]] = [
    # --- a degree or percent sign after a whole tuple, interval or set. math-verify read
    # "(a, b)^\circ" as a power of the group and kept its last item, b. ---
    ("(30, 60)^\\circ", "(30, 60)", 1.0, "each angle in degrees (before: 1, mv 0)"),
    ("(30,60)^{\\circ}", "(30^\\circ, 60^\\circ)", 1.0, "the gold's degrees per item (mv 0)"),
    ("(30, 60)°", "(30, 60)", 1.0, "a Unicode degree sign after the pair (mv 0)"),
    ("(30, 60)\\degree", "(30, 60)", 1.0, "\\degree after the pair (mv 0)"),
    ("\\{30, 60\\}^\\circ", "\\{30, 60\\}", 1.0, "after a set (mv 0)"),
    ("\\{30, 60\\}^\\circ", "30, 60", 1.0, "a set of angles against the list (mv 0)"),
    ("(30, 60)^{\\circ}\\text{ degrees}", "(30, 60)", 1.0, "and a unit word (mv 0)"),
    ("(30, 60)^\\circ", "60", 0.0, "a pair is no 60 (mv 1: the last item)"),
    ("[30, 60]^\\circ", "60", 0.0, "an interval is no 60 (mv 1)"),
    ("(30, 60)°", "60", 0.0, "the same with a Unicode sign (mv 1)"),
    ("(30, 60)^{\\circ}\\text{ degrees}", "60", 0.0, "the same with a unit word (mv 1)"),
    ("(99, 60)\\%", "60", 0.0, "a wrong pair with a percent sign (before: mv 1, a hedge)"),
    ("[30, 60]\\%", "60", 0.0, "an interval with a percent sign (mv 1)"),
    ("(30, 60)\\ \\%", "60", 0.0, "a space before the percent sign (mv 1)"),
    ("(30, 60)^\\circ", "30", 0.0, "nor the first item"),
    ("(1, 2)\\cup(3, 4)^\\circ", "(1, 2)\\cup(3, 4)", 1.0, "on the last group (before: 1, mv 0)"),
    ("(1, 2)\\cup(3, 4)^\\circ", "4", 0.0, "a union is no 4"),
    ("((1, 2), (3, 4))^\\circ", "(3, 4)", 0.0, "a pair of pairs is not its last pair"),
    ("\\,(3, -1\\ )^\\circ", "(3, -1)", 1.0, "spacing around the pair (before: 1, mv 0)"),
    ("\\,(3, -1\\ )^\\circ", "-1", 0.0, "nor its last item"),
    ("(3\\,,\\,4)\\%", "4", 0.0, "a comma between TeX spaces still splits items"),
    ("(30)^\\circ", "30", 1.0, "one value in parentheses: math-verify's reading (inline defers)"),
    # --- a dash in text mode is a typographic dash, no minus sign (before: 1, mv 0) ---
    ("\\text{--}3", "3", 0.0, "an en dash: '–3' reads as minus 3, not as --3 = 3"),
    ("\\text{---}3", "-3", 0.0, "an em dash: no minus sign to mv"),
    ("\\textbf{--}3", "3", 0.0, "the same in bold text"),
    ("\\mbox{--}3", "3", 0.0, "the same in an \\mbox"),
    ("\\textendash 3", "3", 0.0, "'–3' (before: mv 1, the command dropped)"),
    ("\\textemdash 3", "3", 0.0, "'—3' (before: mv 1)"),
    ("--3", "3", 1.0, "two minus signs in math mode still read inline (mv 1)"),
    # --- numbers apart by plain spaces: math-verify summed or multiplied them ---
    ("2 3", "5", 0.0, "'2 3' shows 23 in math mode, two numbers in text (before: mv 1, a sum)"),
    ("2 3", "23", 0.0, "nor 23: the space is shown"),
    ("12 0", "0", 0.0, "no product (before: mv 1)"),
    ("1.5 2", "3.5", 0.0, "decimals too (before: mv 1)"),
    ("12 1 000", "0", 0.0, "a number before a thousands group (before: mv 1)"),
    ("2 \\frac{1}{2}", "\\frac52", 1.0, "a mixed number is no two numbers"),
    ("3 1 / 2", "3", 0.0, "nor a spaced mixed number (math-verify's reading)"),
    # --- ... but thousands groups apart by plain spaces are one number (mv 0: 200*000) ---
    ("200 000", "200000", 1.0, "real output (math_qwen25math15b_ei iter_5:729, hand verdict 1)"),
    ("12 345 678", "12345678", 1.0, "several groups"),
    ("x = 1 000", "1000", 1.0, "after a name"),
    ("1 000, 2 000", "1000, 2000", 1.0, "list items (before: mv 0)"),
    ("200 000", "200", 0.0, "not its first group"),
]


@pytest.mark.parametrize(("answer", "gold", "expected", "why"), ROWS, ids=row_ids(ROWS))
def test_row(answer: str, gold: str, expected: float, why: str) -> None:
    extracted = V.extract(box(answer))
    assert extracted.answer == answer, "the box is read whole"
    check_against_math_verify(extracted, gold, expected, why)


# math-verify's own false positives that the inline path refuses (mv: 1; it reads only the
# ASCII digits, where the inline path reads Unicode digits as their numbers, as
# test_redteam_qualifiers settles). With fast_paths=False math-verify's verdict stands.
STRICTER_ROWS: list[tuple[str, str, float, str]] = [
    ("１２, 5", "5", 0.0, "two values, one in full width, are no 5"),
    ("(１, 5)", "5", 0.0, "a pair is no 5"),
    ("A or C", "A, C", 0.0, "two options offered as alternatives are no choice of both"),
]


@pytest.mark.parametrize(
    ("answer", "gold", "expected", "why"), STRICTER_ROWS, ids=row_ids(STRICTER_ROWS)
)
def test_stricter_than_math_verify(answer: str, gold: str, expected: float, why: str) -> None:
    check_stricter(answer, gold, expected, why)


@pytest.mark.parametrize(
    ("answer", "math_verify_reads"),
    [
        ("(30, 60)^\\circ", "(30^\\circ, 60^\\circ)"),
        ("(30, 60)°", "(30^{\\circ}, 60^{\\circ})"),
        ("[30, 60)\\%", "[30\\%, 60\\%)"),
        ("\\left\\{30, 60\\right\\}^\\circ", "\\left\\{30^\\circ, 60^\\circ\\right\\}"),
        ("(\\frac{1}{2}, 60)^\\circ", "(\\frac{1}{2}^\\circ, 60^\\circ)"),
        ("(30, 60)^\\circ.", "(30^\\circ, 60^\\circ)."),
        ("((1, 2), (3, 4))^\\circ", "((1^\\circ, 2^\\circ), (3^\\circ, 4^\\circ))"),
        ("(1, 2)\\cup(3, 4)^\\circ", "(1, 2)\\cup(3^\\circ, 4^\\circ)"),  # the last group
        ("x = (30, 60)^\\circ", "x = (30^\\circ, 60^\\circ)"),
        ("(3, -1\\ )^\\circ", "(3^\\circ, -1^\\circ\\ )"),  # before the space, not "\\^"
        ("(3\\,,\\,4)\\%", "(3\\%\\,,\\,4\\%)"),  # "\\," is no item separator
        ("2(3+4)\\%", "2(3+4)\\%"),  # no items: 2 times 7%, left alone
        ("(30)^\\circ", "(30)^\\circ"),
        ("(30, 60)^2", "(30, 60)^2"),
    ],
)
def test_sign_after_a_group_goes_on_each_item(answer: str, math_verify_reads: str) -> None:
    assert _for_math_verify(answer) == math_verify_reads


# (gold, response, expected, why): responses as the real outputs end (tests/data/
# real_outputs, math_qwen25math15b_ei rows 987, 988, 989, 991, 1974, 1982: hand verdict 1)
LETTER_ROWS: list[tuple[str, str, float, str]] = [
    (
        "\\text{A,B,C,D}",
        "the answer is A, B, C, D</think> <answer>A, B, C, D </answer>",
        1.0,
        "real output: letters and commas (before: 0)",
    ),
    (
        "\\text{A,B,C,D}",
        "so all four hold. </think> <answer> $A$, $B$, $C$, $D$ </answer>",
        1.0,
        "real output: each letter in math mode (before: 0)",
    ),
    (
        "\\text{A,B,C,D}",
        "the true statements are $A$, $B$, $C$, and $D$. </think> <answer> "
        "\\boxed{A, B, C, D} </answer>",
        1.0,
        "real output: boxed with spaces (before: 0)",
    ),
    (
        "\\text{A,B,C,D}",
        "so all the statements are true.</think> <answer> $\\boxed{A,B,C,D}$ </answer>",
        1.0,
        "real output: the gold's own spelling",
    ),
    ("\\text{A,B,C,D}", box("A, B, C, and D"), 1.0, "an 'and' before the last letter"),
    ("\\text{A,B,C,D}", box("(A), (B), (C), (D)"), 1.0, "labels in parentheses"),
    ("\\text{A,B,C,D}", box("\\text{A, B, C, D}"), 1.0, "in text"),
    ("\\text{A,B,C,D}", box("D, C, B, A"), 1.0, "another order: the same set of true statements"),
    ("\\text{A,C}", box("C, A"), 1.0, "another order, two letters"),
    ("A, C", box("A, C"), 1.0, "a gold without \\text"),
    ("\\text{A,C}", box("\\{A, C\\}"), 1.0, "a set of letters"),
    ("\\text{A,C}", box("A; C"), 1.0, "semicolons"),
    ("\\text{A,C}", box("A or C"), 0.0, "letters offered as alternatives: a hedge"),
    ("\\text{A,C}", box("A \\text{ or } C"), 0.0, "the same in text"),
    ("\\text{A,C}", box("A, C, or D"), 0.0, "a hedge on a third letter"),
    ("\\text{A,B,C,D}", box("A, B, C"), 0.0, "a subset"),
    ("\\text{A,B,C,D}", box("A, B, C, D, E"), 0.0, "a superset"),
    ("\\text{A,B,C,D}", box("A, B, C, E"), 0.0, "another letter"),
    ("\\text{A,B,C,D}", box("A"), 0.0, "one letter"),
    ("\\text{A,C}", box("(A)"), 0.0, "one label"),
    ("\\text{A,B,C,D}", box("A, A, B, C, D"), 0.0, "a letter repeated: left to math-verify (0)"),
    (
        "\\text{A,B,C,D}",
        "</think> <answer> A B C D </answer>",
        0.0,
        "real output (row 984, source label 0): no commas, as math-verify reads it",
    ),
    ("\\text{A,B,C,D}", box("ABCD"), 0.0, "glued letters: a product to math-verify"),
    ("\\text{A,B,C,D}", "</think> <answer>ABC </answer>", 0.0, "real output (row 986)"),
    ("\\text{A,B,C,D}", box("A, B, C, D\\text{ or E}"), 0.0, "a hedge after the letters"),
    ("\\text{A,B,C,D}", box("A, B, C, D, \\text{or } E"), 0.0, "a hedge as a last item"),
    ("\\text{A,B,C,D}", box("A, B, C, D?"), 0.0, "a question mark: no list of letters"),
    ("\\text{A,B,C,D}", box("a, b, c, d"), 0.0, "lower-case letters are not the options"),
    ("\\text{A,B,C,D}", box("4, 8, 16, 32"), 0.0, "real output (row 1978): the values"),
]


@pytest.mark.parametrize(
    ("gold", "response", "expected", "why"), LETTER_ROWS, ids=row_ids(LETTER_ROWS)
)
def test_multi_select_letters(gold: str, response: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)


def test_letters_with_fast_paths_off_are_math_verifys() -> None:
    """``fast_paths=False`` asks for math-verify's verdict: it reads no list of letters."""
    response = "<answer>A, B, C, D</answer>"
    assert OFF.check(OFF.extract(response), "\\text{A,B,C,D}").score == 0.0


@pytest.mark.parametrize(
    "answer",
    [
        "(30, 60" + ", 60" * 2000 + ")^\\circ",
        "(" * 3000 + "30, 60)^\\circ",
        "(30" + " " * 5000 + ")^\\circ",
        "A, " * 1500 + "B",
        "\\text{--}" * 1000 + "3",
        "１" * 4000,
        "1 " * 2000,
        "1" + " " * 4000 + "x",
        "1 000" * 800,
    ],
    ids=lambda answer: repr(answer[:8]),
)
def test_hostile_input_is_decided_quickly(answer: str) -> None:
    """The new checks are linear: long inputs cost milliseconds, never a hang."""
    started = time.perf_counter()
    V.quick_check(Extracted(answer, {"source": "boxed"}), "\\text{A,B,C,D}")
    V.quick_check(Extracted(answer, {"source": "boxed"}), "12")
    _for_math_verify(answer)
    _letter_list(answer)
    _spaced_integers(answer)
    assert time.perf_counter() - started < 2.0
