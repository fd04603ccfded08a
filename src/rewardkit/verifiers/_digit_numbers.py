"""Whole numbers written in digits, read without sympy's expression parser.

latex2sympy (``parse_number``) and math-verify (``extract_expr``) turn every number they
read into ``sympy.Number(text)``. For a string, sympy runs its whole expression parser on
it (tokenise, transform, compile, eval): about a tenth of a worker's CPU on the rows of
the real-output corpus left to math-verify (``benchmarks/two_stage.py``). For a string of
ASCII digits that parser's answer is ``sympy.Integer(int(text))``, so that is what these
read directly; anything else (decimals, signs, Unicode digits) still goes to sympy.
Results are identical: ``tests/verifiers/test_digit_numbers.py``.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["install", "installed"]

_MARK = "_rewardkit_digit_numbers"
logger = logging.getLogger(__name__)


def number(text: Any) -> Any:
    """``sympy.Number(text)``, without the expression parser for a string of digits."""
    import sympy

    if isinstance(text, str) and _canonical_digits(text):
        return sympy.Integer(int(text))
    return sympy.Number(text)  # "007" too: sympy refuses it, as Python refuses 007


def _canonical_digits(text: str) -> bool:
    """ASCII digits without a leading zero (or just "0"): what Python reads as an int."""
    return text.isascii() and text.isdigit() and (text == "0" or text[0] != "0")


def install() -> bool:
    """Read digit strings directly in latex2sympy and math-verify; False (and unchanged)
    where their internals differ from what this wraps. Idempotent."""
    try:
        import math_verify.parser as math_verify_parser
        from latex2sympy2_extended import latex2sympy2
    except ImportError:
        return False
    converter = getattr(latex2sympy2, "_Latex2Sympy", None)
    parse_number = getattr(converter, "parse_number", None)
    if converter is None or parse_number is None or not hasattr(math_verify_parser, "Number"):
        logger.debug("latex2sympy or math-verify changed: sympy reads every number")
        return False
    if getattr(parse_number, _MARK, False):
        return True

    def read_number(self: Any, text: str) -> Any:
        plain = text.replace(",", "")  # as parse_number does, which also drops leading
        if plain.isascii() and plain.isdigit():  # zeros from digits: int() does that
            import sympy

            return sympy.Integer(int(plain))
        return parse_number(self, text)

    setattr(read_number, _MARK, True)
    converter.parse_number = read_number
    math_verify_parser.Number = number  # its one use: Number(number_str) in extract_expr
    return True


def installed() -> bool:
    """Whether latex2sympy and math-verify read digit strings directly in this process."""
    try:
        import math_verify.parser as math_verify_parser
        from latex2sympy2_extended import latex2sympy2
    except ImportError:
        return False
    parse_number = getattr(getattr(latex2sympy2, "_Latex2Sympy", None), "parse_number", None)
    return bool(getattr(parse_number, _MARK, False)) and math_verify_parser.Number is number
