"""What red team 7 left open in the verifiers (see test_redteam_math7.py and
test_redteam_extract7.py): correct answers scored 0, a brace bomb in the main process,
and prose hedges that still got credit.

Each row is ``(response, gold, expected, why)``; ``expected`` is what a careful human
grader says, never more generous than math-verify reading the same answer after
rewardkit's pre-normalisation (``fast_paths=False``). ``before`` in a reason is what
rewardkit said before the fix; ``mv`` is raw math-verify's ``parse``/``verify``.
"""

from __future__ import annotations

import time

import pytest

from redteam_rows import check_math_row, row_ids
from rewardkit.verifiers import _latex
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

GSM8K = GSM8KVerifier()
CHOICE = ChoiceVerifier()

# (response, gold, expected, why)
MATH_ROWS: list[tuple[str, str, float, str]] = [
    # --- SI thin-space thousands groups (before: 0; mv read "1\,000" as 1*0) ---
    ("\\boxed{1\\,000}", "1000", 1.0, "TeX shows 1 000, a thousand (mv: 0, reads 1*0)"),
    ("$\\boxed{12\\,345\\,678}$", "12345678", 1.0, "several thin-space groups"),
    ("\\boxed{1\\,234.5}", "1234.5", 1.0, "a group, then a decimal part (mv: 1*234.5)"),
    ("\\boxed{1\\,000}", "1", 0.0, "a thousand is no 1"),
    ("\\boxed{1\\,000}", "0", 0.0, "nor 0, as mv's product read it"),
    ("\\boxed{3\\,4}", "34", 0.0, "no three-digit group: 3 and 4, left to mv"),
    ("\\boxed{3\\,4}", "12", 0.0, "nor a product"),
    ("\\boxed{1\\,0000}", "10000", 0.0, "a four-digit group is no thousands group"),
    ("\\boxed{1.5\\,000}", "1.5", 0.0, "digits after a decimal point are not regrouped"),
    # --- a \phantom as blank padding (before: 0; mv read \phantom{3}4 as 7) ---
    ("\\boxed{\\phantom{3}4}", "4", 1.0, "padding before the value (mv: 7)"),
    ("\\boxed{4\\phantom{3}}", "4", 1.0, "padding after the value (mv: 7)"),
    ("\\boxed{\\hphantom{-}4}", "4", 1.0, "an \\hphantom of a sign: nothing shows"),
    ("\\boxed{\\phantom{3}4}", "34", 0.0, "the phantom 3 is not shown"),
    ("\\boxed{\\phantom{3}4}", "7", 0.0, "nor added"),
    ("\\boxed{2\\phantom{3}4}", "234", 0.0, "a gap between 2 and 4 is left to mv"),
    ("\\boxed{2\\phantom{3}4}", "8", 0.0, "TeX shows '2 4': no product"),
    # --- \boxed with a one-token argument (before: 0; mv in math mode: 1) ---
    ("\\boxed4", "4", 1.0, "TeX boxes the one token 4"),
    ("The answer is $\\boxed4$.", "4", 1.0, "in math mode (mv: 1)"),
    ("So the answer is \\boxed4.", "4", 1.0, "a full stop ends the sentence, not a decimal"),
    ("\\boxed4", "5", 0.0, "a boxed 4 is no 5"),
    ("\\boxed4.5", "4", 0.0, "a decimal after one token is left alone"),
    ("$\\boxed4x$", "4", 0.0, "TeX: a boxed 4 times x; mv reads 4x"),
    ("\\boxed{3}\n\nSo $\\boxed4$.", "4", 1.0, "an earlier paragraph's box is a step"),
    ("So $\\boxed{3}$ or $\\boxed4$.", "4", 0.0, "two boxes offered: a hedge"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), MATH_ROWS, ids=row_ids(MATH_ROWS))
def test_math_row(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)


_MB = 1_000_000
_BRACES = "{" * 4000
BOMBS = {
    "brace-bomb": ("\\boxed{" + _BRACES) * 200 + "\\boxed{4}",
    "brace-bomb-unclosed": ("\\boxed{" + _BRACES) * 250,
    "fbox-bomb": ("\\fbox{" + _BRACES) * 200 + "\\boxed{4}",
    "mixed-bomb": ("\\boxed{" + _BRACES + "\\fbox{" + _BRACES) * 125,
    "escaped-braces": ("\\boxed{" + "\\{" * 2000) * 250,
    "closing-late": ("\\boxed{" + "{" * 3000 + "}" * 999) * 250,
    "near-enclosing": ("\\boxed{" + "{" * 250) * 16 + "\\boxed{4}" + "a" * (_MB - 4200),
    "no-number": "{" * _MB,
}


@pytest.mark.parametrize("response", BOMBS.values(), ids=BOMBS.keys())
def test_a_megabyte_of_braces_extracts_fast(response: str) -> None:
    """Brace scanning is budgeted (``_latex.MAX_SCAN_CHARS`` in all): before, the first
    bomb took about 90 ms in ``find_boxes`` (12 ms after, idle). 30 ms is the target;
    the bound here has margin for a loaded CI machine."""
    for extract in (_latex.find_boxes, MathVerifier().extract, GSM8K.extract, CHOICE.extract):
        extract(response)  # warm caches and regex compilation
        started = time.perf_counter()
        extract(response)
        assert time.perf_counter() - started < 0.25, extract


def test_the_box_after_a_bomb_is_still_the_answer() -> None:
    response = BOMBS["brace-bomb"]
    assert MathVerifier().check(MathVerifier().extract(response), "4").score == 1.0
    assert GSM8K.check(GSM8K.extract(response), "4").score == 1.0


def test_a_hedge_before_a_short_bomb_is_still_seen() -> None:
    """The budget covers 16 boxes of MAX_BOX_CHARS: a box a few junk boxes back, in the
    same paragraph, is still read as a second value offered."""
    response = "\\boxed{3} " + ("\\boxed{" + "{" * 500) * 8 + " or \\boxed{4}"
    assert MathVerifier().check(MathVerifier().extract(response), "4").score == 0.0


# Found while checking item 1: math-verify reads integers apart by a TeX space as a sum
# or a product. TeX shows two numbers: never one value.
SPACED_ROWS: list[tuple[str, str, float, str]] = [
    ("\\boxed{2\\,3}", "5", 0.0, "TeX shows '2 3' (before: 1, mv: 5, a sum)"),
    ("\\boxed{2~3}", "5", 0.0, "a tie between two numbers (before: 1)"),
    ("\\boxed{0\\,001}", "1", 0.0, "no thousands group (before: 1, mv: 1)"),
    ("\\boxed{2\\quad 3}", "23", 0.0, "a quad between two numbers"),
    ("\\boxed{2\\,3}", "2\\,3", 1.0, "the gold typeset the same way: mv's call"),
    ("\\boxed{2\\,\\frac{3}{4}}", "\\frac{11}{4}", 1.0, "a mixed number is left to mv"),
    ("\\boxed{x = 2,\\ y = 3}", "x=2, y=3", 1.0, "a comma and a space: a list"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), SPACED_ROWS, ids=row_ids(SPACED_ROWS)
)
def test_spaced_integer_row(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)
