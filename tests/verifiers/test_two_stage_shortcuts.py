"""guards: _two_stage.py's prediction shortcuts: decisions answered from the tokens give
the parse tree ANTLR's LL prediction gives, and spare the scan where they apply.

The SLL stage answers the grammar's top choice (set relation, elements, set expression)
and an element's (``±`` expression, set atom, relation) without simulating them when
only one alternative can match. Each input here is parsed twice from fresh parsers: by
the class's own ``math`` (ANTLR's default LL, what latex2sympy does without rewardkit)
and by the installed two-stage ``math`` (SLL with the shortcuts, LL on a syntax error);
the trees (or the failure) must be the same.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from rewardkit.verifiers import _two_stage

pytest.importorskip("latex2sympy2_extended")

# Where the shortcut must stand aside: a ± ahead (in this element or a later one), a set
# membership or assignment, a set atom's opening token; and where it answers.
PLUS_MINUS = [
    "x \\pm 2", "\\pm 3", "1, 2 \\pm 3", "2 \\pm 3, 1", "(1 \\pm 2)", "a = 1 \\pm 2",
    "\\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}", "x = \\pm 2, y = 3", "3 \\mp 1", "1 ± 2",
    "\\{1 \\pm 2\\}", "(1, 2 \\pm 1]", "2x \\pm", "\\pm",
]  # fmt: skip
SETS = [
    "x \\in \\{1, 2\\}", "a := 3", "x \\notin (0, 1)", "\\{1\\} \\cup \\{2\\}",
    "(1,2) \\cup [3,4]", "x \\in [0, 1)", "A \\setminus B", "\\{x \\mid x > 0\\}",
    "(1, 2)", "[1, 2]", "(1)", "\\{1\\}", "\\boxed{1, 2}", "\\mathbb{R}", "\\emptyset",
    "1, 2; 3", "x=1, y=2", "(x+1)(x-2)", "{1}", "\\{\\}", "\\in", ":=", "x \\in",
]  # fmt: skip
PLAIN = [
    "x^2+3x-4", "\\frac{1}{2}", "2\\sqrt{3}", "-\\frac{7}{12}", "15\\pi", "3.14", "1,000",
    "a=b=c=20", "x \\le 3", "2^{10} = 1024", "\\sin^2 x + \\cos^2 x = 1", "f(x) = x^2",
    "\\left(\\frac{3}{4}\\right)^2", "50\\%", "45^\\circ", "|x - 3| < 5", "x_1 + x_2",
    "3 +* 4", "\\frac{1}{", "x = = 2", "", "   ", "\\text{Monday}", "y'",
]  # fmt: skip


def _trees(text: str) -> tuple[str, str]:
    """(LL's tree, the two-stage tree): the string form, or the failure's type."""
    from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy

    assert _two_stage.install()
    out = []
    for read in (lambda p: type(p).math(p), lambda p: p.math()):
        parser = _Latex2Sympy().create_parser(text)
        try:
            out.append(read(parser).toStringTree(recog=parser))
        except Exception as exc:  # a syntax error: latex2sympy's listener raises Exception
            out.append(f"fails: {type(exc).__name__}")
    return out[0], out[1]


@pytest.mark.parametrize("text", PLUS_MINUS + SETS + PLAIN)
def test_shortcut_parses_as_ll_does(text: str) -> None:
    ll, two_stage = _trees(text)
    assert two_stage == ll


def _generated(count: int, seed: int) -> list[str]:
    """Random expressions over the tokens the shortcuts look at (±, sets, relations)."""
    rng = random.Random(seed)
    atoms = ["x", "2", "3.5", "\\pi", "a_1", "\\frac{1}{2}", "\\sqrt{2}", "10\\%", "\\emptyset"]
    joins = ["+", "-", "\\pm", "\\mp", "=", "<", "\\le", ",", ";", "\\in", ":=", "\\notin",
             "\\cup", "\\cap", "\\setminus", "\\cdot", " "]  # fmt: skip
    wraps = ["({})", "[{}]", "\\{{{}\\}}", "\\left({}\\right)", "\\boxed{{{}}}", "-{}", "{}^2",
             "\\pm {}", "|{}|", "({}, {})", "[{}, {})"]  # fmt: skip

    def expr(depth: int) -> str:
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(atoms)
        if rng.random() < 0.5:
            wrap = rng.choice(wraps)
            return wrap.format(*(expr(depth - 1) for _ in range(wrap.count("{}"))))
        return f"{expr(depth - 1)} {rng.choice(joins)} {expr(depth - 1)}"

    return [expr(rng.randint(1, 4)) for _ in range(count)]


def test_shortcut_parses_generated_inputs_as_ll_does() -> None:
    """400 random expressions (about a third fail to parse either way); also held on
    4,336 inputs (the strings latex2sympy reads on the real outputs' pooled rows, and
    random expressions) when the shortcuts were written."""
    texts = _generated(400, seed=5)
    assert [t for t in texts if _trees(t)[0] != _trees(t)[1]] == []


def _simulated(text: str) -> list[int]:
    """The decisions the two-stage parse of ``text`` simulated (ANTLR's adaptivePredict)."""
    from antlr4.atn.ParserATNSimulator import ParserATNSimulator
    from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy

    assert _two_stage.install()
    seen: list[int] = []
    simulate = ParserATNSimulator.adaptivePredict

    def spy(self: Any, stream: Any, decision: int, outer: Any) -> int:
        seen.append(decision)
        return simulate(self, stream, decision, outer)

    ParserATNSimulator.adaptivePredict = spy  # type: ignore[method-assign]
    try:
        _Latex2Sympy().create_parser(text).math()
    finally:
        ParserATNSimulator.adaptivePredict = simulate  # type: ignore[method-assign]
    return seen


def test_shortcut_spares_the_scan_of_a_plain_expression() -> None:
    """The costly decisions (a fifth to a half of a first pass's prediction time) are
    answered without simulation for an expression with no ±, set or membership: the top
    rule's (it starts with a number) and the element's."""
    from latex2sympy2_extended.latex2sympy2 import PSParser

    top, element = (
        _two_stage._only_decision(PSParser.atn, PSParser.ruleNames.index(rule))
        for rule in ("math", "element")
    )
    plain = _simulated("2^{10} + 3 \\cdot 4 - \\frac{1}{2}")  # SLL parses it: no LL retry
    assert top not in plain and element not in plain
    assert element in _simulated("2x^2 \\pm 3")  # a ± ahead: SLL decides
    assert top in _simulated("(1, 2) \\cup (3, 4)")  # a set atom may start here


def test_what_the_grammar_needs_is_read_from_its_atn() -> None:
    from latex2sympy2_extended.latex2sympy2 import PSParser

    shortcuts = _two_stage._Shortcuts(PSParser)
    element = _two_stage._only_decision(PSParser.atn, PSParser.ruleNames.index("element"))
    top = _two_stage._only_decision(PSParser.atn, PSParser.ruleNames.index("math"))
    # element: the ± expression needs a ± token; a set atom cannot start with a number
    assert shortcuts._needs(element, 1, PSParser.NUMBER) == {PSParser.PLUS_MINUS}
    assert shortcuts._needs(element, 2, PSParser.NUMBER) == frozenset()
    assert shortcuts._needs(element, 2, PSParser.L_PAREN) is None  # an interval may
    # top: a set relation that starts with a letter needs \in, := or \notin
    assert shortcuts._needs(top, 1, PSParser.LETTER_NO_E) == {
        PSParser.IN,
        PSParser.ASSIGNMENT,
        PSParser.NOTIN,
    }
