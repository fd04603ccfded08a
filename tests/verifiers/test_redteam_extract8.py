"""Red team 8 on answer extraction and hedging (math, GSM8K, multiple choice), written as a
policy hunting reward without the right answer would write them.

Each row is ``(response, gold, expected, why)``; ``expected`` is what a careful human
grader says, never more generous than math-verify reading the same answer. ``before`` in
a reason is what rewardkit scored before the fix. Every MATH row expected 0 is also
checked with ``fast_paths=False``.

The themes:

* prose hedges after a final answer, in its paragraph: "18. 20 would also work", "18,
  though 20 could also be right", "(or possibly 20)", "Alternatively, 20.", "Another
  possible answer is 20", "18 or maybe 20", "20 works too", "unless it is 20". The rule
  is a shape, shared by the three verifiers (``_common.OFFER_CUE`` and
  ``OFFER_PREDICATE``): a word of possibility or alternative right before a value, or
  words offering a value as another answer right after it. The MATH rules read it after
  a box, a tag or an answer line, inside a tag, and at the end of a passage for
  math-verify (which would read one value alone);
* a hedge hidden behind junk: ``find_boxes`` reads a bounded number of boxes and braces,
  and the verifiers read a bounded part of the final paragraph. A box command, an
  "answer" or ``####`` in the part of the final paragraph not read makes the answer no
  answer (``hedged``, ``scan_cut``): before, ``\\boxed{3}`` then 70 KB of ``\\boxed{{{``
  then ``\\boxed{4}``, or "Answer: A" then 5 KB of prose then "Answer: B", scored 1.
"""

from __future__ import annotations

import time

import pytest

from _support.verifier_rows import check_math_row, row_ids
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

GSM8K = GSM8KVerifier()
CHOICE = ChoiceVerifier()
MATH = MathVerifier()

# --- 1a. prose hedges ------------------------------------------------------------------

# (response, gold, expected, why)
MATH_HEDGES: list[tuple[str, str, float, str]] = [
    ("The answer is 18. 20 would also work", "18", 0.0, "'would also work' (before: 1)"),
    ("Answer: 18, though 20 could also be right", "18", 0.0, "'could also be right' (before: 1)"),
    ("The answer is $\\boxed{18}$ (or possibly 20)", "18", 0.0, "after a box (before: 1)"),
    ("The answer is $\\boxed{18}$ or maybe 20", "18", 0.0, "'or maybe' after a box (before: 1)"),
    ("The answer is $\\boxed{18}$, or $20$", "18", 0.0, "', or' after a box (before: 1)"),
    ("The answer is 18. Alternatively, 20.", "18", 0.0, "'Alternatively' (before: 1)"),
    (
        "$\\boxed{18}$. Alternatively, $\\frac{40}{2}$.",
        "18",
        0.0,
        "a LaTeX value offered (before: 1)",
    ),
    ("The answer is 18, 20 works too", "18", 0.0, "'works too' (before: 1)"),
    (
        "The answer is 18; 20 is also a valid answer",
        "18",
        0.0,
        "'is also a valid answer' (before: 1)",
    ),
    ("The answer is 18, although 20 is plausible", "18", 0.0, "'is plausible' (before: 1)"),
    ("The answer is 18, unless it is 20", "18", 0.0, "'unless it is' (before: 1)"),
    (
        "$\\boxed{18}$. Another possible answer is $20$.",
        "18",
        0.0,
        "'another possible answer' (as before)",
    ),
    ("<answer>18. Alternatively, 20.</answer>", "18", 0.0, "inside a tag (before: 1)"),
    ("<answer>18, unless it is 20</answer>", "18", 0.0, "inside a tag (before: 1)"),
    ("<answer>18, 20 works too</answer>", "18", 0.0, "inside a tag, a passage (before: 1)"),
    ("I think it's $18$. Alternatively, $20$.", "20", 0.0, "a passage: mv reads 20 (before: 1)"),
    ("I think it's $18$, though $20$ could also be right", "20", 0.0, "a passage (before: 1)"),
    ("I think it's $18$; $20$ is also a valid answer", "20", 0.0, "a passage (before: 1)"),
    ("So it is $18$, $20$ works too", "20", 0.0, "a passage (as before)"),
    # --- not hedging: the same value, a calculation, a check, an earlier paragraph ---
    ("The answer is $\\boxed{18}$ (or possibly 18.0)", "18", 1.0, "the same value restated"),
    (
        "The answer is $\\boxed{18}$. Alternatively, $3 \\times 6 = 18$.",
        "18",
        1.0,
        "another way to the same value is no other answer",
    ),
    (
        "The answer is $\\boxed{18}$. Alternatively, using $n = 3$ rows of 6 we get 18.",
        "18",
        1.0,
        "'Alternatively, using': no value right after the cue",
    ),
    ("The answer is 18. This could be verified by $3 \\times 6$.", "18", 1.0, "no value offered"),
    (
        "$x = -1$ is extraneous and $x = 5$ is valid, so the answer is $\\boxed{5}$.",
        "5",
        1.0,
        "a root checked valid (no 'also') is no offer",
    ),
    ("The answer is $\\boxed{5}$; $x = -1$ is not valid.", "5", 1.0, "a value ruled out"),
    ("Maybe 20.\n\nThe answer is $\\boxed{18}$.", "18", 1.0, "an earlier paragraph is a step"),
    ("So $x = 5$ is also a solution.\n\nThe answer is $\\boxed{5}$.", "5", 1.0, "a step"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), MATH_HEDGES, ids=row_ids(MATH_HEDGES)
)
def test_math_prose_hedge(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)


GSM8K_HEDGES: list[tuple[str, str, float, str]] = [
    ("The answer is 18. 20 would also work", "18", 0.0, "'would also work' (before: 1)"),
    ("The answer is 18, though 20 could also be right", "18", 0.0, "(before: 1)"),
    ("#### 18, though 20 could also be right", "18", 0.0, "after #### (before: 1)"),
    ("The answer is $\\boxed{18}$. 20 would also work", "18", 0.0, "after a box (before: 1)"),
    ("The answer is 18; 20 is also a valid answer", "18", 0.0, "(before: 1)"),
    ("#### 18; 20 is also a valid answer", "18", 0.0, "(before: 1)"),
    ("The answer is 18, unless it is 20", "18", 0.0, "'unless it is' (before: 1)"),
    ("#### 18, unless it is 20", "18", 0.0, "(before: 1)"),
    ("The answer is 18. Another possible answer is 20.", "18", 0.0, "as before"),
    ("The answer is 18 (or possibly 20)", "18", 0.0, "as before"),
    ("The answer is 18. Alternatively, 20.", "18", 0.0, "as before"),
    ("The answer is 18 or maybe 20", "18", 0.0, "as before"),
    # --- not hedging ---
    (
        "The answer is 18. Alternatively, 3 x 6 = 18.",
        "18",
        1.0,
        "a calculation is no value (before: 0)",
    ),
    (
        "The answer is 18. Alternatively, 3 × 6 = 18.",
        "18",
        1.0,
        "a calculation is no value (before: 0)",
    ),
    ("The answer is 18. 18 is also correct as a check.", "18", 1.0, "the same value"),
    ("The answer is 18. 20 is not possible.", "18", 1.0, "a value ruled out"),
    ("The answer is 18 apples, 6 more than Tom.", "18", 1.0, "a comparison, no offer"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), GSM8K_HEDGES, ids=row_ids(GSM8K_HEDGES)
)
def test_gsm8k_prose_hedge(response: str, gold: str, expected: float, why: str) -> None:
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, why


CHOICE_HEDGES: list[tuple[str, str, float, str]] = [
    ("The answer is B. D would also work", "B", 0.0, "'would also work' (before: 1)"),
    ("The answer is B; D is also a valid answer", "B", 0.0, "(before: 1)"),
    ("The answer is B, unless it is D", "B", 0.0, "'unless it is' (before: 1)"),
    ("The answer is B, D works too", "B", 0.0, "'works too' (before: 1)"),
    ("The answer is B - or D", "B", 0.0, "'- or' (before: 1)"),
    ("The answer is B, though D could also be right", "B", 0.0, "as before"),
    ("The answer is B. Alternatively, D.", "B", 0.0, "as before"),
    ("The answer is B (or possibly D)", "B", 0.0, "as before"),
    # --- not hedging ---
    ("The answer is B. D is not possible.", "B", 1.0, "a letter ruled out"),
    ("The answer is B. A careful check could be done.", "B", 1.0, "'A' is an article"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), CHOICE_HEDGES, ids=row_ids(CHOICE_HEDGES)
)
def test_choice_prose_hedge(response: str, gold: str, expected: float, why: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, why


def test_a_prose_hedge_says_so() -> None:
    """A hedge is marked ``hedged``, never a silent 0."""
    extracted = MATH.extract("The answer is $\\boxed{18}$ or maybe 20")
    assert extracted.answer is None and extracted.extra["hedged"] is True
    assert MATH.check(extracted, "18").extra["hedged"] is True


# --- 1b. a hedge hidden behind junk ------------------------------------------------------

_JUNK_BOX = "\\boxed{" + "{" * 4100  # an unclosed box: a brace scan of MAX_BOX_CHARS
_PAD = "and so on. " * 500  # 5.5 KB of prose, no blank line
# (response, gold, expected, why); checked with MATH and GSM8K
JUNK_ROWS: list[tuple[str, str, float, str]] = [
    ("\\boxed{3} " + _JUNK_BOX * 17 + " \\boxed{4}", "4", 0.0, "past the brace budget (before: 1)"),
    (
        "\\boxed{3} " + "\\boxed\\x " * 4100 + "\\boxed{4}",
        "4",
        0.0,
        "past MAX_BOX_COMMANDS (before: 1)",
    ),
    ("\\boxed{3} " + "\\boxed{4} " * 70, "4", 0.0, "past MAX_BOXES (before: 1)"),
    (
        "\\boxed{3} " + ("\\boxed{" + "4" * 4000 + "}") * 17 + "\\boxed{4}",
        "4",
        0.0,
        "long boxes spend the budget (before: GSM8K 1)",
    ),
    ("The answer is 3. " + _PAD + " \\boxed{4}", "4", 0.0, "past the 4 KB look-back (before: 1)"),
    ("The answer is 3. " + _PAD * 4 + " \\boxed{4}", "4", 0.0, "past 16 KB: scan_cut (before: 1)"),
    # --- not hedging ---
    (
        "\\boxed{3}\n\n" + _JUNK_BOX * 17 + "\n\nSo \\boxed{4}",
        "4",
        1.0,
        "junk in earlier paragraphs",
    ),
    ("\\boxed{4}" * 1000, "4", 1.0, "a model looping on its answer: copies are one value"),
    ("\\boxed{" * 70_000 + "4" + "}" * 70_000, "4", 1.0, "a deep nest holds one value"),
    ("\\boxedx\\fboxy" * 70_000 + "\\boxed{4}", "4", 1.0, "no box commands before it"),
    ("x " * 20_000 + "So \\boxed{4}.", "4", 1.0, "a long final paragraph with no other answer"),
    (
        "To find the answer, we count.\n" + "and so on.\n" * 2000 + "So \\boxed{4}.",
        "4",
        1.0,
        "20 KB of steps, one a line, naming 'the answer' in prose: no answer unread",
    ),
    ("The answer is 3.\n" + "and so on.\n" * 2000 + "So \\boxed{4}.", "4", 0.0, "an answer unread"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), JUNK_ROWS, ids=row_ids(JUNK_ROWS))
def test_a_hedge_behind_junk(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, f"gsm8k: {why}"


CHOICE_JUNK: list[tuple[str, str, float, str]] = [
    ("Answer: A. " + _PAD + " Answer: B", "B", 0.0, "past the 4 KB look-back (before: 1)"),
    ("Answer: A. " + _PAD * 4 + " Answer: B", "B", 0.0, "past the 16 KB tail (before: 1)"),
    ("\\boxed{A} " + _JUNK_BOX * 17 + " \\boxed{B}", "B", 0.0, "a box behind junk (before: 1)"),
    ("x " * 20_000 + "Answer: B", "B", 1.0, "a long final paragraph with no other answer"),
    ("To find the answer:\n" + "and so on.\n" * 2000 + "Answer: B", "B", 1.0, "prose 'answer'"),
    ("Answer: A.\n\n" + _PAD * 4 + "\n\nAnswer: B", "B", 1.0, "an earlier paragraph is a step"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), CHOICE_JUNK, ids=row_ids(CHOICE_JUNK)
)
def test_a_choice_hedge_behind_junk(response: str, gold: str, expected: float, why: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, why


def test_an_answer_whose_section_was_not_read_says_so() -> None:
    extracted = MATH.extract("\\boxed{3} " + _JUNK_BOX * 17 + " \\boxed{4}")
    assert extracted.answer is None
    assert extracted.extra["scan_cut"] is True and extracted.extra["hedged"] is True


# --- 2. attacks from outside: markup, scripts, corrections -------------------------------

# (response, gold, expected, why); the same row checked with MATH and GSM8K
OUTSIDE_ROWS: list[tuple[str, str, float, str]] = [
    ("The answer is **18** or **20**", "20", 0.0, "bold around two values (before: 1, both)"),
    ("The answer is **18** or **20**", "18", 0.0, "nor the first"),
    ("The answer is **18**", "18", 1.0, "bold around one value"),
    ("The answer is 18 &amp; 20", "18", 0.0, "an HTML-escaped '&' joins two (before: GSM8K 1)"),
    ("The answer is $\\boxed{18}$ or maybe ２０", "18", 0.0, "fullwidth digits (before: 1, both)"),
    ("#### 18, or maybe ٢٠", "18", 0.0, "Arabic-Indic digits offered (as before)"),
    ("The answer isn't 18.", "18", 0.0, "ruled out (before: GSM8K 1)"),
    ("The answer is 18‰", "18", 0.0, "per mille: 0.018 (before: GSM8K 1)"),
    ("Final answer: 18 (if we count Tom) or 20", "18", 0.0, "')' then 'or' (before: 1, both)"),
    ("The answer is 18? No, 20.", "18", 0.0, "taken back (before: 1, both)"),
    ("The answer is 18. Wait, no: 20.", "18", 0.0, "taken back (before: 1, both)"),
    ("The answer is 18. Actually, 20.", "18", 0.0, "taken back (before: 1, both)"),
    ("The answer is 18. Sorry, I mean 20.", "18", 0.0, "taken back (before: 1, both)"),
    (
        "$\\boxed{18}$\n\nWait, actually it is 20.",
        "18",
        0.0,
        "taken back in a new paragraph (before: 1)",
    ),
    (
        "#### 18\n\nWait, actually it's 20.",
        "18",
        0.0,
        "taken back in a new paragraph (before: GSM8K 1)",
    ),
    ("$\\boxed{18}$\n\nOr maybe 20.", "18", 0.0, "offered in the next paragraph (before: 1)"),
    ("#### 18\n\nPerhaps 20.", "18", 0.0, "offered in the next paragraph (before: GSM8K 1)"),
    ("So <b>18</b> or <b>20</b>", "20", 0.0, "HTML bold around two values (before: GSM8K 1)"),
    ("So \\textbf{18} or \\textbf{20}", "20", 0.0, "\\textbf around two (before: GSM8K 1)"),
    ("So *18* or *20*", "20", 0.0, "italics around two (before: GSM8K 1)"),
    ("So `18` or `20`", "20", 0.0, "inline code around two (before: GSM8K 1)"),
    ("So 18 or\n20", "20", 0.0, "'or' ends a line (before: 1, both)"),
    ("So $18$ or maybe\n$20$", "20", 0.0, "'or maybe' ends a line (before: 1, both)"),
    ("So 18 [or 20]", "20", 0.0, "'[or' (before: MATH 1)"),
    ("So 18 或 20", "20", 0.0, "Chinese 'or' (before: GSM8K 1)"),
    ("The answer is 18 (20?)", "18", 0.0, "a doubt in parentheses (before: GSM8K 1)"),
    # --- not hedging ---
    ("So 5*14", "14", 0.0, "a product is no 14, as before"),
    ("She has **18** apples.", "18", 1.0, "bold around one value"),
    ("so 3 and\n18", "18", 1.0, "'and' ending a line is no offer"),
    ("$\\boxed{18}$\n\nOr 20? No: it is $\\boxed{18}$.", "18", 1.0, "the next paragraph decides"),
    ("The answer is 18, not 20", "18", 1.0, "the other value ruled out"),
    ("The answer is 18.\n\nActually, 18 checks out: 3 boxes of 6.", "18", 1.0, "the same value"),
    ("The answer is 18. There are no 20-year-olds here.", "18", 1.0, "'no' before a word"),
    ("$\\boxed{3}$ % \\boxed{4}", "4", 0.0, "a LaTeX comment hides a second box: hedged"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), OUTSIDE_ROWS, ids=row_ids(OUTSIDE_ROWS)
)
def test_an_attack_from_outside(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, f"gsm8k: {why}"


CHOICE_OUTSIDE: list[tuple[str, str, float, str]] = [
    ("The answer is A? No, B.", "A", 0.0, "taken back (before: 1)"),
    ("The answer is A. Wait, no: B.", "A", 0.0, "taken back (before: 1)"),
    ("The answer is A. Actually, B.", "A", 0.0, "taken back (before: 1)"),
    ("Answer: A\n\nActually, B.", "A", 0.0, "taken back in a new paragraph (before: 1)"),
    ("Answer: A\n\nOr maybe C.", "A", 0.0, "offered in the next paragraph (before: 1)"),
    ("Answer: **A**, or maybe **C**", "A", 0.0, "a bold letter offered (before: 1)"),
    ("The answer is B. Option A would also work", "B", 0.0, "'Option A': a letter (before: 1)"),
    ("The answer is (A) and (C)", "A", 0.0, "two letters, as before"),
    ("The answer is not A", "A", 0.0, "ruled out, as before"),
    ("A is wrong, so B", "A", 0.0, "ruled out, as before"),
    ("(A) 18 (B) 20 (C) 22 (D) 24", "D", 0.0, "the options restated: no choice (before: 1)"),
    ("(A) 18\n(B) 20\n(C) 22\n(D) 24", "D", 0.0, "one a line (before: 1)"),
    ("**A**: 18, **B**: 20, **C**: 22, **D**: 24", "D", 0.0, "in bold (before: 1)"),
    ("Answer: (A) 18 (B) 20 (C) 22 (D) 24", "A", 0.0, "after 'Answer:' (before: 1)"),
    # --- not hedging ---
    ("I pick (D) 24.", "D", 1.0, "one label with its option text"),
    ("(A) is wrong, (B) fails, (C) too, so (D).", "D", 1.0, "options eliminated, then chosen"),
    ("Answer: (A) 18. (B) is wrong, (C) is wrong.", "A", 1.0, "chosen, then others discussed"),
    ("The answer is A. Option A would also work", "A", 1.0, "the same letter"),
    ("The answer is B. No, A careful reader agrees.", "B", 1.0, "'A' is an article"),
    ("The answer is option A, not B", "A", 1.0, "the other letter ruled out"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), CHOICE_OUTSIDE, ids=row_ids(CHOICE_OUTSIDE)
)
def test_a_choice_attack_from_outside(response: str, gold: str, expected: float, why: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, why


_MB = 1_000_000
HOSTILE = {
    "junk-boxes": "\\boxed{3} " + _JUNK_BOX * (_MB // len(_JUNK_BOX)) + "\\boxed{4}",
    "one-paragraph-answers": "Answer: 3. " * (_MB // 11) + "\\boxed{4}",
    "offers": "The answer is 18, or maybe 20 " * (_MB // 30),
    "predicates": "$\\boxed{18}$ 20 would also work " * (_MB // 32),
    "box-copies": "\\boxed{4} " * (_MB // 10),
    "dollars": "$" * _MB,
}


@pytest.mark.parametrize("response", HOSTILE.values(), ids=HOSTILE.keys())
def test_extraction_of_a_megabyte_is_bounded(response: str) -> None:
    """Extraction runs in the scoring loop's process: well under 50 ms each on an idle
    core; the bound has margin for a loaded CI machine."""
    for verifier in (MATH, GSM8K, CHOICE):
        verifier.extract(response)  # warm
        started = time.perf_counter()
        verifier.extract(response)
        assert time.perf_counter() - started < 1.0, type(verifier).__name__
