"""Two-stage parsing for latex2sympy's ANTLR parser: SLL prediction first, full LL on error.

math-verify reads LaTeX with latex2sympy, whose ANTLR parser predicts in ANTLR's default
LL mode. Full-context (LL) predictions are never cached in the parser's DFA, so a worker
recomputes them on every answer it parses. ANTLR documents SLL prediction as returning
either the very parse tree LL would return, or a syntax error (``PredictionMode.SLL`` in
the ANTLR 4 runtime); the standard remedy is to parse with SLL and, on a syntax error
only, parse again with LL. latex2sympy raises on the first syntax error (its error
listener), so a parse that SLL completes is LL's parse, and every other input is parsed
again exactly as before: verdicts cannot change, only the time they take.

Measured on the real-output corpus (``benchmarks/worker_warmth.py``, BENCHMARKS.md) and
checked verdict for verdict there and in ``tests/verifiers/test_two_stage.py``.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["install", "installed"]

_MARK = "_rewardkit_two_stage"
logger = logging.getLogger(__name__)


def install() -> bool:
    """Make latex2sympy's parser two-stage; False (and unchanged) where its internals differ.

    Idempotent. Called where math-verify is imported (workers only). A latex2sympy whose
    parser factory is not the one this wraps keeps parsing in LL mode: slower, never wrong.
    """
    try:
        from antlr4.atn.PredictionMode import PredictionMode
        from latex2sympy2_extended import latex2sympy2
    except ImportError:
        return False
    converter = getattr(latex2sympy2, "_Latex2Sympy", None)
    create = getattr(converter, "create_parser", None)
    if converter is None or create is None:
        logger.debug("latex2sympy has no _Latex2Sympy.create_parser: LL parsing kept")
        return False
    if getattr(create, _MARK, False):
        return True

    def create_parser(self: Any, latex_str: str) -> Any:
        parser = create(self, latex_str)
        full_context = parser.math

        def math() -> Any:
            parser._interp.predictionMode = PredictionMode.SLL
            try:
                return full_context()
            except Exception as exc:
                if not _retries(exc):
                    raise  # a caller's time limit (a signal handler's raise): LL's too
                # A syntax error in SLL mode: a real one, or an input only LL can parse.
                # A fresh parser in ANTLR's default (LL) mode decides which.
                return create(self, latex_str).math()

        parser.math = math
        return parser

    setattr(create_parser, _MARK, True)
    converter.create_parser = create_parser
    return True


def _retries(exc: Exception) -> bool:
    """Whether an SLL parse's exception is the parser's own, which LL may not raise:
    latex2sympy's error listener raises a plain ``Exception`` on a syntax error, and
    prediction may recurse deeper in one mode. Anything else came from outside the
    parse (math-verify's ``parsing_timeout`` raises from a SIGALRM handler): retrying
    would swallow it and run the LL parse past the caller's limit."""
    return type(exc) is Exception or isinstance(exc, RecursionError)


def installed() -> bool:
    """Whether latex2sympy parses two-stage in this process."""
    try:
        from latex2sympy2_extended import latex2sympy2
    except ImportError:
        return False
    create = getattr(getattr(latex2sympy2, "_Latex2Sympy", None), "create_parser", None)
    return bool(getattr(create, _MARK, False))
