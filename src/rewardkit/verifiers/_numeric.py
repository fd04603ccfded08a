"""Deciding MATH answers by exact arithmetic, before sympy is ever imported.

Most answers that are not plain numbers are still *constant expressions* (``2\\sqrt{7}``,
``\\frac{5\\pi}{7}``, ``2^{31}-1``), one-variable polynomials or rational functions
(``x^2-x-30``), or lists of those: solution sets (``-4, 9``), tuples and intervals
(``(-\\infty, -8)``), named values (``x=1, y=2``). A small recursive-descent parser over a
restricted LaTeX grammar reads both sides into *exact* values: rational functions whose
coefficients are sums of rationals times square roots of square-free integers, in the
transcendental ``\\pi`` and at most one variable. Square roots of distinct square-free
integers are linearly independent over the rationals and ``\\pi`` is transcendental, so
two such values are equal exactly when their canonical forms are: no tolerance, no
sampling, big integers stay big (``2^{40}`` is not ``2^{40}+1``).

The only tolerance is for a decimal (``0.3333333``), which math-verify reads as a
rounded value: a decimal exactly equal to the other side is equal; one more than
``_NEAR`` away from it, or off by more than ``_NEAR_RELATIVE`` of its size (``0.0``
against ``10^{-7}``: math-verify's 6-place rounding calls them equal), is different;
anything nearer is left to math-verify. Two exact
values never meet that rule, so it can never equate two different exact values.

``compare`` answers True or False only when both sides parse completely into the same
kind of object (one value, a set, a tuple or interval with its brackets, a set of named
values); anything else is None, "don't know", and math-verify decides in a worker:
shapes outside the grammar, repeated set elements (math-verify's sets drop them), a
tuple against a bare list, named against unnamed values, functions, ``\\pm``, ``e``...

Bounded: inputs are at most ``MAX_CHARS`` long, the parser is linear, and every
operation checks the size of what it builds (bits, terms, exponents) before building it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from rewardkit.verifiers import _latex

__all__ = ["compare", "near_enough_to_defer", "prepare"]

MAX_CHARS: Final = 300
_MAX_BITS: Final = 4096  # of any numerator or denominator built
_MAX_TERMS: Final = 64  # of any polynomial built
_MAX_EXPONENT: Final = 4096  # of a power of a single term (2^{31}, x^{100})
_MAX_EXPAND: Final = 32  # of a power of a sum ((x+1)^{5})
_MAX_RADICAND: Final = 10**12  # square roots of larger integers are not factored
_NEAR: Final = 1e-5  # a decimal this near the other side: math-verify rounds, it decides
# ... and this near relatively: math-verify rounds to 6 places, so "0.0" would equal 10^{-7}
_NEAR_RELATIVE: Final = 1e-3
_RESERVED: Final = frozenset("eEiI")  # Euler's number and the imaginary unit to math-verify

Monomial = tuple[int, tuple[tuple[str, int], ...]]
"""(square-free radicand, ((symbol, power), ...)): ``3\\sqrt{2}\\pi x^2`` has (2, (("pi", 1), ("x", 2)))."""
Poly = dict[Monomial, Fraction]
_ONE: Final[Monomial] = (1, ())
_UNIT: Final[Poly] = {_ONE: Fraction(1)}


class _Undecided(Exception):
    """The expression is outside the grammar, too big, or not comparable here."""


# --- preparing the text ------------------------------------------------------------------

# "x = 1 or x = 2", "1 \text{ and } 2": words that list answers, never inside a word
_LIST_WORD = re.compile(r"\\text\{\s*(?:or|and)\s*\}|(?<![A-Za-z\\])(?:or|and)(?![A-Za-z])")
# A comma followed by space separates list items ("32, 349" is two numbers, as math-verify reads it)
_SPACED_DIGITS = re.compile(r"\d(?:\s|\\[,;:! ]|\\q?quad(?![a-zA-Z])|~)+[\d.]")
_LIST_COMMA = re.compile(r",(?:\s|\\[,;: ]|\\q?quad(?![a-zA-Z])|~)+")


def prepare(answer: str) -> str | None:
    """The normalised answer with list separators kept as ``;`` and names kept (``x=1``).

    None when the answer holds a ``;`` of its own, or digits separated by spaces (``4 4/9``
    is a mixed number, ``1 000`` or ``1\\,000`` a thousand): normalising would glue them,
    so their meaning is math-verify's call. None when it holds a text-mode dash
    (``\\text{--}3`` shows an en dash, not a double minus) or a degree or percent sign
    after a group that lists no items (``(30)^\\circ``, ``2(3+4)\\%``). None too when
    normalising glued digits or letters across anything else it drops (``1\\%2``,
    ``1\\>000``, ``\\s~qrt``), when a percent or degree sign stands inside the answer
    rather than after a value (``-\\%5``), when ``\\left``/``\\right``/``\\big`` size no
    delimiter, when the trailing "unit" is in a wrapper math-verify keeps (``3\\mathsf{x}``
    is 3x to it, not 3), when a space is a command's argument (``\\sqrt\\;{7}``), or when
    it holds an ellipsis (``1+2+3...``, ``0.9...``: no full stop). ``\\text{percent}`` is
    read as the sign it is to math-verify.
    """
    if ";" in answer.replace("\\;", "") or _SPACED_DIGITS.search(answer):
        return None
    if _ELLIPSIS.search(answer):
        return None  # "1+2+3...", "0.9...": a series or a decimal that goes on
    answer = _latex.PERCENT_WORD.sub(r"\\%", answer)  # math-verify's reading: a sign
    if _TEXT_DASH.search(answer):
        return None
    if _latex.sign_after_group(answer) and _latex.distribute_marks(answer) == answer:
        return None  # "2(3+4)\%": math-verify reads it, not spread over items
    if _mark_inside(answer) or _BARE_LEFT_RIGHT.search(answer) or _KEPT_UNIT.search(answer):
        return None
    text = _LIST_COMMA.sub(";", _LIST_WORD.sub(";", answer))
    norm = _latex.normalise(text, strip_variable=False)
    return None if _glued(answer, norm) else norm


# Two points or more: an ellipsis, no full stop (normalise strips points that end the answer)
_ELLIPSIS = re.compile(r"\.(?:\s|\\[,;:! ])*\.")
# "--" in text mode is an en dash ("\\text{--}3" shows "–3", no double negation of 3)
_TEXT_DASH = re.compile(r"\\(?:text(?:bf|rm|it|normal|sf|tt)?|mbox)\s?\{[^{}]*--")


_MARK = re.compile(r"\\?%|°|\\degree(?![A-Za-z])|\\circ")  # "\circxt": normalise drops \circ
# What may follow a percent or degree sign that qualifies the value before it
_AFTER_MARK = re.compile(r"[\s$}]*(?:$|[,;)\]]|\\(?:text|mbox|math|right|[,;:! }\])]|q?quad))")
_DELIMITER = r"(?:[()\[\]|{}]|\\[{}|]|\\[lr]?(?:vert|Vert|angle|floor|ceil|brace|brack))"
_BARE_LEFT_RIGHT = re.compile(  # sizing with nothing to size; "20 \right": a box cut short
    rf"\\left(?![A-Za-z])(?!\s*{_DELIMITER})|\\right(?![A-Za-z])(?!\s*(?:$|{_DELIMITER}))"
    r"|\\(?:big|Big|bigg|Bigg)(?![A-Za-z])(?!\s*(?:[()\[\]|]|\\[{}|]))"  # as math.py maps it
)
# \mathsf{x}: a trailing "unit" math-verify keeps; \sqrt\;{7}, x^\,2: the space is the argument
_KEPT_UNIT = re.compile(
    r"\\(?:textsf|texttt|mathsf)\s?\{"
    r"|(?:\\(?:[dtc]?frac|sqrt|text[a-z]*|mbox|math[a-z]+)|\^)\s*(?:\\[,;:!> ]|~|\\q?quad)"
    r"|\^\s*(?:\{\s*\}|\\(?:text|mbox|math)[a-z]*\s?\{[\s\\,;:!>~]*\})"  # x^\text{\,}2: no x^2
)
_RUN = re.compile(r"[\d.,]+|\\?[A-Za-z]+")
_FRAC_VARIANT = re.compile(r"\\[dtc]frac(?![A-Za-z])")
_COMMAND_NAME = re.compile(r"\\[A-Za-z]+")
_WORD_SPACE = re.compile(r"(?<=[A-Za-z])\s+(?=[A-Za-z])")  # "one hundred five", "\sqrt x"


def _mark_inside(answer: str) -> bool:
    """A ``%`` or degree sign followed by more of the answer (``-\\%5``, ``1^\\circ2``), or
    ending a math group rather than the answer: ``\\frac{41}{7\\%}`` is 41 / 0.07, which
    normalising would turn into 41/7."""
    return any(
        _AFTER_MARK.match(answer, mark.end()) is None or _in_math_group(answer, mark.start())
        for mark in _MARK.finditer(answer)
    )


_TEXT_WRAPPER = re.compile(r"\\(?:text[a-z]*|mbox|mathrm|operatorname)\s*$")


def _in_math_group(answer: str, at: int) -> bool:
    """Whether ``at`` is inside a ``{...}`` after more of it, not a text wrapper's
    (``\\text{5\\%}`` qualifies the value, ``^{\\circ}`` is a unit; ``\\frac{..}{7\\%}``
    and ``{5\\%}`` are math)."""
    depth = 0
    for index in range(at - 1, -1, -1):
        char = answer[index]
        if char in "{}" and index and answer[index - 1] == "\\":
            continue  # \{ and \} are set braces, not groups
        if char == "}":
            depth += 1
        elif char == "{":
            if depth == 0:  # "^{\circ}": the group holds only the sign, a unit
                unit = not answer[index + 1 : at].strip()
                return not unit and _TEXT_WRAPPER.search(answer, 0, index) is None
            depth -= 1
    return False


def _glued(answer: str, norm: str) -> bool:
    """Whether the runs of digits and of letters in ``norm`` are not, in order, within runs
    of the raw answer (spaces between letters aside, but not after a command's name): what
    normalising dropped stood inside a number or a name (``1\\%2`` became ``12``,
    ``\\s~qrt`` and ``\\fra c`` became ``\\sqrt`` and ``\\frac``, ``twel\\,ve`` twelve).
    ``\\frac12`` splits a run (``\\frac{1}{2}``), which is fine."""
    raw = answer.replace("{,}", ",").replace(",\\!", ",")  # 1,\!000: a thousand
    raw = _COMMAND_NAME.sub(r"\g<0>|", raw)  # "\fra c": no \frac
    raw = _FRAC_VARIANT.sub(r"\\frac", _WORD_SPACE.sub("", raw))
    runs = "|".join(_RUN.findall(raw))
    at = 0
    for run in _RUN.findall(norm):
        found = runs.find(run, at)
        if found < 0:
            return True
        at = found + len(run)
    return False


def near_enough_to_defer(a: Fraction, b: Fraction) -> bool:
    """For a decimal against an exact number that differ: near enough that math-verify's
    rounding might call them equal (``0.3333333`` against ``\\frac13``)."""
    return _near(float(abs(a - b)), float(max(abs(a), abs(b))))


def _near(gap: float, size: float) -> bool:
    """Near enough for math-verify's rounding to matter, and not wrong in every digit:
    ``0.0`` or ``0.0000002`` against ``10^{-7}`` is different, though both round to 0."""
    return gap <= _NEAR and gap <= _NEAR_RELATIVE * size


# --- exact values ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Value:
    """``num / den``; ``inexact`` when a decimal was read on the way."""

    num: Poly
    den: Poly
    inexact: bool = False


@dataclass(frozen=True, slots=True)
class _Infinity:
    sign: int


@dataclass(frozen=True, slots=True)
class _Tuple:
    """A tuple or an interval: ordered, and its brackets count (``[1, 2)`` is not ``(1, 2)``)."""

    brackets: str
    items: tuple[_Value | _Infinity | _Tuple, ...]


def _const(value: Fraction, inexact: bool = False) -> _Value:
    return _Value({_ONE: value} if value else {}, {_ONE: Fraction(1)}, inexact)


def _symbol(name: str) -> _Value:
    return _Value({(1, ((name, 1),)): Fraction(1)}, {_ONE: Fraction(1)})


def _check_size(poly: Poly) -> Poly:
    if len(poly) > _MAX_TERMS:
        raise _Undecided("too many terms")
    for coef in poly.values():
        if coef.numerator.bit_length() > _MAX_BITS or coef.denominator.bit_length() > _MAX_BITS:
            raise _Undecided("number too big")
    return poly


def _poly_add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for mono, coef in b.items():
        total = out.get(mono, Fraction(0)) + sign * coef
        if total:
            out[mono] = total
        else:
            out.pop(mono, None)
    return _check_size(out)


def _mono_mul(a: Monomial, b: Monomial) -> tuple[int, Monomial]:
    """(integer factor, monomial): ``\\sqrt{6}\\sqrt{10}`` is 2 times ``\\sqrt{15}``."""
    common = math.gcd(a[0], b[0])
    powers = dict(a[1])
    for name, power in b[1]:
        powers[name] = powers.get(name, 0) + power
    return common, ((a[0] // common) * (b[0] // common), tuple(sorted(powers.items())))


def _poly_mul(a: Poly, b: Poly) -> Poly:
    if a == _UNIT:
        return b
    if b == _UNIT:
        return a
    if len(a) * len(b) > _MAX_TERMS * _MAX_TERMS:
        raise _Undecided("product too big")
    out: Poly = {}
    for mono_a, coef_a in a.items():
        for mono_b, coef_b in b.items():
            factor, mono = _mono_mul(mono_a, mono_b)
            out[mono] = out.get(mono, 0) + coef_a * coef_b * factor
    return _check_size({mono: coef for mono, coef in out.items() if coef})


def _add(a: _Value, b: _Value, sign: int = 1) -> _Value:
    inexact = a.inexact or b.inexact
    if a.den == b.den:
        return _simplify(_Value(_poly_add(a.num, b.num, sign), a.den, inexact))
    num = _poly_add(_poly_mul(a.num, b.den), _poly_mul(b.num, a.den), sign)
    return _simplify(_Value(num, _poly_mul(a.den, b.den), inexact))


def _mul(a: _Value, b: _Value) -> _Value:
    return _simplify(
        _Value(_poly_mul(a.num, b.num), _poly_mul(a.den, b.den), a.inexact or b.inexact)
    )


def _div(a: _Value, b: _Value) -> _Value:
    if not b.num:
        raise _Undecided("division by zero")
    return _mul(a, _Value(b.den, b.num, b.inexact))


def _simplify(value: _Value) -> _Value:
    """Clear a denominator that is one term without symbols (``c\\sqrt{r}``), so values stay small."""
    if len(value.den) != 1:
        return value
    ((rad, symbols), coef) = next(iter(value.den.items()))
    if symbols:
        return value
    scale: Poly = {(rad, ()): 1 / (coef * rad)}  # 1 / (c \sqrt{r}) = \sqrt{r} / (c r)
    return _Value(_poly_mul(value.num, scale), {_ONE: Fraction(1)}, value.inexact)


def _rational(value: _Value) -> Fraction | None:
    """The value when it is a plain rational number, else None."""
    if value.den != {_ONE: Fraction(1)} or any(mono != _ONE for mono in value.num):
        return None
    return value.num.get(_ONE, Fraction(0))


def _power(base: _Value, exponent: _Value) -> _Value:
    power = _rational(exponent)
    if power is None or exponent.inexact:
        raise _Undecided("exponent is not an exact rational")
    if power.denominator != 1:
        return _power(_root(base, power.denominator), _const(Fraction(power.numerator)))
    n = int(power)
    single = len(base.num) <= 1 and len(base.den) == 1
    if abs(n) > (_MAX_EXPONENT if single else _MAX_EXPAND):
        raise _Undecided("exponent too big")
    if single:
        _check_bits_of_power(base, abs(n))
    if n < 0:
        if not base.num:
            raise _Undecided("zero to a negative power")
        base, n = _Value(base.den, base.num, base.inexact), -n
    result = _const(Fraction(1), base.inexact)
    for bit in bin(n)[2:]:
        result = _mul(result, result)
        if bit == "1":
            result = _mul(result, base)
    return result


def _check_bits_of_power(base: _Value, n: int) -> None:
    for coef in (*base.num.values(), *base.den.values()):
        for part in (coef.numerator, coef.denominator):
            if part.bit_length() * n > _MAX_BITS:
                raise _Undecided("power too big")


def _root(value: _Value, index: int) -> _Value:
    """The principal ``index``-th root of a non-negative rational, when exact or a square root."""
    radicand = _rational(value)
    if radicand is None or radicand < 0 or value.inexact or not 2 <= index <= 16:
        raise _Undecided("root of something other than a non-negative rational")
    num, den = _exact_root(radicand.numerator, index), _exact_root(radicand.denominator, index)
    if num is not None and den is not None:
        return _const(Fraction(num, den))
    if index != 2:
        raise _Undecided("inexact higher root")
    whole = radicand.numerator * radicand.denominator  # sqrt(p/q) = sqrt(p q) / q
    if whole > _MAX_RADICAND:
        raise _Undecided("radicand too big to factor")
    square, free = _square_part(whole)
    return _Value({(free, ()): Fraction(square, radicand.denominator)}, {_ONE: Fraction(1)})


def _exact_root(n: int, index: int) -> int | None:
    if n.bit_length() > _MAX_BITS:
        raise _Undecided("number too big")
    if index == 2:
        guess = math.isqrt(n)
    elif n.bit_length() < 200:
        guess = round(n ** (1.0 / index))
    else:
        return None
    for candidate in (guess - 1, guess, guess + 1):
        if candidate >= 0 and candidate**index == n:
            return candidate
    return None


def _primes_below(limit: int) -> tuple[int, ...]:
    sieve = bytearray([1]) * limit
    sieve[:2] = b"\x00\x00"
    for n in range(2, math.isqrt(limit) + 1):
        if sieve[n]:
            sieve[n * n :: n] = bytes(len(range(n * n, limit, n)))
    return tuple(n for n in range(limit) if sieve[n])


_SMALL_PRIMES: Final = _primes_below(10_000)
_SMALL_PRIMORIAL: Final = math.prod(_SMALL_PRIMES)  # one gcd finds which of them divide n


@functools.lru_cache(maxsize=1024)
def _square_part(n: int) -> tuple[int, int]:
    """(s, r) with n = s^2 r and r square-free, for n <= _MAX_RADICAND.

    Only the primes below 10^4 that divide n are tried (one gcd with their product finds
    them): trial division by every number up to 10^4 cost a millisecond a radicand, and
    an answer of 15 roots of 12-digit primes, restated 60 times, seconds inline."""
    square, free = 1, 1
    small = math.gcd(n, _SMALL_PRIMORIAL)  # the product of n's prime factors below 10^4
    for prime in _SMALL_PRIMES:
        if small == 1:
            break
        if small % prime:
            continue
        small //= prime
        power = 0
        while n % prime == 0:
            n //= prime
            power += 1
        square *= prime ** (power // 2)
        free *= prime ** (power % 2)
    # what is left has no factor < 10^4 and is <= 10^12: a prime, a product of two, or a square
    root = math.isqrt(n)
    if root * root == n and n > 1:
        return square * root, free
    return square, free * n


def _symbols(value: _Value) -> set[str]:
    return {name for poly in (value.num, value.den) for _, syms in poly for name, _ in syms}


def _to_float(poly: Poly) -> float:
    total = 0.0
    for (rad, syms), coef in poly.items():
        term = float(coef) * math.sqrt(rad)
        for _, power in syms:  # only pi is left in a constant
            term *= math.pi**power
        total += term
    return total


# --- comparing values --------------------------------------------------------------------

Element = _Value | _Infinity | _Tuple


def _same(a: Element, b: Element) -> bool | None:
    """Exact equality; a decimal that differs is "different" only when far from the other side."""
    if isinstance(a, _Tuple) or isinstance(b, _Tuple):
        if not (isinstance(a, _Tuple) and isinstance(b, _Tuple)):
            return False  # a number is not a pair or an interval
        if len(a.items) != len(b.items):
            return False  # a pair is not a triple
        if a.brackets != b.brackets:  # [1, 2) is not (1, 2); [1,2,3] may be (1,2,3)
            return False if len(a.items) == 2 else None
        return _all_same(zip(a.items, b.items, strict=True))
    if isinstance(a, _Infinity) or isinstance(b, _Infinity):
        return isinstance(a, _Infinity) and isinstance(b, _Infinity) and a.sign == b.sign
    variables = _symbols(a) | _symbols(b)
    variables.discard("pi")
    if variables and _symbols(a) != _symbols(b):
        return None  # x against y, or an expression against a constant: math-verify decides
    if not _poly_add(_poly_mul(a.num, b.den), _poly_mul(b.num, a.den), -1):
        return True
    if not (a.inexact or b.inexact):
        return False
    if variables:
        return None
    try:
        value_a = _to_float(a.num) / _to_float(a.den)
        value_b = _to_float(b.num) / _to_float(b.den)
    except (OverflowError, ZeroDivisionError):
        return None
    return None if _near(abs(value_a - value_b), max(abs(value_a), abs(value_b))) else False


# --- structure ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Shape:
    """kind: 'single' (a value, tuple or interval), 'set' (unordered) or 'named'."""

    kind: str
    items: tuple[Element, ...]
    names: tuple[str, ...] = ()


_MEMBERSHIP = re.compile(r"([a-zA-Z])\\in")
_NAMED = re.compile(r"([a-zA-Z](?:_\{?[A-Za-z0-9]{1,4}\}?)?)=(.+)")
_THOUSANDS = re.compile(r"-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")  # "0,001": a decimal comma?
_THOUSANDS_INSIDE = re.compile(r"\d,\d{3}(?!\d)")
_INFINITY = re.compile(r"([+-]?)\\infty")


def compare(pred: str, gold: str) -> bool | None:
    """True/False when exact evaluation settles ``pred == gold``, else None. Both ``prepare``d."""
    if len(pred) > MAX_CHARS or len(gold) > MAX_CHARS:
        return None
    one, two = _read(pred), _read(gold)
    if one is None or two is None:
        return None
    try:
        return _compare_shapes(one, two)
    except _FAILURES:
        return None


_FAILURES = (_Undecided, RecursionError, OverflowError, ValueError, ZeroDivisionError)


def approximates(decimal: str, exact: str) -> bool:
    """Whether the plain ``decimal`` (``1.414``) writes the value of ``exact`` (``prepare``d,
    ``\\sqrt{2}``: a constant, no decimal of its own) rounded or cut to its last place:
    within one unit of that place. False when ``exact`` cannot be read exactly."""
    if len(exact) > MAX_CHARS or "." in exact:
        return False
    shape = _read(exact)
    if shape is None or shape.kind != "single" or not isinstance(shape.items[0], _Value):
        return False
    value = shape.items[0]
    if value.inexact or _symbols(value) - {"pi"}:
        return False
    try:
        number = _to_float(value.num) / _to_float(value.den)
        written = float(decimal)
    except _FAILURES:
        return False
    places = len(decimal.partition(".")[2])
    return abs(number - written) <= 10.0**-places


@functools.lru_cache(maxsize=256)
def _read(text: str) -> _Shape | None:
    """``text``'s shape, None when it cannot be read exactly; read once for a row's many
    comparisons (its final answer against each other box and answer line it restates)."""
    try:
        return _shape(text)
    except _FAILURES:
        return None


def _shape(text: str) -> _Shape:
    if member := _MEMBERSHIP.match(text):  # x \in (1, 2]: the set, named x
        if _THOUSANDS_INSIDE.search(text):
            raise _Undecided("x \\in 114,200: the set {114, 200} to math-verify")
        shape = _shape(text[member.end() :])
        return _Shape(shape.kind, shape.items, shape.names or (member.group(1),))
    if _THOUSANDS.fullmatch(text):
        return _Shape("single", (_const(Fraction(text.replace(",", "")), "." in text),))
    if _THOUSANDS_INSIDE.search(text):
        raise _Undecided("a thousands separator or a list?")
    for left, right in (("\\{", "\\}"), ("{", "}")):
        if text.startswith(left) and text.endswith(right) and _encloses(text[len(left) - 1 :]):
            return _unordered(_split(text[len(left) : -len(right)]), braced=True)
    return _unordered(_split(text), braced=False)


def _unordered(items: list[str], *, braced: bool) -> _Shape:
    if len(items) == 1 and not braced:
        return _named_or("single", items)
    shape = _named_or("set", items)
    if shape.kind == "set" and len(shape.items) == 1:
        if isinstance(shape.items[0], _Tuple):
            raise _Undecided("a set holding one tuple")  # math-verify: not the tuple itself
        return _Shape("single", shape.items)  # \{3\} is the answer 3
    return shape


def _named_or(kind: str, items: list[str]) -> _Shape:
    """Read ``x=1`` items as named values: all items named with distinct names, or none."""
    named = [_NAMED.fullmatch(item) if "=" in item else None for item in items]
    if any("=" in item for item in items):
        if not all(named):
            raise _Undecided("some items named, some not")
        names = tuple(match.group(1) for match in named if match)
        values = tuple(_element(match.group(2)) for match in named if match)
        if len(names) > 1 and len(set(names)) == 1:
            return _Shape("set", values, names[:1])  # x=-4, x=2: the solutions of x
        if len(set(names)) != len(names):
            raise _Undecided("a name repeated among others")
        return _Shape("named", values, names)
    return _Shape(kind, tuple(_element(item) for item in items))


def _element(text: str) -> Element:
    if "=" in text:
        raise _Undecided("an equation")
    if text[:1] in "([" and text[-1:] in ")]" and _encloses(text):
        items = _split(text[1:-1])
        if len(items) > 1:
            return _Tuple(text[0] + text[-1], tuple(_element(item) for item in items))
    if infinity := _INFINITY.fullmatch(text):
        return _Infinity(-1 if infinity.group(1) == "-" else 1)
    if "\\infty" in text:
        raise _Undecided("infinity inside an expression")
    value = _Parser(text).parse()
    variables = _symbols(value) - {"pi"}
    if len(variables) > 1 or variables & _RESERVED:
        raise _Undecided("several variables, e or i")
    return value


def _encloses(text: str) -> bool:
    """Whether the first bracket closes at the very end (so ``(1)(2)`` is not a tuple)."""
    depth = 0
    for i, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0 and i < len(text) - 1:
            return False
    return depth == 0


def _split(text: str) -> list[str]:
    """Items at bracket depth 0, separated by ``,`` or ``;`` (a comma that had a space)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if char in ",;" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if any(not p for p in parts):
        raise _Undecided("empty item")
    return parts


def _compare_shapes(pred: _Shape, gold: _Shape) -> bool | None:
    if pred.kind == "named" or gold.kind == "named":
        return _compare_named(pred, gold)
    if pred.names and gold.names and pred.names != gold.names:
        return None  # x \in [1, 2] against y \in [1, 2]; x=1, x=2 against y=1, y=2
    if pred.kind != gold.kind:
        return _compare_kinds(pred, gold)
    if pred.kind == "single":
        return _same(pred.items[0], gold.items[0])
    return _compare_sets(list(pred.items), list(gold.items))


def _compare_kinds(pred: _Shape, gold: _Shape) -> bool | None:
    """One item against a set of several: different, when they are surely several and the
    one is not a tuple of plain values ("(1, 2)" against "1, 2": math-verify decides)."""
    one, several = (pred, gold) if pred.kind == "single" else (gold, pred)
    if one.kind != "single" or several.kind != "set" or not _distinct(list(several.items)):
        return None
    (item,) = one.items
    if isinstance(item, _Tuple) and not any(isinstance(i, _Tuple) for i in several.items):
        return None
    return False


def _compare_named(pred: _Shape, gold: _Shape) -> bool | None:
    if pred.kind == gold.kind == "named":
        if sorted(pred.names) != sorted(gold.names):
            return None
        by_name = dict(zip(gold.names, gold.items, strict=True))
        return _all_same(
            (item, by_name[name]) for name, item in zip(pred.names, pred.items, strict=True)
        )
    named, other = (pred, gold) if pred.kind == "named" else (gold, pred)
    if len(named.items) == 1 and other.kind == "single":
        item = named.items[0]
        if isinstance(item, _Value) and named.names[0] in _symbols(item):
            # "x = 2x + 1" is an equation in x, not the value 2x + 1 (math-verify: equal)
            return False if named is pred else None
        return _same(pred.items[0], gold.items[0])  # x = 3 against 3
    return None  # x=1, y=2 against (1, 2): math-verify decides


def _compare_sets(pred: list[Element], gold: list[Element]) -> bool | None:
    if not (_distinct(pred) and _distinct(gold)):
        return None  # math-verify's sets drop repeats: it decides
    unmatched = list(gold)
    for item in pred:
        match = next((g for g in unmatched if _same(item, g) is True), None)
        if match is None:
            break
        unmatched.remove(match)
    else:
        if not unmatched:
            return True
    if any(_same(p, g) is None for p in pred for g in gold):
        return None  # a decimal near an item: math-verify's rounding decides
    return False


def _distinct(items: list[Element]) -> bool:
    """No two items equal, nor near enough to be called equal by rounding."""
    return all(
        _same(items[i], items[j]) is False
        for i in range(len(items))
        for j in range(i + 1, len(items))
    )


def _all_same(pairs: Iterable[tuple[Element, Element]]) -> bool | None:
    results = [_same(a, b) for a, b in pairs]
    if any(r is False for r in results):
        return False
    return True if all(results) else None


# --- parsing -----------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\\(?:frac|sqrt|pi|cdot|times|div)(?![a-zA-Z])"
    r"|\d+(?:\.\d*)?(?:\\overline\{\d+\})?|\.\d+|[a-zA-Z]|[-+*/^(){}\[\]]"
)
_PRODUCT = ("*", "\\cdot", "\\times")
_INTEGER = re.compile(r"\d+")
_MIXED_EDGES = (None, "+", "-", "(", ")", "{", "}")  # what may stand around a mixed number


def _tokenize(text: str) -> list[str]:
    tokens, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise _Undecided(f"unknown symbol at {text[at : at + 10]!r}")
        tokens.append(match.group())
        at = match.end()
    return tokens


class _Parser:
    """expr := term (('+'|'-') term)*; term := unary (('*'|'/'|implicit) unary)*;
    unary := ('-'|'+') unary | power; power := atom ('^' exponent)?"""

    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.at = 0

    def parse(self) -> _Value:
        value = self.expr()
        if self.at != len(self.tokens):
            raise _Undecided(f"unexpected {self.peek()!r}")
        return value

    def peek(self, ahead: int = 0) -> str | None:
        at = self.at + ahead
        return self.tokens[at] if 0 <= at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise _Undecided(f"expected {expected!r}, got {token!r}")
        self.at += 1
        return token

    def expr(self) -> _Value:
        value = self.term()
        while self.peek() in ("+", "-"):
            sign = 1 if self.take() == "+" else -1
            value = _add(value, self.term(), sign)
        return value

    def term(self) -> _Value:
        value = self.unary()
        divided = False
        while (token := self.peek()) is not None:
            if token in _PRODUCT:
                self.take()
                value = _mul(value, self.unary())
            elif token in ("/", "\\div"):
                self.take()
                value, divided = _div(value, self.unary()), True
            elif token in ("(", "\\frac", "\\sqrt", "\\pi") or token.isalpha():
                value = self.implicit(value, token, divided)
            else:
                return value  # a number right after a factor ("x2", "2{3}"): the caller refuses
        return value

    def implicit(self, left: _Value, token: str, divided: bool) -> _Value:
        """``2\\sqrt{7}``, ``5\\pi``, ``(x+1)(x+2)``; refused where readers differ: ``1/2x``,
        ``(1)(2)`` (math-verify reads a product of constant groups otherwise) and a letter
        before one parenthesised token (``x(2)``: a function's value to math-verify)."""
        if divided:
            raise _Undecided("implicit product after a division")
        if token == "(" and (self.peek(-1) or "").isalpha() and self.peek(2) == ")":
            raise _Undecided("x(2), f(x): math-verify reads a function applied to one token")
        right = self.power()
        if token == "(" and not (_symbols(left) | _symbols(right)) - {"pi"}:
            raise _Undecided("juxtaposed constant groups")
        return _mul(left, right)

    def unary(self) -> _Value:
        if self.peek() in ("-", "+"):
            negate = self.take() == "-"
            operand = self.unary()
            return _mul(_const(Fraction(-1)), operand) if negate else operand
        return self.power()

    def power(self) -> _Value:
        base = self.atom()
        if self.peek() != "^":
            return base
        self.take()
        if self.peek() == "{":
            exponent = self.group()
        else:
            token = self.take()
            if not (len(token) == 1 and token.isalnum()):
                raise _Undecided("unbraced exponent longer than one character")  # 2^10
            # one character, never the head of a mixed number: 4^2\frac{1}{2} is 8, not 32
            exponent = _number(token) if token.isdigit() else _symbol(token)
        if self.peek() == "^":
            raise _Undecided("exponent tower")
        return _power(base, exponent)

    def group(self) -> _Value:
        self.take("{")
        value = self.expr()
        self.take("}")
        return value

    def atom(self) -> _Value:
        token = self.take()
        if token in ("(", "{"):
            if token == "(":
                value = self.expr()
                self.take(")")
            else:
                self.at -= 1
                value = self.group()
            if self.peek() == "\\frac" and _rational(value) is not None:
                # "{2}\frac{1}{4}", "(2)\frac14": math-verify reads a mixed number (9/4)
                raise _Undecided("a number in a group before a fraction")
            return value
        if token == "\\frac":
            return _div(self.argument(), self.argument())
        if token == "\\sqrt":
            return self.sqrt()
        if token == "\\pi":
            return _symbol("pi")
        if len(token) == 1 and token.isalpha():
            return _symbol(token)
        if token[0].isdigit() or token[0] == ".":
            return self.number(token)
        raise _Undecided(f"unexpected {token!r}")

    def argument(self) -> _Value:
        """A ``\\frac``/``\\sqrt`` argument: a braced group (normalise braces ``\\frac12``)."""
        if self.peek() != "{":
            raise _Undecided("unbraced argument")
        return self.group()

    def sqrt(self) -> _Value:
        index = 2
        if self.peek() == "[":
            self.take("[")
            token = self.take()
            self.take("]")
            if not _INTEGER.fullmatch(token):
                raise _Undecided("root index is not an integer")
            index = int(token)
        return _root(self.argument(), index)

    def number(self, token: str) -> _Value:
        if token.endswith(".") and self.peek() is not None:
            # "2. \frac14", "3.\sqrt{2}": an item's number then its answer (math-verify
            # reads the 1/4), or a mixed number cut; never the product 2 times 1/4
            raise _Undecided("a number ending in a point, then more")
        if _INTEGER.fullmatch(token) and self.peek() == "\\frac":
            return self.mixed(int(token))
        return _number(token)

    def mixed(self, whole: int) -> _Value:
        """``2\\frac{1}{4}`` is two and a quarter (9/4), as math-verify and people read it;
        ``2\\frac{\\sqrt{3}}{2}`` is a product. A mixed number standing among factors
        (``2\\frac{1}{4}x``, ``3\\cdot 2\\frac{1}{4}``) is read both ways: refused."""
        parts = self.tokens[self.at : self.at + 7]
        shape_ok = len(parts) == 7 and parts[1::3] == ["{", "{"] and parts[3::3] == ["}", "}"]
        if not shape_ok or not (_INTEGER.fullmatch(parts[2]) and _INTEGER.fullmatch(parts[5])):
            return _const(Fraction(whole))
        num, den = int(parts[2]), int(parts[5])
        if not 0 < num < den:
            raise _Undecided("an improper mixed number")
        before = self.tokens[self.at - 2] if self.at >= 2 else None
        self.at += 7
        if before not in _MIXED_EDGES or self.peek() not in _MIXED_EDGES:
            raise _Undecided("a mixed number among factors")
        return _const(whole + Fraction(num, den))


def _number(token: str) -> _Value:
    """``12``, ``0.5`` (inexact: a decimal), ``1.\\overline{6}`` (exactly 5/3)."""
    if "\\overline" not in token:
        return _const(Fraction(token.rstrip(".") or "0"), "." in token)
    head, repeat = token.split("\\overline{")
    repeat = repeat.rstrip("}")
    if "." not in head:  # 1\overline{2}: digits under a bar (a numeral), not 1.222...
        raise _Undecided("a bar over digits with no decimal point")
    whole, _, decimals = head.partition(".")
    base = Fraction(whole + "." + decimals) if decimals else Fraction(whole)
    return _const(base + Fraction(int(repeat), (10 ** len(repeat) - 1) * 10 ** len(decimals)))
