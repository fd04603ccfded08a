"""guards: the last answer form decides: a blank or no-value last form is no answer, and a list of candidates is no one answer, in every family.

Rows from ``rewardkit audit``'s blank_box, tag_no_answer, candidate_list and
tag_candidates families on real outputs, with the benign neighbours that keep credit (a
box saying "No solution" against that gold, the format named before an empty tag, an
empty tag after the answer in its sentence, a list against a list gold, a number whose
commas group thousands).
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import score
from rewardkit.verifiers._final import blank_answer, ends_on_list
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

MATH, GSM8K, CHOICE = MathVerifier(), GSM8KVerifier(), ChoiceVerifier()


MATH_ROWS = [
    # a blank or no-value last form after an answer: the response's answer is none
    ("block is \\boxed{6} digits. The result is 6, I think.\n\n\\boxed{}", "6", 0.0),
    ("block is \\boxed{6} digits.\n\nAnswer: ", "6", 0.0),
    ("\\boxed{6} digits. One candidate is 6, but no.\n\nAnswer: There is no answer possible.", "6", 0.0),
    ("\\boxed{6} digits. One candidate is 6, but no.\n\nAnswer: cannot be determined", "6", 0.0),
    ("So 58 has the smallest prime factor. <answer></answer>", "58", 0.0),
    ("The number of combinations is \\(\\boxed{}\\).", "10", 0.0),
    # an empty tag that is the answer: named as it ("as", "is in"), after a finished
    # sentence, after an answer form followed by a tag and no value, after a '#' run
    ("there are 4 * 4 = 16 possible pairings. Giving the answer as <answer></answer>", "16", 0.0),
    ("there are 16 pairings. The answer is in <answer></answer>", "16", 0.0),
    ("So the answer is $2^{-2}$. <answer></answer>", "\\frac{1}{4}", 0.0),
    ("multiple of 750. </think> The answer is 1500. <answer></answer>", "1500", 0.0),
    ("The answer is 1500! <answer> </answer>", "1500", 0.0),
    ("the probability is 1/48. So, the answer is <think> <answer></answer>", "\\frac{1}{48}", 0.0),
    ("So 3967149. So, <think######## rumors.methods> <answer></answer>", "3967149", 0.0),
    ("So 3967149.\n\n##### Result\n<answer></answer>", "3967149", 0.0),
    # benign: the no-value answer is the gold; the format named; an empty tag after the answer
    ("So \\boxed{\\text{No solution}}.", "\\text{No solution}", 1.0),
    ("Put the answer within <answer></answer>. So \\boxed{6}.", "6", 1.0),
    ("Each angle is 720/6 = 120 degrees.\nAnswer: 120 degrees <answer> </answer>", "120", 1.0),
    ("Each angle is 120 degrees.\nAnswer: 120 degrees <answer></answer>", "120", 1.0),
    ("So 1.5 hours.\nAnswer: 1.5 <answer></answer>", "1.5", 1.0),  # a decimal point, no end
    ("So the answer is $2^{-2}$ <answer></answer>", "\\frac{1}{4}", 1.0),  # one sentence
    ("Use the <answer></answer> tags. So \\boxed{16}.", "16", 1.0),
    ("The answer goes in <answer> </answer> tags.\n\nSo the answer is 16.", "16", 1.0),
    ("The answer is:\n\n$$\n\\frac{1}{4}\n$$", "\\frac{1}{4}", 1.0),  # the value on the next lines
    ("So the answer is \\boxed{6}.\n\nAnswer: 6", "6", 1.0),
    # a list of candidates, last: no one answer
    ("block is \\boxed{6} digits.\n\nSo $a = 7, 6, 8$.", "6", 0.0),
    ("There are 16 possible pairings.\n\nSo $a = 17, 16, 18$.", "16", 0.0),
    ("Thanks!\n\nSo $a = \\dfrac{6}{11}, \\dfrac{5}{11}, \\dfrac{7}{11}$.", "\\dfrac{5}{11}", 0.0),
    ("So $a = 28\\pi, 27\\pi, 29\\pi$.", "27\\pi", 0.0),
    # ... of expressions in a math span, after an answer in the thinking or in the conclusion
    ("we get $h = \\boxed{2s}$. </think>\n\nSo $a = 3s, 2s, 4s$.", "2s", 0.0),
    ("So the answer is $8\\sqrt{2}$. </think>\n\nSo $a = 9\\sqrt{2}, 8\\sqrt{2}, 10\\sqrt{2}$.",
     "8\\sqrt{2}", 0.0),
    ("So, the answer is $1:2$.</think>\n\nSo $a = 2 : 2, 1 : 2, 3 : 2$.", "1 : 2", 0.0),
    ("So $r = \\boxed{4\\sqrt{30}}$.\n\nSo \\(a = 5\\sqrt{30}, 4\\sqrt{30}\\).", "4\\sqrt{30}", 0.0),
    ("The roots are $x = 2s, 3s$.", "2s, 3s", 1.0),  # the gold is the list
    ("we get $h = \\boxed{2s}$. </think>\n\nSo $h = 2s$.", "2s", 1.0),
    ("So \\boxed{2}.\n\nHere $x = 2, \\text{ so } y = 3$.", "2", 1.0),  # words: no list
    ("So \\boxed{x+1}.\n\nThat is $f = x+1, x \\neq 0$.", "x+1", 1.0),  # a condition
    ("The total is $x = 1,200$.", "1200", 1.0),  # a grouped number, no list
    ("The roots are found.\n\nSo $x = 2, 3$.", "2, 3", 1.0),  # the gold is the list
    ("The roots: \\boxed{2, 3}.\n\nSo $x = 2, 3$.", "2, 3", 1.0),
    # a tag listing values with units: the list is the answer, not a passage's first value
    ("</think> <answer>108\\text{ degrees}, 109\\text{ degrees}, 110\\text{ degrees}</answer>",
     "108\\text{ degrees}", 0.0),
    ("</think> <answer>9\\text{ min}, 10\\text{ min}, 11\\text{ min}</answer>", "9\\text{ min}", 0.0),
    ("</think> <answer>108\\text{ degrees}</answer>", "108\\text{ degrees}", 1.0),
    # ... as is an answer line listing them
    ("$15 \\times 12 = 180$ miles.\nAnswer: 180\\text{ miles}, 181\\text{ miles}, 182\\text{ miles}.",
     "180\\text{ miles}", 0.0),
    ("$15 \\times 12 = 180$ miles.\nAnswer: 181\\text{ miles}, 180\\text{ miles}.",
     "180\\text{ miles}", 0.0),
    ("$15 \\times 12 = 180$ miles.\nAnswer: 180\\text{ miles}.", "180\\text{ miles}", 1.0),
    ("$15 \\times 12 = 180$ miles.\nAnswer: 180\\text{ square miles}", "180", 1.0),
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
        # a blank answer line, then a separator and a retelling ending on the gold
        (
            "= 3 bolts.\nAnswer: .\n\nEnd of conversation.\n####\nIt takes 2 bolts\nTotaling\n3 bolts.",
            "3",
            0.0,
        ),
        (
            "= 3 bolts.\nAnswer: It takes 3 bolts.\n\nEnd.\n####\nIt takes 2 bolts\nTotaling\n3 bolts.",
            "3",
            1.0,
        ),
        ("So 18 eggs.\n\n####\n\nThe total is 18.", "18", 1.0),  # a separator, no marker
        ("So 18 eggs.\n\n####", "18", 0.0),  # a bare marker at the end: blank
        # a list of candidates after the answer: no one answer
        (
            "The number of bags sold is 50</think> The answer is 50.\n\nSo $a = 51, 50, 52$.",
            "50",
            0.0,
        ),
        ("The final answer is \\(\\boxed{18}\\).\nShe earns\n\nSo $a = 19, 18, 20$.", "18", 0.0),
        ("Melanie had indeed\n\nSo $a = 19, 18, 20$.", "18", 0.0),
        ("The answer is 50.\n\nSo $a = 50$.", "50", 1.0),
        ("The answer is 1200.\n\nSo $x = 1,200$.", "1200", 1.0),  # a grouped number
        ("The answer is 50.\n\nSo $a = 50, b = 3$.", "50", 1.0),  # two names, no list
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
    # an empty tag named as the answer, or after a finished sentence, is blank
    assert blank_answer("Giving the answer as <answer></answer>")
    assert blank_answer("The answer is in <answer></answer>")
    assert not blank_answer("Put it within <answer></answer>")
    assert not blank_answer("Write the <answer></answer> tags last.")
    assert blank_answer("The answer is 1500. <answer></answer>")
    assert not blank_answer("Answer: 120 degrees <answer></answer>")
    # a form's content is its line; a '####' run or a separator line is no marker
    assert blank_answer("So 3.\nAnswer: .\n\nThen 3 bolts.")
    assert not blank_answer("The answer is:\n\n42")
    assert blank_answer("So 3.\nAnswer: .\n####\nThen 3 bolts.")
    assert not blank_answer("So 3.\nAnswer: 3.\n####\nThen 3 bolts.")
    assert ends_on_list("So $a = 3s, 2s, 4s$.") == "3s, 2s, 4s"
    assert (
        ends_on_list("So $x = 1,200$.") is None and ends_on_list("So $f = g, x \\neq 0$.") is None
    )
