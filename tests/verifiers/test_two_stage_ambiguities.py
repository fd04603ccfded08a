"""guards: two-stage parsing (rewardkit.verifiers._two_stage): the parses of ANTLR's
default LL mode, and a caller's time limit let through."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest

from _support.parse_child import differing
from rewardkit.verifiers import _two_stage

# Inputs where the grammar is ambiguous or only full-context (LL) prediction parses:
# sets against numbers with commas, intervals, relations, \left/\right, implicit products,
# subscripts, primes, \frac without braces, matrices, mixed numbers. Each compared as
# math-verify reads it with ANTLR's default LL and with two-stage parsing.
AMBIGUOUS = [
    "1,2,3", "3,333", "3,333,333", "1,000.5", "12,345.67", "0,5", "1\\,000", "1{,}000",
    "\\{1, 2, 3\\}", "(1,2)", "[1,2]", "(1,2]", "(-\\infty,3]\\cup[5,\\infty)", "(1, 2), (3, 4)",
    "x = 1, y = 2", "x=1 \\text{ or } x=2", "a \\le b \\le c", "1<x<3", "x \\in (0,1)",
    "a=b=c=20", "x \\neq 3", "\\left(1,2\\right)", "\\left[ 0, 1 \\right)", "\\left| x \\right|",
    "|x-1|+|x+1|", "\\left(\\frac{1}{2}\\right)^2", "2xy", "2\\pi r", "x y z", "(2)(3)",
    "x(x+1)", "f(x)=x^2", "x_1 + x_2", "a_{n+1}", "x_1^2", "f'(x)", "f''(x)", "a'_1",
    "\\frac12", "\\frac 1 2", "\\frac{1}2", "\\frac1{2}", "\\sqrt3", "\\sqrt[3]{2}",
    "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ -2 \\end{pmatrix}",
    "\\sin 2x", "\\sin^2 x + \\cos^2 x", "\\log_2 8", "\\cos^{-1} x", "2^3^2", "3/4/5",
    "1, 2, \\ldots, n", "\\{x \\mid x>0\\}", "A \\setminus B", "x = \\pm 2", "2\\frac{1}{2}",
    "3 \\frac{1}{4}", "\\frac{1}{2}x", "x\\frac{1}{2}", "10\\%", "30^{\\circ}", "1+i",
    "\\frac{10a^3}{55a^2}=\\frac{2\\cdot3}{11}", "y'", "x_1,x_2", "|x|<2", "\\pi r^2",
]  # fmt: skip


def test_two_stage_reads_grammar_ambiguities_as_ll_does() -> None:
    """The same parses (also held on 1,387 generated inputs)."""
    texts = [f"${t}$" for t in AMBIGUOUS] + [f"\\boxed{{{t}}}" for t in AMBIGUOUS]
    assert differing(texts, ["_two_stage"]) == []


class _Alarm(Exception):
    """What a caller's own time limit raises (math-verify's TimeoutException is one)."""


def test_two_stage_lets_a_callers_time_limit_through() -> None:
    """Only latex2sympy's syntax errors (plain Exception) and RecursionError make the SLL
    stage retry in LL mode: a caller's time limit firing mid-parse (math-verify's
    parsing_timeout: a SIGALRM handler raising an Exception) must not be swallowed, or
    the LL parse runs on with no limit (seconds more)."""
    from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy

    assert _two_stage.install()
    # Long enough that SLL takes a while before the syntax error at the end even with the
    # parser's tables warm (1,500 terms: about 0.1 s), so the alarm fires inside it.
    text = "+".join(f"x_{{{i}}}^{{2}}" for i in range(1500)) + "+"

    rung: list[str] = []

    def ring(signum: int, frame: Any) -> None:
        # Once, and only inside the parser's own code: the timer ticks every 5 ms, since
        # an alarm that lands while the garbage collector runs some other object's
        # finalizer (a __del__) is swallowed there (Python ignores exceptions raised in
        # finalizers; seen once in CI, the parse then ran on to its syntax error). One
        # alarm in all, so a stage that retried on it would run LL to the syntax error.
        in_parser = frame is not None and any(
            part in frame.f_code.co_filename for part in ("antlr4", "latex2sympy")
        )
        if in_parser and not rung:
            rung.append(frame.f_code.co_name)
            raise _Alarm("time is up")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 0.005, 0.005)
    started = time.perf_counter()
    try:
        with pytest.raises(_Alarm):
            _Latex2Sympy().parse(text)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.perf_counter() - started < 2.0
