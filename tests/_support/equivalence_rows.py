"""Equivalence facts, row by row: (gold, prediction, expected, reason).

Read in other projects' public tests (written here in our own tables, never their code),
and the traps of an exact fast path. ``tests/verifiers/test_equivalence_tables.py`` checks
them as boxed answers; the bare-conclusion and stated-value tests check the same rows in
those shapes."""

from __future__ import annotations

MV = "Math-Verify tests/test_all.py"
MV_MIXED = "Math-Verify tests/test_mixed_number_extraction.py"
HENDRYCKS = "Hendrycks MATH math_equivalence_test.py"
NEMO = "NeMo-Skills tests/test_math_equal.py"
QWEN = "Qwen2.5-Math evaluation/grader.py tests"
TRAP = "fast-path trap"

ROWS = [
    # --- fast-path traps: shapes a string-level comparison calls equal (math-verify: 0) ----
    ("x=1,y=2", "x=2,y=1", False, f"{TRAP}: names kept, values not compared as a set"),
    ("x=1,y=2", "y=2,x=1", True, f"{TRAP}: the same named values in another order"),
    ("a=1, b=2", "a=2, b=1", False, f"{TRAP}: swapped named values"),
    ("2^{31}-1", "2^{31}", False, f"{TRAP}: big integers compare exactly"),
    ("2^{40}+1", "2^{40}", False, f"{TRAP}: big integers compare exactly"),
    ("0", "10^{-10}", False, f"{TRAP}: a tiny value is not zero"),
    ("\\frac{1}{2^{31}}", "\\frac{1}{2^{30}}", False, f"{TRAP}: tiny values compare exactly"),
    ("\\frac{1}{2}", "2\\frac{1}{4}", False, f"{TRAP}: a mixed number, not a product"),
    ("32349", "32, 349", False, f"{TRAP}: a comma and a space separate two numbers"),
    ("f", "\\text{for}", False, f"{TRAP}: no splitting on the substring 'or'"),
    # --- fast-path traps: shapes to defer, never to call unequal (math-verify decides) -----
    ("(3,2)", "(p,q)=(3,2)", True, f"{TRAP}: a named tuple, math-verify reads its value"),
    ("1, 2, 3", "\\{1,2,3\\}", True, f"{TRAP}: a set against a bare list"),
    ("918.5", "918\\frac{1}{2}", True, f"{TRAP}; {NEMO}: 918\\frac{{1}}{{2}} is 918.5"),
    ("918\\frac{1}{2}", "918.5", True, f"{TRAP}; {NEMO}: symmetric"),
    ("(1,2),(3,4)", "(1,2),(1,2),(3,4)", True, f"{TRAP}: a solution set with a repeat"),
    # --- Math-Verify ------------------------------------------------------------------------
    ("7425000", "7,425,000", True, f"{MV}: thousands separators"),
    ("1000", "1000.0", True, f"{MV}: a decimal equal to an integer"),
    ("1000.0", "1,000.0", True, f"{MV}: thousands separator with a decimal"),
    ("0.4", ".4", True, f"{MV}: no leading zero"),
    ("1000.99", "1,000.99", True, f"{MV}: thousands separator in a decimal"),
    ("10/9", "\\frac{10}{9}", True, f"{MV}: slash fraction against \\frac"),
    ("-10/9", "-\\frac{10}{9}", True, f"{MV}: negative fractions"),
    ("[0,1)", "[0,1)", True, f"{MV}: the same half-open interval"),
    ("[0,9)", "[0,1)", False, f"{MV}: a different endpoint"),
    ("(0,9)", "[0,9)", False, f"{MV}: a different bracket"),
    ("1/3", "\\frac13", True, f"{MV}: malformed \\frac works"),
    ("1", "\\frac3{3}", True, f"{MV}: malformed \\frac works"),
    ("\\sqrt{3}", "\\sqrt3", True, f"{MV}: malformed \\sqrt works"),
    ("1/3", "\\cfrac{1}{3}", True, f"{MV}: \\cfrac is \\frac"),
    ("1/3", "\\tfrac{1}{3}", True, f"{MV}: \\tfrac is \\frac"),
    ("1/3", "\\left( \\frac{1}{3} \\right)", True, f"{MV}: styling removed"),
    ("1/3", "\\frac{1}{3} \\text{meters}", True, f"{MV}: a trailing unit word"),
    ("1/3", "k = \\frac{1}{3}", True, f"{MV}: the value after the last ="),
    ("28\\%", "28", True, f"{MV}: a percent against the bare number"),
    ("0.28", "28", False, f"{MV}: 28 is not 0.28"),
    ("28/100", "28", False, f"{MV}: 28 is not 28/100"),
    ("28", "28/100", False, f"{MV}: 28/100 is not 28"),
    ("\\frac{28}{100}", "28", False, f"{MV}: 28 is not 28/100"),
    ("(3, \\frac{\\pi}{2})", "\\left( 3, \\frac{\\pi}{2} \\right)", True, f"{MV}: polar pair"),
    ("\\text{Evelyn}", "\\text{Evelyn}", True, f"{MV}: a name in \\text"),
    ("90^\\circ", "90", True, f"{MV}: degrees"),
    ("34x+45y-20z+100=0", "-34x-45y+20z-100=0", True, f"{MV}: an equation times -1"),
    ("(a+5)(b+2)", "(+5)(b+2)", False, f"{MV}: non-equivalent expressions"),
    ("2", "\\frac{1+\\sqrt{5}}{2}", False, f"{MV}: the golden ratio is not 2"),
    ("4", "\\frac{34}{16}+\\frac{\\sqrt{1358}}{16}", False, f"{MV}: a radical sum is not 4"),
    ("1\\sqrt{19}", "1", False, f"{MV}: sqrt 19 is not 1"),
    ("x+2n+1", "x+1", False, f"{MV}: non-equivalent algebraic expressions"),
    ("[0,1)", "(0, 1)", False, f"{MV} issue #4: the open interval is wrong"),
    ("16386.20", "\\$16,\\!386.20", True, f"{MV} issue #6: \\! inside a thousands separator"),
    ("12000023", "12,\\!000,\\!023", True, f"{MV} issue #8: large number with commas"),
    ("14916", "14{,}916", True, f"{MV} issue #9: {{,}} thousands separator"),
    (
        "\\left(\\frac{1}{5},\\frac{1}{6}\\right)",
        "\\left( \\frac{1}{5}, \\frac{1}{6} \\right)",
        True,
        f"{MV} issue #10: a pair of fractions",
    ),
    ("40/9", "4 4/9", True, f"{MV_MIXED}: a spaced mixed number is its whole value"),
    ("44/9", "4 4/9", False, f"{MV_MIXED}: not the digits glued together"),
    ("4", "4 4/9", False, f"{MV_MIXED}: not its whole-number prefix"),
    ("103/9", "11 + 4/9", True, f"{MV_MIXED}: explicit addition"),
    ("95/9", "11 + 4/9", False, f"{MV_MIXED}: addition is not subtraction"),
    # --- Hendrycks MATH is_equiv --------------------------------------------------------------
    (
        "\\frac{1}{2} + 2/3",
        "\\tfrac{1}{2} + \\frac1{72}",
        False,
        f"{HENDRYCKS}: test_fractions",
    ),
    ("4, 12, 2", "10, 4, 2", False, f"{HENDRYCKS}: test_order2, a different element"),
    (
        "\\dfrac{1}{2} +\\frac{1}{72}",
        "\\tfrac{1}{2} +\\! \\frac1{72}",
        True,
        f"{HENDRYCKS}: test_dfrac",
    ),
    ("10", "10\\text{ units}", True, f"{HENDRYCKS}: test_units"),
    ("100", "10\\text{ units}", False, f"{HENDRYCKS}: test_units2"),
    ("\\$10", "10", True, f"{HENDRYCKS}: test_dollars"),
    ("(x-2)(x+2)", "\\left(x-2\\right)\\left(x+2\\right)", True, f"{HENDRYCKS}: test_parentheses"),
    ("0.1", ".1", True, f"{HENDRYCKS}: test_decimals2"),
    ("10", "10\\%", True, f"{HENDRYCKS}: test_percentage"),
    ("10\\sqrt3 + \\sqrt{4}", "10\\sqrt{3} + \\sqrt4", True, f"{HENDRYCKS}: test_sqrt"),
    ("\\frac{8}{3}", "\\tfrac83", True, f"{HENDRYCKS}: test_tfrac"),
    ("x + y - z + 2 = 0", "5x - 7y + 11z + 4 = 0", False, f"{HENDRYCKS}: test_expression"),
    ("\\frac{1}{2}", "1/2", True, f"{HENDRYCKS}: test_half"),
    (
        "4, 10, -2",
        "10, 4, -2",
        True,
        f"{HENDRYCKS}: test_order compares strings (False); as math-verify, a solution set",
    ),
    # --- NeMo-Skills --------------------------------------------------------------------------
    ("5", "5.0", True, f"{NEMO}: 5 and 5.0"),
    ("0.5", "1/2", True, f"{NEMO}: 1/2 and 0.5"),
    ("0.5", "\\frac{1}{2}", True, f"{NEMO}: \\frac{{1}}{{2}} and 0.5"),
    ("x^2 + 2*x + 1", "x^2+2x+1", True, f"{NEMO}: explicit and implicit products"),
    ("x^2 + 2*x - (-1)", "x^2+2x+1", True, f"{NEMO}: double negation"),
    ("2x+ 1+x^2", "y = x^2+2x+1", True, f"{NEMO}: y = polynomial against the polynomial"),
    ("odd", "\\text{odd}", True, f"{NEMO}: a word in \\text"),
    ("0.185", ".185", True, f"{NEMO}: no leading zero"),
    ("17", "17\\text{ any text}", True, f"{NEMO}: trailing text"),
    ("10", "\\$10", True, f"{NEMO}: dollars"),
    ("10", "10\\%", True, f"{NEMO}: percent"),
    ("\\frac{5}{2}", "2.5", True, f"{NEMO}: 5/2 as a decimal"),
    ("\\dfrac{1}{3}", "\\frac{1}{3}", True, f"{NEMO}: \\dfrac"),
    ("(r+5)^2", "(r+5)(r+5)", True, f"{NEMO}: a square written as a product"),
    ("5.001", "5", False, f"{NEMO}: 5 is not 5.001"),
    ("x^3+2x+1", "x^2+2x+1", False, f"{NEMO}: a different polynomial"),
    ("\\text{oddd}", "odd", False, f"{NEMO}: a different word"),
    ("\\sqrt{67}", "\\sqrt{67},-\\sqrt{85}", False, f"{NEMO}: two values against one"),
    ("\\sqrt{67},-\\sqrt{85}", "\\sqrt{67}", False, f"{NEMO}: one value against two"),
    # --- Qwen2.5-Math grader ------------------------------------------------------------------
    ("10", "20", False, f"{QWEN}: test_math_equal, different numbers"),
    ("[1, 2, 3]", "[1, 2, 3]", True, f"{QWEN}: test_math_equal, the same list"),
    ("(1, 2, 3)", "(1, 2, 4)", False, f"{QWEN}: test_compare_lists, a different element"),
    # exact by default (reward.verifiers.math.decimals): a rounded decimal is no 1/12
    ("\\frac{1}{12}", "0.0833333333333333", False, f"{QWEN}: _test_math_equal, a long decimal"),
    ("(1,\\frac{9}{2})", "(1,4.5)", True, f"{QWEN}: _test_math_equal, a decimal in a pair"),
    ("\\frac{x+2}{7}", "\\frac{x}{7}+\\frac{2}{7}", True, f"{QWEN}: _test_math_equal"),
]


# Rows where the installed math-verify misses a fact the fast path defers on: the full
# check gives math-verify's verdict there (a false negative, never a false positive).
MATH_VERIFY_MISSES = {
    ("40/9", "4 4/9"): "math-verify 0.9 reads a spaced mixed number only in plain text",
}
