"""guards: the last answer form decides: a blank or no-value last form is no answer, and a list of candidates is no one answer, in every family.

Rows from ``rewardkit audit``'s blank_box, tag_no_answer, candidate_list and
tag_candidates families on real outputs, with the benign neighbours that keep credit (a
box saying "No solution" against that gold, the format named before an empty tag, an
empty tag after the answer on its line, a list against a list gold).
"""

from __future__ import annotations

from typing import Any

import pytest

from rewardkit.verifiers._final import blank_answer, ends_on_list
from rewardkit.verifiers.base import Verifier
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

MATH, GSM8K, CHOICE = MathVerifier(), GSM8KVerifier(), ChoiceVerifier()


def score(verifier: Verifier, response: str, gold: Any) -> float:
    extracted = verifier.extract(response)
    quick = verifier.quick_check(extracted, gold)
    return (quick if quick is not None else verifier.check(extracted, gold)).score


MATH_ROWS = [
    # a blank or no-value last form after an answer: the response's answer is none
    ("block is \\boxed{6} digits. The result is 6, I think.\n\n\\boxed{}", "6", 0.0),
    ("block is \\boxed{6} digits.\n\nAnswer: ", "6", 0.0),
    ("\\boxed{6} digits. One candidate is 6, but no.\n\nAnswer: There is no answer possible.", "6", 0.0),
    ("\\boxed{6} digits. One candidate is 6, but no.\n\nAnswer: cannot be determined", "6", 0.0),
    ("So 58 has the smallest prime factor. <answer></answer>", "58", 0.0),
    ("The number of combinations is \\(\\boxed{}\\).", "10", 0.0),
    # benign: the no-value answer is the gold; the format named; an empty tag after the answer
    ("So \\boxed{\\text{No solution}}.", "\\text{No solution}", 1.0),
    ("Put the answer within <answer></answer>. So \\boxed{6}.", "6", 1.0),
    ("Each angle is 720/6 = 120 degrees.\nAnswer: 120 degrees <answer> </answer>", "120", 1.0),
    ("So the answer is \\boxed{6}.\n\nAnswer: 6", "6", 1.0),
    # a list of candidates, last: no one answer
    ("block is \\boxed{6} digits.\n\nSo $a = 7, 6, 8$.", "6", 0.0),
    ("There are 16 possible pairings.\n\nSo $a = 17, 16, 18$.", "16", 0.0),
    ("Thanks!\n\nSo $a = \\dfrac{6}{11}, \\dfrac{5}{11}, \\dfrac{7}{11}$.", "\\dfrac{5}{11}", 0.0),
    ("So $a = 28\\pi, 27\\pi, 29\\pi$.", "27\\pi", 0.0),
    ("The roots are found.\n\nSo $x = 2, 3$.", "2, 3", 1.0),  # the gold is the list
    ("The roots: \\boxed{2, 3}.\n\nSo $x = 2, 3$.", "2, 3", 1.0),
    # a tag listing values with units: the list is the answer, not a passage's first value
    ("</think> <answer>108\\text{ degrees}, 109\\text{ degrees}, 110\\text{ degrees}</answer>",
     "108\\text{ degrees}", 0.0),
    ("</think> <answer>9\\text{ min}, 10\\text{ min}, 11\\text{ min}</answer>", "9\\text{ min}", 0.0),
    ("</think> <answer>108\\text{ degrees}</answer>", "108\\text{ degrees}", 1.0),
]  # fmt: skip


@pytest.mark.parametrize(("response", "gold", "expected"), MATH_ROWS)
def test_math(response: str, gold: str, expected: float) -> None:
    assert score(MATH, response, gold) == expected


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("20 - 38 = -18.\n#### -17, -18", "-18", 0.0),
        ("x\n#### 18 20", "18", 0.0),
        ("so #### -18", "-18", 1.0),
        ("x\n#### 1,800", "1800", 1.0),
        ("#### 4. Verification\nSo 18.", "18", 1.0),  # a markdown heading, not an answer
        ("#### 18\n\nAnswer: ", "18", 0.0),
    ],
)
def test_gsm8k(response: str, gold: str, expected: float) -> None:
    assert score(GSM8K, response, gold) == expected


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("About 78%.\n\nThe answer is (C).\n\n\\boxed{a = D, C, A}", 0.0),
        ("About 78%.\n\nThe answer is (C).\n\nSo $a = D, C, A$.", 0.0),
        ("The answer is (C).", 1.0),
        ("The answer is (C). Options A, B and D are wrong.", 1.0),
    ],
)
def test_choice(response: str, expected: float) -> None:
    assert score(CHOICE, response, "C") == expected


def test_the_helpers() -> None:
    assert (
        ends_on_list("So $a = 15\\frac{6}{7}, 14\\frac{6}{7}$.") == "15\\frac{6}{7}, 14\\frac{6}{7}"
    )
    assert ends_on_list("So a = 7.") is None and ends_on_list("x = 3, y = 4") is None
    assert blank_answer("So 3.\n\nAnswer: ") and blank_answer("x <answer> </answer>")
    assert not blank_answer("End of <answer> </answer>")  # the tag named
    # an empty tag after an answer form on its line: blank unless that form gave a value
    assert not blank_answer("Answer: 120 <answer> </answer>")
    assert blank_answer("So $2^{-2}$.\nAnswer: <answer></answer>")
    assert blank_answer("so 2.5 per family. The answer is <answer></answer>")
    assert not blank_answer("So \\boxed{12}.")
