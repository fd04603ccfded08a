"""guards: math.py's fast path is never wrong when it decides; fast_paths=False turns it off.

The math fast path is never wrong when it decides, and the switch that turns it off works.

Property tests generate (prediction, gold) pairs that are equal or unequal *by
construction* (the truth is computed from the generator's own numbers, never by parsing
the LaTeX) and assert that the fast path's decision, when it makes one, is the truth.
"Don't know" (None) is always allowed: math-verify then decides in a worker.

CI runs a derandomized few hundred examples (well under 30 s); ``pytest -m slow`` runs
many more, and checks every "equal" against math-verify itself.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rewardkit import RewardLoop, Status
from rewardkit.verifiers import _numeric
from rewardkit.verifiers import math as math_module
from rewardkit.verifiers.base import Extracted
from rewardkit.verifiers.math import MathVerifier, _decide, _math_verify_equal

Case = tuple[str, str, bool]  # (prediction, gold, truth)

CI = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SLOW = settings(
    max_examples=5_000,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

FRAC = st.sampled_from([r"\frac", r"\dfrac", r"\tfrac"])
SMALL = st.integers(-30, 30)


def _int(n: int) -> str:
    return str(n)


def _signed(term: int) -> str:
    return f"+{term}" if term >= 0 else f"-{-term}"


def _frac(frac: str, value: Fraction) -> str:
    body = f"{frac}{{{abs(value.numerator)}}}{{{value.denominator}}}"
    return ("-" if value < 0 else "") + body


@st.composite
def near_powers(draw: st.DrawFn) -> Case:
    """2^k + d against 2^k + e, spelled as a power or written out: big integers, exactly."""
    base = draw(st.sampled_from([2, 10, 3]))
    power = draw(st.integers(1, 80))
    d, e = draw(st.integers(-2, 2)), draw(st.integers(-2, 2))
    braced = draw(st.booleans())
    spelled = f"{base}^{{{power}}}" if braced or power > 9 else f"{base}^{power}"
    left = spelled + (_signed(d) if d else "")
    right = _int(base**power + e) if draw(st.booleans()) else spelled + (_signed(e) if e else "")
    return left, right, d == e


@st.composite
def fractions_and_decimals(draw: st.DrawFn) -> Case:
    """p/q against another p/q, its decimal, or a truncated decimal of it."""
    a = Fraction(draw(st.integers(-999, 999)), draw(st.integers(1, 64)))
    form = draw(st.sampled_from(["frac", "slash", "decimal", "other"]))
    b = (
        a
        if draw(st.booleans())
        else Fraction(draw(st.integers(-999, 999)), draw(st.integers(1, 64)))
    )
    left = _frac(draw(FRAC), a)
    if form == "slash":
        right = f"{b.numerator}/{b.denominator}"
    elif form == "decimal":
        digits = draw(st.integers(1, 12))
        shown = Fraction(round(b * 10**digits), 10**digits)
        right = f"{float(shown):.{digits}f}"
        return left, right, Fraction(right) == a
    elif form == "frac":
        scale = draw(st.integers(1, 5))
        right = (
            _frac(draw(FRAC), b)
            if scale == 1
            else f"\\frac{{{b.numerator * scale}}}{{{b.denominator * scale}}}"
        )
    else:
        right = _frac(draw(FRAC), b + draw(st.sampled_from([Fraction(1, 10**9), Fraction(-1, 7)])))
        return left, right, False
    return left, right, a == b


@st.composite
def mixed_numbers(draw: st.DrawFn) -> Case:
    """``w\\frac{p}{q}`` is w + p/q, not w times p/q."""
    whole, q = draw(st.integers(1, 999)), draw(st.integers(2, 16))
    p = draw(st.integers(1, q - 1))
    value = whole + Fraction(p, q)
    other = draw(st.sampled_from([value, whole * Fraction(p, q), value + 1, Fraction(p, q)]))
    spacer = draw(st.sampled_from(["", " ", "\\,"]))
    left = f"{whole}{spacer}{draw(FRAC)}{{{p}}}{{{q}}}"
    if draw(st.booleans()) and other.denominator in (2, 4, 5, 8, 10):
        right = str(float(other))
    else:
        right = _frac(r"\frac", other)
    return left, right, value == other


@st.composite
def named_values(draw: st.DrawFn) -> Case:
    """``x=1, y=2`` against the same names in another order, or with values swapped."""
    names = draw(st.lists(st.sampled_from("xyzabk"), min_size=2, max_size=3, unique=True))
    values = draw(st.lists(SMALL, min_size=len(names), max_size=len(names)))
    gold = dict(zip(names, values, strict=True))
    pred = dict(gold)
    if draw(st.booleans()):
        first, second = names[0], names[1]
        pred[first], pred[second] = gold[second], gold[first]
    order = draw(st.permutations(names))
    sep = draw(st.sampled_from([",", ", ", "\\text{ and }", ",\\ "]))
    left = sep.join(f"{n}={pred[n]}" for n in order)
    right = ", ".join(f"{n} = {gold[n]}" for n in names)
    return left, right, pred == gold


@st.composite
def sets_with_repeats(draw: st.DrawFn) -> Case:
    """Solution sets in any order, sometimes with an item repeated (math-verify drops repeats)."""
    gold = draw(st.lists(SMALL, min_size=1, max_size=5, unique=True))
    pred = draw(st.lists(st.sampled_from([*gold, 31, -31]), min_size=1, max_size=6))
    tuples = draw(st.booleans())

    def spell(items: list[int]) -> str:
        parts = [f"({i}, {i + 1})" if tuples else str(i) for i in items]
        return ("\\{" + ", ".join(parts) + "\\}") if draw(st.booleans()) else ", ".join(parts)

    return spell(pred), spell(gold), set(pred) == set(gold)


@st.composite
def intervals(draw: st.DrawFn) -> Case:
    """Intervals with open/closed ends and infinite ends; brackets and endpoints count."""

    def interval() -> tuple[str, str, int | None, int | None]:
        lo, hi = sorted(draw(st.lists(SMALL, min_size=2, max_size=2, unique=True)))
        low = None if draw(st.booleans()) else lo
        high = None if draw(st.booleans()) else hi
        left = "(" if low is None else draw(st.sampled_from("(["))
        right = ")" if high is None else draw(st.sampled_from(")]"))
        return left, right, low, high

    a = interval()
    b = a if draw(st.booleans()) else interval()

    def spell(item: tuple[str, str, int | None, int | None]) -> str:
        left, right, low, high = item
        lo = "-\\infty" if low is None else str(low)
        hi = "\\infty" if high is None else str(high)
        if draw(st.booleans()):
            return f"\\left{left}{lo}, {hi}\\right{right}"
        prefix = draw(st.sampled_from(["", "x \\in "]))
        return f"{prefix}{left}{lo},{hi}{right}"

    return spell(a), spell(b), a == b


def _poly(coefficients: list[int], order: list[int]) -> str:
    terms = []
    for power in order:
        c = coefficients[power]
        if c == 0:
            continue
        body = {0: str(abs(c)), 1: "x", 2: "x^2", 3: "x^{3}"}[power]
        if power and abs(c) != 1:
            body = f"{abs(c)}{body}"
        terms.append(("-" if c < 0 else "+") + body)
    text = "".join(terms) or "0"
    return text[1:] if text.startswith("+") else text


@st.composite
def polynomials(draw: st.DrawFn) -> Case:
    """k(x-r)(x-s) against its expansion in any term order, or a perturbed expansion."""
    k, r, s = draw(st.integers(1, 5)), draw(SMALL), draw(SMALL)
    coefficients = [k * r * s, -k * (r + s), k, 0]
    factored = (f"{k}" if k != 1 else "") + f"(x{_signed(-r)})(x{_signed(-s)})"
    change = draw(st.sampled_from([0, 0, 1, -1]))
    at = draw(st.integers(0, 2))
    other = list(coefficients)
    other[at] += change
    order = draw(st.permutations([0, 1, 2, 3]))
    left = factored if draw(st.booleans()) else _poly(coefficients, list(order))
    return left, _poly(other, [3, 2, 1, 0]), change == 0


@st.composite
def magnitudes(draw: st.DrawFn) -> Case:
    """Tiny and huge values: 10^{-k} is not 0, 1/2^{k} is not 1/2^{k+1}, 10^{k} is not 10^{k}+1."""
    k = draw(st.integers(1, 60))
    j = k + draw(st.sampled_from([0, 1]))
    kind = draw(st.sampled_from(["tiny", "half", "huge", "decimal"]))
    if kind == "tiny":
        return f"10^{{-{k}}}", "0" if j != k else f"\\frac{{1}}{{10^{{{k}}}}}", j == k
    if kind == "half":
        return f"\\frac{{1}}{{2^{{{k}}}}}", f"2^{{-{j}}}", j == k
    if kind == "huge":
        return f"10^{{{k}}}", str(10**k + (j - k)), j == k
    return "0." + "0" * (k - 1) + "1", f"10^{{-{j}}}", j == k


@st.composite
def radicals(draw: st.DrawFn) -> Case:
    """``a\\sqrt{b}`` against ``\\sqrt{a^2 b}`` (or a neighbour), over a denominator."""
    a, b, c = draw(st.integers(1, 12)), draw(st.integers(2, 50)), draw(st.integers(1, 9))
    delta = draw(st.sampled_from([0, 0, 1]))
    left = f"{draw(FRAC)}{{{a}\\sqrt{{{b}}}}}{{{c}}}"
    right = f"\\sqrt{{{a * a * b + delta}}}/{c}"
    return left, right, delta == 0  # sqrt(a^2 b + 1) is never a sqrt(b)


@st.composite
def multiples_of_pi(draw: st.DrawFn) -> Case:
    p, q = draw(st.integers(1, 20)), draw(st.integers(1, 12))
    s, t = (p, q) if draw(st.booleans()) else (draw(st.integers(1, 20)), draw(st.integers(1, 12)))
    return (
        f"\\frac{{{p}\\pi}}{{{q}}}",
        f"\\frac{{{s}}}{{{t}}}\\pi",
        Fraction(p, q) == Fraction(s, t),
    )


@st.composite
def percent_signs(draw: st.DrawFn) -> Case:
    """A number with a percent sign (or ``\\text{percent}``, the sign to math-verify)
    against the bare number: equal as math-verify grades it ("9% == 9", both sympy
    Integers) only for a whole number at least 0; ``1.5\\%``, ``-12\\%`` and ``150.0\\%``
    against the bare number are not."""
    whole = draw(st.integers(-200, 200))
    kind = draw(st.sampled_from(["whole", "point zero", "half", "fraction"]))
    shown = {
        "whole": str(whole),
        "point zero": f"{whole}.0",
        "half": f"{whole}.5" if whole >= 0 else f"-{-whole}.5",
        "fraction": _frac(r"\frac", Fraction(2 * whole + 1, 2)),
    }[kind]
    marked = shown + draw(st.sampled_from(["\\%", "%", " \\%", "\\text{percent}"]))
    left, right = (marked, shown) if draw(st.booleans()) else (shown, marked)
    return left, right, kind == "whole" and whole >= 0


@st.composite
def points_and_ellipses(draw: st.DrawFn) -> Case:
    """A number ending in a point before a factor (``2.\\frac{1}{4}``, ``3. \\sqrt{2}``: an
    item's number, or a cut decimal) is no product; a value then an ellipsis (``6...``,
    ``1+2+3...``) is a series or a decimal that goes on, no value."""
    n = draw(st.integers(1, 99))
    if draw(st.booleans()):
        factor, value = draw(
            st.sampled_from([("\\frac{1}{4}", "\\frac{%d}{4}"), ("\\sqrt{2}", "%d\\sqrt{2}")])
        )
        spacer = draw(st.sampled_from(["", " ", "\\cdot "]))
        return f"{n}.{spacer}{factor}", value % n, False
    body = draw(st.sampled_from([str(n), f"{n}+1", f"\\frac{{{n}}}{{7}}"]))
    tail = draw(st.sampled_from(["...", "\\,.\\,.\\,.", "...\\text{ cm}", ". . ."]))
    return body + tail, body, False


FAMILIES = st.one_of(
    near_powers(),
    fractions_and_decimals(),
    mixed_numbers(),
    named_values(),
    sets_with_repeats(),
    intervals(),
    polynomials(),
    magnitudes(),
    radicals(),
    multiples_of_pi(),
    percent_signs(),
    points_and_ellipses(),
)


def _assert_sound(case: Case) -> bool | None:
    pred, gold, truth = case
    decided, _ = _decide(pred, gold)
    assert decided is None or decided is truth, f"fast path said {decided} for {pred!r} vs {gold!r}"
    return decided


@CI
@given(FAMILIES)
def test_fast_path_is_never_wrong_when_it_decides(case: Case) -> None:
    _assert_sound(case)


@CI
@given(FAMILIES)
def test_fast_path_is_symmetric_where_it_decides(case: Case) -> None:
    pred, gold, _ = case
    forward, backward = _decide(pred, gold)[0], _decide(gold, pred)[0]
    assert forward is None or backward is None or forward is backward


@settings(max_examples=60, derandomize=True, deadline=None)
@given(FAMILIES)
def test_fast_path_never_says_equal_where_math_verify_says_unequal(case: Case) -> None:
    pred, gold, _ = case
    if _assert_sound(case) is True:
        assert _math_verify_equal(gold, pred), f"math-verify disagrees: {pred!r} vs {gold!r}"


@pytest.mark.slow
@pytest.mark.timeout(3600)
@SLOW
@given(FAMILIES)
def test_slow_fast_path_soundness_and_math_verify_agreement(case: Case) -> None:
    pred, gold, _ = case
    if _assert_sound(case) is True:
        assert _math_verify_equal(gold, pred), f"math-verify disagrees: {pred!r} vs {gold!r}"


# TeX that renders as space, nothing, a sign or a size: normalising such tokens away must
# never glue what they separate ("1\\%2" is no 12, "\\sqrt\\;{7}" no \\sqrt{7}).
SPACING = [" ", "~", "\\,", "\\;", "\\!", "\\>", "\\ ", "\\quad", "{}", "\\left", "\\right",
           "\\big", "\\mbox{}", "\\text{ }", "\\textstyle", "\\mathrm{}"]  # fmt: skip
SIGNS = [
    "\\%",
    "°",
    "^\\circ",
    ",",
    "{,}",
    ".",
    "\\$",
    "\\phantom{0}",
    "'",
    "x",
]


@st.composite
def typeset_noise(draw: st.DrawFn) -> tuple[str, str, str, int, str]:
    """A number, a decimal, a fraction or a root with one token put inside it, against the
    clean form, its digits, the part before or after the token, or a near number."""
    digits = draw(st.text("0123456789", min_size=2, max_size=6))
    body = draw(
        st.sampled_from(
            [
                digits,
                digits[:1] + "." + digits[1:],
                f"\\frac{{{digits}}}{{7}}",
                f"\\sqrt{{{digits}}}",
            ]
        )
    )
    cut, token = draw(st.integers(0, len(body))), draw(st.sampled_from(SPACING + SIGNS))
    near = str(int(digits) + draw(st.sampled_from([-1, 1, 10])))
    gold = draw(st.sampled_from([body, digits, digits[:cut] or "0", digits[cut:] or "0", near]))
    return body[:cut] + token + body[cut:], gold, token, cut, body


def _keeps_the_value(token: str, cut: int, body: str) -> bool:
    """Tokens that leave the clean form's value as it is: spacing away from digits on both
    sides (between digits, ``1\\,000`` may be a thousand), a bare decimal point (``37.``),
    and the deliberate readings of a trailing ``.`` or ``\\%``."""
    between_digits = body[cut - 1 : cut].isdigit() and body[cut : cut + 1].isdigit()
    if token in SPACING:
        return not between_digits
    bare_point = token == "." and not body[cut : cut + 1].isdigit()
    return bare_point or (token == "\\%" and cut == len(body))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(typeset_noise())
@example(("\\frac{41}{7\\%}", "\\frac{41}{7}", "\\%", 13, "\\frac{41}{7}"))  # 41 / 0.07
def test_typesetting_noise_never_credits_another_value(
    case: tuple[str, str, str, int, str],
) -> None:
    """Credit for a noisy answer needs math-verify's agreement, or a token that keeps the
    clean form's value and credit for the clean form itself."""
    pred, gold, token, cut, body = case
    if _decide(pred, gold)[0] is not True or _math_verify_equal(gold, pred):
        return
    assert _keeps_the_value(token, cut, body) and _decide(body, gold)[0] is True, (
        f"fast path credits {pred!r} against {gold!r}"
    )


def test_the_generators_reach_decisions_both_ways() -> None:
    """A fast path that always said None would pass the properties: it must decide too."""
    cases = [
        (r"2^{31}", "2147483648", True),
        (r"2^{31}", r"2^{31}-1", False),
        (r"2\frac{1}{4}", r"\frac{9}{4}", True),
        ("y=2, x=1", "x=1, y=2", True),
        ("x=2, y=1", "x=1, y=2", False),
        (r"\left(-\infty, 3\right]", r"(-\infty,3]", True),
        ("(x-2)(x+3)", "x^2+x-6", True),
        (r"\frac{1}{2^{30}}", r"2^{-31}", False),
    ]
    assert [_assert_sound(case) for case in cases] == [case[2] for case in cases]


# --- reward.verifiers.fast_paths=false --------------------------------------------------

# math-verify's numeric check chops differences below its precision: it calls
# sqrt(2) + 10^-20 equal to sqrt(2); the exact fast path does not. And math-verify reads
# "\text{twelve}" as a symbol; the fast path reads the number word.
SWITCH_ROWS = [
    ("\\sqrt{2}", "so \\boxed{\\sqrt{2}+10^{-20}}", 0.0, 1.0),
    ("12", "so \\boxed{\\text{twelve}}", 1.0, 0.0),
]


@pytest.mark.parametrize(("gold", "response", "fast", "slow"), SWITCH_ROWS)
def test_the_switch_off_gives_math_verify_verdicts(
    gold: str, response: str, fast: float, slow: float
) -> None:
    extracted = MathVerifier().extract(response)
    assert MathVerifier().check(extracted, gold).score == fast
    assert MathVerifier(fast_paths=False).check(extracted, gold).score == slow
    assert MathVerifier(fast_paths=False).key != MathVerifier().key  # cache keys differ


def test_the_switch_off_never_calls_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object) -> None:
        raise AssertionError("fast path called with fast_paths=False")

    monkeypatch.setattr(math_module, "_decide", forbidden)
    monkeypatch.setattr(_numeric, "compare", forbidden)
    monkeypatch.setattr(math_module._latex, "exact_number", forbidden)
    verifier = MathVerifier(fast_paths=False)
    extracted = Extracted("\\frac{1}{2}", {"source": "boxed"})
    assert verifier.quick_check(extracted, "0.5") is None
    assert verifier.check(extracted, "0.5").score == 1.0
    assert verifier.check(Extracted(None, {}), "0.5").score == 0.0  # no answer: nothing to check


def test_the_switch_reaches_the_workers_through_the_loop() -> None:
    rows = [
        {"data_source": "lighteval/MATH", "response": response, "ground_truth": gold}
        for gold, response, _, _ in SWITCH_ROWS
    ]
    scores = {}
    for fast in (True, False):
        config = {"reward": {"num_workers": 1, "verifiers": {"fast_paths": fast}}}
        with RewardLoop(config) as loop:
            results = loop.score(rows)
            stats = dict(loop.engine.stats)
        assert all(r.status is Status.OK for r in results)
        scores[fast] = [r.score for r in results]
        assert (stats["quick"], stats["pool"]) == ((len(rows), 0) if fast else (0, len(rows)))
    assert scores[True] == [row[2] for row in SWITCH_ROWS]
    assert scores[False] == [row[3] for row in SWITCH_ROWS]
