"""Red-team rows for answer extraction (math, GSM8K, multiple choice), written as a policy
hunting reward without the right answer would write them.

Each row is ``(gold, response, expected score, reason)``; the expected score is what a
careful human grader gives. ``before`` in a reason is what rewardkit said before the
fix. Every MATH row expected 0 is also checked with ``fast_paths=False``.

The themes:

* a box written inside another box (``\\boxed{3 \\text{ or } \\boxed{4}}``) was read as
  the inner box alone: the outer box is the answer;
* one box offering two numbers joined by a line break, ``\\vert``, an arrow,
  ``\\approx``, ``\\hspace`` or an empty ``\\text{, }``: math-verify reads one alone;
* a value ruled out or bounded ("The answer is not $3$ but $4$", "isn't $3$", "not
  $\\boxed{3}$"): math-verify's extraction, anchored by "answer", reads the 3;
* ``<answer>3</answer>`` followed by an open ``<answer>4``, or ``<answer>3<answer>4
  </answer>``: a second answer;
* a megabyte of blanks after the answer hid it;
* GSM8K ``auto`` took the last marked number whatever came before it in the same
  paragraph (``#### 18`` then ``#### 20``, ``\\boxed{18}`` then ``#### 20``), read a box
  offering two numbers by its last number, and read 18 out of ``18 | 20``, ``18 \\pm 2``,
  ``18 1/2``; verl's strict rule (last ``####``) also credits ``#### 18`` ``#### 20``
  against 20, and ``strict`` keeps verl's rule;
* multiple choice read the first letter of "A, B, C, D" (every option offered), the last
  of two stated answers, "option A" in "option A is wrong" after the answer, and no
  letter at all in ``<answer>C</answer>``.
"""

from __future__ import annotations

import time

import pytest

from _support.verifier_rows import check_math_row
from _support.verifier_rows import row_ids as _ids
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

AUTO = GSM8KVerifier()
CHOICE = ChoiceVerifier()

# (gold, response, expected, reason)
MATH_ROWS: list[tuple[str, str, float, str]] = [
    # --- boxes inside boxes: the outer box is the answer (before: the inner one alone) ---
    ("4", "\\boxed{3 \\text{ or } \\boxed{4}}", 0.0, "two values, the 4 boxed again (before: 1)"),
    ("3", "\\boxed{\\boxed{3} \\text{ or } 4}", 0.0, "two values, the 3 boxed again (before: 1)"),
    ("4", "\\boxed{3\\boxed{4}}", 0.0, "a 3 beside a boxed 4 (before: 1)"),
    ("7", "\\boxed{\\boxed{7}}", 1.0, "a box around a box is the box"),
    ("7", "\\boxed{\\boxed{\\boxed{7}}}", 1.0, "three deep is still the box"),
    (
        "7",
        "Step: \\boxed{2}\n\nSo $\\boxed{\\boxed{7}}$.",
        1.0,
        "an earlier paragraph's box is a step",
    ),
    # --- one box offering two numbers (before: 1, math-verify reads the last) ---
    ("4", "\\boxed{3 \\\\ 4}", 0.0, "a line break between two values"),
    ("5", "\\boxed{3 \\\\ 4 \\\\ 5}", 0.0, "three values one a line"),
    ("4", "\\boxed{3 \\\\[2pt] 4}", 0.0, "a line break with spacing"),
    ("4", "\\boxed{3 \\vert 4}", 0.0, "\\vert as 'or'"),
    ("4", "\\boxed{3 \\to 4}", 0.0, "an arrow: from 3 to 4"),
    ("4", "\\boxed{3 \\Rightarrow 4}", 0.0, "an arrow"),
    ("4", "\\boxed{3 \\implies 4}", 0.0, "an implication"),
    ("4", "\\boxed{3 \\hspace{1cm} 4}", 0.0, "two values spaced apart"),
    ("3", "\\boxed{3 \\approx 4}", 0.0, "two values, math-verify reads the 3 (before: 1)"),
    ("3.14", "\\boxed{3.14 \\approx 3.1}", 1.0, "a rounding restates the value"),
    ("4", "\\boxed{3 \\text{, } 4}", 0.0, "a comma in \\text (before: 1 with fast_paths off)"),
    (
        "\\begin{pmatrix}3\\\\4\\end{pmatrix}",
        "\\boxed{\\begin{pmatrix}3\\\\4\\end{pmatrix}}",
        1.0,
        "a vector's line breaks are not alternatives",
    ),
    ("4", "Final answer: 3 -> 4", 0.0, "an arrow on an answer line (before: 1)"),
    ("4", "Final answer: 3 → 4", 0.0, "a Unicode arrow (before: 1)"),
    # --- a value ruled out or bounded (before: 1, math-verify reads the value alone) ---
    ("3", "The answer is not $3$ but $4$.", 0.0, "ruled out"),
    ("3", "The answer is definitely not $3$.", 0.0, "ruled out"),
    ("3", "The answer isn't $3$.", 0.0, "ruled out"),
    ("3", "The answer cannot be $3$.", 0.0, "ruled out"),
    ("3", "The answer is anything but $3$.", 0.0, "ruled out"),
    ("3", "The answer is less than $3$.", 0.0, "a bound"),
    ("3", "The final answer is: not $\\boxed{3}$", 0.0, "a negated box"),
    ("3", "<answer>not $3$ but $4$</answer>", 0.0, "a negated tag"),
    (
        "9",
        "Jane must score at least $\\boxed{9}$ points.",
        1.0,
        "a bound before a box answers 'the minimum' (tora corpus, 366)",
    ),
    ("3", "The answer is not obvious, but $x = 3$.", 1.0, "'not' before no value"),
    ("4", "The answer is $4$, not $3$.", 1.0, "the other value ruled out"),
    # --- trailing blanks (before: 0, no answer found) ---
    ("4", "The answer is 4" + " " * 1_000_000, 1.0, "a megabyte of spaces after the answer"),
    # --- <answer> tags (before: the closed tag's 3) ---
    ("3", "<answer>3</answer> <answer>4", 0.0, "a second answer, left open"),
    ("3", "<answer>3</answer>\n<answer>", 1.0, "an empty open tag offers nothing"),
    ("4", "<answer>3</answer>\n<answer>4</answer>", 0.0, "two closed tags, two values"),
    ("4", "<answer>3<answer>4</answer>", 0.0, "a tag inside an open one holding 3 (before: 1)"),
    ("4", "<answer><answer>4</answer></answer>", 1.0, "a tag around a tag"),
    (
        "27",
        "So I get $7.29$. </think> <answer> $28$ <answer> $27$ <answer> $3$ <answer> $18$ </answer>",
        0.0,
        "four values in open tags (ei corpus, iter_1:221)",
    ),
    (
        "7",
        "$\\sqrt{36+64}-\\sqrt{25-16}$\n\\ =<answer> $\\sqrt{100}-\\sqrt{9} $\n\\ =<answer> $10-3 $\n"
        "\\ =<answer> $7 $</answer>",
        1.0,
        "a chain of steps in open tags (ei corpus, iter_1:990)",
    ),
    ("4", "I put it in <answer> tags.\n<answer>4</answer>", 1.0, "a tag named in prose"),
    # a derivation in a tag, lines broken by \\ (ei corpus, iter_1:530): no alternatives
    (
        "-1",
        "<answer> $$-2x - 7 = 7x + 2\\\\ -9x = 9\\\\ x = \\frac{-9}{9} =-1$$ </answer>",
        1.0,
        "line breaks in a derivation are not alternatives",
    ),
    # --- unchanged, kept as facts ---
    ("4", "<answer>\\boxed{4}</answer> \\boxed{3}", 0.0, "a box after the tag: hedged"),
    ("4", "The answer is 3. Wait, the answer is 4", 0.0, "one paragraph, two answers"),
    ("4", "The answer is 3.\n\nWait, actually the answer is 4.", 1.0, "a corrected paragraph"),
    ("C", "The answer is A, B, C, D", 0.0, "every option listed"),
    ("C", "\\boxed{A} \\boxed{B} \\boxed{C} \\boxed{D}", 0.0, "every option boxed"),
    ("1000", "The answer is 1,000.", 1.0, "a thousands comma"),
    ("18", "The answer is $18.00", 1.0, "dollars and cents"),
    ("-4", "\\boxed{-4}", 1.0, "a negative number"),
]


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), MATH_ROWS, ids=_ids(MATH_ROWS))
def test_math_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_row(gold, response, expected, reason)


GSM8K_ROWS: list[tuple[str, str, float, str]] = [
    # --- two final numbers in one paragraph (before: 1, the last one; verl strict: 1) ---
    ("20", "#### 18\n#### 20", 0.0, "two #### answers"),
    ("20", "\\boxed{18} \\boxed{20}", 0.0, "two boxes"),
    ("20", "\\boxed{18}\n#### 20", 0.0, "a box then a #### answer"),
    ("20", "#### 18\n\\boxed{20}", 0.0, "a #### answer then a box"),
    ("20", "The answer is 18. Wait, the answer is 20.", 0.0, "two answer lines"),
    ("20", "<answer>18</answer><answer>20</answer>", 0.0, "two tags"),
    ("20", "The answer is 18 dollars. #### 20", 0.0, "a line and a #### answer"),
    ("18", "The answer is 18.\n#### 18", 1.0, "the same number restated"),
    ("18", "The answer is $18.\n#### 18.00", 1.0, "restated in another spelling"),
    ("20", "#### 18\n\nWait, let me redo it.\n#### 20", 1.0, "a corrected paragraph"),
    # --- a box offering two numbers (before: 1, its last number) ---
    ("20", "\\boxed{18 \\text{ or } 20}", 0.0, "'or' in \\text"),
    ("20", "\\boxed{18 \\\\ 20}", 0.0, "a line break"),
    ("20", "\\boxed{18\\boxed{20}}", 0.0, "a box inside a box"),
    ("18", "\\boxed{18 \\text{ dollars}}", 1.0, "a unit in \\text"),
    ("18", "\\boxed{\\$18}", 1.0, "a dollar sign"),
    ("18", "\\boxed{x = 18}", 1.0, "a named value"),
    ("18", "\\boxed{2 \\times 9 = 18}", 1.0, "a calculation ending in the value"),
    # --- what follows the number (before: 1) ---
    ("18", "The answer is 18 | 20", 0.0, "a bar offers two values"),
    ("18", "The answer is 18 \\lor 20", 0.0, "'or' as a symbol"),
    ("18", "The answer is 18 \\pm 2", 0.0, "a range"),
    ("18", "The answer is 18 ± 2", 0.0, "a range"),
    ("18", "The answer is 18 20.", 0.0, "two numbers side by side"),
    ("18", "The answer is 18 1/2", 0.0, "a mixed number: 18.5"),
    ("18", "The answer is 18 \\frac12", 0.0, "a mixed number: 18.5"),
    ("18000", "The answer is 18 000", 0.0, "a space-grouped 18000 is not read as 18 or 18000"),
    ("18", "The answer is 18 2-liter bottles.", 1.0, "a number in the unit is no second value"),
    ("18", "The answer is 18 3rd graders.", 1.0, "an ordinal in the unit"),
    # --- not hedging: headings, thinking ---
    (
        "18",
        "The answer is 18.\n\n#### 4. Verification\nWe check that 18 works.",
        1.0,
        "a markdown heading is no #### answer (before: 0, read 4)",
    ),
    (
        "18",
        "#### 3. Final answer\nShe pays 18 dollars, so the answer is 18.",
        1.0,
        "a heading in the final paragraph",
    ),
    ("18", "<think>#### 20</think>\n#### 18", 1.0, "the thinking's number is a step"),
    ("20", "<think>The answer is 20</think>\nThe answer is 18.", 0.0, "the final part answers"),
    ("18", "\\boxed{18}\\boxed{18}", 1.0, "the same box twice"),
    ("18", "#### 18\n#### 18", 1.0, "the same #### answer twice"),
    ("18", "#### 18" + "\n" * 1_000_000, 1.0, "a megabyte of newlines after it (before: 0)"),
    # --- unchanged, kept as facts ---
    ("1000", "#### 1,000", 1.0, "a thousands comma"),
    ("-5", "The answer is -5.", 1.0, "a negative number"),
    ("18", "#### $18.00", 1.0, "dollars and cents (verl strict: no match)"),
    ("18", "The answer is 18 or 20", 0.0, "two values offered"),
]


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), GSM8K_ROWS, ids=_ids(GSM8K_ROWS)
)
def test_gsm8k_row(gold: str, response: str, expected: float, reason: str) -> None:
    assert AUTO.check(AUTO.extract(response), gold).score == expected, reason


def test_a_hedged_gsm8k_answer_says_so() -> None:
    verdict = AUTO.check(AUTO.extract("#### 18\n#### 20"), "20")
    assert verdict.score == 0.0
    assert verdict.extra["hedged"] is True


def test_a_hedged_choice_says_so() -> None:
    verdict = CHOICE.check(CHOICE.extract("Answer: A\n\\boxed{C}"), "C")
    assert verdict.score == 0.0
    assert verdict.extra["hedged"] is True


def test_strict_keeps_verls_last_hash_rule() -> None:
    strict = GSM8KVerifier(method="strict")
    assert strict.check(strict.extract("#### 18\n#### 20"), "20").score == 1.0


CHOICE_ROWS: list[tuple[str, str, float, str]] = [
    # --- several letters offered (before: 1) ---
    ("A", "The answer is A, B, C, D", 0.0, "every option listed: the first was read"),
    ("A", "The answer is A or C", 0.0, "two options"),
    ("C", "The answer is C (or D)", 0.0, "an alternative in parentheses"),
    ("C", "The answer is (C)(D)", 0.0, "two labels side by side"),
    ("C", "The answer is C|D", 0.0, "a bar"),
    ("C", "The answer is C & D", 0.0, "an ampersand"),
    ("C", "The answer is C and D", 0.0, "'and'"),
    ("A", "\\boxed{A, C}", 0.0, "two letters in a box"),
    ("A", "\\boxed{\\text{A or C}}", 0.0, "two letters in a box's text"),
    ("D", "The answer is \\boxed{C} \\boxed{D}", 0.0, "two boxes"),
    ("C", "Answer: A\nAnswer: C", 0.0, "two stated answers in one paragraph"),
    ("A", "\\boxed{C}\nAnswer: A", 0.0, "a box and a stated answer differ"),
    ("C", "Answer: A\n\\boxed{C}", 0.0, "a stated answer and a box differ"),
    ("C", "**A** **B** **C**", 0.0, "bold letters listed"),
    ("C", "(A) (B) (C)", 0.0, "labels listed"),
    ("C", "A\nB\nC", 0.0, "lone letters on the last lines"),
    # --- read right (before: 0) ---
    ("C", "<answer>C</answer>", 1.0, "the R1 tag (before: no letter)"),
    ("C", "<answer>C) 42</answer>", 1.0, "the tag with the option's text"),
    ("C", "Answer: C. Because option A is wrong", 1.0, "'option A' discusses, not answers"),
    (
        "A",
        "so it stops at quarter $A$. </think> <answer> $A$ </answer>",
        1.0,
        "a letter in math in the tag (ei corpus, iter_5:780; before: none)",
    ),
    ("C", "<answer> C(5, 2) = 10 </answer>", 0.0, "C(5, 2) is a binomial, no letter"),
    ("C", "Answer: C" + " " * 1_000_000, 1.0, "a megabyte of spaces after it (before: 0)"),
    ("A", "<answer> I need more data. </answer>", 0.0, "'I' is a word, no letter"),
    # --- unchanged, kept as facts ---
    (
        "C",
        "I think the answer is A.\n\nAfter checking, the answer is C.",
        1.0,
        "a corrected paragraph",
    ),
    ("C", "The answer is C, not A.", 1.0, "a negated letter is not offered"),
    ("C", "The answer is C. A photon has no mass.", 1.0, "'A' starting a sentence"),
    ("C", "The answer is C I think", 1.0, "'I' as a word"),
    ("D", "(A) is wrong because... (B) fails... so **D**", 1.0, "labels discussed, then chosen"),
    ("D", "Option (A) is too small, option (D) fits.", 1.0, "options discussed"),
    ("C", "The answer is C.\nAnswer: C", 1.0, "the same letter restated"),
    ("C", "<think>Answer: A? No.</think>\nAnswer: C", 1.0, "the thinking's letter is a step"),
]


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), CHOICE_ROWS, ids=_ids(CHOICE_ROWS)
)
def test_choice_row(gold: str, response: str, expected: float, reason: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, reason


_MB = 1_000_000
HOSTILE = {
    "answer-words": "The answer is " * (_MB // 14),
    "answer-paren": "The answer is \\(" * (_MB // 16),
    "answer-colons": "Answer: " * (_MB // 8),
    "headings": "**Final Answer**\n" * (_MB // 17),
    "hashes": "#### " * (_MB // 5),
    "boxes": "\\boxed{3}" * 100_000,
    "nested-boxes": "\\boxed{" * (_MB // 7) + "4" + "}" * (_MB // 7),
    "open-tags": "<answer>" * (_MB // 8),
    "letters": "The answer is A, " * (_MB // 17),
    "prose-then-box": "a " * (_MB // 2 - 20) + "\\boxed{4}",
}


@pytest.mark.parametrize("response", HOSTILE.values(), ids=HOSTILE.keys())
def test_extraction_of_a_megabyte_is_bounded(response: str) -> None:
    """Extraction runs in the scoring loop's process: measured well under 50 ms each on
    an idle core; the margin is for a loaded CI machine."""
    for verifier in (MathVerifier(), AUTO, CHOICE):
        started = time.perf_counter()
        verifier.extract(response)
        assert time.perf_counter() - started < 1.0, type(verifier).__name__
