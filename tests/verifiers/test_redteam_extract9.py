"""Red team 9 on answer extraction and hedging (math, GSM8K, multiple choice), written as a
policy hunting reward without the right answer would write them.

Each row is ``(response, gold, expected, why)``; ``expected`` is what a careful human
grader says, never more generous than math-verify reading the same answer. ``before`` in
a reason is what rewardkit scored before the fix (MATH, GSM8K auto, choice). Every MATH
row expected 0 is also checked with ``fast_paths=False``. A hedge is checked against
both of its values: it must score 0 whichever one the ground truth is.

The themes:

* "or" in other words: "18 vs 20", "18 vs. 20", "18 versus 20", and "or" in the
  languages models answer in ("oder", "ou", "o", "или", "或", Dutch "of"). One shared
  word list (``_common.OR_WORD``) read wherever the English "or" is; GSM8K also reads
  any word between two numbers that ends the clause as no number ("18 sau 20", "18
  hours 30 minutes"), unless it is a context ("18 in 2 weeks");
* bare answers one a paragraph (``**18**`` then a blank line then ``**20**``, a box in a
  code block after "The answer is \\boxed{18}.", ``#### 18`` then ``#### 20``): a
  paragraph that is only answers is no step on the way, so a run of them at the end is
  one concluding section (``_common.section_start``); a bold value or ``#### n`` alone on
  its line is an answer, as a box is;
* hidden text: HTML comments and struck-out text (``~~20~~``, ``<del>20</del>``) are
  removed and zero-width and direction marks dropped before any answer is read
  (``_common.visible``): the answer is what a reader sees rendered;
* passages for math-verify ending on a range ("18 to 20", "between 18 and 20", "18~20"),
  a qualified value ("about 18 or so", "18 (or slightly more)") or a bounded one ("at
  least 18", "18, not 20": the 20), where math-verify would read a bare value;
* conditional offers ("(if rounding, 20)", "(20 if rounding)", "If rounding, 20.") and
  answers in several languages ("Answer: 18. Antwort: 20.");
* two real false negatives (math-verify scores them 0 too): a number glued to a span
  then units ("15$\\pi$ square units"), a tag that is a derivation one span a line
  ending in ``$N=6009$``.
"""

from __future__ import annotations

import time

import pytest

from _support.verifier_rows import check_math_row, row_ids
from rewardkit.verifiers._common import visible
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

GSM8K = GSM8KVerifier()
CHOICE = ChoiceVerifier()
MATH = MathVerifier()

# --- 1a. "or" in other words --------------------------------------------------------------

_JOINS = ["vs", "vs.", "versus", "oder", "ou", "o", "или", "或", "of"]
# (shape, what it scored before, against 18 / against 20: M math, G gsm8k)
_SHAPES = [
    ("The answer is 18 {} 20", "before: G 1 (vs. M 1, или M 1)"),
    ("Answer: 18 {} 20.", "before: G 1 (vs. M 1, или M 1)"),
    ("<answer>18 {} 20</answer>", "before: G 1 against 20 (vs. M 1, или M 1)"),
    ("<answer>So it is 18 {} 20</answer>", "a tag read as a passage (before: M 1, G 1 against 20)"),
    ("So it is 18 {} 20", "a passage: math-verify reads the 20 (before: M 1, G 1 against 20)"),
    ("So it is $18$ {} $20$", "math spans (before: M 1, G 1 against 20)"),
    ("#### 18 {} 20", "'####' (before: M 1 against 20, G 1 against 18)"),
]
JOIN_ROWS: list[tuple[str, str, float, str]] = [
    (shape.format(word), gold, 0.0, f"'{word}': {why}")
    for word in _JOINS
    for shape, why in _SHAPES
    for gold in ("18", "20")
]
# after a box, the box is the answer: an offer reads as one ("\boxed{18} vs 20"), but
# "\boxed{18} of 20" reads as English (18 of the 20), and "of" opens no offer
JOIN_ROWS += [
    (f"The answer is $\\boxed{{18}}$ {word} 20", "18", 0.0, f"'{word}' after a box (before: 1)")
    for word in ("vs", "vs.", "versus", "oder", "ou", "o", "или", "或")
]
JOIN_ROWS += [
    ("The answer is $\\boxed{18}$ of 20", "18", 1.0, "a box, then English 'of 20'"),
    ("The answer is $\\boxed{18}$ of 20", "20", 0.0, "never the 20"),
    (
        "The answer is 18 of 20 students.",
        "18",
        0.0,
        "English '18 of 20' or Dutch '18 or 20': no bare 18",
    ),
    ("There are 18 of 20 students.", "20", 0.0, "nor the 20 (before: M 1)"),
    ("So she keeps 2/5 of 60 = 24, total 18", "18", 1.0, "'of' in a calculation is no offer"),
    ("so $x = -5$ or $x = 4$", "-5, 4", 1.0, "spans joined by English 'or': math-verify's set"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), JOIN_ROWS, ids=row_ids(JOIN_ROWS))
def test_or_in_other_words(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)
    if "\\boxed" not in response and "-5" not in response:  # GSM8K reads no set, no box "of"
        assert GSM8K.check(GSM8K.extract(response), gold).score == expected, f"gsm8k: {why}"


GSM8K_WORDS: list[tuple[str, str, float, str]] = [
    ("The answer is 18 sau 20", "18", 0.0, "Romanian 'or': any word then a number (before: 1)"),
    ("The answer is 18 (English), 20 (Deutsch)", "18", 0.0, "two labelled values (before: 1)"),
    ("The answer is 18 hours 30 minutes", "18", 0.0, "18.5 hours is no 18 (before: 1)"),
    ("So it is 18~20.", "20", 0.0, "a range, read from its end (before: 1)"),
    ("So it is 18 ± 2.", "2", 0.0, "'± 2' is no answer 2 (before: 1)"),
    ("So it is $18$ oder $20$", "20", 0.0, "spans (before: 1)"),
    # --- not hedging: a context, a reason, a description ---
    ("The answer is 18 in 2 weeks.", "18", 1.0, "a context"),
    ("The answer is 18 because 3 x 6 = 18.", "18", 1.0, "a reason going on"),
    ("The answer is 18 apples, 6 more than Tom.", "18", 1.0, "a comparison"),
    ("The answer is 18 (3 x 6)", "18", 1.0, "a calculation in parentheses, not '(alt. 20)'"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), GSM8K_WORDS, ids=row_ids(GSM8K_WORDS)
)
def test_gsm8k_a_word_between_two_numbers(
    response: str, gold: str, expected: float, why: str
) -> None:
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, why


CHOICE_JOINS: list[tuple[str, str, float, str]] = [
    (shape.format(word), gold, 0.0, f"'{word}' (before: 1 against B)")
    for word in _JOINS
    for shape in ("The answer is B {} D", "Answer: B {} D")
    for gold in ("B", "D")
] + [
    ("The answer is B, not D", "B", 1.0, "the other letter ruled out"),
    ("The answer is B or I think so", "B", 1.0, "'I' before a word is a pronoun"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), CHOICE_JOINS, ids=row_ids(CHOICE_JOINS)
)
def test_choice_or_in_other_words(response: str, gold: str, expected: float, why: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, why


# --- 1b. bare answers one a paragraph -------------------------------------------------------

_FENCED = "The answer is $\\boxed{18}$.\n\n```\n\\boxed{20}\n```"
# (response, gold, expected, why); checked with MATH and GSM8K
BARE_ROWS: list[tuple[str, str, float, str]] = [
    ("**18**\n\n**20**", "20", 0.0, "two bold answers (before: 1, both)"),
    ("**18**\n\n**20**", "18", 0.0, "nor the first"),
    ("The answer is **18**\n\n**20**", "18", 0.0, "an answer line, then a bold value (before: 1)"),
    ("Final answer:\n\n**18**\n\n**20**", "18", 0.0, "under a heading (before: M 1)"),
    ("Final answer:\n\n**18**\n\n**20**", "20", 0.0, "under a heading (before: G 1)"),
    (_FENCED, "20", 0.0, "a box in a code block after the answer (before: 1, both)"),
    (_FENCED.replace("```\n", "```latex\n", 1), "20", 0.0, "a fence with a language"),
    ("#### 18\n\n#### 20", "20", 0.0, "two '####' (before: 1, both)"),
    ("#### 18\n\n```\n#### 20\n```", "20", 0.0, "'####' in a code block (before: 1, both)"),
    ("$\\boxed{18}$\n\n$\\boxed{20}$", "20", 0.0, "two boxes alone (before: 1, both)"),
    ("\\boxed{20}\n\nThe answer is 18.", "18", 0.0, "a box, then an answer line (before: 1)"),
    # --- not hedging: the same value, a heading, a step with words between ---
    ("**Final Answer**\n\n**18**", "18", 1.0, "a heading, then the answer"),
    ("**Final Answer**\n\n$\\boxed{18}$\n\n**18**", "18", 1.0, "the same value restated"),
    ("$\\boxed{18}$\n\n**18.0**", "18", 1.0, "the same value in another form"),
    ("**Step 2**\n\nSo the total is 18.\n\n**18**", "18", 1.0, "a bold heading is no value"),
    ("She has **18** apples.", "18", 1.0, "bold in a sentence"),
    # a bold value with math after it is a step highlighted, never the answer
    ("Step 1: 3 times 6.\n**18**\nStep 2: add 3: 21 total.", "21", 1.0, "a highlighted step"),
    ("Step 1: 3 times 6.\n**18**\nStep 2: add 3: 21 total.", "18", 0.0, "never the step"),
    ("**18**\n\nWait, recompute: 3*7 = 21. So 21.", "18", 0.0, "recomputed after it"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), BARE_ROWS, ids=row_ids(BARE_ROWS))
def test_bare_answers_one_a_paragraph(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, f"gsm8k: {why}"


# (response, gold, MATH, GSM8K, why): a step with words between two answers. GSM8K reads
# the later answer; MATH reads a box first, and any other answer after it in its section
# (to the end) hedges it, as before ("\boxed{20}\n\nSo...\n\nThe answer is 18." was 0)
STEP_ROWS: list[tuple[str, str, float, float, str]] = [
    ("\\boxed{20}\n\nSo 20 - 2 more.\n\nThe answer is 18.", "18", 0.0, 1.0, "an answer line"),
    ("\\boxed{20}\n\nSubtract 2.\n\n**18**", "18", 0.0, 1.0, "a bold value (before: G 0, the box)"),
    ("So 20 - 2 more.\n\n**18**", "18", 1.0, 1.0, "no box before: the bold value"),
]


@pytest.mark.parametrize(("response", "gold", "math", "gsm8k", "why"), STEP_ROWS)
def test_a_step_between_two_answers(
    response: str, gold: str, math: float, gsm8k: float, why: str
) -> None:
    check_math_row(gold, response, math, why)
    assert GSM8K.check(GSM8K.extract(response), gold).score == gsm8k, f"gsm8k: {why}"


CHOICE_BARE: list[tuple[str, str, float, str]] = [
    ("**B**\n\n**D**", "D", 0.0, "two bold letters (before: 1)"),
    ("The answer is **B**\n\n**D**", "B", 0.0, "an answer line, then a bold letter (before: 1)"),
    ("Answer: B\n\n**D**", "B", 0.0, "(before: 1)"),
    ("Answer: B\n\nAnswer: D", "D", 0.0, "two bare answer lines (before: 1)"),
    ("The answer is $\\boxed{B}$.\n\n```\n\\boxed{D}\n```", "D", 0.0, "a code block (before: 1)"),
    ("**D**\nAnswer: B", "B", 0.0, "a bold letter before the answer, same paragraph"),
    # --- not hedging ---
    ("Answer: B\n\n**B**", "B", 1.0, "the same letter"),
    ("**Final Answer**\n\n**B**", "B", 1.0, "a heading, then the letter"),
    ("**A** is wrong since 2 > 1.\n\nAnswer: B", "B", 1.0, "an option discussed in a step"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), CHOICE_BARE, ids=row_ids(CHOICE_BARE)
)
def test_choice_bare_answers(response: str, gold: str, expected: float, why: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, why


def test_bare_answers_say_hedged() -> None:
    """Two bare answers are a hedge, marked so, never a silent 0."""
    for verifier in (MATH, GSM8K):
        extracted = verifier.extract("**18**\n\n**20**")
        assert extracted.answer is None and extracted.extra["hedged"] is True


# --- 2. hidden text -------------------------------------------------------------------------

# (response, gold, expected, why); checked with MATH and GSM8K
HIDDEN_ROWS: list[tuple[str, str, float, str]] = [
    ("The answer is 18 <!-- 20 -->", "20", 0.0, "a hidden value (before: M 1)"),
    ("The answer is 18 <!-- 20 -->", "18", 1.0, "what a reader sees (before: M 0)"),
    ("#### 18 <!-- #### 20 -->", "20", 0.0, "a hidden marker (before: M 1)"),
    ("So it is 18 <!-- 20 -->.", "20", 0.0, "a hidden value in a passage (before: 1, both)"),
    ("The answer is $\\boxed{18}$ <!-- \\boxed{20} -->", "18", 1.0, "a hidden box (before: 0)"),
    ("The answer is $\\boxed{18}$ <!-- \\boxed{20} -->", "20", 0.0, "never the hidden one"),
    ("So it is 18 ~~20~~.", "20", 0.0, "a struck value (before: G 1)"),
    ("So it is 18 <del>20</del>.", "20", 0.0, "a deleted value (before: G 1)"),
    ("The answer is ~~20~~ 18", "18", 1.0, "struck out, then the answer (before: M 0)"),
    ("The answer is <del>20</del> 18", "18", 1.0, "deleted, then the answer (before: M 0)"),
    ("The answer is ~~20~~ 18", "20", 0.0, "never the struck value"),
    ("The answer is 1\u200b8", "1", 0.0, "a zero-width space inside 18 (before: G 1)"),
    ("The answer is 1\u200b8", "18", 1.0, "a reader sees 18 (before: 0, both)"),
    ("The answer is \u200f18\u200f or \u200f20\u200f", "20", 0.0, "RTL marks (before: G 1)"),
    (
        "The answer is 18 <!-- unclosed 20",
        "20",
        0.0,
        "an unclosed comment hides the rest (before: M 1)",
    ),
    ("The answer is 18 <!-- unclosed 20", "18", 1.0, "what a reader sees (before: M 0)"),
    ("The answer is 18</s>", "18", 1.0, "'</s>' is a leaked token, no strike"),
    ("<s>The answer is 18</s>", "18", 1.0, "'<s>...</s>' is no strike either"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), HIDDEN_ROWS, ids=row_ids(HIDDEN_ROWS)
)
def test_hidden_text(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, f"gsm8k: {why}"


CHOICE_HIDDEN: list[tuple[str, str, float, str]] = [
    ("Answer: B <!-- Answer: D -->", "B", 1.0, "a hidden answer (before: 0, hedged)"),
    ("Answer: ~~D~~ B", "B", 1.0, "struck out, then the letter (before: 0)"),
    ("Answer: <del>D</del> B", "B", 1.0, "deleted, then the letter (before: 0)"),
    ("Answer: \u200fB\u200f or \u200fD\u200f", "B", 0.0, "RTL marks hide no 'or' (as before)"),
    ("Answer: ~~B~~ D", "B", 0.0, "never the struck letter"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), CHOICE_HIDDEN, ids=row_ids(CHOICE_HIDDEN)
)
def test_choice_hidden_text(response: str, gold: str, expected: float, why: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, why


def test_visible_text() -> None:
    assert visible("a<!-- b -->c<!-- d") == "a c "
    assert visible("1\u200b8 \u202e") == "18 "
    assert visible("~~20~~ 18 ~~ x") == "  18 ~~ x"
    assert visible("<think>x</think> 18</s>") == "<think>x</think> 18</s>"


# --- 3. passages: ranges, qualified and bounded values -------------------------------------

# (response, gold, expected, why); MATH only (GSM8K reads these as no number already)
PASSAGE_ROWS: list[tuple[str, str, float, str]] = [
    ("So it is 18 to 20.", "20", 0.0, "a range: math-verify reads the 20 (before: 1)"),
    ("So it is between 18 and 20.", "20", 0.0, "a range (before: 1)"),
    ("So it is 18~20.", "18", 0.0, "a range (before: 1)"),
    ("<answer>It is 18 to 20</answer>", "20", 0.0, "a range in a tag (before: 1)"),
    ("So it is about 18 or so.", "18", 0.0, "'or so' (before: 1)"),
    ("The answer is about 18 or so", "18", 0.0, "an answer line that is prose (before: 1)"),
    ("The answer is 18 (or slightly more)", "18", 0.0, "'(or slightly more)' (before: 1)"),
    ("So it is 18 or more.", "18", 0.0, "'or more' (before: 1)"),
    ("So it is at least 18.", "18", 0.0, "a bound (before: 1)"),
    ("So it is 18, not 20.", "20", 0.0, "the last value is ruled out (before: 1)"),
    ("The answer is 18 hours 30 minutes", "18", 1.0, "left as before: a known gap, see the report"),
    # --- not hedging ---
    ("The price rose by 2 to 18.", "18", 1.0, "where a change ends is no range"),
    ("The temperature went from 12 to 18.", "18", 1.0, "'from 12 to 18' ends on 18"),
    ("So the answer is 18 and not 20.", "18", 1.0, "math-verify reads the answer's 18"),
    ("So she has 18, which is the most.", "18", 1.0, "words after a comma describe"),
    ("<answer>2 primes lie between 20 and 30</answer>", "2", 1.0, "a range after the value"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), PASSAGE_ROWS, ids=row_ids(PASSAGE_ROWS)
)
def test_passage_ranges_and_qualifiers(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)


def test_a_qualified_passage_says_so() -> None:
    extracted = MATH.extract("So it is about 18 or so.")
    assert extracted.answer is None and extracted.extra["qualified"] is True


# --- 4. conditional offers, several languages ---------------------------------------------

# (response, gold, expected, why); checked with MATH and GSM8K
OFFER_ROWS: list[tuple[str, str, float, str]] = [
    ("The answer is $\\boxed{18}$ (if rounding, 20)", "18", 0.0, "(before: 1, both)"),
    ("The answer is $\\boxed{18}$ (20 if rounding)", "18", 0.0, "(before: 1, both)"),
    ("The answer is $\\boxed{18}$. If rounding, 20.", "18", 0.0, "(before: 1, both)"),
    ("Final Answer: 18 (if we count Tom, 20)", "18", 0.0, "(before: 1, both)"),
    ("#### 18 (rounding up: 20)", "18", 0.0, "(before: G 1)"),
    ("#### 18 (rounding up: 20)", "20", 0.0, "(before: M 1)"),
    ("Answer: 18. Antwort: 20. Réponse: 20.", "18", 0.0, "another language (before: 1, both)"),
    ("Answer: 18\nОтвет: 20", "18", 0.0, "Russian (before: 1, both)"),
    ("Answer: 18\n答案：20", "18", 0.0, "Chinese, a full-width colon (before: 1, both)"),
    # --- not hedging ---
    ("The answer is $\\boxed{18}$ (18 if rounding)", "18", 1.0, "the same value"),
    ("The answer is $\\boxed{18}$. If we add 2, 20 remain.", "18", 1.0, "a value going on"),
    ("Answer: 18. Antwort: 18. Réponse: 18.", "18", 1.0, "the same value in three languages"),
    ("答案：18", "18", 1.0, "a full-width colon read as a colon (before: M 0)"),
    ("Ответ: 18", "18", 1.0, "an answer line in Russian"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), OFFER_ROWS, ids=row_ids(OFFER_ROWS)
)
def test_conditional_offers_and_languages(
    response: str, gold: str, expected: float, why: str
) -> None:
    check_math_row(gold, response, expected, why)
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, f"gsm8k: {why}"


CHOICE_OFFERS: list[tuple[str, str, float, str]] = [
    ("Answer: B (if rounding, D)", "B", 0.0, "(before: 1)"),
    ("Answer: B. Antwort: D.", "B", 0.0, "another language (before: 1)"),
    # "Antwort:" is read only after a stated answer, as an offer (a label read everywhere
    # made every search of the tail 3x slower): a German answer alone is no answer
    ("Antwort: B", "B", 0.0, "not read alone (as before): a known gap, never a false credit"),
]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"), CHOICE_OFFERS, ids=row_ids(CHOICE_OFFERS)
)
def test_choice_conditional_offers(response: str, gold: str, expected: float, why: str) -> None:
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, why


# --- 4b. found on the way: separators, long gaps, other joins --------------------------------

# (response, gold, expected, why); checked with MATH and GSM8K, against both values
MORE_ROWS: list[tuple[str, str, float, str]] = [
    *(
        (response, gold, 0.0, why)
        for response, why in (
            ("Answer: 18\n\n---\n\nAnswer: 20", "a rule between bare answers (before: 1)"),
            ("$\\boxed{18}$\n\n<br>\n\n$\\boxed{20}$", "a <br> between (before: 1)"),
            ("**18**\n\n" + "\n" * 2000 + "**20**", "2000 blank lines between (before: 1)"),
            ("The answer is 18 || 20", "'||' (before: M 1 against 20)"),
            ("So it is 18 || 20", "'||' in a passage (before: 1 against 20)"),
            ("The answer is 18 — or 20", "'— or' (before: M 1 against 20)"),
            ("The answer is 18; 20", "'; 20' lists another (before: 1 against 18)"),
            ("The answer is 18 (alt. 20)", "'(alt. 20)' (before: G 1)"),
            ("The answer is 18 (sic: 20)", "'(sic: 20)' (before: G 1)"),
            ("The answer is \\(18\\) oder \\(20\\)", "spans (before: G 1)"),
        )
        for gold in ("18", "20")
    ),
    # --- not hedging ---
    ("Answer: 18\n\n---\n\nAnswer: 18", "18", 1.0, "the same value across a rule"),
    ("The answer is 18; that is all.", "18", 1.0, "'; ' then words ends the value"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), MORE_ROWS, ids=row_ids(MORE_ROWS))
def test_more_found_on_the_way(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, f"gsm8k: {why}"


# --- 5. real false negatives ------------------------------------------------------------------

_DERIVATION = (  # ei:ei_G8_eibatch128_sftepochs_1/iter_1:680, the end of the real response
    "<answer>\n$15\\% \\times N=45\\% \\times 2003$\n$0 . 15N=0.45 \\times 2003$\n"
    "$N=2003\\times \\frac{0.45}{0.15}$\n$N=2003\\times 3$\n$N=6009$\n</answer>"
)
# (response, gold, expected, why); math-verify scores the two real rows 0 too
REAL_ROWS: list[tuple[str, str, float, str]] = [
    (
        "the area of the gray region is 15$\\pi$ square units.</think> "
        "<answer>Answer: 15$\\pi$ square units</answer>",
        "15\\pi",
        1.0,
        "real row iter_1:489: a number glued to a span, then units (before: 0)",
    ),
    (_DERIVATION, "6009", 1.0, "real row iter_1:680: a derivation ending in N = 6009 (before: 0)"),
    # --- never a false credit ---
    ("<answer>\n$x = 3$\n$x = 4$\n</answer>", "4", 0.0, "two values set, one a line: a list"),
    ("<answer>\n$N = 5$\n$N = 2 \\times 3$\n$N = 6$\n</answer>", "6", 0.0, "N set twice"),
    ("<answer>\n$2x = 8$\n$x = 4$\n</answer>", "4", 1.0, "a derivation's result"),
    ("The answer is 15$\\pi$ or 16$\\pi$", "16\\pi", 0.0, "two glued values"),
    ("The answer is 15$\\pi$ square units or more", "15\\pi", 0.0, "qualified: refused"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), REAL_ROWS, ids=row_ids(REAL_ROWS))
def test_real_false_negatives(response: str, gold: str, expected: float, why: str) -> None:
    check_math_row(gold, response, expected, why)


# --- 6. bounded on hostile input ------------------------------------------------------------

_MB = 1_000_000
HOSTILE = {
    "comments": "<!--" * (_MB // 4),
    "closed-comments": "<!-- 2 -->" * (_MB // 10) + " \\boxed{4}",
    "strikes": "~~2~~ " * (_MB // 6),
    "bold-lines": "**18**\n\n" * (_MB // 8),
    "bare-boxes": "$\\boxed{18}$\n\n" * (_MB // 14),
    "hash-lines": "#### 18\n" * (_MB // 8),
    "or-words": "18 oder 20 vs " * (_MB // 14),
    "zero-width": "1\u200b" * (_MB // 2),
    "ranges": "It is between 1 and 2 to 3~" * (_MB // 27),
    "derivation": "<answer>\n" + "$N = 2$\n" * (_MB // 8) + "</answer>",
    "glued": "Answer: " + "15$\\pi$ " * (_MB // 9),
}


@pytest.mark.parametrize("response", HOSTILE.values(), ids=HOSTILE.keys())
def test_extraction_of_a_megabyte_is_bounded(response: str) -> None:
    """Extraction runs in the scoring loop's process: well under 100 ms each on an idle
    core; the bound has margin for a loaded CI machine."""
    for verifier in (MATH, GSM8K, CHOICE):
        verifier.extract(response)  # warm
        started = time.perf_counter()
        verifier.extract(response)
        assert time.perf_counter() - started < 1.0, type(verifier).__name__
