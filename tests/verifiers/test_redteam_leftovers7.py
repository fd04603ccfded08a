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

from _support.verifier_rows import check_math_row, row_ids
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
    # --- a wrapped number as the whole response (before: 0; mv finds nothing outside $) ---
    ("\\text{4}", "4", 1.0, "a number in \\text and nothing else (mv: 0, no math mode)"),
    ("\\textbf{4}.", "4", 1.0, "in bold, a full stop after it"),
    ("$\\text{4}$", "4", 1.0, "in math mode, as before (mv: 1)"),
    ("\\text{4}", "5", 0.0, "a wrapped 4 is no 5"),
    ("\\text{4 or 5}", "4", 0.0, "words in the wrapper: math-verify's passage, as before"),
    ("Maybe 5.\n\\text{4}", "4", 0.0, "prose before it: math-verify's passage, as before"),
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
    """A bomb in an earlier paragraph is a step; in the final paragraph it hides boxes the
    bounded scan cannot read, which may offer other values (red team 8 changed this row:
    it scored 1, and ``\\boxed{3}`` before the bomb was not seen either)."""
    earlier = BOMBS["brace-bomb"].replace("\\boxed{4}", "\n\nSo \\boxed{4}")
    assert MathVerifier().check(MathVerifier().extract(earlier), "4").score == 1.0
    assert GSM8K.check(GSM8K.extract(earlier), "4").score == 1.0
    same = BOMBS["brace-bomb"]
    assert MathVerifier().extract(same).extra["scan_cut"] is True
    assert GSM8K.check(GSM8K.extract(same), "4").extra["hedged"] is True


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


# Prose hedges after the final answer, in its paragraph: another value offered in words
# is a hedge (score 0) only when it is a different value; a later paragraph corrects.
GSM8K_ROWS: list[tuple[str, str, float, str]] = [
    ("The answer is 18 but it could be 20", "18", 0.0, "a second value offered (before: 1)"),
    ("The answer is 18 but it could be 20", "20", 0.0, "nor the offered one"),
    ("The answer is 18.\nOr 20.", "18", 0.0, "a line opening 'Or 20' (before: 1)"),
    ("#### 18\nOr 20.", "18", 0.0, "after a #### marker (before: 1)"),
    ("The answer is 18. But it might be 20.", "18", 0.0, "'might be' (before: 1)"),
    ("The answer is 18, but it could also be 20.", "18", 0.0, "'could also be' (before: 1)"),
    ("The answer is 18. Perhaps 20.", "18", 0.0, "'perhaps' (before: 1)"),
    ("The answer is $\\boxed{18}$, or maybe 20.", "18", 0.0, "after a box (before: 1)"),
    ("18.\nOr 20.", "18", 0.0, "no marker: the last number, 'Or 20', is no number"),
    ("18.\nOr 20.", "20", 0.0, "nor 20"),
    ("The answer is 18 but it could be 18.0", "18", 1.0, "the same value restated"),
    ("The answer is 18.\n\nOr 20? No: it is 18.", "18", 1.0, "a later paragraph decides"),
    (
        "It could be 20 at first sight.\n\nThe answer is 18.",
        "18",
        1.0,
        "a doubt in an earlier paragraph is a step",
    ),
    ("The answer is 18. She has 3 boxes of 6.", "18", 1.0, "numbers that explain, no offer"),
    ("The answer is 18 apples, 6 more than Tom.", "18", 1.0, "a comparison, no offer"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), GSM8K_ROWS, ids=row_ids(GSM8K_ROWS)
)
def test_gsm8k_row(response: str, gold: str, expected: float, why: str) -> None:
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, why


CHOICE_ROWS: list[tuple[str, str, float, str]] = [
    ("The answer is A but C is also possible", "A", 0.0, "another letter offered (before: 1)"),
    ("The answer is A but C is also possible", "C", 0.0, "nor the offered one"),
    ("The answer is A. C is also possible.", "A", 0.0, "in the next sentence (before: 1)"),
    ("Answer: A, but C might also work", "A", 0.0, "'might also work' (before: 1)"),
    ("The answer is B. It could be D, though.", "B", 0.0, "'could be D' (before: 1)"),
    ("The answer is B.\nOr maybe D.", "B", 0.0, "a line opening 'Or maybe D' (before: 1)"),
    ("The answer is B. Perhaps option D.", "B", 0.0, "'perhaps option D' (before: 1)"),
    ("The answer is B. Or I might be wrong.", "B", 1.0, "'I' before a word is a pronoun"),
    ("The answer is B. A careful reader could be misled.", "B", 1.0, "'A' is an article"),
    ("The answer is B, as B is correct.", "B", 1.0, "the same letter restated"),
    ("The answer is B.\n\nC is also possible? No.\n\nThe answer is B.", "B", 1.0, "last wins"),
    ("Maybe C is correct.\n\nThe answer is B.", "B", 1.0, "an earlier paragraph is a step"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), CHOICE_ROWS, ids=row_ids(CHOICE_ROWS)
)
def test_choice_row(response: str, gold: str, expected: float, why: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, why


def test_a_prose_hedge_says_so() -> None:
    """A hedge is marked ``hedged`` with the value read, never a silent 0."""
    gsm8k = GSM8K.check(GSM8K.extract("The answer is 18 but it could be 20"), "18")
    choice = CHOICE.check(CHOICE.extract("The answer is A but C is also possible"), "A")
    assert gsm8k.extra["hedged"] and gsm8k.extra["pred"] == "18"
    assert choice.extra["hedged"] and choice.extra["pred"] == "A"
