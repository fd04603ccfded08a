"""Red team 7: the math verifier's inline fast path against math-verify, false positives first.

Each row is ``(answer, gold, expected, why)``: ``answer`` is the boxed text, ``expected``
what a careful grader says and never more generous than math-verify. The contract under
test: ``quick_check`` either defers (None) or says what ``fast_paths=False`` (math-verify,
after rewardkit's own pre-normalisation) says, and the full check scores ``expected``.
``before`` in a reason is what the inline path said before the fix (``mv``: math-verify).

Found by a generator of (answer, gold) pairs per family (noise between tokens, thousands
groups, percents, degrees, text wrappers, ...) comparing the two paths.
"""

from __future__ import annotations

import time

import pytest

from _support.verifier_rows import check_against_math_verify, check_stricter, row_ids
from rewardkit.verifiers.base import Extracted
from rewardkit.verifiers.math import MathVerifier, _for_math_verify

V = MathVerifier()
OFF = MathVerifier(fast_paths=False)

# (answer, gold, expected, why)
ROWS: list[tuple[str, str, float, str]] = [
    # --- a percent sign on one side only (before: 1, mv: 0) ---
    ("0.5\\%", "0.5", 0.0, "0.5% is 0.005: a gold of at most 1 may be a probability"),
    ("0.25\\%", "0.25", 0.0, "0.25% against 0.25"),
    ("0.5", "0.5\\%", 0.0, "the percent on the gold's side"),
    ("5\\%", "5", 1.0, "a whole percent against a gold above 1 stays inline (mv: 1)"),
    # --- a thousands group opening with 0 is a decimal comma to math-verify ---
    ("0,001", "1", 0.0, "not one thousand and one, nor 1 (before: 1, mv: 0.001)"),
    ("000,001", "1", 0.0, "leading zeros before a comma (before: 1)"),
    ("0{,}001", "1", 0.0, "the same with {,} (before: 1)"),
    ("00,005", "5", 0.0, "00,005 is no 5 (before: 1)"),
    ("01,000", "1000", 0.0, "01,000 is no thousand (before: 1, mv: 1.000)"),
    ("0,001", "0.001", 1.0, "a decimal comma, as mv reads it (before: 0)"),
    ("1,000", "1000", 1.0, "a real thousands separator still reads inline"),
    ("11880", "11,\\!880", 1.0, "MATH's own thousands typesetting still reads inline"),
    # --- a trailing wrapper that math-verify keeps as math, not as a unit (before: 1) ---
    ("3\\mathsf{x}", "3", 0.0, "\\mathsf{x} is 3x to mv, not a unit"),
    ("3\\texttt{x}", "3", 0.0, "\\texttt{x}: the same"),
    ("3\\textsf{x}", "3", 0.0, "\\textsf{x}: the same"),
    # --- normalising glued digits across what it drops (before: 1, mv: 0) ---
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
    # --- ... or inside a command name or a number word (before: 1, mv: 0) ---
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
    # --- a number in a group before a fraction: a mixed number to math-verify (9/4) ---
    (
        "{2}\\frac{1}{4}",
        "\\frac12",
        0.0,
        "'2 1/4' typeset with braces, not 2 times 1/4 (before: 1)",
    ),
    ("(2)\\frac{1}{4}", "\\frac12", 0.0, "the same in parentheses (before: 1)"),
    ("\\left(2\\right)\\frac14", "\\frac12", 0.0, "the same with \\left( (before: 1)"),
    ("{2}\\frac{1}{4}", "\\frac94", 1.0, "a mixed number, as mv reads it (before: 0)"),
    ("2\\cdot\\frac{1}{4}", "\\frac12", 1.0, "an explicit product still reads inline"),
    # --- a letter before one parenthesised token: a function's value to math-verify ---
    ("x(2)", "2x", 0.0, "x(2) is x applied to 2 for mv (before: 1)"),
    ("f(2)+1", "2f+1", 0.0, "f(2): a function value, not 2f (before: 1)"),
    ("x(x)", "x^2", 0.0, "x(x): the same (before: 1)"),
    ("x(x+1)", "x^2+x", 1.0, "a product with a sum still reads inline (mv: 1)"),
    # --- option letters written loosely: math-verify reads the letter (before: 0, mv: 1) ---
    ("[C]", "C", 1.0, "a letter in brackets"),
    ("{(C)}", "(C)", 1.0, "a label in braces"),
    ("\\boxed{C}", "C", 1.0, "a letter boxed twice"),
    ("[D]", "C", 0.0, "another letter in brackets"),
    # --- another option's letter after the label (before: 1, mv: 0) ---
    ("(A) B", "A", 0.0, "option A, then the letter B"),
    ("(A)E", "A", 0.0, "option A, then E"),
    ("(A)/B", "(A)", 0.0, "A over B"),
    ("(A)\\text{ B}", "(A) 12", 0.0, "a second letter that normalising dropped as a unit"),
    # --- typesetting math-verify could not parse, read now as TeX renders it (mv: 0) ---
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
    ("3\\,.5", "1.5", 0.0, "3 .5 is no 3 times 0.5 (mv: 1 before its input was fixed)"),
    ("3^\\circ.5", "1.5", 0.0, "nor with a degree sign (before: 0 inline, mv: 1)"),
    ("1523\\t\\mathrm{ }ext{ cm}", "1523", 0.0, "an empty wrapper glues no \\text for mv"),
    ("3\\mbox{}.5", "1.5", 0.0, "an empty wrapper before a decimal point: 3.5"),
    ("5\\text{ }6", "11", 0.0, "'5 6' is no 5 + 6"),
    ("x°2", "2x", 0.0, "a degree sign inside an expression: no unit"),
    ("-\\big5", "-5", 0.0, "\\big sizing no delimiter"),
    ("\\frac{4}\\big{2}", "2", 0.0, "\\big before a brace: no delimiter to mv"),
    ("\\te^\\circxt{1756}", "1756", 0.0, "a degree sign inside \\text: no \\text"),
    ("1\\textbf{}2", "12", 1.0, "an empty \\textbf renders nothing: '12' (mv now reads 12)"),
]


@pytest.mark.parametrize(("answer", "gold", "expected", "why"), ROWS, ids=row_ids(ROWS))
def test_row(answer: str, gold: str, expected: float, why: str) -> None:
    check_against_math_verify(Extracted(answer, {"source": "boxed"}), gold, expected, why)


# math-verify's own false positives that the inline path now refuses (mv: 1). With
# fast_paths=False math-verify's verdict stands (the user asked for it).
STRICTER_ROWS: list[tuple[str, str, float, str]] = [
    ("x=2x+1", "2x+1", 0.0, "an equation in x, not the value 2x+1"),
    ("x=x+1", "x+1", 0.0, "an equation with no solution"),
    ("y=2x+1", "2x+1", 1.0, "a named value is still its value (mv: 1)"),
]


@pytest.mark.parametrize(
    ("answer", "gold", "expected", "why"), STRICTER_ROWS, ids=row_ids(STRICTER_ROWS)
)
def test_stricter_than_math_verify(answer: str, gold: str, expected: float, why: str) -> None:
    check_stricter(answer, gold, expected, why)


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
    ],
    ids=lambda answer: repr(answer[:8]),
)
def test_hostile_noise_is_decided_quickly(answer: str) -> None:
    """The new checks are linear: a long run of noise costs milliseconds, never a hang."""
    started = time.perf_counter()
    V.quick_check(Extracted(answer, {"source": "boxed"}), "1")
    _for_math_verify(answer)
    assert time.perf_counter() - started < 2.0
