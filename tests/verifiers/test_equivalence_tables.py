"""guards: math.py's equivalence, row by row: public equivalence tests and fast-path traps.

Each row is (gold, prediction, expected, reason): facts read in other projects' tests
(written here in our own tables, never their code), and the traps of an exact fast path
(shapes a string-level comparison gets wrong). For each row:

* the inline fast path either defers (None) or gives the expected verdict: it is never
  wrong when it decides;
* the full check (fast path, then math-verify in the worker) gives the expected verdict.

Sources: Math-Verify ``tests/test_all.py`` and ``tests/test_mixed_number_extraction.py``
(huggingface/Math-Verify), Hendrycks MATH ``modeling/math_equivalence_test.py``
(hendrycks/math), NeMo-Skills ``tests/test_math_equal.py`` (NVIDIA/NeMo-Skills), and
Qwen2.5-Math ``evaluation/grader.py``'s unit tests (QwenLM/Qwen2.5-Math).
"""

from __future__ import annotations

import pytest

from _support.equivalence_rows import MATH_VERIFY_MISSES, ROWS, TRAP
from rewardkit.verifiers.base import Extracted
from rewardkit.verifiers.math import MathVerifier, _decide, _math_verify_equal

V = MathVerifier()


def _ids(rows: list[tuple[str, str, bool, str]]) -> list[str]:
    return [f"{i}-{row[1]}"[:40] for i, row in enumerate(rows)]


@pytest.mark.parametrize(("gold", "prediction", "expected", "reason"), ROWS, ids=_ids(ROWS))
def test_fast_path_is_never_wrong_when_it_decides(
    gold: str, prediction: str, expected: bool, reason: str
) -> None:
    decided, _ = _decide(prediction, gold)
    assert decided is None or decided is expected, reason


@pytest.mark.parametrize(("gold", "prediction", "expected", "reason"), ROWS, ids=_ids(ROWS))
def test_full_check_gives_the_expected_verdict(
    gold: str, prediction: str, expected: bool, reason: str
) -> None:
    verdict = V.check(Extracted(prediction, {"source": "boxed"}), gold)
    if (gold, prediction) in MATH_VERIFY_MISSES:
        expected = not expected
    assert verdict.score == float(expected), reason


def test_every_fast_path_false_positive_is_a_row() -> None:
    trap_rows = [row for row in ROWS if row[3].startswith(TRAP)]
    assert len([row for row in trap_rows if row[2] is False]) == 9


# Notation math-verify cannot read, which the fast path reads exactly: the only places
# where the fast path says "equal" and math-verify "not equal". Each is an equal value
# written another way, never a different value; listed so that the set stays deliberate.
FAST_PATH_READS_MORE = [
    ("12", "\\text{twelve}", "a number word: math-verify reads a symbol"),
    ("\\frac{5}{3}", "1.\\overline{6}", "a repeating decimal: math-verify cannot parse it"),
    ("1", "0.\\overline{9}", "a repeating decimal: math-verify cannot parse it"),
    ("3", "3.", "a sentence's full stop after the number: math-verify cannot parse it"),
    ("A", "(A) 5", "a choice label with its value: the letter is the answer"),
    # not ("75", "75.0\\%"): math-verify credits N% against N only for whole N, and the fast
    # path defers the rest to it (test_fastpath_rows.py, "a percent sign on one side only")
]


@pytest.mark.parametrize(("gold", "prediction", "reason"), FAST_PATH_READS_MORE)
def test_notation_math_verify_cannot_read(gold: str, prediction: str, reason: str) -> None:
    assert _decide(prediction, gold)[0] is True, reason
    assert not _math_verify_equal(gold, prediction), f"math-verify now reads it: {reason}"
