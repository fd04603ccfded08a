"""guards: a program's printed result, restated as math in the last words, is the answer,
in MATH as in GSM8K; an answer marker followed by a sentence or a program is no heading.

The MATH rows are endings of real ToRA-style outputs of the prose slice (ids ei
iter_1:487, :821, :284 in tests/data/real_outputs, their box taken off): math-verify's
extraction reads another number of the last sentence there (the 9 of "divided by 9",
the 2.5 of "2.5 cents"). The GSM8K table of the same rule is in test_gsm8k.py.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import check_math_row, score
from rewardkit.verifiers._final import last_printed
from rewardkit.verifiers.base import Context, extract_with
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

V, GSM8K = MathVerifier(), GSM8KVerifier()
PROGRAM = "```python\nremainder = (8 * (10**18) + 1**18) % 9\nprint(remainder)\n```\n"


def printed(value: str, words: str) -> str:
    return f"Let's use Python to verify this:\n\n{PROGRAM}```output\n{value}\n```\n{words}"


PRINTED_ROWS = [
    # (gold, response, expected, reason)
    ("0", printed("0", "The remainder when \\(8 \\cdot 10^{18} + 1^{18}\\) is divided by 9 is \\(0\\)."),
     1.0, "the question's own 'remainder when': no condition"),
    ("19", printed("19", "The number of visible factor numbers from 100 to 150, inclusive, is \\(19\\)."),
     1.0, "numbers before the restatement are the question's"),
    ("9", printed("9", "The remainder when 8 is divided by 9 is \\(9\\)."), 1.0, "restated"),
    ("8", printed("9", "The remainder when 8 is divided by 9 is \\(9\\)."), 0.0, "a wrong result"),
    ("19", printed("19", "The count is \\(19\\). Actually, it is \\(20\\)."), 0.0,
     "a value set off after it: corrected, the 19 is not read"),
    ("9", printed("9", "Jane must score at least $9$ points."), 0.0, "a bound, not a value"),
    ("9", printed("9", "Jane must score $9$ or more points."), 0.0, "qualified after it"),
    # taken back or bounded after the restatement (an outside red team's probes)
    ("19", printed("19", "So the total is $19$.\n\nWait, that's wrong: I was off by 3."), 0.0,
     "a correction after it"),
    ("19", printed("19", "So the total is $19$, but I multiplied wrong, so it is off by 3."), 0.0,
     "'but' after it"),
    ("19", printed("19", "So $19$ is an upper bound; the true value is smaller by 3."), 0.0,
     "a clause after it"),
    ("19", printed("19", "The code computes $19$, which isn't the answer."), 0.0, "denied"),
    ("19", printed("19", "The count is 19 = 20 - 1."), 1.0,
     "'=' after the output: more work, the passage as before (math-verify reads 19 there)"),
    ("20", printed("19", "The count is 19 = 20 - 1."), 0.0, "and no restated value is read"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), PRINTED_ROWS)
def test_a_printed_result_restated_is_the_answer(
    gold: str, response: str, expected: float, reason: str
) -> None:
    check_math_row(gold, response, expected, reason)


def test_the_restated_value_is_read_inline() -> None:
    """Decided without math-verify: its extraction reads the 9 of "divided by 9"."""
    response = PRINTED_ROWS[0][1]
    extracted = V.extract(response)
    assert (extracted.answer, extracted.extra["source"]) == ("0", "printed")
    verdict = V.quick_check(extracted, "0")
    assert verdict is not None and verdict.score == 1.0


@pytest.mark.parametrize(
    "words",
    [
        "If she studies, she scores $9$ points.",  # a condition
        "Jane must score at least $9$ points.",  # a bound
        "She scores $9$ or more points.",  # qualified after it
        "She scores about $9$ points.",  # a doubt
    ],
)
def test_a_restatement_in_doubt_is_no_printed_answer(words: str) -> None:
    """The passage's own rules read it, as before (math-verify, or a refusal)."""
    assert V.extract(printed("9", words)).extra["source"] != "printed"


QUESTION = "If it costs 2.5 cents to copy a page, how many pages can you copy for $\\$20$?"
COPIES = printed(
    "800.0",
    "Based on the calculation, you can copy \\(800\\) pages for $20 at a rate of 2.5 cents per page.",
)


def test_a_number_the_question_wrote_may_follow_the_result() -> None:
    """ "for $20" (after a preposition) and "2.5 cents" (the prompt writes 2.5) are the
    question's quantities recalled, not a value of the answer's own."""
    extracted = extract_with(V, COPIES, Context.of(QUESTION, {}))
    assert (extracted.answer, extracted.extra["source"]) == ("800", "printed")
    assert V.check(extracted, "800").score == 1.0


def test_without_the_question_a_later_number_keeps_the_passage() -> None:
    extracted = extract_with(V, COPIES, Context.of("", {}))
    assert extracted.extra["source"] == "expression"


# An answer marker whose line goes on as a finished sentence is no heading; nor is the
# program a heading introduces a value (ids ei iter_1:821 and :324: the marker read the
# numbered steps "1. Define ... 2. Iterate" as '1, 2', and a code fence as the answer)
MARKER_ROWS = [
    ("19", "Answer: Let's write the code to solve this problem step-by-step.\n\n1. Define a "
     "function.\n2. Iterate through the range.\n\nThe count is $19$.", 1.0,
     "a sentence after the marker: the numbered steps below are no answer"),
    ("30", "Let's put this into code to get the exact answer:\n```python\nprint(30)\n```\n"
     "The total is:\n\n\\[\n30\n\\]", 1.0, "a program after the marker: no value of its own"),
    ("42", "**Final Answer:**\n\n42", 1.0, "a heading, its value below"),
    ("42", "**Final Answer:** The number of ways is\n\\[\n42\n\\]", 1.0,
     "a heading whose sentence goes on into the value"),
    ("41", "**Final Answer:** The number of ways is\n\\[\n42\n\\]", 0.0, "and it is read"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), MARKER_ROWS)
def test_an_answer_marker_heading_reads_a_value_not_a_sentence_or_program(
    gold: str, response: str, expected: float, reason: str
) -> None:
    check_math_row(gold, response, expected, reason)


def test_the_marker_sentence_does_not_read_its_steps() -> None:
    extracted = V.extract(MARKER_ROWS[0][1])
    assert extracted.answer != "1, 2" and extracted.extra["source"] != "answer_line"


# A program's last printout that is several numbers or an error gives no one answer (an
# outside red team's finding: GSM8K's last-number reading credited 13 for "[12, 13]", and
# both families credited the 12 of "ValueError: 12")
LIST_OUT = "```python\nprint([12, 13])\n```\n```output\n[12, 13]\n```"
ERROR_OUT = (
    "```python\nprint(f(12))\n```\n```\nTraceback (most recent call last):\nValueError: 12\n```"
)
ONE_OUT = "```python\nprint(8 * 15)\n```\n```output\n120\n```"


@pytest.mark.parametrize(
    ("verifier", "response", "gold", "expected"),
    [
        (GSM8K, LIST_OUT, "13", 0.0),
        (GSM8K, ERROR_OUT, "12", 0.0),
        (GSM8K, ONE_OUT, "120", 1.0),  # one number printed: the answer, as before
        (V, LIST_OUT, "13", 0.0),
        (V, LIST_OUT, "12, 13", 1.0),  # a list gold: the list printed (math-verify)
        (V, ERROR_OUT, "12", 0.0),
        (V, ONE_OUT, "120", 1.0),
    ],
    ids=lambda value: repr(value)[:20],
)
def test_a_last_printout_of_several_numbers_or_an_error_is_no_one_answer(
    verifier, response, gold, expected
):
    assert score(verifier, response, gold) == expected
    assert score(verifier, response + "\nSo the answer is 12.", "12") == 1.0  # words after it


def test_what_a_last_printout_is() -> None:
    assert last_printed(LIST_OUT) == "[12, 13]\n"
    assert last_printed(LIST_OUT + "\nSo 13.") is None  # words after it: no last printout
    assert last_printed("```python\nprint(1, 2)\n```") is None  # a program, not its output
    assert last_printed("```output\n" + "1\n" * 5000 + "```") is None  # bounded: too long


def test_a_program_after_the_stated_value_is_no_answer() -> None:
    """A program written after the answer and never run (the prose slice's ei
    iter_1:498) holds numbers of its own: math-verify read one of them; the passage is
    read without the program, as GSM8K's last-number reading is."""
    response = (
        "Thus, the value of the expression is \\(27\\).\n```python\n# verify\nc = 3\n"
        "expression_value = (c**c - c * (c-1)**c)**c\nprint(expression_value)\n```"
    )
    assert score(V, response, "27") == 1.0
    assert score(V, response, "3") == 0.0
    assert score(V, response.replace("\\(27\\)", "\\(26\\)"), "27") == 0.0


def test_a_math_fence_is_no_program() -> None:
    """A fenced ``math`` (or ``latex``) block is typeset math, read as the passage's."""
    assert score(V, "So it is \\(27\\).\n```math\n28\n```", "28") == 1.0
    assert score(V, "So it is \\(27\\).\n```python\nprint(28)\n```", "27") == 1.0
