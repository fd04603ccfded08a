"""Deciding MATH answers by evaluating them, before sympy is ever imported.

Most answers that are not plain numbers are still *constant expressions* (``2\\sqrt{7}``,
``\\frac{5\\pi}{7}``), one-variable polynomials (``x^2-x-30``), or lists of those:
solution sets (``-4, 9``), tuples and intervals (``(-\\infty, -8)``). For these, a tiny
recursive-descent parser over a restricted LaTeX grammar evaluates both sides in
floating point and compares:

* equal within 1e-9 (relative) at every point: equal. One-variable expressions are
  compared at three fixed, irrational-looking points (polynomial identity testing: two
  different polynomials of modest degree agree at all three only by accident);
* different by more than 1e-6 (relative) anywhere: different;
* anything else (in between, unparsable, variables that differ, overflow): undecided,
  and math-verify decides in a worker.

Structure is compared first: sets and bare comma lists are unordered (MATH's solution
sets), tuples and intervals are ordered and their brackets must match.

Bounded: inputs are at most ``MAX_CHARS`` long, the parser is linear, and evaluation
is float arithmetic (a power tower overflows to an error at once, never to bignums).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Final

__all__ = ["compare"]

MAX_CHARS: Final = 300
_POINTS: Final = (1.2345678912, -0.718281828459, 2.4142135623)
_EQUAL: Final = 1e-9
_DIFFERENT: Final = 1e-6

_TOKEN = re.compile(
    r"\\(?:frac|sqrt|pi|cdot|times|infty|div)(?![a-zA-Z])|\d+(?:\.\d*)?(?:\\overline\{\d+\})?|\.\d+|[a-zA-Z]|[-+*/^(){}\[\]!,]"
)


class _Undecided(Exception):
    """The expression is outside the grammar, or evaluation failed."""


def compare(pred: str, gold: str) -> bool | None:
    """True/False when evaluation settles ``pred == gold``, else None. Both normalised."""
    if len(pred) > MAX_CHARS or len(gold) > MAX_CHARS:
        return None
    try:
        return _compare_structures(_structure(pred), _structure(gold))
    except (_Undecided, RecursionError):
        return None


# --- structure ------------------------------------------------------------------------


def _shape(text: str) -> tuple[str, str, list[str]]:
    """(kind, brackets, elements): kind is 'single', 'list' (unordered) or 'ordered'."""
    text = re.sub(r"^[a-zA-Z]\\in", "", text)
    if "or" in text or "and" in text:
        parts = re.split(r"or|and", text)
        return "list", "", [_drop_variable(p) for p in parts if p]
    if text.startswith("\\{") and text.endswith("\\}"):
        return "list", "", _split_commas(text[2:-2])
    if text[:1] in "([" and text[-1:] in ")]" and _encloses(text):
        inner = _split_commas(text[1:-1])
        if len(inner) > 1:
            return "ordered", text[0] + text[-1], inner
    elements = _split_commas(text)
    if len(elements) > 1:
        return "list", "", [_drop_variable(e) for e in elements]
    return "single", "", [_drop_variable(text)]


def _structure(text: str) -> tuple[str, str, list[str]]:
    kind, brackets, items = _shape(text)
    if kind == "list" and len(items) == 1:
        return "single", "", items  # {3} is the answer 3
    return kind, brackets, items


def _drop_variable(text: str) -> str:
    """``x=3`` is the answer 3 (MATH writes solutions both ways)."""
    return text[2:] if len(text) > 2 and text[0].isalpha() and text[1] == "=" else text


def _encloses(text: str) -> bool:
    """Whether the first bracket closes at the very end (so ``(1)(2)`` is not a tuple)."""
    depth = 0
    for i, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0 and i < len(text) - 1:
            return False
    return depth == 0


def _split_commas(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if any(not p for p in parts):
        raise _Undecided("empty element")
    return parts


def _compare_structures(
    pred: tuple[str, str, list[str]], gold: tuple[str, str, list[str]]
) -> bool | None:
    pred_kind, pred_brackets, pred_items = pred
    gold_kind, gold_brackets, gold_items = gold
    if pred_kind != gold_kind:
        if {pred_kind, gold_kind} == {"ordered", "list"}:
            return None  # "(1, 2)" against "1, 2": a pair or a solution set? math-verify decides
        return False  # one value against several
    if len(pred_items) != len(gold_items):
        return False
    if pred_kind == "ordered":
        if pred_brackets != gold_brackets:
            return False  # [1, 2) is not (1, 2)
        return _all_decided(_equal(p, g) for p, g in zip(pred_items, gold_items, strict=True))
    if pred_kind == "single":
        return _equal(pred_items[0], gold_items[0])
    return _same_multiset(pred_items, gold_items)


def _all_decided(decisions: Iterator[bool | None]) -> bool | None:
    results = list(decisions)
    if any(r is False for r in results):
        return False
    return True if all(results) else None


def _same_multiset(pred: list[str], gold: list[str]) -> bool | None:
    values_pred = sorted(_values(p) for p in pred)
    values_gold = sorted(_values(g) for g in gold)
    return _all_decided(_close(a, b) for a, b in zip(values_pred, values_gold, strict=True))


# --- evaluation -----------------------------------------------------------------------


def _equal(pred: str, gold: str) -> bool | None:
    return _close(_values(pred), _values(gold))


def _values(text: str) -> tuple[str, tuple[float, ...]]:
    """(variable or "", the value at each evaluation point; one value when constant)."""
    tree, variables = _Parser(text).parse()
    if len(variables) > 1:
        raise _Undecided("several variables")
    if not variables:
        return "", (_finite(tree({})),)
    (name,) = variables
    return name, tuple(_finite(tree({name: x})) for x in _POINTS)


def _finite(value: float) -> float:
    if isinstance(value, complex) or math.isnan(value):
        raise _Undecided("not a real number")
    return value


def _close(
    left: tuple[str, tuple[float, ...]], right: tuple[str, tuple[float, ...]]
) -> bool | None:
    (name_a, a), (name_b, b) = left, right
    if name_a != name_b:
        return None  # a constant against an expression in x, or x against y: math-verify decides
    verdicts = []
    for x, y in zip(a, b, strict=True):
        if math.isinf(x) or math.isinf(y):
            verdicts.append(x == y)
            continue
        scale = max(1.0, abs(x), abs(y))
        gap = abs(x - y) / scale
        verdicts.append(True if gap <= _EQUAL else False if gap > _DIFFERENT else None)
    return _all_decided(iter(verdicts))


Node = Callable[[dict[str, float]], float]


class _Parser:
    """expr := term (('+'|'-') term)*; term := unary (('*'|'/'|implicit) unary)*;
    unary := ('-'|'+') unary | power; power := atom ('^' unary-atom)?"""

    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.at = 0
        self.variables: set[str] = set()

    def parse(self) -> tuple[Node, set[str]]:
        node = self.expr()
        if self.at != len(self.tokens):
            raise _Undecided(f"unexpected {self.peek()!r}")
        return node, self.variables

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise _Undecided(f"expected {expected!r}, got {token!r}")
        self.at += 1
        return token

    def expr(self) -> Node:
        node = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            right = self.term()
            node = _binary(op, node, right)
        return node

    def term(self) -> Node:
        node = self.unary()
        while True:
            token = self.peek()
            if token in ("*", "\\cdot", "\\times", "/", "\\div"):
                self.take()
                op = "/" if token in ("/", "\\div") else "*"
                node = _binary(op, node, self.unary())
            elif token is not None and _starts_atom(token):
                node = _binary("*", node, self.power())  # implicit: 2\sqrt{7}, 5\pi, (x+1)(x+2)
            else:
                return node

    def unary(self) -> Node:
        if self.peek() in ("-", "+"):
            sign = self.take()
            operand = self.unary()
            return (lambda env: -operand(env)) if sign == "-" else operand
        return self.power()

    def power(self) -> Node:
        base = self.atom()
        if self.peek() == "!":
            raise _Undecided("factorial")
        if self.peek() == "^":
            self.take()
            exponent = self.group() if self.peek() == "{" else self.atom()
            return _binary("^", base, exponent)
        return base

    def group(self) -> Node:
        self.take("{")
        node = self.expr()
        self.take("}")
        return node

    def atom(self) -> Node:
        token = self.take()
        if token == "(":
            node = self.expr()
            self.take(")")
            return node
        if token == "{":
            self.at -= 1
            return self.group()
        if token == "\\frac":
            num, den = self.group_or_digit(), self.group_or_digit()
            return _binary("/", num, den)
        if token == "\\sqrt":
            index = None
            if self.peek() == "[":
                self.take("[")
                index = self.expr()
                self.take("]")
            radicand = self.group_or_digit()
            if index is None:
                return lambda env: _root(radicand(env), 2.0)
            return lambda env: _root(radicand(env), index(env))
        if token == "\\pi":
            return lambda env: math.pi
        if token == "\\infty":
            return lambda env: math.inf
        if len(token) == 1 and token.isalpha():
            self.variables.add(token)
            return lambda env: env[token]
        if token[0].isdigit() or token[0] == ".":
            value = _number(token)
            return lambda env: value
        raise _Undecided(f"unexpected {token!r}")

    def group_or_digit(self) -> Node:
        """``\\frac12`` and ``\\sqrt3``: an argument may be a single digit without braces."""
        if self.peek() == "{":
            return self.group()
        token = self.take()
        if token.isdigit():
            value = float(token[0])
            if len(token) > 1:  # "\frac12": the first digit is the numerator only
                self.tokens.insert(self.at, token[1:])
            return lambda env: value
        if (len(token) == 1 and token.isalpha()) or token == "\\pi":
            self.at -= 1
            return self.atom()
        raise _Undecided("unbraced argument")


def _tokenize(text: str) -> list[str]:
    tokens, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise _Undecided(f"unknown symbol at {text[at : at + 10]!r}")
        tokens.append(match.group())
        at = match.end()
    return tokens


def _starts_atom(token: str) -> bool:
    return (
        token in ("(", "{", "\\frac", "\\sqrt", "\\pi", "\\infty")
        or token[0].isdigit()
        or token[0] == "."
        or (len(token) == 1 and token.isalpha())
    )


def _number(token: str) -> float:
    """``12``, ``0.5``, ``1.\\overline{6}`` (a repeating decimal: 5/3)."""
    if "\\overline" not in token:
        return float(token)
    head, repeat = token.split("\\overline{")
    repeat = repeat.rstrip("}")
    whole, _, decimals = head.partition(".")
    base = float(whole + "." + decimals) if decimals else float(whole)
    return base + float(repeat) / (10 ** len(repeat) - 1) / 10 ** len(decimals)


def _binary(op: str, left: Node, right: Node) -> Node:
    if op == "+":
        return lambda env: left(env) + right(env)
    if op == "-":
        return lambda env: left(env) - right(env)
    if op == "*":
        return lambda env: left(env) * right(env)
    if op == "/":
        return lambda env: _divide(left(env), right(env))
    return lambda env: _pow(left(env), right(env))


def _divide(a: float, b: float) -> float:
    if b == 0:
        raise _Undecided("division by zero")
    return a / b


def _pow(base: float, exponent: float) -> float:
    if abs(exponent) > 1000:
        raise _Undecided("huge exponent")
    try:
        result = base**exponent
    except (OverflowError, ZeroDivisionError) as exc:
        raise _Undecided(str(exc)) from exc
    if isinstance(result, complex):
        raise _Undecided("complex power")
    return result


def _root(value: float, index: float) -> float:
    if value < 0 or index <= 0:
        raise _Undecided("root of a negative number")
    return value ** (1.0 / index)
