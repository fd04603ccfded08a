"""guards: math.py's inline decision (quick_check) against math-verify, row by row.

Each row is ``(answer, gold, expected, why)``: ``answer`` is the boxed text, ``expected``
what a careful grader says and never more generous than math-verify. The contract:
``quick_check`` either defers (None) or says what ``fast_paths=False`` (math-verify, after
rewardkit's own pre-normalisation) says, and the full check scores ``expected``
(``_support.verifier_rows.check_against_math_verify``); the box around the answer is read
whole. ``mv`` in a reason is math-verify's verdict. The rows come from generators of
(answer, gold) pairs per family and mutation fuzzers over the real-output corpus's golds,
comparing the two paths; test_fastpath_soundness.py holds the generators as properties.
"""

from __future__ import annotations

import contextlib
import time

import pytest

from _support.verifier_rows import box, check_against_math_verify, check_stricter, table_params
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers import _common
from rewardkit.verifiers.base import Extracted
from rewardkit.verifiers.math import MathVerifier, _for_math_verify, _letter_list, _spaced_integers

V = MathVerifier()

ROWS: list[tuple[str, str, float, str]] = [
    # a percent sign on one side only (mv: 0)
    ("0.5\\%", "0.5", 0.0, "0.5% is 0.005: a gold of at most 1 may be a probability"),
    ("0.25\\%", "0.25", 0.0, "0.25% against 0.25"),
    ("0.5", "0.5\\%", 0.0, "the percent on the gold's side"),
    ("5\\%", "5", 1.0, "a whole percent against a gold above 1 stays inline (mv: 1)"),
    # a thousands group opening with 0 is a decimal comma to math-verify
    ("0,001", "1", 0.0, "not one thousand and one, nor 1 (mv: 0.001)"),
    ("000,001", "1", 0.0, "leading zeros before a comma"),
    ("0{,}001", "1", 0.0, "the same with {,}"),
    ("00,005", "5", 0.0, "00,005 is no 5"),
    ("01,000", "1000", 0.0, "01,000 is no thousand (mv: 1.000)"),
    ("0,001", "0.001", 1.0, "a decimal comma, as mv reads it"),
    ("1,000", "1000", 1.0, "a real thousands separator still reads inline"),
    ("11880", "11,\\!880", 1.0, "MATH's own thousands typesetting still reads inline"),
    # a trailing wrapper that math-verify keeps as math, not as a unit
    ("3\\mathsf{x}", "3", 0.0, "\\mathsf{x} is 3x to mv, not a unit"),
    ("3\\texttt{x}", "3", 0.0, "\\texttt{x}: the same"),
    ("3\\textsf{x}", "3", 0.0, "\\textsf{x}: the same"),
    # normalising glued digits across what it drops (mv: 0)
    ("1\\%2", "12", 0.0, "a percent sign between digits"),
    ("1^\\circ2", "12", 0.0, "a degree sign between digits"),
    ("1°2", "12", 0.0, "a Unicode degree sign between digits"),
    ("1\\degree2", "12", 0.0, "\\degree between digits"),
    ("3\\%.5", "3.5", 0.0, "a percent sign before the decimal part"),
    ("1.\\,5", "1.5", 0.0, "a space after the decimal point: '1. 5'"),
    ("1\\>000", "1000", 0.0, "\\> is a space: two numbers (as mv reads '1 000')"),
    ("1\\displaystyle 2", "12", 0.0, "\\displaystyle between digits: '1 2' to mv"),
    ("1\\left2", "12", 0.0, "a \\left sizing no delimiter"),
    ("-\\%5", "-5", 0.0, "a percent sign between the sign and the number"),
    ("2\\%\\frac{1}{2}", "\\frac52", 0.0, "a percent sign inside a mixed number"),
    ("-\\left5", "-5", 0.0, "a bare \\left: not LaTeX"),
    # ... or inside a command name or a number word (mv: 0)
    ("6\\s~qrt{6}+6", "6+6\\sqrt{6}", 0.0, "a tie inside \\sqrt: not LaTeX"),
    ("\\s\\ qrt{512}", "8\\sqrt8", 0.0, "a space inside \\sqrt"),
    ("\\\\;frac{2}{7}\\pi", "\\frac{2\\pi}{7}", 0.0, "a line break, then ';frac': no \\frac"),
    ("\\text{twel\\,ve}", "12", 0.0, "a space inside a number word"),
    ("6\\sqrt\\;{7}+6", "6\\sqrt{7}+6", 0.0, "in TeX the space is \\sqrt's argument"),
    ("(6+\\sqrt{3})^\\text{\\,}2", "(6+\\sqrt{3})^2", 0.0, "the exponent is a space, then 2"),
    ("2^{}3", "6", 0.0, "an empty exponent, then 3"),
    ("\\fra c{1}{2}", "\\frac12", 0.0, "a space inside \\frac: \\fra, then c"),
    ("\\text\\;{15}", "15", 0.0, "in TeX the space is \\text's argument"),
    ("2\\sqrt x", "2\\sqrt{x}", 1.0, "a space after \\sqrt still reads inline"),
    ("45\\%, 55\\%", "45\\%, 55\\%", 1.0, "percents ending list items still read inline"),
    ("(30^\\circ, 60^\\circ)", "(30, 60)", 1.0, "degrees ending tuple items still read inline"),
    # a number in a group before a fraction: a mixed number to math-verify (9/4)
    ("{2}\\frac{1}{4}", "\\frac12", 0.0, "'2 1/4' typeset with braces, not 2 times 1/4"),
    ("(2)\\frac{1}{4}", "\\frac12", 0.0, "the same in parentheses"),
    ("\\left(2\\right)\\frac14", "\\frac12", 0.0, "the same with \\left("),
    ("{2}\\frac{1}{4}", "\\frac94", 1.0, "a mixed number, as mv reads it"),
    ("2\\cdot\\frac{1}{4}", "\\frac12", 1.0, "an explicit product still reads inline"),
    # a letter before one parenthesised token: a function's value to math-verify
    ("x(2)", "2x", 0.0, "x(2) is x applied to 2 for mv"),
    ("f(2)+1", "2f+1", 0.0, "f(2): a function value, not 2f"),
    ("x(x)", "x^2", 0.0, "x(x): the same"),
    ("x(x+1)", "x^2+x", 1.0, "a product with a sum still reads inline (mv: 1)"),
    # option letters written loosely: math-verify reads the letter (mv: 1)
    ("[C]", "C", 1.0, "a letter in brackets"),
    ("{(C)}", "(C)", 1.0, "a label in braces"),
    ("\\boxed{C}", "C", 1.0, "a letter boxed twice"),
    ("[D]", "C", 0.0, "another letter in brackets"),
    # another option's letter after the label (mv: 0)
    ("(A) B", "A", 0.0, "option A, then the letter B"),
    ("(A)E", "A", 0.0, "option A, then E"),
    ("(A)/B", "(A)", 0.0, "A over B"),
    ("(A)\\text{ B}", "(A) 12", 0.0, "a second letter that normalising dropped as a unit"),
    # typesetting math-verify could not parse, read now as TeX renders it (mv: 0)
    ("30°", "30", 1.0, "a degree sign (mv could not parse it)"),
    ("30\\degree", "30", 1.0, "\\degree (mv read a symbol)"),
    ("30°", "30^\\circ", 1.0, "two spellings of degrees"),
    ("-~5", "-5", 1.0, "a tie after the minus sign"),
    ("x~+~1", "x+1", 1.0, "ties around an operator"),
    ("5~\\text{cm}", "5", 1.0, "a tie before a unit"),
    ("2~\\frac{1}{2}", "\\frac52", 1.0, "a tie inside a mixed number"),
    ("-\u20095", "-5", 1.0, "a thin space (U+2009)"),
    ("\\big(1,2\\big)", "(1,2)", 1.0, "\\big delimiters"),
    ("\\Big(1,2\\Big]", "(1,2]", 1.0, "\\Big delimiters of an interval"),
    ("\\mbox{}5", "5", 1.0, "an empty \\mbox"),
    ("\\textstyle\\frac12", "\\frac12", 1.0, "\\textstyle"),
    ("20 \\right", "20", 1.0, "a box cut inside \\left( ... \\right) (real output; mv: 0)"),
    ("3~.5", "1.5", 0.0, "a tie before a decimal point is no space math-verify reads as 0."),
    ("3\\,.5", "1.5", 0.0, "3 .5 is no 3 times 0.5"),
    ("3^\\circ.5", "1.5", 0.0, "nor with a degree sign (mv: 1)"),
    ("1523\\t\\mathrm{ }ext{ cm}", "1523", 0.0, "an empty wrapper glues no \\text for mv"),
    ("3\\mbox{}.5", "1.5", 0.0, "an empty wrapper before a decimal point: 3.5"),
    ("5\\text{ }6", "11", 0.0, "'5 6' is no 5 + 6"),
    ("x°2", "2x", 0.0, "a degree sign inside an expression: no unit"),
    ("-\\big5", "-5", 0.0, "\\big sizing no delimiter"),
    ("\\frac{4}\\big{2}", "2", 0.0, "\\big before a brace: no delimiter to mv"),
    ("\\te^\\circxt{1756}", "1756", 0.0, "a degree sign inside \\text: no \\text"),
    ("1\\textbf{}2", "12", 1.0, "an empty \\textbf renders nothing: '12' (mv now reads 12)"),
    # a degree or percent sign after a whole tuple, interval or set. math-verify read "(a,
    # b)^\circ" as a power of the group and kept its last item, b.
    ("(30, 60)^\\circ", "(30, 60)", 1.0, "each angle in degrees (mv 0)"),
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
    ("(99, 60)\\%", "60", 0.0, "a wrong pair with a percent sign"),
    ("[30, 60]\\%", "60", 0.0, "an interval with a percent sign (mv 1)"),
    ("(30, 60)\\ \\%", "60", 0.0, "a space before the percent sign (mv 1)"),
    ("(30, 60)^\\circ", "30", 0.0, "nor the first item"),
    ("(1, 2)\\cup(3, 4)^\\circ", "(1, 2)\\cup(3, 4)", 1.0, "on the last group (mv 0)"),
    ("(1, 2)\\cup(3, 4)^\\circ", "4", 0.0, "a union is no 4"),
    ("((1, 2), (3, 4))^\\circ", "(3, 4)", 0.0, "a pair of pairs is not its last pair"),
    ("\\,(3, -1\\ )^\\circ", "(3, -1)", 1.0, "spacing around the pair (mv 0)"),
    ("\\,(3, -1\\ )^\\circ", "-1", 0.0, "nor its last item"),
    ("(3\\,,\\,4)\\%", "4", 0.0, "a comma between TeX spaces still splits items"),
    ("(30)^\\circ", "30", 1.0, "one value in parentheses: math-verify's reading (inline defers)"),
    # a dash in text mode is a typographic dash, no minus sign (mv 0)
    ("\\text{--}3", "3", 0.0, "an en dash: '–3' reads as minus 3, not as --3 = 3"),
    ("\\text{---}3", "-3", 0.0, "an em dash: no minus sign to mv"),
    ("\\textbf{--}3", "3", 0.0, "the same in bold text"),
    ("\\mbox{--}3", "3", 0.0, "the same in an \\mbox"),
    ("\\textendash 3", "3", 0.0, "'–3'"),
    ("\\textemdash 3", "3", 0.0, "'—3'"),
    ("--3", "3", 1.0, "two minus signs in math mode still read inline (mv 1)"),
    # numbers apart by plain spaces: math-verify summed or multiplied them
    ("2 3", "5", 0.0, "'2 3' shows 23 in math mode, two numbers in text"),
    ("2 3", "23", 0.0, "nor 23: the space is shown"),
    ("12 0", "0", 0.0, "no product"),
    ("1.5 2", "3.5", 0.0, "decimals too"),
    ("12 1 000", "0", 0.0, "a number before a thousands group"),
    ("2 \\frac{1}{2}", "\\frac52", 1.0, "a mixed number is no two numbers"),
    ("3 1 / 2", "3", 0.0, "nor a spaced mixed number (math-verify's reading)"),
    # ... but thousands groups apart by plain spaces are one number (mv 0: 200*000)
    ("200 000", "200000", 1.0, "real output (math_qwen25math15b_ei iter_5:729, hand verdict 1)"),
    ("12 345 678", "12345678", 1.0, "several groups"),
    ("x = 1 000", "1000", 1.0, "after a name"),
    ("1 000, 2 000", "1000, 2000", 1.0, "list items"),
    ("200 000", "200", 0.0, "not its first group"),
    # a percent sign on one side only. math-verify credits "N%" against N only when both are
    # sympy Integers (grader.py, "9% == 9"): positive whole numbers.
    ("1.5\\%", "1.5", 0.0, "a decimal percent is no 1.5 to math-verify"),
    ("1.5", "1.5\\%", 0.0, "the reverse: a gold of 1.5%"),
    ("1.5%", "1.5", 0.0, "a bare percent sign"),
    ("1.5\\,\\%", "1.5", 0.0, "a thin space before the sign"),
    ("-12\\%", "-12", 0.0, "a negative percent"),
    ("-12", "-12\\%", 0.0, "the reverse"),
    ("-1.5\\%", "-1.5", 0.0, "negative and decimal"),
    ("150.0\\%", "150", 0.0, "a whole value written as a decimal"),
    ("75.0\\%", "75", 0.0, "was a deliberate fast-path credit; now math-verify's 0"),
    ("150\\%", "150.0", 0.0, "a gold written as a decimal"),
    ("2.50\\%", "2.5", 0.0, "trailing zero"),
    ("1.50", "1.5\\%", 0.0, "the reverse with a trailing zero"),
    ("1,000\\%", "1000", 0.0, "a thousands comma: math-verify reads no Integer"),
    ("3/2\\%", "3/2", 0.0, "a fraction percent"),
    ("\\frac{3}{2}\\%", "1.5", 0.0, "a fraction percent against the decimal"),
    ("\\frac{25}{2}\\%", "12.5", 0.0, "12.5 written as a fraction"),
    ("\\{1.5\\%\\}", "1.5", 0.0, "in set braces"),
    ("2^{3}\\%", "8", 0.0, "a power: no Integer when parsed"),
    ("10^{2}\\%", "100", 0.0, "the same at 100"),
    ("1.5\\%\\text{ increase}", "1.5", 0.0, "a unit word after the sign"),
    ("150\\%", "150", 1.0, "a positive whole number: math-verify's 9% == 9"),
    ("150", "150\\%", 1.0, "the reverse"),
    ("12\\%", "12", 1.0, "the same at 12"),
    ("1000\\%", "1000", 1.0, "and at 1000"),
    ("0.015", "1.5\\%", 1.0, "the value of 1.5% (math-verify decides)"),
    ("1.5\\%", "0.015", 1.0, "the reverse (math-verify decides)"),
    ("150\\%", "1.5", 1.0, "150% is 1.5 (math-verify decides)"),
    ("155 \\text{rad}\\%", "155", 0.0, "a word before the sign: no N%"),
    ("12\\%\\%", "12\\%", 0.0, "two signs against one (math-verify decides)"),
    ("12\\%", "12\\%\\%", 0.0, "one sign against two (math-verify decides)"),
    ("12 \\%", "12", 1.0, "a space before the sign is still N%"),
    # as many percent signs on both sides, but after other items of a list
    ("1.5\\%, 12", "1.5, 12\\%", 0.0, "1.5% and 12 are no 1.5 and 12%"),
    ("12\\%, 15", "12, 15\\%", 0.0, "whole numbers too"),
    ("(1.5\\%, 2)", "(1.5, 2\\%)", 0.0, "in a pair"),
    ("x = 1.5\\%, y = 2", "x = 1.5, y = 2\\%", 0.0, "named values"),
    ("45\\%, 55\\%", "55\\%, 45\\%", 1.0, "the signs on every item, in another order"),
    ("45 \\%, 55\\%", "45\\%, 55\\%", 1.0, "the same items marked"),
    ("1.5\\%, 12", "1.5\\%, 12", 1.0, "the same item marked"),
    # "\text{percent}" (also "percentage", "pct"), no space inside: math-verify turns it into
    # a percent sign; "\text{ percent}" is a unit it drops
    ("0.5\\text{percent}", "0.5", 0.0, "0.5% is 0.005: no 0.5"),
    ("0.5\\text{percentage}", "0.5", 0.0, "the same word as a noun"),
    ("0.5\\text{pct}", "0.5", 0.0, "abbreviated"),
    ("1.5\\text{percent}", "1.5", 0.0, "a decimal above 1, as with the sign"),
    ("-12\\text{percent}", "-12", 0.0, "negative"),
    ("x = 0.5\\text{percent}", "0.5", 0.0, "after a name"),
    ("0.5\\text{percent}^2", "0.5", 0.0, "squared"),
    ("0.5\\text{percent}^3", "0.5\\text{percent}^2", 0.0, "cubed is not squared"),
    ("0.5\\text{percent}", "0.005", 1.0, "0.5% is 0.005"),
    ("0.5\\text{ percent}", "0.5", 1.0, "with a space: a unit math-verify drops"),
    ("12\\text{percent}", "12\\%", 1.0, "the word against the sign"),
    ("12\\%", "13", 0.0, "another number"),
    # "pi" in words after a value: 2 pi, no 2 and a unit (math-verify drops it as a unit:
    # refused before math-verify, with fast paths on and off)
    ("2\\text{ pi}", "2", 0.0, "2 pi is no 2"),
    ("2\\text{pi}", "2", 0.0, "no space"),
    ("\\frac{1}{2}\\text{ pi radians}", "\\frac12", 0.0, "with a unit after it"),
    ("2\\text{ pizzas}", "2", 1.0, "a word that starts with pi is a unit"),
    # a number ending in a point, then more: an item's number ("2. \frac14" answers item 2
    # with 1/4, as math-verify reads it) or a cut mixed number, no product
    ("2.\\frac14", "\\frac12", 0.0, "2.\\frac14 is no 2 times 1/4"),
    ("2. \\frac{1}{4}", "\\frac12", 0.0, "an enumeration: item 2, answer 1/4"),
    ("2.\\cdot\\frac{1}{4}", "\\frac12", 0.0, "a point then a product sign"),
    ("3.\\sqrt{2}", "3\\sqrt2", 0.0, "item 3, answer sqrt 2"),
    ("12.\\pi", "12\\pi", 0.0, "item 12, answer pi"),
    ("2.x", "2x", 0.0, "item 2, answer x"),
    ("2. \\frac{1}{4}", "\\frac14", 1.0, "math-verify reads the item's answer"),
    ("2.5\\frac14", "\\frac58", 1.0, "a decimal times a fraction still reads inline"),
    # an ellipsis ending the answer: a series or a decimal that goes on, no full stop
    # (normalising strips a full stop, never an ellipsis)
    ("1+2+3...", "6", 0.0, "an endless series is no 6"),
    ("0.9...", "0.9", 0.0, "0.9... goes on: no 0.9"),
    ("3.14...", "3.14", 0.0, "pi's digits, cut: no 3.14"),
    ("9+0...", "9", 0.0, "a sum that goes on"),
    ("40\\sqrt{10}...", "40\\sqrt{10}", 0.0, "a product that goes on"),
    ("750.......", "750", 0.0, "many points"),
    ("6. . .", "6", 0.0, "spaced points"),
    ("\\text{6...}", "6", 0.0, "points inside a text wrapper"),
    ("0.333...", "\\frac13", 0.0, "math-verify cannot read it"),
    ("1+2+3...\\text{ cm}", "6", 0.0, "an ellipsis before a unit"),
    ("40/9...\\text{ cm}", "40/9", 0.0, "the same"),
    # membership in a number with a thousands comma: math-verify reads the set {114, 200};
    # never 114200
    ("x \\in 114,200", "114,200", 0.0, "x in {114, 200} is no 114200"),
    ("x \\in 114,200", "114200", 0.0, "the same against the bare number"),
    ("x \\in 114, 200", "114, 200", 1.0, "the set of two numbers, as both read it"),
    # an option letter dropped with a trailing "unit" against a gold of letters
    ("\\text{A,C}\\text{ plus D}", "\\text{A,C}", 0.0, "a third statement added"),
    ("\\text{A,C}\\text{ plus D}", "A, C", 0.0, "against the bare letters"),
    ("(C) 12\\text{ plus E}", "(C)", 0.0, "another option after the value (math-verify: 0)"),
    # ... or any word against a gold that is a word: a second answer dropped as a unit
    ("\\text{Monday}\\text{ Tuesday}", "\\text{Monday}", 0.0, "two days offered"),
    ("\\text{yes}\\text{ no}", "\\text{yes}", 0.0, "yes and no: a hedge"),
    ("\\text{odd}\\text{ even}", "\\text{odd}", 0.0, "both parities"),
    ("\\text{True}\\text{ False}", "\\text{True}", 0.0, "both truth values"),
    ("\\text{north}\\text{ south}", "\\text{north}", 0.0, "two directions"),
    ("\\text{Monday}\\text{ }", "\\text{Monday}", 1.0, "an empty wrapper drops no word"),
    ("\\textbf{Monday}", "\\text{Monday}", 1.0, "another wrapper, the same word"),
    # a guarded pair (an exponent tower) is decided by its normalised text, which keeps its
    # percent sign; fast_paths=False takes the same guard
    ("9^{9^{9}}\\%", "9^{9^{9}}", 0.0, "a tower percent is no tower"),
    ("9^{9^{9}}", "9^{9^{9}}\\%", 0.0, "the reverse"),
    ("9^{9^{9}}\\%", "9^{9^{9}}\\%", 1.0, "the same text"),
    ("y = 9^{9^{9}}", "9^{9^{9}}", 1.0, "a name first, as fast_paths=False reads it"),
    # "\frac 1 2": TeX's 1/2 (one token per argument), never the numbers 1 and 2 shown apart,
    # with fast paths on and off
    ("\\frac 1 2", "\\frac12", 1.0, "TeX's one-token arguments"),
    ("\\dfrac 3 4", "0.75", 1.0, "\\dfrac too"),
    ("x = \\frac 1 2", "\\frac12", 1.0, "after a name"),
    ("2 \\frac 1 2", "\\frac52", 1.0, "a mixed number"),
    ("\\frac 1 2", "3", 0.0, "no sum of the digits"),
    ("\\frac 1 2 3", "\\frac32", 0.0, "1/2 and 3 shown apart: still two numbers"),
    ("\\frac 12 3", "\\frac32", 0.0, "the same with the digits glued"),
    ("\\frac 1 2 .5", "\\frac14", 0.0, "a decimal after the fraction"),
]

# answers a box does not hold whole: a box inside the box is read alone, and a box of
# two numbers apart is no answer
NOT_READ_WHOLE = {"\\boxed{C}", "5\\text{ }6"}


@pytest.mark.parametrize(("answer", "gold", "expected", "why"), table_params({"inline": ROWS}))
def test_row(answer: str, gold: str, expected: float, why: str) -> None:
    check_against_math_verify(Extracted(answer, {"source": "boxed"}), gold, expected, why)
    if answer not in NOT_READ_WHOLE:
        extracted = V.extract(box(answer))
        shown = _common._WIDE_SPACES.sub(" ", answer)  # read as rendered: a thin space is a space
        assert extracted.answer == shown, "the box is read whole"
        check_against_math_verify(extracted, gold, expected, why)


# math-verify's own false positives that the inline path refuses (mv: 1). With
# fast_paths=False math-verify's verdict stands (the user asked for it).
STRICTER: list[tuple[str, str, float, str]] = [
    # an equation is no value
    ("x=2x+1", "2x+1", 0.0, "an equation in x, not the value 2x+1"),
    ("x=x+1", "x+1", 0.0, "an equation with no solution"),
    ("y=2x+1", "2x+1", 1.0, "a named value is still its value (mv: 1)"),
    # math-verify reads only the ASCII digits, the inline path Unicode digits as their numbers
    ("１２, 5", "5", 0.0, "two values, one in full width, are no 5"),
    ("(１, 5)", "5", 0.0, "a pair is no 5"),
    ("A or C", "A, C", 0.0, "two options offered as alternatives are no choice of both"),
    # a radian value with a degree sign is another angle: a quarter of pi degrees is about
    # 0.8 degrees, not pi/4 radians (math-verify drops the degree sign as a unit)
    ("\\frac{\\pi}{4}^\\circ", "\\frac{\\pi}{4}", 0.0, "pi/4 degrees is no pi/4 radians"),
    ("\\frac{\\pi}{4}°", "\\frac{\\pi}{4}", 0.0, "a Unicode degree sign"),
    ("2\\pi^\\circ", "2\\pi", 0.0, "2 pi degrees"),
    ("\\frac{\\pi}{4}\\text{ degrees}", "\\frac{\\pi}{4}", 0.0, "the word"),
    ("\\frac{\\pi}{4}", "\\frac{\\pi}{4}^\\circ", 0.0, "the sign on the gold's side"),
    ("\\frac{\\pi}{4}^\\circ", "\\frac{\\pi}{4}^\\circ", 1.0, "degrees on both sides"),
    ("\\frac{\\pi}{4}\\text{ rad}", "\\frac{\\pi}{4}", 1.0, "radians named"),
    ("30^\\circ", "30", 1.0, "no pi: a gold in degrees without the sign"),
]


@pytest.mark.parametrize(
    ("answer", "gold", "expected", "why"), table_params({"stricter": STRICTER})
)
def test_stricter_than_math_verify(answer: str, gold: str, expected: float, why: str) -> None:
    check_stricter(answer, gold, expected, why)


# a degree or percent sign after a whole tuple, interval or set goes on each item: math-verify
# read "(a, b)^\\circ" as a power of the group and kept its last item
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


@pytest.mark.parametrize(
    "answer",
    [
        "~" * 4000,
        "\u2009" * 4000,
        "1" + " " * 4000 + ".5",
        "\\%" * 2000,
        "\\left" * 800,
        "^\\text{ " * 500,
        "1\\," * 1300,
        "\\fra c" * 600,
        "x(2)" * 1000,
        "(30, 60" + ", 60" * 2000 + ")^\\circ",
        "(" * 3000 + "30, 60)^\\circ",
        "(30" + " " * 5000 + ")^\\circ",
        "A, " * 1500 + "B",
        "\\text{--}" * 1000 + "3",
        "１" * 4000,
        "1 " * 2000,
        "1" + " " * 4000 + "x",
        "1 000" * 800,
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
    """The checks are linear: long inputs cost milliseconds, never a hang."""
    started = time.process_time()
    for gold in ("1", "12", "150\\%", "\\text{A,C}", "\\text{A,B,C,D}", "9^{9^{9}}"):
        V.quick_check(Extracted(answer, {"source": "boxed"}), gold)
        with contextlib.suppress(InvalidSampleError):  # a gold of points alone is blank
            V.quick_check(Extracted(gold, {"source": "boxed"}), answer[:4000])
    _for_math_verify(answer)
    _letter_list(answer)
    _spaced_integers(answer)
    assert time.process_time() - started < 2.0
