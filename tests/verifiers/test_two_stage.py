"""guards: _two_stage.py: parsing SLL first, LL on a syntax error, changes no parse, only its cost.

ANTLR documents that SLL prediction returns LL's parse tree or a syntax error. These tests
hold the installed latex2sympy to that: math-verify's results in this process (two-stage)
against a child process that never installs it (ANTLR's default LL), on inputs only LL
can parse, syntax errors, and real model outputs.
"""

from __future__ import annotations

from _support.parse_child import parse_in_child, real_responses
from rewardkit.verifiers import _two_stage
from rewardkit.verifiers.math import MathVerifier

# Inputs found on the real outputs where SLL prediction reports a syntax error and LL
# parses: the retry must give LL's result, not "unparsable".
LL_ONLY = ["x_1", "t^2", "6x^2", "\\frac{s^2}{5}", "\\frac{10a^3}{55a^2}=\\frac{2\\cdot3}{11}"]
# Real syntax errors: both stages fail, math-verify falls back the same way.
BROKEN = ["\\frac{1}{", "3 +* 4", "\\sqrt{", "x = = 2", "(1, 2"]
# Shapes whose reading depends on the grammar's ambiguities (sets, relations, products).
AMBIGUOUS = ["1, 2, 3", "3,333", "x = 1, y = 2", "a=b=c=20", "2\\pi r", "\\{1, 2\\} \\cup (3, 4]"]


def test_two_stage_parses_as_ll_does() -> None:
    boxed = [f"\\boxed{{{text}}}" for text in LL_ONLY + BROKEN + AMBIGUOUS]
    texts = boxed + real_responses(step=15)  # about 300 real responses, every source
    plain, two_stage = parse_in_child(texts), parse_in_child(texts, ["_two_stage"])
    assert [t for t, a, b in zip(texts, plain, two_stage, strict=True) if a != b] == []
    # the retry reads what SLL cannot: a value and its text, not the text alone
    assert all(len(items) == 2 for items in two_stage[: len(LL_ONLY)])


def test_the_math_verifier_installs_it() -> None:
    verdict = MathVerifier(fast_paths=False).check(
        MathVerifier().extract("so \\boxed{6x^2}"), "6x^{2}"
    )
    assert verdict.score == 1.0
    assert _two_stage.installed()
    assert _two_stage.install() is True  # idempotent: not wrapped twice
