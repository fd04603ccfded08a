"""guards: gsm8k.py: auto, strict '#### n' and flexible last-number reading, compared as numbers."""

from __future__ import annotations

import pickle
import time

import pytest

from _support.verifier_rows import check_gsm8k_row, table_params
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.base import (
    MAX_QUESTION_NUMBERS,
    Context,
    Verifier,
    extract_with,
    question_numbers,
)
from rewardkit.verifiers.gsm8k import GSM8KVerifier

AUTO = GSM8KVerifier()
STRICT = GSM8KVerifier(method="strict")
FLEXIBLE = GSM8KVerifier(method="flexible")

# (gold, response, auto, strict, flexible, why). strict and flexible are verl's rules
# (verl/utils/reward_score/gsm8k.py: the last "#### (-?[0-9.,]+)", the last "-?[0-9.,]+"
# that is not "."), with one difference: verl compares strings, we compare numbers, so
# rows marked "verl: 0" show where verl loses a correct answer and we do not.
ROWS = [
    (
        "72",
        "Natalia sold 48/2 = 24 clips in May.\nAltogether she sold 48+24 = 72 clips.\n#### 72",
        1.0,
        1.0,
        1.0,
        "the dataset's own format",
    ),
    ("72", "She sold 48 + 24 = 72 clips in total.\n#### 72.00", 1.0, 1.0, 1.0, "verl: 0 (string)"),
    ("72", "She sold 72 clips.", 1.0, 0.0, 1.0, "no marker: auto falls back to the last number"),
    (
        "72",
        "#### 72\n\nWait, let me recheck: 48 + 24 = 73.",
        1.0,
        1.0,
        0.0,
        "flexible: last number",
    ),
    ("1000", "The total cost is 10 * 100 = $1,000.\n#### 1,000", 1.0, 1.0, 1.0, "separators"),
    ("1000", "#### $1,000", 1.0, 0.0, 1.0, "verl strict's class has no $: no match"),
    ("18", "Janet makes 9 * $2 = $18 every day.\n#### $18", 1.0, 0.0, 1.0, "verl strict: no match"),
    ("-3", "The temperature dropped to -3 degrees.\n#### -3", 1.0, 1.0, 1.0, "sign"),
    ("-3", "#### 3", 0.0, 0.0, 0.0, "sign matters"),
    ("0.5", "Half of it: 1/2 = 0.5\n#### 0.50", 1.0, 1.0, 1.0, "verl: 0 (string)"),
    # auto: two different final numbers in one paragraph are hedging (more in test_hedging.py)
    ("5", "First guess: #### 3\nActually the answer is 5.\n#### 5", 0.0, 1.0, 1.0, "hedged"),
    ("5", "First guess: #### 3\n\nActually the answer is 5.\n#### 5", 1.0, 1.0, 1.0, "last wins"),
    ("5", "#### 5\n#### 6", 0.0, 0.0, 0.0, "last wins"),
    ("5", "#### five", 0.0, 0.0, 0.0, "words are not numbers"),
    ("5", "", 0.0, 0.0, 0.0, "empty"),
    ("5", "I don't know.", 0.0, 0.0, 0.0, "no number"),
    ("5", "The answer is 5.", 1.0, 0.0, 1.0, "verl flexible reads '5.': 0 (string)"),
    ("12", "####12", 1.0, 0.0, 1.0, "verl strict needs '#### ' with its space"),
    ("12", "####  12", 1.0, 0.0, 1.0, "verl strict: exactly one space"),
    ("1234567", "That is 1,234,567 grains.\n#### 1,234,567", 1.0, 1.0, 1.0, "separators"),
    ("18", "#### 18.", 1.0, 1.0, 1.0, "verl: '18.' != '18': 0 (string)"),
    ("5", "#### 1.2.3\nso 5", 0.0, 0.0, 1.0, "'1.2.3' is no number"),
    ("5", "x . y 5 .", 1.0, 0.0, 1.0, "flexible skips a lone '.' as verl does"),
    # the shapes real model outputs end with (auto)
    (
        "18",
        "Janet's ducks lay 16 eggs ... she makes 9 * 2 = $18 every day.\nThe answer is 18.",
        1.0,
        0.0,
        1.0,
        "lm-eval / Qwen few-shot CoT: 'The answer is n.'",
    ),
    (
        "18",
        "So Janet makes $\\boxed{18}$ dollars every day at the farmers' market.",
        1.0,
        0.0,
        1.0,
        "Qwen2.5-Math-Instruct (boxed CoT prompt)",
    ),
    ("18", "She makes 9 * 2 = 18 dollars.\nA: 18", 1.0, 0.0, 1.0, "Q:/A: few-shot format"),
    ("18", "**Answer:** 18", 1.0, 0.0, 1.0, "markdown answer line"),
    ("18", "The final answer is $18.00.", 1.0, 0.0, 0.0, "flexible reads '18.00.': no number"),
    ("18", "The answer is \\(18\\).", 1.0, 0.0, 1.0, "inline LaTeX"),
    ("18", "\\boxed{\\$18}", 1.0, 0.0, 1.0, "boxed dollars"),
    ("18", "\\boxed{18 \\text{ dollars}}", 1.0, 0.0, 1.0, "boxed with a unit"),
    ("1080", "The answer is $1,080.", 1.0, 0.0, 1.0, "verl flexible '1,080.': 0 (string)"),
    (
        "5",
        "The answer is 5 * 2 = 10.",
        0.0,
        0.0,
        0.0,
        "auto: a calculation's first term is no answer",
    ),
    ("10", "The answer is 5 * 2 = 10.", 1.0, 0.0, 1.0, "auto: its result, the last number"),
    ("18", "The answer is 18.\n\n\\boxed{20}", 0.0, 0.0, 0.0, "auto: the later box wins"),
    ("18", "\\boxed{20}\nThe answer is 18.", 0.0, 0.0, 1.0, "auto: hedged, box and line differ"),
    ("18", "\\boxed{20}\n\nThe answer is 18.", 0.0, 0.0, 1.0, "auto: two bare answers, a hedge"),
    ("18", "\\boxed{20}\n\nSo 20 - 2 more.\n\nThe answer is 18.", 1.0, 0.0, 1.0, "auto: a step"),
    ("18", "\\boxed{x+1}\n#### 18", 1.0, 1.0, 1.0, "a box that is no number is ignored"),
    ("18", "<think>so 17?</think>\nThe answer is 18", 1.0, 0.0, 1.0, "after thinking"),
    ("18", "A: Janet sells 16 - 3 - 4 = 9 eggs, making 18.", 1.0, 0.0, 1.0, "'A:' then prose"),
    ("9", "A: Janet sells 16 - 3 - 4 = 9 eggs, making 18.", 0.0, 0.0, 0.0, "the last number"),
    ("42", "<think>it is 42</think> I am not sure.", 0.0, 0.0, 1.0, "only the conclusion answers"),
    ("7", "<think>it is 42</think> So 7.", 1.0, 0.0, 1.0, "after </think> first"),
    ("18", "<answer> 18 </answer>", 1.0, 0.0, 1.0, "R1-zero tags"),
    ("15", "<answer> 15 miles </answer>", 1.0, 0.0, 1.0, "a unit word in tags"),
    # a full GSM8K dataset answer as the ground truth
    (
        "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72",
        "#### 72",
        1.0,
        1.0,
        1.0,
        "full solution as gold",
    ),
]


@pytest.mark.parametrize(("gold", "response", "auto", "strict", "flexible", "why"), ROWS)
def test_regression_table(
    gold: str, response: str, auto: float, strict: float, flexible: float, why: str
) -> None:
    for verifier, expected in ((AUTO, auto), (STRICT, strict), (FLEXIBLE, flexible)):
        extracted = verifier.extract(response)
        quick = verifier.quick_check(extracted, gold)
        assert quick.score == expected, f"{verifier.key}: {why}"
        assert quick.extra["acc"] is (expected == 1.0)
        assert verifier.check(extracted, gold) == quick  # no slow path


def test_pred_is_reported() -> None:
    verdict = STRICT.quick_check(STRICT.extract("#### 1,000"), "1000")
    assert verdict.extra == {"acc": True, "pred": "1,000"}
    assert STRICT.quick_check(STRICT.extract("no number"), "1").extra == {
        "acc": False,
        "pred": None,
    }


@pytest.mark.parametrize(
    ("gold", "expected"), [(72, 1.0), (72.0, 1.0), (72.5, 0.0), (["70", 72], 1.0)]
)
def test_non_string_ground_truths(gold: object, expected: float) -> None:
    assert STRICT.quick_check(STRICT.extract("#### 72"), gold).score == expected


def test_float_ground_truth_is_read_as_written() -> None:
    assert STRICT.quick_check(STRICT.extract("#### 0.1"), 0.1).score == 1.0


@pytest.mark.parametrize("gold", [None, "", "seventy-two", [], {"a": 1}, True, float("inf")])
def test_unusable_ground_truth_is_an_invalid_row(gold: object) -> None:
    with pytest.raises(InvalidSampleError, match="gsm8k: ground_truth"):
        STRICT.quick_check(STRICT.extract("#### 72"), gold)


def test_key_options_and_protocol() -> None:
    assert AUTO.key == "gsm8k:auto"
    assert STRICT.key == "gsm8k:strict"
    assert FLEXIBLE.key == "gsm8k:flexible"
    assert isinstance(STRICT, Verifier)
    assert pickle.loads(pickle.dumps(FLEXIBLE)) == FLEXIBLE
    with pytest.raises(ValueError, match="auto, strict, flexible"):
        GSM8KVerifier(method="lenient")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("response", "strict"),
    [
        ("a" * 1_000_000, 0.0),
        ("#### " * 200_000, 0.0),
        ("9" * 1_000_000, 0.0),
        ("1," * 500_000, 0.0),
        ("x" * 1_000_000 + "#### 5", 1.0),
        ("#### 5" + "x" * 1_000_000, 0.0),  # only the last 256K characters are searched
        ("\x00#### 5\x00", 1.0),
        ("\ud800 #### 5 \ud800", 1.0),
        ("The answer is " * 80_000, 0.0),
        ("\nA: x" * 200_000, 0.0),
        ("\\boxed{" * 150_000 + "#### 5", 1.0),
        ("1 . " * 1_000_000 + "#### 5", 1.0),  # 4 MB
    ],
    ids=[
        "prose",
        "hashes",
        "digits",
        "commas",
        "late-answer",
        "early-answer",
        "nul",
        "surrogate",
        "answer-words",
        "a-lines",
        "open-boxes",
        "4mb-dots",
    ],
)
def test_hostile_responses_are_bounded(response: str, strict: float) -> None:
    for verifier in (AUTO, STRICT, FLEXIBLE):
        started = time.process_time()
        verdict = verifier.quick_check(verifier.extract(response), "5")
        assert time.process_time() - started < 1.0
        assert verdict.score in (0.0, 1.0)
    assert STRICT.quick_check(STRICT.extract(response), "5").score == strict


TORA = "```python\ndef answer():\n    return 8 * 15\n\nprint(answer())\n```\n"

# ``auto``: the number a final answer states, read out of what qualifies it (a second value,
# a range, a bound, a negation, an operator word); any word between two numbers that ends
# the clause is no number ("18 sau 20", "18 hours 30 minutes"), unless it is a context
# ("18 in 2 weeks"). Hedged answers are in test_hedging.py.
AUTO_ROWS: list[tuple[str, str, float, str]] = [
    # two values offered or listed
    ("18", "The answer is 18 or 19", 0.0, "two values offered"),
    ("19", "The answer is 18 or 19", 0.0, "the same against the other value"),
    ("18", "The answer is 18, 19", 0.0, "two values listed"),
    ("18", "#### 18, 19", 0.0, "a list after ####"),
    ("18", "#### 18 or 19", 0.0, "alternatives after ####"),
    ("18", "A: 18 or 19", 0.0, "alternatives after 'A:'"),
    ("18", "The answer is 18 (or 19)", 0.0, "an alternative in parentheses"),
    ("18", "The answer is 18 dollars or 19 dollars", 0.0, "alternatives with units"),
    ("18", "The answer is 18 or maybe 19", 0.0, "'or maybe'"),
    ("18", "The answer is 18 and 19", 0.0, "two values listed"),
    ("19", "<answer>18 or 19</answer>", 0.0, "two values in a tag: never the last alone"),
    # a range, a bound, a negation
    ("18", "The answer is 18 to 19", 0.0, "a range"),
    ("18", "The answer is 18\u201319", 0.0, "a range with an en dash"),
    ("19", "The answer is 18-19", 0.0, "a range: never its end"),
    ("19", "The answer is between 18 and 19", 0.0, "a range: never its end"),
    ("18", "Answer: 18 or more", 0.0, "a bound"),
    ("18", "The answer is 18+", 0.0, "'18+': at least 18"),
    ("18", "The answer is at least 18", 0.0, "a bound before the number"),
    ("18", "The answer is not 18", 0.0, "a negation"),
    # a difference stated is its size (ToRA's GSM8K endings; math-verify reads them so);
    # "than" before a number keeps an expression or a bound
    ("21", "John has $21$ more candies than James.", 1.0, "a difference of 21"),
    ("6", "Jairus will get $6$ dollars more than Jenny.", 1.0, "a difference of 6"),
    ("14", "The final temperature was 14 degrees lower than the start.", 1.0, "a difference"),
    ("5", "The answer is 5 less than 10.", 0.0, "an expression: 10 - 5"),
    ("5", "The answer is 5 more than five.", 0.0, "an expression, in words"),
    ("21", "John has 21 or more candies than James.", 0.0, "a hedge before the comparative"),
    ("18", "The answer is 18\u03c0", 0.0, "a factor: 18 pi"),
    ("18", "So 2 * 9 = 18.\n\nThe result is 18x.", 0.0, "the conclusion is 18x, no number"),
    # words and operators that change the number
    ("18", "The answer is 18 minus 1", 0.0, "an operator word"),
    ("18", "He needs 18 and a half", 0.0, "18.5"),
    ("18", "The answer is 18 x 2", 0.0, "a product"),
    ("18", "The answer is 18\u00b2", 0.0, "a square"),
    ("2", "The answer is 1/2", 0.0, "a fraction: never its denominator 2"),
    ("19", "The answer is 18/19", 0.0, "a fraction: never its denominator"),
    # commas that group no thousands
    ("18", "The answer is 1,8", 0.0, "1,8 is 1.8 in much of the world, never 18"),
    ("1819", "#### 18,19", 0.0, "two numbers, never 1819"),
    # still read
    ("18", "The answer is 18, not 19", 1.0, "a value ruled out after the answer"),
    ("1000", "The answer is $1,000.", 1.0, "a thousands separator"),
    ("12345.5", "#### $12,345.50", 1.0, "separators and decimals"),
    ("18", "The answer is 18 apples.", 1.0, "a unit"),
    ("18", "The answer is 18 dozen.", 1.0, "'how many dozen': a unit"),
    ("18", "She had 5 apples and then 18.", 1.0, "the last number of a passage"),
    ("0.5", "I solved it earlier, it's 5/10 or 0.5.", 1.0, "the same value restated"),
    ("2", "<answer> Answer is: 2 prime numbers between 20 and 30.", 1.0, "'between' describes"),
    (
        "5",
        "The minimum is 6. It can't be more than 6, as two others must have more than 5.",
        0.0,
        "a real output's shape: a bound before the last number",
    ),
    # a word between two numbers
    ("18", "The answer is 18 sau 20", 0.0, "Romanian 'or': any word then a number"),
    ("18", "The answer is 18 (English), 20 (Deutsch)", 0.0, "two labelled values"),
    ("18", "The answer is 18 hours 30 minutes", 0.0, "18.5 hours is no 18"),
    ("20", "So it is 18~20.", 0.0, "a range, read from its end"),
    ("2", "So it is 18 ± 2.", 0.0, "'± 2' is no answer 2"),
    # not hedging: a context, a reason, a description
    ("18", "The answer is 18 in 2 weeks.", 1.0, "a context"),
    ("18", "The answer is 18 because 3 x 6 = 18.", 1.0, "a reason going on"),
    ("18", "The answer is 18 (3 x 6)", 1.0, "a calculation in parentheses, not '(alt. 20)'"),
    # a program's printed output restated last (ToRA's GSM8K endings, tests/data/real_outputs
    # tora-70b-v1.0:705 and :1254, their box taken off: the last number is the question's)
    ("120", f"{TORA}```output\n120.0\n```\nMartha's turtle can crawl $120.0$ feet in 40 seconds.",
     1.0, "the printed value said again, then a number of the question"),
    ("30", f"{TORA}```output\n30\n```\nIt will take $30$ minutes longer for the coat on 6 "
     "paintings to dry.", 1.0, "the same, an integer"),
    ("6", f"{TORA}```output\n120.0\n```\nMartha's turtle can crawl $120.0$ feet in 6 seconds.",
     0.0, "the question's number is no answer"),
    ("40", f"{TORA}```output\n120.0\n```\nSo the turtle crawls 40 feet.", 1.0,
     "not restated: the last number, as before"),
    ("2", f"{TORA}```output\n120\n```\nThat is 120 seconds, or 120 / 60 = 2 minutes.", 1.0,
     "work after it: the last number"),
    ("9", f"{TORA}```output\n9\n```\nJane must score at least $9$ points.", 0.0,
     "restated with a bound: what qualifies it stays"),
    ("120", f"{TORA}```output\n120\n```\nIt is $120$ feet. No wait, it is 130 feet.", 0.0,
     "a later sentence gives another number: the last number"),
    # an outside red team's cases: a value printed on the way, or corrected after
    ("36", f"{TORA}```output\n12\n```\nShe buys 12 packs, so she spends 36 dollars.", 1.0,
     "restated in prose: an intermediate value as likely as a result"),
    ("40", f"{TORA}```output\n36\n```\nShe pays $36$ dollars, so with the $4$ dollar tip, "
     "she pays $40$ dollars.", 1.0, "more math after it: another value stated"),
    ("12", f"{TORA}```output\n3\n```\nShe needs $3$ more boxes to make 12 boxes.", 1.0,
     "'make 12' is no quantity recalled"),
    ("36", f"{TORA}```output\n36\n```\nShe pays $36$ dollars, actually 40 dollars.", 0.0,
     "a correction after it"),
    ("36", f"{TORA}```output\n36\n```\nShe pays $36$ dollars \u2192 40 dollars after tax.",
     0.0, "an arrow to another value"),
    ("36", f"{TORA}```output\n36\n```\nShe pays $36$ dollars, for a total of 40 dollars.",
     0.0, "'of 40' may be another result: the last number"),
    # restated but for a float's noise or a sign the words carry (the prose slice's ToRA
    # rows tora-code-34b-v1.0:30 and :78, tora-70b-v1.0:1314)
    ("109", f"{TORA}```output\n109.00000000000001\n```\nAllen will be $109$ years old in "
     "10 years.", 1.0, "a float's last-place noise"),
    ("6", f"{TORA}```output\n-6.0\n```\nVincent saves $6$ dollars in 3 days.",
     1.0, "a sign the words carry ('saves')"),
    ("7", f"{TORA}```output\n109.001\n```\nAllen will be $109$ years old in 7 years.", 1.0,
     "109.001 is no float noise of 109: not restated, the last number"),
    ("20", f"{TORA}```output\n20\n```\nThere are $20$ kids not allergic to anything.", 1.0,
     "'not' describes the kids, not the value (tora-code-34b-v1.0:477)"),
    ("20", f"{TORA}```output\n20\n```\nThere are $20$, not allergic.", 0.0,
     "'not' right after the value: qualified"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"auto": AUTO_ROWS})
)
def test_auto_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_gsm8k_row(gold, response, expected, reason)


# A program's printed output restated, then numbers the question wrote (ToRA's GSM8K
# endings in tests/data/real_outputs, their box taken off as the prose slice does: ids
# tora-70b-v1.0:30, :792, :903, tora-code-34b-v1.0:750; questions as the dump gives them)
QUESTION_ROWS: list[tuple[str, str, str, float, str]] = [
    ("Darrell and Allen's ages are in the ratio of 7:11. If their total age now is 162, "
     "calculate Allen's age 10 years from now.", "109",
     f"{TORA}```output\n109.000000000000\n```\nAllen will be $109$ years old 10 years from now.",
     1.0, "the question's 10 recalled after the result"),
    ("He finds 10 bottle caps a day on his way home and each bottle cap is worth $.25.  How "
     "much money does he make in a 30 day month?", "75",
     f"{TORA}```output\n75.0\n```\nDamien makes $75.0$ dollars in a 30 day month.",
     1.0, "'a 30 day month': the question's"),
    ("How much material would she need to make 20 small and 8 large masks for her class?",
     "16", f"{TORA}```output\n16.0\n```\nJo would need $16.0$ yards of material to make 20 "
     "small and 8 large masks for her class.", 1.0, "two of the question's numbers"),
    ("If this continues, how many chairs in total will Candy be able to rent out in two "
     "4-week months?", "4000", f"{TORA}```output\n4000\n```\nCandy will be able to rent out "
     "$4000$ chairs in two 4-week months.", 1.0, "'4-week'"),
    # what stays the last number
    ("calculate Allen's age 10 years from now.", "109", f"{TORA}```output\n109\n```\n"
     "Allen will be $109$ years old, so in 20 years he is 129.", 0.0,
     "a number the question does not write: another result"),
    ("calculate Allen's age 10 years from now.", "109", f"{TORA}```output\n109\n```\n"
     "Allen will be $109$ years old, or $10$ years from now.", 0.0,
     "the question's number set off as math: a value stated"),
    ("", "109", f"{TORA}```output\n109\n```\nAllen will be $109$ years old 10 years from now.",
     0.0, "no prompt given: the question's numbers are unknown, the last number as before"),
]  # fmt: skip


@pytest.mark.parametrize(("question", "gold", "response", "expected", "reason"), QUESTION_ROWS)
def test_a_number_the_question_wrote_after_the_printed_result(
    question: str, gold: str, response: str, expected: float, reason: str
) -> None:
    verifier = GSM8KVerifier()
    extracted = extract_with(verifier, response, Context.of(question, {}))
    assert verifier.check(extracted, gold).score == expected, reason


def test_the_question_numbers_are_compared_by_value_and_bounded() -> None:
    assert question_numbers("It costs $1,200.50 for 3.0 days, 7 hours; v2.5 and x3") == {
        "1200.5",
        "3",
        "7",
    }
    many = question_numbers(" ".join(str(n) for n in range(1000)))
    assert len(many) == MAX_QUESTION_NUMBERS and "0" in many and "999" not in many


def test_a_qualified_number_is_reported_with_its_words() -> None:
    """The row's ``pred`` shows what was read, so a 0 is explained, not silent."""
    assert AUTO.extract("The answer is 18 or 19").answer == "18 or 19"


def test_strict_keeps_verls_last_hash_rule() -> None:
    """verl's strict rule reads the last ``####``: two of them are no hedge to it."""
    assert STRICT.check(STRICT.extract("#### 18\n#### 20"), "20").score == 1.0


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("#### 18{,}5", 0.0), ("#### 18{,}000", 0.0), ("#### 18'000", 0.0),
        ("#### 18\u00a0000", 0.0), ("#### 18\u2009000", 0.0), ("#### 18.(3)", 0.0),
        ("#### 18.\\overline{3}", 0.0), ("#### 18\u066b5", 0.0), ("The answer is 18'000.", 0.0),
        # the number itself, a word or a parenthesis after a space: still 18
        ("#### 18", 1.0), ("#### 18.", 1.0), ("#### 18's", 1.0), ("#### 18 (eighteen)", 1.0),
    ],
)  # fmt: skip
def test_a_number_continued_past_a_separator_is_never_its_first_part(
    response: str, expected: float
) -> None:
    """A red-team probe found each credited against 18 (F3): the reading stopped at a
    thousands or decimal mark written in braces, with an apostrophe or a narrow space,
    in another script, or at a repeating decimal."""
    check_gsm8k_row("18", response, expected, "a number continued past a separator")


# The answer, then quantities the question wrote, in the last sentence (an outside red
# team's probe: GSM8K's last-number reading took the question's 3 weeks for the answer)
QUANTITY_ROWS: list[tuple[str, str, str, float]] = [
    # (question, response, gold, expected)
    ("Mary saves $4 each week. How much money will she have after 3 weeks?",
     "She will have $12 after 3 weeks.", "12", 1.0),
    ("Mary saves $4 each week. How much money will she have after 3 weeks?",
     "She will have $12 after 3 weeks.", "3", 0.0),
    ("Mary saves $4 each week. How much money will she have after 3 weeks?",
     "Mary saves $4 × 3 = $12 in 3 weeks.", "12", 1.0),
    ("Mary saves $4 each week. How much money will she have after 3 weeks?",
     "She has 4 after 3 weeks.", "4", 0.0),  # the question's 4 too: the last number, as before
    ("Mary saves $4 each week. How much money will she have after 3 weeks?",
     "So it is 5 or 12 after 3 weeks.", "12", 0.0),  # qualified: no answer
    ("", "She will have $12 after 3 weeks.", "12", 0.0),  # no question: the last number
]  # fmt: skip


@pytest.mark.parametrize(("question", "response", "gold", "expected"), QUANTITY_ROWS)
def test_the_question_quantities_after_the_answer(
    question: str, response: str, gold: str, expected: float
) -> None:
    verifier = GSM8KVerifier()
    extracted = extract_with(verifier, response, Context.of(question, {}))
    assert verifier.check(extracted, gold).score == expected
