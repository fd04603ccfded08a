"""guards: a value qualified in words is not that value, in prose, answer lines and tags.

A bound ("nearly 18", "in excess of 18", "north of 18"), a value named by its relation to
the number ("a multiple of 18", "the successor of 18"), a hedge ("18 or so", "18-odd",
"18...", "18 (estimate)", "18 (upper bound)") says something other than "the answer is
18". math-verify reads the 18 from each; so did rewardkit, where its lists of such words
ended. The words are a closed class (``_latex.changes_before`` before the value,
``_latex.qualifying_words`` after it); a red team's probe of several hundred wordings
found the gaps. An approximation ("about 18", "~18") is no GSM8K answer (exact counts),
but may answer a MATH problem that asks to round. Rows are ``(gold, response, expected,
reason)``; the main table is checked by the math verifier (a row expected 0 also with
fast paths off) and by GSM8K ``auto``.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import (
    check_gsm8k_row,
    check_math_and_gsm8k_row,
    check_math_row,
    table_params,
)
from rewardkit.verifiers import _latex

BEFORE = [
    "nearly", "almost", "just under", "a bit over", "slightly less than", "in excess of",
    "upwards of", "shy of", "north of", "not quite", "on the order of", "anything but",
    "a multiple of", "a divisor of", "the successor of", "the next integer after",
]  # fmt: skip
AFTER = [
    "-odd", "-something", " and change", " or thereabouts", ", roughly", "...", "\u2026",
    "+", " (estimate)", " (guess)", " (upper bound)", " (low confidence)", " (uncertain)",
    " \u274c",
]  # fmt: skip
SHAPES = ["The answer is {q}.", "Final answer: {q}", "So Tom has {q} apples."]

QUALIFIED = [
    ("18", "We add them up.\n\n" + shape.format(q=f"{word} 18"), 0.0, f"{word!r} before")
    for word in BEFORE
    for shape in SHAPES
] + [
    ("18", "We add them up.\n\n" + shape.format(q=f"18{word}"), 0.0, f"{word!r} after")
    for word in AFTER
    for shape in SHAPES
]

# After an answer, a last answer line that bounds or hedges it: the response's last word
# on its answer is not that value (``rewardkit audit``'s changed_in_words family found
# these credited: the earlier form was read instead)
LATER = [
    ("50", "So 400 / 8 = 50. The answer is 50.\n\nThe answer is in excess of 50.", 0.0, "a bound"),
    (
        "50",
        "So 400 / 8 = 50. The answer is 50.\n\nThe answer is a multiple of 50.",
        0.0,
        "a relation",
    ),
    ("50", "So 400 / 8 = 50. The answer is 50.\n\nThe answer is 50-odd.", 0.0, "a suffix"),
    ("2", "Answer:\n2\n\nThe answer is 2 (upper bound).", 0.0, "a remark in brackets"),
    ("50", "So 400 / 8 = 50. The answer is 50.\n\nThe answer is 50.", 1.0, "restated"),
]

# An approximation: GSM8K's golds are exact counts, so "about 18" is no answer there; a
# MATH problem may ask to round, and real outputs answer "approximately $428$ square
# centimeters" for 428 (left to math-verify, which credits it). "~" is approximately in
# plain text (and a TeX tie in math mode, "is~18").
APPROXIMATE = [
    ("18", "We add them up.\n\n#### ~18", 0.0, "'~' before"),
    ("18", "We add them up.\n\nSo Tom has ~18 apples.", 0.0, "'~' before, in prose"),
    ("18", "We add them up.\n\n#### about 18", 0.0, "'about' before"),
    ("18", "We add them up.\n\nSo Tom has close to 18 apples.", 0.0, "'close to' before"),
    ("18", "We add them up.\n\nSo Tom has in the ballpark of 18 apples.", 0.0, "'ballpark'"),
]
MATH_APPROXIMATE = [
    (
        "428\\text{ square centimeters}",
        "So the new area is $427.68$.\nThe answer is approximately $428$ square centimeters.",
        1.0,
        "a rounded answer (a real output's)",
    ),
]

# The same shapes plainly, and words that only look like qualifiers
PLAIN = [
    ("18", "We add them up.\n\nThe answer is 18.", 1.0, "plain"),
    ("18", "We add them up.\n\nSo Tom has 18 apples.", 1.0, "a unit"),
    ("18", "We add them up.\n\nSo Tom has a total of 18 apples.", 1.0, "'a total of'"),
    ("18", "We add them up.\n\nSo the average is an average of 18.", 1.0, "'an average of'"),
    ("18", "We count them.\n\nThere are 18 odd numbers.", 1.0, "'odd' as a word: a count"),
    ("18", "He pays 20.\n\nSo he gets 18 dollars in change.", 1.0, "'in change'"),
    ("18", "We add them up.\n\nThe answer is~18.", 1.0, "a TeX tie, no tilde"),
    ("18", "We add them up.\n\nThe three scores add up to 18.", 1.0, "'add up to': a sum"),
    ("18", "We add them up.\n\nSo Tom has up to 18 apples.", 0.0, "'up to': a bound"),
]


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"),
    table_params({"qualified": QUALIFIED, "plain": PLAIN, "later": LATER}),
)
def test_a_qualified_value_is_not_the_value(
    gold: str, response: str, expected: float, reason: str
) -> None:
    check_math_and_gsm8k_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"approximate": APPROXIMATE})
)
def test_an_approximation_is_no_gsm8k_answer(
    gold: str, response: str, expected: float, reason: str
) -> None:
    check_gsm8k_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"math": MATH_APPROXIMATE})
)
def test_an_approximation_may_answer_a_math_problem(
    gold: str, response: str, expected: float, reason: str
) -> None:
    check_math_row(gold, response, expected, reason)


# "not" after a noun that follows the value describes the noun ("20 kids not allergic");
# after a verb or right after the value it negates, and before a number it rules it out
@pytest.mark.parametrize(
    ("words", "qualifies"),
    [
        (" kids not allergic to anything", False),
        (" apples not counted before", False),
        (" is not right", True),
        (" not allergic", True),
        (" kids, not adults", True),
        (" dollars not sure", True),
        (" kids not", True),
        (", not 30", False),  # (rules 30 out, not 20)
    ],
)
def test_not_after_a_noun_describes_it(words: str, qualifies: bool) -> None:
    assert _latex.qualifying_words(words) is qualifies
