"""Red-team rows: words around a value that change it, alternatives in ``<answer>`` tags,
GSM8K numbers read out of what qualifies them, and Unicode digits.

Each row is ``(gold, response, expected score, reason)``; the expected score is the
correct verdict. The reason names what math-verify alone says (``mv``: ``parse`` of the
boxed gold and of the response, then ``verify``) and what rewardkit said before the fix.
Every MATH row expected 0 is also checked with ``fast_paths=False``: no reading may credit
a wrong answer.

The themes:

* math-verify drops everything from the first ``\\text{`` of an answer ending in ``}`` as
  a unit, and rewardkit dropped trailing unit words, so ``5\\text{ squared}``,
  ``5\\text{ or more}``, ``5\\text{ is wrong}``, ``5\\text{ or 6}`` scored 1 against 5;
  answer lines dropped the words after a number the same way ("Answer: 5 squared").
  Scale and fraction words stay units ("5 thousand", "5 dozen" answer "how many
  thousand", as math-verify reads them).
* an ``<answer>`` tag offering two values (``5 (or possibly 6)``) went to math-verify's
  extraction, which reads the first: the hedge was credited.
* GSM8K ``auto`` read 18 out of "18 or 19", "18, 19", "at least 18", "not 18", "18
  squared", and 2 out of "1/2".
"""

from __future__ import annotations

import time

import pytest

from _support.verifier_rows import V, check_math_row
from _support.verifier_rows import box as _box
from _support.verifier_rows import row_ids as _ids
from rewardkit.verifiers.gsm8k import GSM8KVerifier

AUTO = GSM8KVerifier()


# (gold, response, expected, reason)
MATH_ROWS: list[tuple[str, str, float, str]] = [
    # --- a box: text after the value that math-verify drops as a unit (before: 1, mv: 1) ---
    ("5", _box("5\\text{ squared}"), 0.0, "an operator word: 25"),
    ("5", _box("5\\text{ cubed}"), 0.0, "an operator word: 125"),
    ("5", _box("5 \\text{ minus one}"), 0.0, "an operator and a number word: 4"),
    ("5", _box("5\\text{ times two}"), 0.0, "'times' with a factor: 10"),
    ("5", _box("5\\text{ over two}"), 0.0, "'over': a fraction"),
    ("5", _box("5\\text{ factorial}"), 0.0, "120"),
    ("5", _box("5\\text{ is wrong}"), 0.0, "the answer says it is wrong"),
    ("5", _box("5\\text{ is not the answer}"), 0.0, "a negation"),
    ("5", _box("5\\text{ or more}"), 0.0, "a bound, not a value"),
    ("5", _box("5 \\text{ at most}"), 0.0, "a bound"),
    ("5", _box("5\\text{ and up}"), 0.0, "a bound"),
    ("5", _box("5\\text{, or 6}"), 0.0, "two values offered (before: 1 via mv)"),
    ("5", _box("5\\text{ OR 6}"), 0.0, "two values offered (before: 1 via mv)"),
    ("5", _box("5\\text{ x 2}"), 0.0, "math inside the text: 10 (before: 1 via mv)"),
    # before: 0 inline, 1 with fast_paths=False (math-verify drops the text)
    ("5", _box("5\\text{ or 6}"), 0.0, "two values offered: mv reads the 5"),
    ("5", _box("5\\mbox{ or 6}"), 0.0, "the same in \\mbox"),
    ("5", _box("5\\textbf{ or 6}"), 0.0, "the same in \\textbf"),
    ("5", _box("5\\text{ and 6}"), 0.0, "two values listed"),
    ("5", _box("5\\text{ + 1}"), 0.0, "a sum: 6, mv reads 5"),
    ("5", _box("5\\text{,000}"), 0.0, "5,000 split by \\text: mv reads 5"),
    ("5", _box("5\\text{ 000}"), 0.0, "5 000 split by \\text: mv reads 5"),
    # --- units still dropped: a value with its unit is the value ---
    ("5", _box("5\\text{ cm}^2"), 1.0, "a unit with a power"),
    ("5", _box("5\\text{ cm}^{2}"), 1.0, "a unit with a braced power"),
    ("5", _box("5\\mathrm{m}^{3}"), 1.0, "a unit in \\mathrm with a braced power"),
    ("5", _box("5 \\text{ (mod 7)}"), 1.0, "a modulus names no other value"),
    ("5", _box("5\\text{ more apples}"), 1.0, "'how many more': a unit phrase"),
    ("5", _box("5\\text{ times}"), 1.0, "'how many times'"),
    ("5", _box("5\\text{ cm squared}"), 1.0, "'squared' after a unit is the unit's power"),
    ("5", _box("5\\text{ percent}"), 1.0, "as 5\\%: math-verify credits 5 (mv: 1)"),
    ("5", _box("5\\text{ thousand}"), 1.0, "'how many thousand': a scale word is a unit (mv: 1)"),
    ("5", _box("5\\text{ halves}"), 1.0, "'how many halves': a unit (mv: 1)"),
    ("5", _box("5\\text{ students, so each likes at least one}"), 1.0, "later words describe"),
    ("-5, 4", _box("x=-5\\text{ or }x=4"), 1.0, "\\text{ or } between values lists them"),
    # --- an answer line: the words after the number (before: 1, mv: 1) ---
    ("5", "Answer: 5 squared", 0.0, "an operator word"),
    ("5", "Answer: 5 cubed", 0.0, "an operator word"),
    ("5", "The answer is 5 or more.", 0.0, "a bound"),
    ("5", "Answer: 5 at most", 0.0, "a bound"),
    ("5", "Answer: 5 or so", 0.0, "a hedge"),
    ("5", "Answer: 5 and a half", 0.0, "5.5"),
    ("5", _box("5\\text{ and a half}"), 0.0, "5.5 in a box"),
    ("5", "The answer is 5 is wrong.", 0.0, "a negation"),
    ("5", "Answer: $5$ squared", 0.0, "words after a math span"),
    ("5", "Answer: $5$ or more", 0.0, "a bound after a math span"),
    ("5", "Answer: $5$ is wrong", 0.0, "a negation after a math span"),
    ("5", "Answer: at least 5", 0.0, "a bound before the number (before: 1, mv's extraction)"),
    ("5", "Answer: between 5 and 6", 0.0, "a range (before: 1, mv's extraction reads 5)"),
    ("5", "Answer: 5 apples or 6 apples", 0.0, "two values with units (before: 1, mv)"),
    ("5", "Answer: 5 apples, maybe 6", 0.0, "a hedge after a unit (before: 1, mv)"),
    ("5", "Answer: 5 apples", 1.0, "a unit word is dropped"),
    ("5", "Answer: 5 dozen", 1.0, "'how many dozen': a unit (mv: 1)"),
    ("5", "Answer: 5 more apples", 1.0, "a unit phrase"),
    ("5", "Answer: 5 percent", 1.0, "a percent word, as 5\\%"),
    ("5", "Answer: 5, not 6", 1.0, "a value ruled out after the answer"),
    ("2009", "The answer is 2009, but the image shows more.", 1.0, "prose after a comma"),
    # --- an <answer> tag offering two values: hedging (before: 1, mv's extraction reads 5) ---
    ("5", "<answer>5 (or possibly 6)</answer>", 0.0, "an alternative in parentheses"),
    ("5", "<answer>either 5 or 6</answer>", 0.0, "'either ... or' (mv: 1)"),
    ("5", "<answer>5 or possibly 6</answer>", 0.0, "'or possibly'"),
    ("5", "<answer>I think 5, maybe 6</answer>", 0.0, "'maybe' (mv: 1)"),
    ("5", "<answer>It is 5 or 6.</answer>", 0.0, "'or' in a sentence (mv: 1)"),
    ("5", "<answer>5, perhaps 6</answer>", 0.0, "before: the 5 before the comma"),
    ("5", "<answer>5. Or 6.</answer>", 0.0, "alternatives across a sentence end"),
    ("6", "<answer>x = 5 or x = 6</answer>", 0.0, "named alternatives (mv: 1, reads the 6)"),
    ("5", "<answer>\n5\n6\n</answer>", 0.0, "two numbers one a line: a list (mv: 1)"),
    ("5, 6", "<answer>\n5\n6\n</answer>", 1.0, "the same list against the list"),
    ("-5, 4", "<answer>-5 or 4</answer>", 1.0, "just two values joined by 'or': the list"),
    ("4", "<answer>-5 or 4</answer>", 0.0, "the same list against one of its values"),
    ("\\frac{1}{3}", "<answer>P(1 or 2) = 1/3</answer>", 1.0, "'or' with a value after it"),
    # --- an answer line: two math spans joined by other than ",", "and", "or" (before: 1,
    # the first span alone; mv reads the first too) ---
    ("5", "Answer: $5$ \\text{ or } $6$", 0.0, "\\text{ or } between spans"),
    ("5", "Answer: $5$ \\& $6$", 0.0, "an ampersand between spans"),
    ("5", "Answer: $5$/$6$", 0.0, "a slash between spans"),
    ("5", "Answer: $5$\\quad $6$", 0.0, "spacing between spans"),
    ("5", "Answer: $5$ ~ $6$", 0.0, "a tie between spans"),
    ("5", "Answer: $5$ \\mid $6$", 0.0, "\\mid between spans"),
    ("5", "**Final Answer**\n5\n6", 0.0, "a heading, then two numbers one a line"),
    ("5", "**Final Answer**\n\\[5\\]\n\\[6\\]", 0.0, "a heading, then two displays"),
    ("5", "**Final Answer**\n5\n\nThe 6 ways are listed above.", 1.0, "a later paragraph"),
    # --- one box joining two values by a symbol: mv reads the last (before: 1, mv: 1) ---
    ("6", _box("5 \\& 6"), 0.0, "an ampersand"),
    ("6", _box("5 & 6"), 0.0, "an alignment tab"),
    ("6", _box("5 \\mid 6"), 0.0, "\\mid"),
    ("6", _box("5 \\| 6"), 0.0, "a double bar"),
    ("6", _box("5 \\cup 6"), 0.0, "a union of numbers"),
    ("6", _box("5 \\sim 6"), 0.0, "a range written with \\sim"),
    ("6", _box("5 \u6216 6"), 0.0, "'or' in Chinese"),
    ("6", _box("5 \\text{ resp. } 6"), 0.0, "'respectively' (held already)"),
    ("6", _box("5\\text{ / }6"), 0.0, "a slash in text (held already)"),
    ("6", _box("5 \\text{ and/or } 6"), 0.0, "'and/or' in text (held already)"),
    (
        "12",
        _box("\\begin{pmatrix}1 & 12\\end{pmatrix}"),
        0.0,
        "a matrix is not its entry (held already)",
    ),
    # --- a fallback passage offering two values (before: 1, mv reads the last) ---
    ("6", "5 and/or 6", 0.0, "'and/or'"),
    ("6", "it's 5 or else 6", 0.0, "'or else'"),
    # --- Unicode digits: exactly the number (mv: 0, it reads no number) ---
    ("12", _box("\uff11\uff12"), 1.0, "fullwidth digits are 12"),
    ("12", _box("\u0661\u0662"), 1.0, "Arabic-Indic digits are 12"),
    ("13", _box("\uff11\uff12"), 0.0, "fullwidth 12 is not 13"),
]


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), MATH_ROWS, ids=_ids(MATH_ROWS))
def test_math_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_row(gold, response, expected, reason)


GSM8K_ROWS: list[tuple[str, str, float, str]] = [
    # --- two values offered or listed (before: 1, the first or the last alone) ---
    ("18", "The answer is 18 or 19", 0.0, "two values offered"),
    ("19", "The answer is 18 or 19", 0.0, "the same against the other value"),
    ("18", "The answer is 18, 19", 0.0, "two values listed"),
    ("18", "#### 18, 19", 0.0, "a list after ####"),
    ("18", "#### 18 or 19", 0.0, "alternatives after ####"),
    ("18", "A: 18 or 19", 0.0, "alternatives after A:"),
    ("18", "The answer is 18 (or 19)", 0.0, "an alternative in parentheses"),
    ("18", "The answer is 18 dollars or 19 dollars", 0.0, "alternatives with units"),
    ("18", "The answer is 18 or maybe 19", 0.0, "'or maybe'"),
    ("18", "The answer is 18 and 19", 0.0, "two values listed"),
    ("19", "<answer>18 or 19</answer>", 0.0, "before: the last number, 19"),
    # --- a range, a bound, a negation (before: 1) ---
    ("18", "The answer is 18 to 19", 0.0, "a range"),
    ("18", "The answer is 18\u201319", 0.0, "a range with an en dash"),
    ("19", "The answer is 18-19", 0.0, "a range: before, the 19"),
    ("19", "The answer is between 18 and 19", 0.0, "a range: before, the 19"),
    ("18", "Answer: 18 or more", 0.0, "a bound"),
    ("18", "The answer is 18+", 0.0, "'18+': at least 18"),
    ("18", "The answer is at least 18", 0.0, "a bound before the number"),
    ("18", "The answer is not 18", 0.0, "a negation (before: the last number, 18)"),
    # --- words and operators that change the number (before: 1) ---
    ("18", "The answer is 18 minus 1", 0.0, "an operator word"),
    ("18", "He needs 18 and a half", 0.0, "18.5 (before: the last number, 18)"),
    ("18", "The answer is 18 x 2", 0.0, "a product"),
    ("18", "The answer is 18\u00b2", 0.0, "a square"),
    ("2", "The answer is 1/2", 0.0, "a fraction: before, its denominator 2"),
    ("19", "The answer is 18/19", 0.0, "a fraction: before, its denominator"),
    # --- commas that group no thousands (before: 1, the digits glued) ---
    ("18", "The answer is 1,8", 0.0, "1,8 is 1.8 in much of the world, never 18"),
    ("1819", "#### 18,19", 0.0, "two numbers, never 1819"),
    # --- still read ---
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
        "a real output's shape: a bound before the last number (before: 1, the 5)",
    ),
]


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), GSM8K_ROWS, ids=_ids(GSM8K_ROWS)
)
def test_gsm8k_row(gold: str, response: str, expected: float, reason: str) -> None:
    assert AUTO.check(AUTO.extract(response), gold).score == expected, reason


def test_a_qualified_number_is_reported_with_its_words() -> None:
    """The row's ``pred`` shows what was read, so a 0 is explained, not silent."""
    assert AUTO.extract("The answer is 18 or 19").answer == "18 or 19"
    assert V.extract("Answer: 5 squared").answer == "5\\text{ squared}"
    hedged = V.extract("<answer>5 (or possibly 6)</answer>")
    assert hedged.answer is None and hedged.extra["hedged"] is True


@pytest.mark.parametrize(
    "response",
    [
        "The answer is 18 or " * 50_000,
        "not " * 250_000 + "18",
        "<answer>" + "5 or 6 " * 100_000 + "</answer>",
        "Answer: 5 " + "or " * 100_000,
        "\\boxed{5\\text{" + " or" * 100_000 + "}}",
        "Answer: $5$ " + "/ $6$ " * 50_000,
        "**Final Answer**\n" + "5\n" * 100_000,
    ],
    ids=["or-chain", "nots", "tag", "line-ors", "box-text", "spans", "heading-lines"],
)
def test_qualifier_reading_is_bounded(response: str) -> None:
    """The new readings scan short windows only: megabytes of their triggers stay fast."""
    started = time.perf_counter()
    V.quick_check(V.extract(response), "5")
    AUTO.check(AUTO.extract(response), "18")
    assert time.perf_counter() - started < 2.0  # milliseconds here; generous for loaded CI
