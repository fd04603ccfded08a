"""Multiple choice: the chosen letter (A-J), from the end of the response."""

from __future__ import annotations

import time

import pytest

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.base import Verifier
from rewardkit.verifiers.choice import ChoiceVerifier

V = ChoiceVerifier()

ROWS = [
    ("C", "Mitochondria produce ATP, so the answer is (C).", 1.0),
    ("C", "The answer is C.", 1.0),
    ("C", "Answer: C", 1.0),
    ("C", "**Answer:** C", 1.0),
    ("C", "**Answer: (C)**", 1.0),
    ("C", "The correct option is B.", 0.0),
    ("B", "Considering each option...\nTherefore, the final answer is $\\boxed{B}$.", 1.0),
    ("B", "$\\boxed{\\text{B}}$", 1.0),
    ("D", "(A) is wrong because... (B) fails... so **D**", 1.0),
    ("D", "Option (A) is too small, option (D) fits.", 1.0),
    ("A", "Let me check every choice.\n\nA", 1.0),
    ("A", "Let me check every choice.\n\n(A)", 1.0),
    ("J", "After elimination the answer is J", 1.0),
    ("C", "The answer is C, not (D) as some think.", 1.0),
    ("C", "answer: Consider the energy first.", 0.0),
    ("C", "I am not sure.", 0.0),
    ("C", "", 0.0),
    ("C) 42", "Answer: C", 1.0),
    ("(C)", "Answer: C", 1.0),
    ("c", "Answer: C", 1.0),
    (["B", "C"], "Answer: C", 1.0),
]


@pytest.mark.parametrize(("gold", "response", "expected"), ROWS)
def test_regression_table(gold: object, response: str, expected: float) -> None:
    extracted = V.extract(response)
    verdict = V.quick_check(extracted, gold)
    assert verdict.score == expected, extracted
    assert verdict.extra["acc"] is (expected == 1.0)
    assert V.check(extracted, gold) == verdict


def test_stated_answer_beats_a_later_parenthesised_letter() -> None:
    extracted = V.extract("The answer is B. Note that (D) would need more energy.")
    assert extracted.answer == "B"
    assert extracted.extra["pattern"] == "stated"


@pytest.mark.parametrize("gold", [None, "", "42", 2, [], "Zebra"])
def test_unusable_ground_truth_is_an_invalid_row(gold: object) -> None:
    with pytest.raises(InvalidSampleError, match="choice: ground_truth"):
        V.quick_check(V.extract("Answer: C"), gold)


def test_protocol() -> None:
    assert isinstance(V, Verifier)
    assert V.key == "choice"


@pytest.mark.parametrize(
    "response",
    [
        "a" * 1_000_000,
        "answer " * 150_000,
        "(A) " * 250_000,
        "**" * 500_000,
        "\x00Answer: C\x00",
        "\ud800Answer: C",
    ],
    ids=["prose", "answer-words", "parens", "stars", "nul", "surrogate"],
)
def test_hostile_responses_are_bounded(response: str) -> None:
    started = time.perf_counter()
    verdict = V.quick_check(V.extract(response), "C")
    assert time.perf_counter() - started < 1.0
    assert verdict.score == (1.0 if "Answer: C" in response else 0.0)
