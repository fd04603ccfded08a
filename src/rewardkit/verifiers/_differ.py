"""Showing two parsed answers different without sympy's ``simplify``, in a worker.

math-verify compares two plain expressions (no relation, set, tuple, matrix or lone
symbol on either side) in three steps: as written (``a == b``), numerically when a
side is a number, then ``simplify(a - b).is_zero``. For a wrong answer the last step
does all the work and is most of what the row costs (``simplify`` on ``E*c*o*r*r*t -
17/32``, on a radical against a degree). :func:`surely_different` answers True only
where math-verify's answer is surely False:

* both sides take that path (the same type tests math-verify makes; an equation
  against a plain gold is its last right side, as math-verify unwraps it), and its
  first two steps, run here with math-verify's own functions and defaults, say "not
  equal";
* ``a - b``, evaluated at one point with 30 digits, is a finite number clearly away
  from zero. A difference that is not zero at some point is not zero everywhere, and
  ``simplify`` only rewrites an expression into an equal one, so it cannot reach 0.
  The value must be one sympy's ``evalf`` vouches for: evaluated with ``strict=True``
  (it raises where cancellation leaves fewer correct digits than asked, as in
  ``cosh(1000x)**2 - sinh(1000x)**2 - 1``, which it would otherwise return as
  ``-0.e+244``), and built only from operations whose accuracy ``evalf`` tracks
  (sums, products, powers, exp, log, sin, cos, tan, atan, Abs). A function it only
  calls (Max, sign, cosh, gamma...) takes a garbage argument at its word.

The point gives each variable a value it may take: math-verify's variables are real
(or carry no assumption), and the values are positive irrational-looking reals, so
no identity that holds only for integers or negatives can be missed. Three more shapes:
a percent, which latex2sympy writes as ``25*UnevaluatedExpr(1/100)``, is evaluated at
its exact value; an indefinite integral against a gold without its variable is
different when its integrand is clearly nonzero at the point (the derivative of the
difference: no constant); a set of several elements against a gold is different when
one element surely is (:func:`_set_differs`). Anything else (other assumptions, definite integrals, sums,
limits, derivatives, undefined functions, a value that does not evaluate to a number)
answers False: math-verify decides, as before. Nothing here imports sympy until a worker calls it.
"""

from __future__ import annotations

import functools
import math
from typing import Any

__all__ = ["surely_different"]

_DIGITS = 30
_MAX_EXACT_POWER = 1000
"""The largest integer power of the point computed exactly (x^1000: 53,000 bits)."""
_CLEARLY_NONZERO = 1e-9
"""Relative to the larger side: evalf's error at 30 digits is far below this."""
_MAX_VARIABLES = 32
# Distinct positive values with no small rational relation between them: sqrt(p) / 3
# for the first primes (a word such as "Correct" is a product of many variables).
_PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73]
_PRIMES += [79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131]
_POINT = tuple(math.sqrt(p) / 3 for p in _PRIMES)
_MATH_VERIFY_ROUNDING, _MATH_VERIFY_PRECISION = 6, 15  # math-verify's verify() defaults


def surely_different(gold: Any, pred: Any) -> bool:
    """True only when math-verify's ``verify([gold], [pred])`` is surely False."""
    try:
        return _different(gold, pred)
    except Exception:  # any doubt leaves the pair to math-verify
        return False


def _different(gold: Any, pred: Any) -> bool:
    sympy, grader = _modules()
    if not _plain(gold, sympy):
        return False
    if isinstance(pred, sympy.FiniteSet) and len(pred) >= 2:
        return _set_differs(gold, pred, sympy)
    if grader.is_equation(pred):
        pred = grader.take_last_relation(pred).rhs  # "x = 5" against 5: as math-verify does
    if isinstance(pred, sympy.Integral):
        return _antiderivative_differs(gold, pred, sympy)
    if not _plain(pred, sympy):
        return False
    if not (_tracked(gold, sympy) and _tracked(pred, sympy)):
        return False
    symbols = gold.free_symbols | pred.free_symbols
    if len(symbols) > _MAX_VARIABLES or not all(_may_take_the_point(s) for s in symbols):
        return False
    if grader.sympy_str_eq(gold, pred) or grader.sympy_numeric_eq(
        gold, pred, _MATH_VERIFY_ROUNDING, _MATH_VERIFY_PRECISION
    ):
        return False  # math-verify's own first steps call them equal
    gold, pred = _exact(gold, sympy), _exact(pred, sympy)
    point = dict(zip(sorted(symbols, key=str), _POINT, strict=False))
    difference = _value(gold - pred, point, sympy)
    scale = max(abs(_value(gold, point, sympy)), abs(_value(pred, point, sympy)))
    return abs(difference) > _CLEARLY_NONZERO * scale


def _set_differs(gold: Any, items: Any, sympy: Any) -> bool:
    """A set of two or more elements against a plain gold (``{dx, dy, E*a*m*n*x}``
    against 2, from a passage that lists variables).

    math-verify compares the set with ``{gold}``: sizes differ, so only sympy showing
    their symmetric difference empty makes them equal, which needs every element shown
    equal to the gold (``{2, 2.0}`` is, against 2). One element surely not the gold keeps
    it nonempty: one :func:`_different` shows different, or a lone variable against a
    gold without any (sympy cannot show ``a = 5/11``). The symmetric difference itself is
    what costs there (tens of milliseconds on symbolic elements).
    """
    constant = not gold.free_symbols
    return any(
        (constant and isinstance(item, sympy.Symbol) and _may_take_the_point(item))
        or _different(gold, item)
        for item in items.args
    )


def _antiderivative_differs(gold: Any, integral: Any, sympy: Any) -> bool:
    """An indefinite integral ``F = \\int f\\,dx`` against a gold without ``x``.

    math-verify integrates it (``doit``, then ``simplify``): the slowest comparison there
    is (a quarter of a second for ``\\int \\frac{3x}{x^2+1}\\,dx``). ``F - gold``
    has ``f`` for derivative in ``x``: where ``f`` is clearly nonzero at a point, ``F -
    gold`` is no constant, so no rewriting makes it 0, and no antiderivative of ``f``
    equals the gold. A definite or multiple integral, or an integrand that is not a plain
    tracked expression, is left to math-verify.
    """
    if len(integral.limits) != 1 or len(integral.limits[0]) != 1:
        return False
    (variable,) = integral.limits[0]
    integrand = _exact(integral.function, sympy)
    if variable in gold.free_symbols or not _evaluable(integrand, sympy):
        return False
    if not (_tracked(gold, sympy) and _tracked(integrand, sympy)):
        return False
    symbols = integrand.free_symbols
    if len(symbols) > _MAX_VARIABLES or not all(_may_take_the_point(s) for s in symbols):
        return False
    point = dict(zip(sorted(symbols, key=str), _POINT, strict=False))
    return abs(_value(integrand, point, sympy)) > _CLEARLY_NONZERO


@functools.cache
def _modules() -> tuple[Any, Any]:
    import sympy
    from math_verify import grader

    return sympy, grader


def _plain(expr: Any, sympy: Any) -> bool:
    """An expression that reaches math-verify's last comparison step unchanged."""
    return not isinstance(expr, sympy.Symbol) and _evaluable(expr, sympy)


def _evaluable(expr: Any, sympy: Any) -> bool:
    """A scalar expression with nothing that only ``doit`` or math-verify could evaluate."""
    if not isinstance(expr, sympy.Expr) or isinstance(expr, sympy.MatrixExpr):
        return False
    opaque = (sympy.Integral, sympy.Sum, sympy.Product, sympy.Limit, sympy.Derivative)
    return not expr.has(*opaque) and not expr.atoms(sympy.core.function.AppliedUndef)


def _tracked(expr: Any, sympy: Any) -> bool:
    """Every node one whose error ``evalf(strict=True)`` bounds (an own rule in evalf),
    or an exact number kept unevaluated (:func:`_exact`)."""
    leaves = (sympy.Symbol, sympy.Number, sympy.NumberSymbol, type(sympy.I))
    return all(
        isinstance(node, leaves)
        or type(node) in _tracked_operations()
        or _exact_unevaluated(node, sympy)
        for node in sympy.preorder_traversal(expr)
    )


def _exact_unevaluated(node: Any, sympy: Any) -> bool:
    """``UnevaluatedExpr`` of a rational: how latex2sympy writes a percent sign
    (``25\\%`` is ``25*UnevaluatedExpr(1/100)``). evalf stops at the wrapper."""
    return isinstance(node, sympy.UnevaluatedExpr) and isinstance(node.args[0], sympy.Rational)


def _exact(expr: Any, sympy: Any) -> Any:
    """``expr`` with each exact unevaluated rational replaced by the rational itself: the
    same value, which evalf can reach. ``simplify`` may read the wrapper as an opaque
    atom, but a difference that is not zero at its one value is not zero for every value
    an atom could take, so it cannot reach 0 either."""
    wrapped = [
        node for node in expr.atoms(sympy.UnevaluatedExpr) if _exact_unevaluated(node, sympy)
    ]
    return expr.xreplace({node: node.args[0] for node in wrapped}) if wrapped else expr


@functools.cache
def _tracked_operations() -> frozenset[type]:
    sympy, _ = _modules()
    return frozenset(
        {sympy.Add, sympy.Mul, sympy.Pow, sympy.exp, sympy.log, sympy.sin, sympy.cos}
        | {sympy.tan, sympy.atan, sympy.Abs}
    )


def _may_take_the_point(symbol: Any) -> bool:
    """A variable with no assumption, or only that it is real (math-verify's)."""
    return set(symbol.assumptions0.items()) <= _real_assumptions()


@functools.cache
def _real_assumptions() -> set[tuple[str, bool]]:
    sympy, _ = _modules()
    return set(sympy.Symbol("x", real=True).assumptions0.items())


def _value(expr: Any, point: dict[Any, float], sympy: Any) -> complex:
    """``expr`` at ``point``; raises when it is not a finite number there.

    The point goes in as exact rationals (each float's own value), so that the sums,
    products and integer powers of it are computed exactly, and ``evalf`` evaluates what
    is left once. Given the point as ``subs``, ``evalf`` evaluated each nested term again
    at a rising precision: exponential in the depth (a continued fraction
    ``\\frac{1}{1+\\frac{1}{1+...x}}`` 20 deep took 78 s; math-verify alone, 20 ms).
    An integer power past :data:`_MAX_EXACT_POWER` is not computed exactly: the pair is
    left to math-verify."""
    if any(
        power.exp.is_Integer and abs(power.exp) > _MAX_EXACT_POWER
        for power in expr.atoms(sympy.Pow)
    ):
        raise ValueError("a power too large to compute exactly")
    exact = {symbol: sympy.Rational(value) for symbol, value in point.items()}
    value = complex(expr.xreplace(exact).evalf(_DIGITS, strict=True))
    if not (math.isfinite(value.real) and math.isfinite(value.imag)):
        raise ValueError("not finite at the point")
    return value
