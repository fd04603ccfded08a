"""guards: a value the response itself disowns is never its answer, in every family that
reads labels (_common.disowned_labels, gsm8k's JSON key, choice's negated letter).

Three shapes a red team found credited (a probe of ~4,100 misleading responses written
from outside the project, families F10 and F15):
- an answer label that disowns its value: "The answer is 19. Common wrong answer: 18"
  was credited for 18 (the last answer line). A clause that labels its value wrong (a
  trap, a distractor, "not the answer") is read as struck-out text is: not at all, so
  the answer the response gives is read, 19;
- a JSON object with an ``answer`` key and side fields: ``{"answer": 19, "steps": 18}``
  was read by GSM8K as its last number (18). The key is a label: 19;
- a letter ruled out: "The answer is not (B)", ``$\\neg\\boxed{B}$``, "not
  $\\boxed{B}$ but C" were read as B. A negation right before the letter's form is no
  choice, and the reader stops there (an earlier form is not read instead).
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import score
from rewardkit.verifiers._common import disowned_labels, json_answers
from rewardkit.verifiers.base import Verifier
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

MATH, GSM8K, CHOICE = MathVerifier(), GSM8KVerifier(), ChoiceVerifier()


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("The answer is 19.\n\nCommon wrong answer: 18", "The answer is 19.\n\nCommon "),
        ("A common incorrect answer is 18, but it is 19.", "A common , but it is 19."),
        ("Not the answer: 18", ""),
        ("A tempting but wrong answer would be 18. So 19.", "A . So 19."),
        ("Wrong answers: 18, 20\nAnswer: 19", "\nAnswer: 19"),
        ("Answer: (B) (distractor answer: C)", "Answer: (B) ()"),
        ("WRONG ANSWER: 18; answer: 19", "; answer: 19"),
        ("Wrong answer: 18.5 apples. Answer: 19", ". Answer: 19"),
        # an answer, or words that disown nothing next to the label
        ("The answer is 18.", "The answer is 18."),
        ("I cannot find the answer: 18", "I cannot find the answer: 18"),  # "cannot": no "not"
        (
            "The wrong way gives 20, so the answer is 18.",
            "The wrong way gives 20, so the answer is 18.",
        ),
        ("Answer: 18 (the false start gave 20)", "Answer: 18 (the false start gave 20)"),
        ("answered", "answered"),
    ],
)
def test_a_label_that_disowns_its_value_is_no_label(text: str, read: str) -> None:
    assert disowned_labels(text) == read


@pytest.mark.parametrize("verifier", [MATH, GSM8K], ids=["math", "gsm8k"])
@pytest.mark.parametrize(
    "response",
    [
        "The answer is 19.\n\nCommon wrong answer: 18",
        "The answer is 19.\n\nA common incorrect answer is 18.",
        "The answer is $\\boxed{19}$.\n\nWrong answer: 18",
        "#### 19\n\nNot the answer: 18",
    ],
)
def test_a_disowned_value_after_the_answer_is_never_credited(
    verifier: Verifier, response: str
) -> None:
    assert score(verifier, response, "18") == 0.0


@pytest.mark.parametrize("verifier", [MATH, GSM8K], ids=["math", "gsm8k"])
@pytest.mark.parametrize(
    "response",
    [
        "A common wrong answer is 18, but the answer is 19.",
        "Wrong answer: 18.\n\nThe answer is 19.",
        "Wrong answer: 18.\n\n$\\boxed{19}$",
    ],
)
def test_the_answer_given_after_a_disowned_one_is_read(verifier: Verifier, response: str) -> None:
    assert score(verifier, response, "19") == 1.0
    assert score(verifier, response, "18") == 0.0


@pytest.mark.parametrize(
    ("response", "right", "wrong"),
    [
        ('{"answer": 19, "steps": 18}', "19", "18"),
        ("{'answer': 19, 'confidence': 18}", "19", "18"),
        ('{"steps": 18, "answer": 19}', "19", "18"),
        ('Final JSON: {"answer": "19", "note": "checked 18 twice"}', "19", "18"),
        ('{"answer": "-4", "tries": 3}', "-4", "3"),
    ],
)
def test_gsm8k_reads_a_json_answer_key_not_its_side_fields(
    response: str, right: str, wrong: str
) -> None:
    assert score(GSM8K, response, right) == 1.0
    assert score(GSM8K, response, wrong) == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "The answer is not (B).",
        "The answer is $\\neg\\boxed{B}$.",
        "The answer is not $\\boxed{B}$ but C.",
        "It is (A), not (B).",
        "Rather than **B**",
        "Wrong answer: B",  # a disowned label
        "Answer: B\n\nLet me double check.\n\nThe answer is not (B).",  # taken back later
        "Answer: B\n答案不是B。",
        "Answer: B\n\nThe answer isn't (B).",  # the denial's other words
        "Answer: B\n\nThe answer can't be B.",
    ],
)
def test_a_letter_ruled_out_is_no_choice(response: str) -> None:
    assert score(CHOICE, response, "B") == 0.0


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("The answer is (B).", "B"),
        ("Not (A) but (B).", "B"),
        ("Answer: B, not C", "B"),
        ("Answer: B. The answer is not C, it is B.", "B"),  # another letter ruled out
    ],
)
def test_a_letter_chosen_beside_a_negation_is_still_chosen(response: str, gold: str) -> None:
    assert score(CHOICE, response, gold) == 1.0


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ('So:\n\n{"answer": 3, "steps": 2}', "So:\n\nAnswer: 3"),
        ('{"Answer": "\\\\frac{1}{2}", "note": "18"}', "Answer: \\frac{1}{2}"),  # braces inside
        ('{"final_answer": [1, 2]}', "Answer: [1, 2]"),
        ('{"steps": 18, "answer": 19} then {"answer": 20}', "Answer: 19 then Answer: 20"),
        # left as written: two answer keys, no JSON, no answer key, an object nested
        ('{"answer": 1, "final_answer": 2}', '{"answer": 1, "final_answer": 2}'),
        ('{bad "answer": 3}', '{bad "answer": 3}'),
        ('{"result": 3}', '{"result": 3}'),
        ('{"a": {"b": 1}, "answer": 3}', '{"a": {"b": 1}, "answer": 3}'),
    ],
)
def test_a_json_object_answers_its_answer_key(text: str, read: str) -> None:
    assert json_answers(text) == read


@pytest.mark.parametrize(
    ("verifier", "response", "right", "wrong"),
    [
        (MATH, 'The value is\n\n{"answer": 3, "steps": 2}', "3", "2"),
        (MATH, '{"answer": "\\\\frac{1}{2}", "checked": "1/3"}', "\\frac{1}{2}", "\\frac{1}{3}"),
        (GSM8K, 'So:\n{"answer": 19, "steps": 18}', "19", "18"),
        (CHOICE, '{"answer": "C", "eliminated": "B"}', "C", "B"),
    ],
    ids=["math", "math-latex", "gsm8k", "choice"],
)
def test_each_family_reads_the_json_answer_key(
    verifier: Verifier, response: str, right: str, wrong: str
) -> None:
    assert score(verifier, response, right) == 1.0
    assert score(verifier, response, wrong) == 0.0


def test_json_reading_is_bounded_on_a_response_of_answer_keys() -> None:
    text = '{"answer": 1, ' * 100_000  # 1.4 MB of keys, no object closed
    assert json_answers(text) == text


@pytest.mark.parametrize(
    "response",
    [
        "The answer is $\\boxed{18}$.\n\nThe answer is not 18 but 19.",
        "The answer is $\\boxed{18}$. Answer: not 18, it is $19$.",
        "The answer is $\\boxed{18}$. 答案不是18，而是19。",
        "#### 18\n答案不是18，而是19。",
        "The answer is $\\boxed{18}$. The answer is not 17 but 19.",  # another value given
    ],
)
def test_an_answer_denied_after_the_box_takes_its_credit_away(response: str) -> None:
    assert score(MATH, response, "18") == 0.0
    assert score(GSM8K, response, "18") == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "The answer is not unique, but the smallest is $\\boxed{18}$.",  # before the box
        "The answer is $\\boxed{18}$. The answer is not unique.",  # no value denied
        "The answer is $\\boxed{18}$. The answer is not 17, it is 18.",  # another ruled out
    ],
)
def test_a_negation_that_denies_no_value_keeps_the_answer(response: str) -> None:
    assert score(MATH, response, "18") == 1.0
