"""guards: _numeric.py, the exact fast path: (pred, gold, expected), None for "math-verify decides".

Every decided row agrees with math-verify (see test_equivalence_tables.py for the rows
taken from public equivalence tests, test_fastpath_soundness.py for the property test).
"""

from __future__ import annotations

import time

import pytest

from rewardkit.verifiers._numeric import compare, prepare
from rewardkit.verifiers.math import MathVerifier

CASES = [
    # constants: radicals, pi, fractions, repeating decimals
    (r"\sqrt{28}", r"2\sqrt{7}", True),
    (r"28", r"2\sqrt{7}", False),
    (r"\frac{5}{7}\pi", r"\frac{5\pi}{7}", True),
    (r"\frac{5\pi}{8}", r"\frac{5\pi}{7}", False),
    (r"\sqrt{11}/9", r"\frac{\sqrt{11}}{9}", True),
    (r"\frac{9}{\sqrt{11}}", r"\frac{\sqrt{11}}{9}", False),
    (r"9\cdot\sqrt{11}", r"9\sqrt{11}", True),
    (r"\frac{\sqrt3}{2}", r"\frac{\sqrt{3}}{2}", True),
    (r"\sqrt[3]{27}", r"3", True),
    (r"1.\overline{6}", r"\frac{5}{3}", True),
    (r"-0.\overline{3}", r"-\frac{1}{3}", True),
    (r"0.866", r"\frac{\sqrt{3}}{2}", False),  # a rounded decimal is not the exact value
    (r"0.8660254", r"\frac{\sqrt{3}}{2}", None),  # math-verify rounds to 6 places: its call
    (r"2\cdot\pi", r"2\pi", True),
    # one variable: polynomial identity at fixed points
    (r"-30-1x+x^2", r"x^2-x-30", True),
    (r"(x+3)(x+7)", r"x^2+10x+21", True),
    (r"x^2+11x+24", r"x^2+10x+21", False),
    (r"y^2", r"x^2", None),
    (r"2x", r"2", None),
    # structure: sets unordered, tuples and intervals ordered with their brackets
    (r"9,-4", r"-4,9", True),
    (r"\{-4,9\}", r"-4,9", True),
    (r"x=-4 \text{ or } x=2", r"-4,2", True),
    (r"x=-4orx=2", r"-4,2", None),  # no words split out of letters
    (r"\{3\}", r"3", True),
    (r"4", r"-2,4", False),
    (r"(2,7,-9)", r"(-9,7,2)", False),
    (r"(-9,7,2)", r"(-9,7,2)", True),
    (r"(-8,\infty)", r"(-\infty,-8)", False),
    (r"x\in(-\infty,-8)", r"(-\infty,-8)", True),
    (r"[1,2)", r"(1,2)", False),
    (r"(1,2)", r"1,2", None),
    # exact: big integers, powers, tiny values, mixed numbers, named values, list commas
    (r"2^{31}", r"2^{31}-1", False),
    (r"2^{40}", r"2^{40}+1", False),
    (r"2147483648", r"2^{31}", True),
    (r"10^{-10}", r"0", False),
    (r"\frac{1}{2^{30}}", r"\frac{1}{2^{31}}", False),
    (r"2\frac{1}{4}", r"\frac{9}{4}", True),
    (r"2\frac{1}{4}", r"\frac{1}{2}", False),
    (r"918\frac{1}{2}", r"918.5", True),
    (r"2\frac{\sqrt{3}}{2}", r"\sqrt{3}", True),  # not a mixed number: a product
    (r"y=2,x=1", r"x=1,y=2", True),
    (r"x=2,y=1", r"x=1,y=2", False),
    (r"a=2, b=1", r"a=1, b=2", False),
    (r"32, 349", r"32349", False),
    (r"32,349", r"32349", True),
    (r"\text{for}", r"f", None),
    (r"(3,2)", r"(p,q)=(3,2)", None),
    (r"0<f(x)<1", r"(0,1)", None),
    (r"(1,2),(1,2),(3,4)", r"(1,2),(3,4)", None),
    (r"(1,2),(3,4)", r"(1,2)", False),
    (r"1,2,2", r"1,2", None),
    # outside the grammar: undecided, never guessed
    (r"3\pm\sqrt{2}", r"3+\sqrt{2}", None),
    (r"5!", r"120", None),
    (r"9^{9^{9^{9}}}", r"3", None),
    (r"ab", r"ba", None),
    (r"1/0", r"1", None),
    (r"(1)(2)", r"2", None),  # math-verify reads 3
    (r"2^10", r"1024", None),
    (r"e^{2}", r"e^2", None),
    (r"\sqrt{5+2\sqrt{6}}", r"\sqrt{2}+\sqrt{3}", None),
]


@pytest.mark.parametrize(("pred", "gold", "expected"), CASES)
def test_compare(pred: str, gold: str, expected: bool | None) -> None:
    prepared_pred, prepared_gold = prepare(pred), prepare(gold)
    assert prepared_pred is not None and prepared_gold is not None
    assert compare(prepared_pred, prepared_gold) is expected


@pytest.mark.parametrize(("pred", "gold", "expected"), [c for c in CASES if c[2] is not None])
def test_quick_decisions_agree_with_math_verify_where_it_is_right(
    pred: str, gold: str, expected: bool
) -> None:
    verifier = MathVerifier()
    extracted = verifier.extract(rf"so \boxed{{{pred}}}")
    verdict = verifier.quick_check(extracted, gold)
    assert verdict is not None and verdict.score == float(expected)


def test_hostile_inputs_are_bounded() -> None:
    started = time.process_time()
    assert compare("(" * 150 + "1" + ")" * 150, "1") in (True, None)
    assert compare("x^" * 150 + "2", "1") is None
    assert compare("1" * 10_000, "1") is None
    assert time.process_time() - started < 0.5


@pytest.mark.parametrize(
    "answer",
    [
        "+".join([r"\sqrt{999999999989}"] * 12),  # a large prime under each root: factoring
        r"(2^{4096})^{4096}",  # a power whose size is checked before it is built
        r"(\sqrt{2}+\sqrt{3}+\sqrt{5}+\sqrt{7}+\sqrt{11}+\sqrt{13})^{32}",  # term blow-up
        r"(x+1)^{32}(x+2)^{32}(x+3)^{32}",
        r"\frac{1}{\frac{1}{\frac{1}{\frac{1}{\frac{1}{\frac{1}{\frac{1}{2}}}}}}}",
        r"\sqrt{\sqrt{\sqrt{\sqrt{\sqrt{2}}}}}",
    ],
)
def test_exact_arithmetic_is_bounded(answer: str) -> None:
    started = time.process_time()
    prepared = prepare(answer)
    assert prepared is not None
    compare(prepared, "1")
    assert time.process_time() - started < 0.5
