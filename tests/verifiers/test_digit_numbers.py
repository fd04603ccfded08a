"""guards: _digit_numbers.py: digit strings read without sympy's parser give its own numbers.

Digit strings read without sympy's expression parser give sympy's own numbers.

The shortcut must be invisible: for every string latex2sympy or math-verify hands to
``sympy.Number``, the same object (type and value, by ``srepr``); for real model outputs,
the same parses as a process that never installs it.
"""

from __future__ import annotations

import pytest
import sympy

from _support.parse_child import differing, real_responses
from rewardkit.verifiers import _digit_numbers
from rewardkit.verifiers.math import MathVerifier

# What the two callers pass: digits (leading zeros, huge, zero), and what must still go
# to sympy (decimals, signs, exponents, Unicode digits that str.isdigit() accepts).
TEXTS = ["0", "7", "0007", "16", "1000000", "9" * 80, "3.5", ".5", "-16", "+3", "1e3",
         "12.000", "0.0001", "\u00b2", "\u0663", "\uff11\uff12"]  # fmt: skip


@pytest.mark.parametrize("text", TEXTS)
def test_a_number_is_what_sympy_reads(text: str) -> None:
    try:
        expected = sympy.srepr(sympy.Number(text))
    except (ValueError, TypeError, SyntaxError, sympy.SympifyError) as exc:
        with pytest.raises(type(exc)):
            _digit_numbers.number(text)
        return
    assert sympy.srepr(_digit_numbers.number(text)) == expected


def test_latex_numbers_with_commas_and_zeros_read_as_before() -> None:
    from latex2sympy2_extended import latex2sympy2

    assert _digit_numbers.install()
    converter = latex2sympy2._Latex2Sympy()
    for text in ("1,000", "0,012", "007", "12", "3.25", "1,234.5"):
        plain = text.replace(",", "")
        stripped = (plain.lstrip("0") or "0") if plain.isdigit() else plain
        assert sympy.srepr(converter.parse_number(text)) == sympy.srepr(sympy.Number(stripped))


def test_real_outputs_parse_as_without_the_shortcut() -> None:
    texts = ["\\boxed{0016}", "\\boxed{1,000}", "The answer is 0042.", "\\boxed{12\\%}"]
    texts += real_responses(step=15)
    assert differing(texts, ["_digit_numbers"]) == []


def test_the_math_verifier_installs_it() -> None:
    verdict = MathVerifier(fast_paths=False).check(MathVerifier().extract("\\boxed{0016}"), "16")
    assert verdict.score == 1.0
    assert _digit_numbers.installed()
