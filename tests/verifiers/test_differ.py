"""guards: _differ.py: the shortcut past sympy's ``simplify`` never changes a verdict.

The worker's shortcut past sympy's ``simplify`` never changes math-verify's verdict.

:func:`rewardkit.verifiers._differ.surely_different` may say True only where
math-verify's ``verify`` says False. Every test here parses both sides with math-verify
itself (as the worker does) and checks that implication, on a table of identities that
only ``simplify`` can see (trigonometric, logarithmic, radical, rational functions) and
on generated pairs that are equal by construction.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardkit.verifiers import math as math_module
from rewardkit.verifiers._differ import surely_different


def _parsed(latex: str) -> list[object]:
    return math_module._parse(latex)


def _verify(gold: object, pred: object) -> bool:
    math_verify, _ = math_module._math_verify()
    return bool(math_verify.verify([gold], [pred], timeout_seconds=None, raise_on_error=False))


def _pairs(gold: str, pred: str) -> list[tuple[object, object]]:
    return [(g, p) for g in _parsed(gold) for p in _parsed(pred)]


# (gold, prediction): equal, though only simplify (or math-verify's rounding) shows it.
EQUAL = [
    ("1", r"\sin^2 x + \cos^2 x"),
    (r"x^2 + 2x + 1", r"(x+1)^2"),
    (r"x + 1", r"\frac{x^2 - 1}{x - 1}"),
    (r"2\sqrt{2}", r"\sqrt{8}"),
    (r"3", r"\log_2 8"),
    (r"\frac{1}{3}", r"0.333333"),
    (r"\frac{\sqrt{3}}{2}", r"\sin \frac{\pi}{3}"),
    (r"50\%", r"0.5"),
    (r"\pi", r"3.1415926"),
    (r"a b", r"b a"),
    (r"\frac{a}{b} + \frac{c}{b}", r"\frac{a + c}{b}"),
    (r"\tan x", r"\frac{\sin x}{\cos x}"),
    (r"e^{2\ln 3}", r"9"),
    ("5", "x = 5"),  # an equation against a plain gold: its right side
    ("13", "2 + 11 = 13"),
    ("x+1", r"y = \frac{x^2-1}{x-1}"),
    # 30 digits cannot resolve terms of 1e868 cancelling to 1: evalf returns a value
    # with no correct digit (-0.e+244), which read as a number is "clearly different".
    ("1", r"\cosh^2(1000x) - \sinh^2(1000x)"),
    # The same cancellation inside a function sympy's evalf only calls (no accuracy
    # tracking): strict evaluation alone would not see the garbage argument.
    ("1", r"\max(0, \cosh^2(1000x) - \sinh^2(1000x))"),
    ("1", r"|\cosh^2(1000x) - \sinh^2(1000x)|"),
    (r"\sin 1", r"\sin(\cosh^2(1000x) - \sinh^2(1000x))"),
    # Attacks that did not break it (math-verify's verdict checked by the test itself).
    (r"1+\sqrt{2}", r"\sqrt{3+2\sqrt{2}}"),  # nested radical
    (r"|x|", r"\sqrt{x^2}"),  # real variables
    (r"\binom{n}{2}", r"\frac{n(n-1)}{2}"),
    (r"n!", r"n (n-1)!"),
    (r"\frac{1}{2}", r"50\%"),  # a percent sign
    ("0", r"\int 0 \, dx"),  # a zero integrand
    (r"25\%", "25"),  # math-verify's own rule: a whole percent equals its number
    (r"25\%", "0.25"),
    (r"12.5\%", r"\frac{1}{8}"),
    ("1", r"\cosh^2(1000) - \sinh^2(1000)"),  # cancellation without a variable
    ("1", r"\sin^2(10^{30}) + \cos^2(10^{30})"),  # a huge argument
    (r"10^{-30}\sqrt{2}", r"10^{-30}\sqrt{3}"),  # math-verify's absolute chop: "equal"
    (r"10^{-20}\pi", r"10^{-20}e"),
    (r"\frac{x}{3}", r"0.3333333333333333x"),  # the Float rounds to 1/3's double
    (r"\sqrt{2}", r"1.414214"),  # float_rounding=6
    ("5", "a = b = 5"),  # a chain: its last right side
    (r"\Gamma(10^{30}x)", r"(10^{30}x-1)!"),
    (r"\log_2 x", r"\frac{\ln x}{\ln 2}"),
    (r"\cosh(2x)", r"2\sinh^2 x + 1"),
    ("2", "2, 2.0"),  # a set of two elements, each equal to the gold: sympy calls it {2}
    ("2", r"\{2, 2.0, 2.00\}"),
]

# (gold, prediction): different; the shortcut should see it (the rows it is for).
DIFFERENT = [
    (r"\frac{17}{32}", r"Correct"),  # a word is a product of variables
    (r"9", r"TheSolution"),  # more variables than a handful
    (r"11", r"50-5x"),
    (r"7", r"\frac{2}{5}v+2"),
    (r"4\sqrt{30}", r"4\sqrt{30\pi}"),
    (r"100-25\pi", r"100(1-\pi)"),
    (r"50", r"\sqrt{48 - 12\sqrt{3}}"),
    (r"x^2 + 2x + 1", r"(x+2)^2"),
    (r"\frac{1}{2^{30}}", r"\frac{1}{2^{31}}"),
    ("1-x", "X = 1+x"),  # the right side of an equation is what math-verify compares
    ("5", "x = 6"),
    (r"\frac{\pi}{6}", r"30^\circ"),  # math-verify reads the degree as the bare number
    (r"\frac{1}{3}", "0.33333"),  # five places: outside float_rounding=6
    (r"\frac{x}{3}", "0.333333x"),  # rounding applies to a lone number only
    (r"\sqrt[3]{-8}", "-2"),  # sympy's principal cube root is complex
    (r"10^{-14}\sqrt{2}", r"10^{-14}\sqrt{3}"),  # above math-verify's absolute chop
    ("x+1", "x + 1 = 3"),  # the equation's right side, 3, is compared
    (r"25\%", "30"),  # a percent is 25*UnevaluatedExpr(1/100): evaluated as 1/4
    (r"20\%", r"400\%"),
    (r"73\%", "72.9"),
    # An indefinite integral against a gold without its variable: its integrand, nonzero
    # at a point, makes the difference no constant (math-verify integrates: 0.1-0.2 s)
    ("396", r"\int \frac{3x}{x^2 + 1} \, dx"),  # a real output ended on this integral
    ("5", r"\int x \, dx"),
    ("2y", r"\int (x + y) \, dx"),
    ("7", r"F = \int 2x \, dx"),
    (r"\frac{1}{2}", r"\int e^{x} \sin x \, dx"),
    # A set of several elements against a plain gold: one element surely not the gold
    # (sympy's symmetric difference of the two: tens of milliseconds on symbols)
    ("2", r"\{dx, dy, e a m n x\}"),  # a real output's passage listed its variables
    ("10", "n, n+5, n+6, n+9, n+15"),
    (r"\frac{5}{11}", "a, b"),
    ("2", "1, 3"),
    ("3", "x, 3"),
    (r"\frac{1}{2}", r"0.5, \sqrt{2}"),
]


@pytest.mark.parametrize("percent", ["0", "5", "25", "50", "100", "12.5", "0.5", "150"])
@pytest.mark.parametrize(
    "pred", ["0", "5", "0.05", "0.25", "25", "1", "100", "12.5", r"\frac{1}{8}", r"50\%", "x"]
)
def test_percents_never_change_the_verdict(percent: str, pred: str) -> None:
    for g, p in _pairs(percent + r"\%", pred):
        if surely_different(g, p):
            assert not _verify(g, p), (percent, pred, g, p)


@pytest.mark.parametrize(("gold", "pred"), EQUAL)
def test_never_says_different_where_math_verify_says_equal(gold: str, pred: str) -> None:
    pairs = _pairs(gold, pred)
    assert any(_verify(g, p) for g, p in pairs), "the table row must be equal for math-verify"
    for g, p in pairs:
        if _verify(g, p):
            assert not surely_different(g, p), (gold, pred, g, p)


@pytest.mark.parametrize(("gold", "pred"), DIFFERENT)
def test_shows_plain_expressions_different(gold: str, pred: str) -> None:
    pairs = _pairs(gold, pred)
    assert not any(_verify(g, p) for g, p in pairs)
    assert any(surely_different(g, p) for g, p in pairs), (gold, pred)


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ("x = 5", "x = 6"),  # two equations: math-verify's relation rules
        (r"\{1, 2\}", r"\{2, 1\}"),  # sets, tuples, intervals: math-verify's own rules
        (r"(1, 2)", r"(1, 3)"),
        ("x", "y"),  # a lone symbol: math-verify's symbol rules
        ("3", r"\int_0^1 x \, dx"),  # a definite integral: evaluating it is math-verify's call
        ("0", r"\int 0 \, dx"),  # a zero integrand: math-verify calls it 0
        (r"\frac{x^2}{2}", r"\int x \, dx"),  # the gold has the variable: math-verify's call
        ("1", r"\int (\sin^2 x + \cos^2 x - 1) \, dx"),  # zero only cancellation shows
        ("1", r"\int \int x y \, dx \, dy"),  # several variables
        ("2", r"\int \sum_{k=1}^{n} k x \, dx"),  # an integrand evalf cannot vouch for
        ("2", "f(x)"),  # an undefined function
        ("1", r"\sin^2 x + \cos^2 x, 1"),  # no element shown different: math-verify's call
        ("x", "x, y"),  # a gold with a variable against a set: math-verify's call
    ],
)
def test_leaves_other_shapes_to_math_verify(gold: str, pred: str) -> None:
    for g, p in _pairs(gold, pred):
        assert not surely_different(g, p), (g, p)


def test_variables_with_other_assumptions_are_left_to_math_verify() -> None:
    """(-1)^(2n) is 1 for an integer n only: a real point would call them different."""
    import sympy

    n = sympy.Symbol("n", integer=True)
    assert sympy.simplify((-1) ** (2 * n) - 1) == 0
    assert not surely_different(sympy.Integer(1), (-1) ** (2 * n))


def test_a_failure_inside_is_no_verdict() -> None:
    assert not surely_different(object(), object())
    assert not surely_different("3", "4")  # strings: math-verify compares them itself


# --- generated: equal by construction, then one coefficient moved -----------------------

FORMS = [
    # (written one way, written another way): equal for every a, b
    ("(x+{a})(x+{b})", "x^2+{s}x+{p}"),
    (r"\frac{{x^2-{a2}}}{{x-{a}}}", "x+{a}"),
    (r"\sqrt{{{a2}}}\,y", "{a}y"),
    (r"{a}\sin^2 x+{a}\cos^2 x", "{a}"),
    (r"e^{{\ln {a}}} + x", "{a}+x"),
    (r"\frac{{{a}x}}{{{b}}}", r"\frac{{{a}}}{{{b}}}x"),
    (r"({a}+y)^2-y^2", "{a2}+{twoa}y"),
]

CI = settings(
    max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def forms(draw: st.DrawFn) -> tuple[str, str, str]:
    left, right = draw(st.sampled_from(FORMS))
    a, b = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    fields = {"a": a, "b": b, "s": a + b, "p": a * b, "a2": a * a, "twoa": 2 * a}
    moved = dict(fields, a=a + draw(st.integers(1, 3)))
    return left.format(**fields), right.format(**fields), left.format(**moved)


@CI
@given(forms())
def test_generated_pairs_never_change_the_verdict(case: tuple[str, str, str]) -> None:
    gold, equal, unequal = case
    for pred in (equal, unequal):
        for g, p in _pairs(gold, pred):
            if surely_different(g, p):
                assert not _verify(g, p), (gold, pred, g, p)
    assert any(_verify(g, p) for g, p in _pairs(gold, equal)), (gold, equal)


INTEGRANDS = [
    "{a}x^{k}",
    r"\frac{{{a}x}}{{x^2+{b}}}",
    r"{a}\sin x + {b}\cos x",
    r"e^{{{a}x}} - {b}",
    r"{a}x - {a}x",  # zero: never "different"
    r"\sqrt{{x + {b}}}",
]


@st.composite
def integrals(draw: st.DrawFn) -> tuple[str, str]:
    form = draw(st.sampled_from(INTEGRANDS))
    a, b, k = draw(st.integers(1, 9)), draw(st.integers(1, 9)), draw(st.integers(0, 3))
    gold = draw(st.sampled_from(["0", "1", str(a), rf"\frac{{{a}}}{{{b}}}", "2y"]))
    return gold, rf"\int {form.format(a=a, b=b, k=k)} \, dx"


@CI
@given(integrals())
def test_generated_integrals_never_change_the_verdict(case: tuple[str, str]) -> None:
    gold, pred = case
    for g, p in _pairs(gold, pred):
        if surely_different(g, p):
            assert not _verify(g, p), (gold, pred, g, p)


@pytest.mark.parametrize("depth", [8, 20, 40])
def test_a_deep_expression_costs_milliseconds(depth: int) -> None:
    """A continued fraction ``1/(1+1/(1+...x))``: evaluated with ``subs``, every level
    was evaluated again at a rising precision (78 s at depth 20, where math-verify alone
    takes 20 ms); the point put in exactly, each costs milliseconds, on either side."""
    import time

    deep = "\\frac{1}{1+" * depth + "x" + "}" * depth
    for gold, pred in ((_parsed("42")[0], _parsed(deep)[0]), (_parsed(deep)[0], _parsed("42")[0])):
        started = time.process_time()
        assert surely_different(gold, pred)
        assert time.process_time() - started < 1.0


def test_a_huge_power_is_left_to_math_verify() -> None:
    """x^{100000} at the point would be a 5-million-bit rational: not computed."""
    assert not surely_different(_parsed("1")[0], _parsed("x^{100000}")[0])
    assert surely_different(_parsed("1")[0], _parsed("x^{100} + 2")[0])
