"""guards: one reading of the final answer for every verifier family (rewardkit.verifiers._final).

Each table row is (response, ground truth, expected score, why). The rules, stated once
in ``_final``'s docstring: only the conclusion answers; an answer is asserted, not
quoted; the last asserted answer wins and a later different value given as a correction
is hedging; a truncated response has only its explicit answer forms; decimals are exact
by default; multiple choice reads final-answer forms from the end; every Unicode minus
and digit is a number; an answer tag of a list or of words is no number; two different
search-R1 answers are hedging. Benign rows (restatements, ``\\dfrac``, "The answer is",
``$``-wrapping) keep their credit.
"""

from __future__ import annotations

from typing import Any

import pytest

from rewardkit import RewardLoop
from rewardkit.config import RewardConfig
from rewardkit.scoring.engine import RewardEngine
from rewardkit.scoring.rows import too_big_inline
from rewardkit.verifiers import _final
from rewardkit.verifiers.base import NO_CONTEXT, Context, Verifier, extract_with, is_truncated
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier
from rewardkit.verifiers.search_qa import SearchQAVerifier

MATH = MathVerifier()
MATH_ROUNDED = MathVerifier(decimals="rounded")
GSM8K = GSM8KVerifier()
CHOICE = ChoiceVerifier()
SEARCH = SearchQAVerifier()
SEARCH_LAST = SearchQAVerifier(answers="last")


def _score(verifier: Verifier, response: str, gold: Any, context: Context = NO_CONTEXT) -> float:
    extracted = extract_with(verifier, response, context)
    verdict = verifier.quick_check(extracted, gold)
    if verdict is None:
        verdict = verifier.check(extracted, gold)
    return verdict.score


def _hedged(verifier: Verifier, response: str) -> bool:
    return bool(verifier.extract(response).extra.get("hedged"))


# --- math (MATH, math_dapo, aime: one verifier, scaled for some) -------------------------

MATH_ROWS = [
    # 1. a retraction after the answer
    ("So $\\boxed{3}$.\n\nActually, on reflection, $4$.", "3", 0.0, "retracted next paragraph"),
    ("So $\\boxed{3}$. Actually, I think it's 4.", "3", 0.0, "retracted same paragraph"),
    (
        "So $\\boxed{3}$.\n\nActually, I think it's 4.",
        "3",
        0.0,
        "'I think' after a correction word",
    ),
    ("Answer: 34\n\nActually, on reflection, 35.", "34", 0.0, "DAPO answer line retracted"),
    ("So $\\boxed{3}$.\n\nHmm, it must be $5$.", "3", 0.0, "'hmm' takes it back"),
    ("So $\\boxed{3}$.\n\nUpon reflection, the answer is $5$.", "3", 0.0, "upon reflection"),
    ("So $\\boxed{3}$.\n\nHmm, no \u2014 4.", "3", 0.0, "a dash after the correction"),
    ("So $\\boxed{3}$.\n\nCorrection: $4$.", "3", 0.0, "'Correction:'"),
    ("So $\\boxed{3}$.\n\nLet me reconsider. The answer is $4$.", "3", 0.0, "a later answer line"),
    ("So $\\boxed{3}$.\n\nActually, that took 4 steps.", "3", 1.0, "a count, not a value given"),
    ("So $\\boxed{3}$.\n\nActually, let me check: $1+2 = 3$. Yes.", "3", 1.0, "a check"),
    ("So $\\boxed{3}$.\n\nActually, on reflection, $3$.", "3", 1.0, "a restatement is fine"),
    ("So $\\boxed{\\frac12}$.\n\nActually, I think it's 0.5.", "1/2", 1.0, "same value restated"),
    # 2. an answer only inside the thinking
    ("<think>So it is \\boxed{42}.</think>", "42", 0.0, "nothing after the thinking"),
    ("<think>So it is \\boxed{42}.</think>\nI am not sure.", "42", 0.0, "a refusal concludes"),
    ("<think>The answer is 42.</think>\nI cannot tell.", "42", 0.0, "answer line in thinking"),
    ("<think>\\boxed{7}</think>\nSo \\boxed{42}.", "42", 1.0, "the conclusion's box counts"),
    ("<think>\\boxed{42}</think>\nSo \\boxed{7}.", "42", 0.0, "the conclusion's box counts (0)"),
    # 3. an echoed format example
    ("Example: \\boxed{12}\n\nI cannot solve this.", "12", 0.0, "'Example:' box"),
    ("Put your answer in \\boxed{}, e.g. \\boxed{12}.\n\nI cannot solve it.", "12", 0.0, "e.g."),
    ("For example, \\boxed{12} is the format.\n\nI don't know.", "12", 0.0, "for example"),
    ("Write it in the format <answer>12</answer>.\n\nNo idea.", "12", 0.0, "format tag"),
    ("e.g. \\boxed{5}. Computing: $7 + 5 = 12$, so \\boxed{12}.", "12", 1.0, "own box after"),
    # 4. a truncated response
    ("So $y = x^2 = 16$, and then $z = ", "16", 0.0, "cut after '='"),
    ("We have $a = 16$ and hence $b = 16 \\times", "16", 0.0, "cut after \\times"),
    ("Adding, the total is 16 +", "16", 0.0, "cut after '+'"),
    ("So \\boxed{16}, and then $z = ", "16", 1.0, "an explicit box still counts"),
    ("I spent 12 minutes on this. I don't know the answer.", "12", 0.0, "a refusal: no fallback"),
    ("It took 12 steps.\n\nI give up.", "12", 0.0, "giving up: no fallback"),
    ("The answer is 12. I don't understand why.", "12", 1.0, "an answer line stays"),
    ("Hence the area is $16$.", "16", 1.0, "a finished sentence is read"),
    # 5. decimal approximations of exact golds
    ("\\boxed{0.666667}", "\\frac{2}{3}", 0.0, "rounded 2/3"),
    ("\\boxed{1.414214}", "\\sqrt{2}", 0.0, "rounded sqrt 2"),
    ("\\boxed{3.14159}", "\\pi", 0.0, "rounded pi"),
    ("The answer is 0.333.", "\\frac{1}{3}", 0.0, "an answer line, rounded"),
    ("\\boxed{0.5}", "\\frac{1}{2}", 1.0, "an exact decimal"),
    ("\\boxed{\\frac{1}{2}}", "0.5", 1.0, "an exact decimal gold"),
    ("\\boxed{2.50}", "\\frac{5}{2}", 1.0, "trailing zero, exact"),
    ("\\boxed{0.5\\pi}", "\\frac{\\pi}{2}", 1.0, "a decimal coefficient, exact"),
    # 7. numbers
    ("\\boxed{−18}", "-18", 1.0, "Unicode minus"),
    ("\\boxed{−18}", "18", 0.0, "Unicode minus is a sign"),
    ("\\boxed{１８}", "18", 1.0, "full-width digits"),
    # 8. answer tags
    ("<answer>3, 6, 12</answer>", "12", 0.0, "a list in the tag"),
    ("She has 10 apples.\n<answer>cannot be determined</answer>", "10", 0.0, "no answer said"),
    ("So x = 4.\n<answer>There is no solution.</answer>", "4", 0.0, "no solution said"),
    ("<answer> 12 </answer>", "12", 1.0, "a plain tag"),
    # 4. truncated on a word that needs another after it: no fallback reading
    ("We get 34 for this step, and then the", "34", 0.0, "cut after an article"),
    ("So far 17 * 2 = 34, which is", "34", 0.0, "cut after a verb"),
    ("\\boxed{34} is what we get, and then the", "34", 1.0, "an explicit form still answers"),
    (
        "The answer is $2$.</think> We get 2 for this step, and then the",
        "2",
        0.0,
        "a cut conclusion after a template-opened thinking: the thinking gives no answer",
    ),
    ("Therefore, the answer is $2$.</think> 2", "2", 1.0, "a conclusion not cut"),
    # 10. a later answer form offered as an alternative ("Or ..."): hedging
    ("So $11 - 1 = 10$.\n\n\\boxed{11}\n\nOr \\boxed{10}", "10", 0.0, "'Or' box after a box"),
    ("5.5 - 0.5 = 5.\n\nAnswer: 6\n\nOr Answer: 5", "5", 0.0, "'Or' answer line"),
    ("\\boxed{6}. Alternatively, \\boxed{5}", "5", 0.0, "'Alternatively,' then a box"),
    ("\\boxed{10}\n\nOr, in words, ten.", "10", 1.0, "the same answer restated, no form"),
    ("Or we could add: $5 + 5 = \\boxed{10}$", "10", 1.0, "'Or' opens a step, one form"),
    # ... or behind a label naming it a fallback (a red team's probes: each credited the
    # last box), its form on the same line or the next
    ("$\\boxed{5}$\n\nPlan B: $\\boxed{6}$", "6", 0.0, "'Plan B:' box"),
    ("#### 5\n\nBackup answer: 6", "6", 0.0, "'Backup answer:' line after a ####"),
    ("$\\boxed{5}$\n\nPlan B:\n\\[\n\\boxed{6}\n\\]", "6", 0.0, "'Plan B:', its form below"),
    # labels that also number trials, steps and parts, and a parenthesis restating the
    # value: no alternative (outside looks at a wider first version, which voided each)
    (
        "Step 1: $\\boxed{5}$ apples.\n\nStep 2: the total is $\\boxed{6}$",
        "6",
        1.0,
        "a step's label is no alternative",
    ),
    (
        "First attempt: $\\boxed{5}$. Checking again.\n\nFinal answer: $\\boxed{6}$",
        "6",
        1.0,
        "'Final answer:' after an attempt",
    ),
    (
        "Initial guess: $\\boxed{4}$. That fails: 4^2 = 16.\n\nSecond guess: $\\boxed{5}$. Check: "
        "5^2 = 25.",
        "5",
        1.0,
        "'Second guess:' after a rejected trial",
    ),
    (
        "Case 1 yields $\\boxed{4}$, rejected since x>4.\n\nThe other answer: $\\boxed{5}$ is valid.",
        "5",
        1.0,
        "'The other answer:' after a rejected case",
    ),
    ("Part 1: $\\boxed{5}$.\n\nSecond answer: $\\boxed{6}$", "6", 1.0, "a second part's answer"),
    (
        "$\\boxed{\\frac{1}{2}}$.\n\n(Or $\\boxed{0.5}$ as a decimal.)",
        "0.5",
        1.0,
        "'(Or' restating the value",
    ),
    (
        "The area is $\\boxed{16\\pi}$.\n\n(Or $\\boxed{16\\pi}$ square units, if units are "
        "required.)",
        "16\\pi",
        1.0,
        "'(Or' restating with a unit",
    ),
    ("$$\\boxed{5}$$\n\nAlternatively,\n$$\\boxed{5}$$", "5", 1.0, "the same value on a display"),
    # 11. the conclusion ends on an example introducer: its form was shown, not given
    (
        "Simplify $\\frac{4}{6}$.\n\nWrite the final answer like this: \\boxed{\\frac{2}{3}}",
        "\\frac{2}{3}",
        0.0,
        "the prompt echoed with its format example",
    ),
    ("Compute $6^2$.\n\nGive it in the form <answer>36</answer>", "36", 0.0, "'in the form'"),
    ("6^2 = 36, e.g. \\boxed{36}", "36", 0.0, "'e.g.' then the form, nothing after"),
    (
        "Put it in a box, like this: \\boxed{1}. So $6^2 = \\boxed{36}$.",
        "36",
        1.0,
        "an example, then the answer given",
    ),
    # 9. the last answer form blank or saying no value: no fallback to a number elsewhere
    ("The result is 105, I think.\n\n\\boxed{}", "105", 0.0, "an empty box last"),
    ("17 * 2 = 34.\n\nAnswer: ", "34", 0.0, "an answer line with nothing after it"),
    ("17 * 2 = 34.\n\nAnswer: There is no answer possible.", "34", 0.0, "no answer said"),
    ("x = 4 fails.\n\n\\boxed{\\text{no solution}}", "4", 0.0, "a box saying none"),
    ("So 34.\n\n<answer></answer>", "34", 0.0, "an empty tag on its own line"),
    (
        "The answer goes within <answer> </answer>. So the total is 28.",
        "28",
        1.0,
        "an empty tag after words on its line names the format",
    ),
    ("\\boxed{34}\n\nThe answer is 34.", "34", 1.0, "a value after the last form"),
    (
        "So the answer is $2$.</think> <answer></answer>",
        "2",
        0.0,
        "an empty tag after a template-opened thinking: the thinking gives no answer",
    ),
    (
        "So the answer is 375. </think> The result is 375, I think.\n\n\\boxed{}",
        "375",
        0.0,
        "an empty box after a template-opened thinking",
    ),
    (
        "So the answer is $n=4$. </think> <answer >4</answer>",
        "4",
        1.0,
        "no answer form in the conclusion: the template-opened thinking answers",
    ),
    (
        "So the answer is $7$. </think>\n\nI cannot decide.",
        "7",
        0.0,
        "a refusal after a template-opened thinking: the thinking gives no answer",
    ),
    (
        "So the answer is (C). </think>\n\nWe can rule out (C).",
        "C",
        0.0,
        "a conclusion naming an option is where it answered: not the thinking",
    ),
    (
        "So the answer is $14$. </think>\n\nWe can rule out 14.",
        "14",
        0.0,
        "a conclusion weighing a value is where it answered: not the thinking",
    ),
    (
        "So the answer is 375. </think>\n\nSo $a = 376, 375, 377$.",
        "375",
        0.0,
        "a list of values after a template-opened thinking: the thinking gives no answer",
    ),
    (
        "So the answer is $50^\\circ$.</think>\n\nSo $a = 51^\\circ, 50^\\circ, 52^\\circ$.",
        "50^\\circ",
        0.0,
        "a list of angles",
    ),
    (
        "so $P = \\boxed{60^\\circ}$\n</think>\n<answer> \n$60$",
        "60^\\circ",
        1.0,
        "an unclosed tag is no form: the template-opened thinking's box still answers",
    ),
    # an answer line ends where a closing tag ends the section it is in (real outputs:
    # "So, the answer is 150</think>  150", read as the list "150 150" before)
    ("So, the answer is 150</think>  150  ", "150", 1.0, "the line ends at </think>"),
    ("Answer: 27?", "27", 0.0, "a question, not an answer"),
    ("Answer: half of 27", "27", 0.0, "a fraction of it"),
    ("Answer: up to 27", "27", 0.0, "a bound"),
    ("Answer: 27 max", "27", 0.0, "a bound after it"),
    ("Answer: 27ish", "27", 0.0, "an approximation"),
    # words after the value that make it another value (math-verify reads 27 in each)
    ("The answer is 27 to the power 2.", "27", 0.0, "a power in words"),
    ("The answer is 27 percent of 50.", "27", 0.0, "a share of another number"),
    ("The answer is 27 plus or minus 1.", "27", 0.0, "an error bar"),
    ("The answer is 27 give or take 1.", "27", 0.0, "an error bar"),
    ("The answer is 27 below zero.", "27", 0.0, "a sign in words"),
    ("So \\boxed{7}.\n\nThe answer is 7 to the power 2.", "7", 0.0, "the last line changes it"),
    ("So \\boxed{7}.\n\nThe answer is 7 below zero.", "7", 0.0, "the last line changes it"),
    ("The answer is 27 in base 10.", "27", 1.0, "the base it is in"),
    ("The answer is the square of 27.", "27", 0.0, "a function of it, before it"),
    ("The answer is the square root of 27.", "27", 0.0, "a function of it, before it"),
    ("The answer is the reciprocal of 27.", "27", 0.0, "a function of it, before it"),
    ("The answer is 27 halved.", "27", 0.0, "a change in one word"),
    ("The answer is 27 per cent of 40.", "27", 0.0, "a share, in two words"),
    ("The answer is 27 with a remainder of 3.", "27", 0.0, "a quotient and a remainder"),
    ("The answer is 27 percent of the class.", "27", 1.0, "a share named, no number after"),
    # a template-opened thinking (no <think>): a conclusion that is one value answers
    ("The answer is 150\n</think>\n151", "150", 0.0, "the conclusion is 151"),
    ("The answer is 150\n</think>\n151", "151", 1.0, "the conclusion is 151"),
    ("\\boxed{150}</think> 151", "150", 0.0, "the box is in the thinking"),
    ("The answer is 150\n</think>\nLet me present it properly.", "150", 1.0, "no value after"),
    ("So \\boxed{7}.\n\nAnswer: 7?", "7", 0.0, "the last form asks"),
    ("So \\boxed{7}. <answer>7?</answer>", "7", 0.0, "the last tag asks"),
    ("So \\boxed{7}. <answer>at least 7</answer>", "7", 0.0, "the last tag bounds"),
    ("So \\boxed{7}. <answer>7 apples</answer>", "7", 1.0, "the last tag restates it"),
    ("So, the answer is 150</think>  151", "150", 0.0, "the conclusion after it differs"),
    (
        "Therefore, the answer is \\angle C = 18</think>  18 ",
        "18",
        1.0,
        "a relation, then </think>",
    ),
    ("The answer is 7</answer>", "7", 1.0, "a closing tag after the value"),
    # benign: the same answer in other words
    ("The answer is $\\dfrac{2}{3}$.", "\\frac{2}{3}", 1.0, "\\dfrac"),
    ("The final answer is $12$.", "12", 1.0, "'The final answer is' prefix"),
    ("Thus $\\boxed{12}$", "12", 1.0, "$-wrapped box"),
    ("**Final Answer**\n\n$$12$$", "12", 1.0, "a heading then display math"),
    # a line that ends in a number or a letter, then the box on the next line: a result,
    # then its answer, not a box glued to the number (an outside red team's finding:
    # Python's `$` matched before the line's newline)
    ("3 + 4 = 7\n\\boxed{7}", "7", 1.0, "a result, then its box on the next line"),
    ("We solve for x\n\\boxed{42}", "42", 1.0, "a letter ends the line before the box"),
    ("So $7\\boxed{7}$", "7", 0.0, "a box glued to a digit is a factor"),
    ("So $2 +\n\\boxed{3}$", "3", 0.0, "an operator on the line before: an operand"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), MATH_ROWS)
def test_math_final_answer(response: str, gold: str, expected: float, why: str) -> None:
    assert _score(MATH, response, gold) == expected, why


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("\\boxed{0.666667}", "\\frac{2}{3}", 1.0),  # math-verify's 6-place rounding
        ("\\boxed{1.414214}", "\\sqrt{2}", 1.0),
        ("\\boxed{0.7}", "\\frac{2}{3}", 0.0),  # too far for any rounding
    ],
)
def test_math_rounded_decimals_are_an_opt_in(response: str, gold: str, expected: float) -> None:
    assert _score(MATH_ROUNDED, response, gold) == expected
    assert MATH_ROUNDED.key != MATH.key  # cache entries never mix the two readings


def test_math_dapo_retraction_scores_minus_one() -> None:
    """math_dapo is the MATH verifier on verl's +1/-1 scale: a retraction is wrong there."""
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        rows = [
            {"data_source": "math_dapo", "response": r, "ground_truth": "34"}
            for r in ("Answer: 34\n\nActually, on reflection, 35.", "Answer: 34")
        ]
        scores = [result.score for result in loop.score(rows)]
    assert scores == [-1.0, 1.0]


# --- gsm8k (auto) --------------------------------------------------------------------------

_GSM_PAPER = (
    "Janet eats 3 ducks eggs for breakfast every morning and she sells the rest so she has"
    " 16 - 3 = <<16-3=13>>13 ducks eggs left\nShe has 13 ducks eggs and she sells 2 each day"
    " so she makes 13 * 2 = $<<13*2=26>>26\nA: 26"
)
_ZERO_SHOT_SUM = "Julieta received $720 in tips. \nTherefore, the answer (arabic numerals) is: \n\n800 + 720 = 1520"
GSM8K_ROWS = [
    # 1. retraction
    ("#### 18\n\nActually, on reflection, 20", "18", 0.0, "retracted next paragraph"),
    ("The answer is 18. Actually, I think it's 20.", "18", 0.0, "retracted same paragraph"),
    ("#### 18\n\nActually, on reflection, 18.", "18", 1.0, "a restatement"),
    ("#### 18\n\nOn second thought, 20", "18", 0.0, "on second thought"),
    ("#### 18\n\nHmm, no - 20.", "18", 0.0, "a hyphen as a dash"),
    ("#### -20\n\nWait, no -20.", "-20", 1.0, "a minus is no dash"),
    # 2. thinking
    ("<think>So it is 42.</think>\nI am not sure.", "42", 0.0, "number only in the thinking"),
    ("<think>#### 42</think>\nNo idea.", "42", 0.0, "marked only in the thinking"),
    ("<think>7 x 6 = 42</think>\nThe answer is 42.", "42", 1.0, "the conclusion answers"),
    # 3. example
    (
        "Format: e.g. #### 12 ... Example: \\boxed{12}\n\nI cannot solve this.",
        "12",
        0.0,
        "example box",
    ),
    # 4. truncated
    ("She pays 3 x 6 = 18 and then 18 +", "18", 0.0, "cut after '+'"),
    ("So far 18 dollars, and then the tax is 18 *", "18", 0.0, "cut after '*'"),
    ("#### 18\nand then 5 +", "18", 1.0, "a marked answer still counts"),
    ("I spent 12 minutes on this. I don't know the answer.", "12", 0.0, "a refusal: no fallback"),
    ("She has 12 apples. I am unable to determine the rest.", "12", 0.0, "unable to determine"),
    ("Here is code:\n```python\nx = 12\n```", "12", 0.0, "a number in a program"),
    ("So the total is 18.\n\n```python\nprint(6 * 3)\n```", "18", 1.0, "the prose before code"),
    ("```python\nprint(6 * 3)\n```\n```output\n18\n```", "18", 1.0, "a tool's output block"),
    # 7. numbers
    ("#### −18", "-18", 1.0, "Unicode minus"),
    ("#### −18", "18", 0.0, "Unicode minus is a sign"),
    ("#### 1/2", "0.5", 1.0, "a fraction"),
    ("The answer is 3/4.", "0.75", 1.0, "a fraction on an answer line"),
    ("#### 7", "+7", 1.0, "a gold with a plus sign"),
    ("#### ١٨", "18", 1.0, "Arabic-Indic digits"),
    # 8. answer tags and glued text
    ("<answer>3, 6, 12</answer>", "12", 0.0, "a list in the tag"),
    ("She has 10 apples.\n<answer>There is no solution</answer>", "10", 0.0, "no answer said"),
    ("<answer>cannot be determined</answer>", "5", 0.0, "no answer, no fallback"),
    (
        "The total is 15.\n<answer>It cannot be determined.</answer>",
        "15",
        0.0,
        "a sentence, no number",
    ),
    ("<answer>6 or 12</answer>", "12", 0.0, "two numbers offered"),
    ("<answer> 20m </answer>", "20", 1.0, "a number glued to its unit"),
    ("So 20 * 11 = 220.\n#### ", "220", 0.0, "an emptied #### line"),
    ("So 20 * 11 = 220.\n\n#### cannot be determined", "220", 0.0, "#### says no value"),
    ("So 20 * 11 = 220.\n#### 220", "220", 1.0, "the #### line holds the value"),
    ("23 * 29 = 667.\n\n#### 668\n\nOr #### 667", "667", 0.0, "'Or' #### after a ####"),
    (
        "Let me compute it.\n```python\nprint(solve())\n```\n```output\n48\n```\n"
        "I could not finish the computation.",
        "48",
        0.0,
        "a value only in an output block, the conclusion says it has none",
    ),
    ("So far 6 * 8 = 48.\n\nWe were unable to complete the problem.", "48", 0.0, "'unable to'"),
    ("Step 1 gives 2. Step 2 needs more information than we have.", "2", 0.0, "needs more info"),
    ("We have 48 apples. There is not enough information to go on.", "48", 0.0, "not enough info"),
    ("We need more information: 6 * 8 = 48.\n\nSo she has 48.", "48", 1.0, "then answered"),
    (
        "```python\nprint(6 * 8)\n```\n```output\n48\n```\nSo she has \\boxed{48} apples.",
        "48",
        1.0,
        "tool-integrated reasoning: an output block, then a boxed answer",
    ),
    ("I could not find a mistake.\n\nSo she has 48 apples.", "48", 1.0, "doubt, then a value"),
    ("23 * 29 = 667.\n\n#### 667\n\nOr, rounded, about 670.", "667", 1.0, "no second form"),
    ("Chad owes $9.75元 in total.", "9.75", 1.0, "decimals before a CJK character"),
    ("Chad owes $9.75元 in total.", "9", 0.0, "not the whole part alone"),
    ("答案是18", "18", 1.0, "a number after CJK text"),
    ("<answer> Step: 3 x 6 = 18 dollars in total </answer>", "18", 1.0, "a passage in a tag"),
    # benign
    ("The answer is $18.", "18", 1.0, "dollar sign"),
    ("**Answer:** 1,000", "1000", 1.0, "thousands separator"),
    ("So she earns \\boxed{18} dollars.", "18", 1.0, "a box"),
    # another number beside it, an approximation, a question: no number
    ("The answer is 18 (19)", "18", 0.0, "a number in brackets beside it"),
    ("The answer is 18 [19]", "18", 0.0, "a number in square brackets"),
    ("The answer is 18 \\, 19", "18", 0.0, "a number behind a thin space"),
    ("The answer is 18 \\text{ and } 19", "18", 0.0, "'and' in \\text"),
    ("The answer is 18?", "18", 0.0, "a question"),
    ("The answer is about 18", "18", 0.0, "an approximation"),
    ("The answer is ≈18", "18", 0.0, "an approximation sign"),
    ("The answer is 18·2", "18", 0.0, "a product with a middle dot"),
    ("The answer is 18 \\pi", "18", 0.0, "a LaTeX factor"),
    ("The answer is 18 (6 × 3)", "18", 1.0, "a calculation in brackets explains it"),
    ("The answer is 18\n</think>\n19", "18", 0.0, "the conclusion is 19, not the thinking"),
    # a sign, a multiple, a bound or an approximation in words; "left over" is no bound
    ("The answer is negative 18", "18", 0.0, "a sign in words"),
    ("The answer is minus 18", "18", 0.0, "a sign in words"),
    ("The answer is twice 18", "18", 0.0, "a multiple"),
    ("The answer is half of 18", "18", 0.0, "a fraction of it"),
    ("The answer is under 18", "18", 0.0, "a bound"),
    ("The answer is 18 max", "18", 0.0, "a bound after it"),
    ("The answer is 18ish", "18", 0.0, "an approximation"),
    ("The answer is 18 (approximately)", "18", 0.0, "an approximation"),
    ("The answer is 18 \\bmod 5", "18", 0.0, "an expression"),
    ("The answer is 18 to the power 2.", "18", 0.0, "a power in words"),
    ("The answer is 18 percent of 50.", "18", 0.0, "a share of another number"),
    ("The answer is 18 below zero.", "18", 0.0, "a sign in words"),
    ("<answer>2 times 2</answer>", "2", 0.0, "the gold times itself"),
    ("The answer is the square of 18.", "18", 0.0, "a function of it, before it"),
    ("The answer is 18 less 2.", "18", 0.0, "an operand"),
    ("So the area is the square of \\(4\\).", "4", 0.0, "a function of it, in a math span"),
    ("So the area is twice \\(4\\).", "4", 0.0, "a multiple of it, in a math span"),
    ("So the total is half of $$12$$.", "12", 0.0, "a share of it, in display math"),
    # (a real output: "below" says where the display stands, on a line of its own)
    ("So the total is 490 handshakes, displayed below\n\\[ 490 \\]", "490", 1.0, "a place"),
    ("So \\boxed{18}.\n\nThe answer is the square of 18.", "18", 0.0, "the last line changes it"),
    ("So \\boxed{18}.\n\nThe answer is about 18.", "18", 0.0, "the last line bounds it"),
    ("The answer is 18.\n\nThe answer is negative 18.", "18", 0.0, "the last line changes it"),
    ("So \\boxed{18}.\n\nThe answer is indeed 18.", "18", 1.0, "the last line restates it"),
    ("Answer: the square of 3.\nShe has 3 bolts.", "3", 0.0, "no later number reads"),
    ("<answer>2 to the power 2</answer>", "2", 0.0, "the gold to a power"),
    ("She has 3 times 2 = 6 apples.\n#### 6", "6", 1.0, "an operand in the steps"),
    ("She has 12 + 30 = 42\n\\boxed{42}", "42", 1.0, "a result, then its box below"),
    ("Greta has $18$ brownies left over from the day.", "18", 1.0, "'over' after a unit"),
    # a condition makes the answer no plain one
    ("The answer is 18 if it rains, else 20.", "18", 0.0, "a conditional answer"),
    ("The answer is 18 unless it rains.", "18", 0.0, "a conditional answer"),
    ("The answer is 18\n</think>\n19", "19", 1.0, "the conclusion is 19"),
    # published outputs, each as its source graded it: the GSM8K paper's solutions end
    # "A: n" (openai/grade-school-math, example_model_solutions.jsonl, MIT); the zero-shot
    # chain-of-thought trigger ends "the answer (arabic numerals) is" (kojima-takeshi188/
    # zero_shot_cot, text-davinci-002), where a sum's result is the answer, not its first term
    (_GSM_PAPER, "26", 1.0, "the paper's answer line"),
    (_GSM_PAPER, "18", 0.0, "the paper's answer line, wrong"),
    (_ZERO_SHOT_SUM, "1520", 1.0, "the sum's result after the trigger"),
    (_ZERO_SHOT_SUM, "800", 0.0, "not the sum's first term"),
    # "answer" in Chinese marks an answer as "Answer:" does
    ("第一步：3+4=7\n第二步：7*2=14\n答案：14", "14", 1.0, "答案 marks it"),
    ("所以答案是 18。", "18", 1.0, "答案是 marks it"),
    ("答案：18\n\n答案：20", "20", 0.0, "two answers, one a paragraph"),
    ("错误答案是 18，正确答案是 20。", "20", 1.0, "the wrong answer named, then the right one"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), GSM8K_ROWS)
def test_gsm8k_final_answer(response: str, gold: str, expected: float, why: str) -> None:
    assert _score(GSM8K, response, gold) == expected, why


# --- multiple choice -----------------------------------------------------------------------

CHOICE_ROWS = [
    # 1. retraction
    ("Answer: B\n\nActually, C.", "B", 0.0, "retracted next paragraph"),
    ("Answer: B. Actually, I think it's C.", "B", 0.0, "retracted same paragraph"),
    ("Answer: B\n\nActually, on reflection, B.", "B", 1.0, "a restatement"),
    # another option offered, or a doubt, in the words after the letter
    ("The correct option is B (or possibly D).", "B", 0.0, "another option in brackets"),
    ("The answer is B (probably).", "B", 0.0, "a doubt"),
    ("The answer is B if x>0 else C.", "B", 0.0, "a conditional answer"),
    ("The answer is B-C.", "B", 0.0, "two options joined"),
    ("The answer is B, not C.", "B", 1.0, "an option ruled out"),
    ("The answer is B, which is the largest.", "B", 1.0, "a reason"),
    ("Answer: B - 42", "B", 1.0, "the option's content"),
    # 2. thinking
    ("<think>Answer: B</think>\nI am not sure.", "B", 0.0, "stated only in the thinking"),
    ("<think>Maybe A.</think>\nAnswer: B", "B", 1.0, "the conclusion states B"),
    # 6. from the end first
    ("Option D is a distractor.\n\nAnswer: b", "B", 1.0, "a mention does not outrank the answer"),
    ("Option D is a distractor, and A is too small.", "D", 0.0, "a mention is no answer"),
    ("Answer: b", "B", 1.0, "lower-case letter stated"),
    ("The options were checked.\nB) 42", "B", 1.0, "the option restated last"),
    ("Thunder follows it.\nA. lightning.", "A", 1.0, "letter and option text"),
    ("The reasoning goes here.\nc", "C", 1.0, "a lone lower-case letter"),
    ("A) 3\nB) 4\nC) 5\nD) 6", "D", 0.0, "the option list is no choice"),
    ("(A) is wrong because it is small.\nB) 42", "B", 1.0, "a judgement is no choice"),
    ("Answer: A\nB) 42", "B", 0.0, "two different final forms"),
    ("The correct option is C.", "C", 1.0, "an option chosen"),
    ("A is wrong. B is wrong. The answer: c", "C", 1.0, "lower case after 'The answer:'"),
    ("**Final answer: (b)**", "B", 1.0, "bold, lower case"),
    ("Therefore the answer is D) Paris.", "D", 1.0, "letter and option text stated"),
    ("The answer is option A, not B", "A", 1.0, "'option' after 'the answer is'"),
    ("Answer: B\n\nHmm, actually D.", "B", 0.0, "'Hmm, actually'"),
    ("I choose option C.", "C", 1.0, "an option chosen in words"),
    ("Answer: B\n\nOr Answer: C", "C", 0.0, "'Or' answer line after an answer line"),
    ("Answer: C\n\nBackup answer: B", "B", 0.0, "'Backup answer:' after an answer line"),
    (
        "At first glance the answer is A.\n\nHowever, A ignores friction, so A is wrong.\n\n"
        "The next best answer is B.",
        "B",
        1.0,
        "'next best' after a rejected letter",
    ),
    ("Answer: \\(B \\lor C\\)", "B", 0.0, "two letters joined by logic's 'or'"),
    ("Answer: $\\boxed{B \\vee C}$", "B", 0.0, "two letters joined by \\vee in a box"),
    ("Answer: B and C are both correct.", "B", 0.0, "two letters said both right"),
    ("The answer is B, or if not, C.", "B", 0.0, "'or if not' another letter"),
    # 4. truncated: only stated answers
    ("The best fit is\n(B) because of the sign and (", "B", 0.0, "cut: no marked letter"),
    # benign
    ("The answer is (C).", "C", 1.0, "'The answer is' prefix"),
    ("$\\boxed{C}$", "C", 1.0, "$-wrapped box"),
    # two letters behind TeX's spacing or text, or a letter asked, not chosen
    ("Answer: B \\text{ and } C", "B", 0.0, "two letters, 'and' in \\text"),
    ("Answer: B \\, C", "B", 0.0, "two letters behind a thin space"),
    ("Answer: B?", "B", 0.0, "a question"),
    ("\\boxed{B?}", "B", 0.0, "a question in a box"),
    ("Answer: B\n</think>\n\n$C$", "B", 0.0, "the conclusion after </think> is C"),
]


@pytest.mark.parametrize(("response", "gold", "expected", "why"), CHOICE_ROWS)
def test_choice_final_answer(response: str, gold: str, expected: float, why: str) -> None:
    assert _score(CHOICE, response, gold) == expected, why


# --- search-R1 -------------------------------------------------------------------------------

SEARCH_ROWS = [
    ("<answer>Paris</answer> hmm <answer>London</answer>", ["London"], 0.0, "two answers"),
    ("<answer>Paris</answer> hmm <answer>London</answer>", ["Paris"], 0.0, "two answers (first)"),
    ("<answer>Paris</answer> so <answer>paris.</answer>", ["Paris"], 1.0, "same after normalising"),
    ("<answer> answer here </answer> ... <answer>Paris</answer>", ["Paris"], 1.0, "placeholder"),
    ("<think><answer>Rome</answer></think>\n<answer>Paris</answer>", ["Paris"], 1.0, "thinking"),
    ("<think><answer>Paris</answer></think>\nNo idea.", ["Paris"], 0.0, "only in the thinking"),
    ("<answer>Paris</answer>", ["Paris"], 1.0, "one answer"),
]


@pytest.mark.parametrize(("response", "targets", "expected", "why"), SEARCH_ROWS)
def test_search_qa_final_answer(
    response: str, targets: list[str], expected: float, why: str
) -> None:
    assert _score(SEARCH, response, {"target": targets}) == expected, why


def test_search_qa_two_answers_are_hedged_and_verl_reading_is_an_opt_in() -> None:
    response = "<answer>Paris</answer> hmm <answer>London</answer>"
    assert _hedged(SEARCH, response)
    assert _score(SEARCH_LAST, response, {"target": ["London"]}) == 1.0
    assert SEARCH_LAST.key != SEARCH.key
    config = RewardConfig.model_validate(
        {"reward": {"verifiers": {"search_qa": {"answers": "last"}}}}
    )
    assert config.reward.verifiers.search_qa.answers == "last"
    with pytest.raises(ValueError, match="search_qa"):
        RewardConfig.model_validate({"reward": {"verifiers": {"search_qa": {"answers": "first"}}}})


def test_math_decimals_key_is_validated() -> None:
    config = RewardConfig.model_validate(
        {"reward": {"verifiers": {"math": {"decimals": "rounded"}}}}
    )
    assert config.reward.verifiers.math.decimals == "rounded"
    with pytest.raises(ValueError, match="decimals"):
        RewardConfig.model_validate({"reward": {"verifiers": {"math": {"decimals": 1e-6}}}})


# --- the row's context: prompt echoes, truncation from extra_info ------------------------------

PROMPT = "Solve it. Put your final answer in \\boxed{}, like: The answer is \\boxed{12}."


@pytest.mark.parametrize(
    ("verifier", "response", "gold"),
    [
        (MATH, "Put your final answer in \\boxed{}, like: The answer is \\boxed{12}.\n\nNo.", "12"),
        (
            GSM8K,
            "Put your final answer in \\boxed{}, like: The answer is \\boxed{12}.\n\nNo.",
            "12",
        ),
    ],
)
def test_a_line_of_the_prompt_repeated_is_no_answer(
    verifier: Verifier, response: str, gold: str
) -> None:
    context = Context.of([{"role": "user", "content": PROMPT}], {})
    assert _score(verifier, response, gold, context) == 0.0
    assert _score(verifier, "So the answer is \\boxed{12}.", gold, context) == 1.0


@pytest.mark.parametrize(
    "extra_info",
    [
        {"truncated": True},
        {"finish_reason": "length"},
        {"response_length": 4096, "max_response_length": 4096},
    ],
)
def test_a_truncated_row_has_no_fallback(extra_info: dict[str, Any]) -> None:
    assert is_truncated(extra_info)
    context = Context.of("", extra_info)
    response = "First 3 x 4 = 12, and the rest is 12"  # no explicit form: the fallback's
    assert _score(MATH, response, "12") == 1.0
    assert _score(MATH, response, "12", context) == 0.0
    assert _score(GSM8K, response, "12", context) == 0.0
    assert _score(MATH, response + ". So \\boxed{12}", "12", context) == 1.0


def test_truncated_against_the_configured_limit() -> None:
    assert is_truncated({"response_length": 512}, max_response_length=512)
    assert not is_truncated({"response_length": 511}, max_response_length=512)
    assert not is_truncated({"response_length": True, "max_response_length": 1})  # no int
    assert Context.of("", {"response_length": 512}, max_response_length=512).truncated


def test_not_truncated() -> None:
    for extra_info in (
        {},
        {"finish_reason": "stop"},
        {"response_length": 10, "max_response_length": 4096},
    ):
        assert not is_truncated(extra_info)


def test_the_engine_hands_verifiers_the_prompt_and_extra_info() -> None:
    echoed = "Put your final answer in \\boxed{}, like: The answer is \\boxed{12}.\n\nNo."
    rows = [
        {"data_source": "gsm8k", "prompt": PROMPT, "response": echoed, "ground_truth": "12"},
        {"data_source": "gsm8k", "prompt": "Solve it.", "response": echoed, "ground_truth": "12"},
        {
            "data_source": "lighteval/MATH",
            "response": "First 3 x 4 = 12, and the rest is 12",
            "ground_truth": "12",
            "extra_info": {"finish_reason": "length"},
        },
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        scores = [result.score for result in loop.score(rows)]
    # the like-clause is no example cue without the prompt: its box answers
    assert scores == [0.0, 1.0, 0.0]


async def test_spread_tasks_hand_verifiers_the_context_too() -> None:
    """A large batch runs its rows' extraction in worker tasks: the context goes there."""
    echoed = "Put your final answer in \\boxed{}, like: The answer is \\boxed{12}.\n\nNo."
    rows = [
        {"data_source": "gsm8k", "prompt": prompt, "response": echoed, "ground_truth": "12"}
        for prompt in [PROMPT, "Solve it."] * 40
    ]
    engine = await RewardEngine.create(RewardConfig.model_validate({"reward": {"num_workers": 2}}))
    try:
        results = await engine.score_many(rows)
    finally:
        await engine.close()
    assert engine.stats["spread"] == len(rows)  # the rows did run in spread tasks
    assert [result.score for result in results] == [0.0, 1.0] * 40


def test_rows_too_big_inline_hand_verifiers_the_context_too() -> None:
    """A row too big for the event loop runs every phase whole in a worker: the prompt and
    the truncation reach it there as they do inline."""
    echoed = "Put your final answer in \\boxed{}, like: The answer is \\boxed{12}.\n\nNo."
    pad = "Let me think about it step by step. " * 3_000 + "\n\n"
    cut = pad + "First 3 x 4 = 12, and the rest is 12"
    rows = [
        {"data_source": "gsm8k", "prompt": PROMPT, "response": pad + echoed, "ground_truth": "12"},
        {
            "data_source": "gsm8k",
            "prompt": "Solve it.",
            "response": pad + echoed,
            "ground_truth": "12",
        },
        {
            "data_source": "lighteval/MATH",
            "response": cut,
            "ground_truth": "12",
            "extra_info": {"finish_reason": "length"},
        },
        {"data_source": "lighteval/MATH", "response": cut, "ground_truth": "12"},
    ]
    assert all(too_big_inline(row["response"], row["ground_truth"]) for row in rows)
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        scores = [result.score for result in loop.score(rows)]
    assert scores == [0.0, 1.0, 0.0, 1.0]


# --- the shared reading ---------------------------------------------------------------------


def test_conclusion_and_thinking() -> None:
    assert _final.conclusion("<think>a</think>b") == "b"
    assert _final.conclusion("<think> 3 x 24 = 72 </think> 72 </think>") == " 72"
    assert _final.conclusion("no thinking") == "no thinking"
    # a format mention is no thinking closed
    mention = "The answer: $28$.\nThe reasoning is enclosed within <think> </think> tags."
    assert _final.conclusion(mention) == mention
    # a template-opened thinking (no <think> in the response) is read when nothing else is
    assert list(_final.answering_texts("x = 5 </think>"))[-1].startswith("x = 5")
    assert list(_final.answering_texts("<think>x = 5</think>")) == [""]
    # a thinking the response opens and never closes (cut in its reasoning) answers
    # nothing; text before it does, and a <think> inside a line opens nothing
    assert list(_final.answering_texts("<think>So \\boxed{7}. But wait")) == [""]
    assert _final.thinking_split("#### 7\n<think>or 8") == ("<think>or 8", "#### 7\n")
    assert _final.conclusion("The tag <think> opens it: 7") == "The tag <think> opens it: 7"


@pytest.mark.parametrize(
    ("verifier", "response", "gold"),
    [
        (MATH, "<think></think>The answer is 12.", "12"),
        (MATH, "<think>\n</think>\\boxed{12}", "12"),
        (MATH, "<think>\n\n</think>\n\nThe answer is 12.", "12"),  # Qwen3's non-thinking mode
        (MATH, "<think> reasoning process here </think> <answer> 12 </answer>", "12"),
        (GSM8K, "<think> </think>#### 12", "12"),
        (CHOICE, "<think></think>Answer: B", "B"),
        (CHOICE, "  <think>...</think>\nThe answer is (B).", "B"),
    ],
)
def test_an_empty_thinking_that_opens_the_response_is_closed(
    verifier: Any, response: str, gold: str
) -> None:
    """A pair that opens the response is an (empty) thinking, never a mention of the
    format: the answer after it is the conclusion. (An outside red team's finding: every
    answer after ``<think></think>`` or ``<think>\\n</think>`` scored 0, where
    math-verify credits it.)"""
    assert _score(verifier, response, gold) == 1.0
    assert _score(verifier, response, "13" if verifier is not CHOICE else "C") == 0.0


def test_a_format_mention_inside_the_text_closes_nothing() -> None:
    mention = "<think>So 3 + 4 = 7.\n\nThe format is <think> </think> then \\boxed{7}"
    assert _final.conclusion(mention) == ""  # the thinking never closed: no answer given
    assert _score(MATH, mention, "7") == 0.0


@pytest.mark.parametrize(
    ("verifier", "response", "gold"),
    [
        (MATH, "<think>The sum is 3+4 = 7. So \\boxed{7}.", "7"),
        (MATH, "<think>\n3+4 = 7, so \\boxed{7}. Hmm, but wait, let me check the case where", "7"),
        (GSM8K, "<think>3 + 4 = 7.\n#### 7", "7"),
    ],
)
def test_an_answer_in_a_thinking_never_closed_is_no_answer(
    verifier: Any, response: str, gold: str
) -> None:
    """(An outside red team's finding: the whole response was read as the conclusion.)"""
    assert _score(verifier, response, gold) == 0.0
    assert _score(verifier, response + "</think>\n\n" + gold, gold) == 1.0


def test_unicode_numbers_keep_their_length() -> None:
    text = "−18 and １８ and ١٨"
    assert _final.ascii_number_text(text) == "-18 and 18 and 18"
    assert len(_final.ascii_number_text(text)) == len(text)
    assert _final.ascii_number_text("18–20") == "18–20"  # an en dash is a range, not a minus


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("and then $z = ", True),
        ("so 3 +", True),
        ("hence \\frac{1}{", True),
        ("We get 220 for this step, and then the", True),
        ("The total comes to 34 and", True),
        ("so the number of apples is", True),
        ("Multiply 4 by 5 to", True),
        ("We get 12 apples in total.", False),
        ("The answer is 12", False),
        ("x is a", True),
        ("the answer is (a)", False),
        ("Let me check every choice.\n\nA", False),
        ("So I pick A", False),
        ("the\n", False),
        ("the answer is **D**", False),
        ("The area is $16$.", False),
        ("x = 5", False),
        # cut at the token limit mid-formula: the formula opened, unclosed, unbalanced (the
        # ends of greedy Llama-3.1-8B-Instruct rows of a public MATH-500 dump)
        ("$\\cos(\\theta) = \\frac{(|\\mathbf{a} \\cos(29", True),
        ("\\[p(x) = \\frac{x^2((b - a)(b - c) + (a - b)(a - c)", True),
        ("we get:\n\\[\\sqrt{x + y} + \\sqrt{x - y} = \\frac{2\\sqrt{53}}{\\sqrt{13", True),
        ("$= \\frac{1996}{1 + \\omega} + \\", True),  # a command cut before its name
        ("$$x = \\frac{3}{4", True),
        # a formula left open but whole, a line break's spacing, an amount: not cut
        ("\\[52 _ {2} = 52 * 51 = 2652 paragraphs", False),
        ("&= 14 \\\\[0.2 cm]\n\n&= 14", False),
        ("It costs $5 (before tax", False),
        ("So $x = \\frac{1}{2}$ and \\(y = 3\\).", False),
        ("\\[ x^2 = 4 \\]\nso $x = 2", False),
    ],
)
def test_cut_off(text: str, cut: bool) -> None:
    assert _final.cut_off(text) is cut


# A conclusion that ends on the values of several labelled parts answers a several-part
# question: its last value is no more the answer than its first, so no fallback reads one
# (a red team's probe: each was credited against the last part's value)
PARTS = [
    "Answer (part a): 19\nAnswer (part b): 18",
    "(a) 19\n(b) 18",
    "Part 1: 19. Part 2: 18.",
    "Q1: 19\nQ2: 18",
]


@pytest.mark.parametrize("tail", PARTS)
def test_the_last_of_several_parts_is_no_answer(tail: str) -> None:
    response = f"We work through each part.\n\n{tail}"
    assert _final.ends_on_parts(response)
    for verifier in (MATH, GSM8K):
        extracted = verifier.extract(response)
        quick = verifier.quick_check(extracted, "18")
        assert (quick if quick is not None else verifier.check(extracted, "18")).score == 0.0


def test_a_step_named_by_a_letter_is_no_several_part_answer() -> None:
    response = "Step (a) gives 5, so the total is 18."
    assert not _final.ends_on_parts(response)
    assert MATH.check(MATH.extract(response), "18").score == 1.0


# A response that goes on into an invented next turn (a base model with no stop sequence,
# R1-zero's "User: ... Assistant:" few-shot template; 101 rows of tests/data/real_outputs,
# e.g. liba:r1_zero_3shot:72) answered before that turn or not at all (an outside red
# team's finding: the invented turn's answer was read, crediting a wrong first answer)
INVENTED_TURNS = [
    (MATH, "The answer is $\\boxed{12}$.\n\nHuman: What is 3+4?\n\nAssistant: The answer is $\\boxed{7}$.", "12", 1.0),
    (MATH, "The answer is $\\boxed{7}$.\n\nHuman: What is 3+9?\n\nAssistant: The answer is $\\boxed{12}$.", "12", 0.0),
    (GSM8K, "So 129 + 92 = 221. </think> <answer> $221 </answer>\nUser: How many more books?\nAssistant: <think> 96 - 98 = -2 </think> <answer> -2 </answer>", "221", 1.0),
    (GSM8K, "The answer is 12.<|im_end|>\n<|im_start|>user\nNext question<|im_end|>\n<|im_start|>assistant\nThe answer is 7.", "12", 1.0),
    (CHOICE, "The answer is B.<|im_end|>\n<|im_start|>user\nNext question<|im_end|>\n<|im_start|>assistant\nThe answer is D.", "B", 1.0),
    (MATH, "Let me think.\nUser: Thank you.\nAssistant: So the answer is $\\boxed{36}$.", "36", 0.0),  # no answer in its own turn
    (MATH, "User: restated, the question asks for $x$.\nSo $\\boxed{36}$.", "36", 1.0),  # nothing before it: no turn ended
    # a "Human:" or "User:" label with no assistant's turn after it is content (an
    # outside red team's probes: chromosome counts, a table of ages)
    (CHOICE, "Chromosome counts:\nHuman: 46\nChimpanzee: 48\n\nAnswer: B", "B", 1.0),
    (MATH, "Ages:\nUser: 12\nAdmin: 30\nSum = \\boxed{42}", "42", 1.0),
    (MATH, "Let me think. The value is 7.\nUser: hmm\n</think>\nThe answer is \\boxed{8}.", "8", 1.0),
]  # fmt: skip


@pytest.mark.parametrize(("verifier", "response", "gold", "expected"), INVENTED_TURNS)
def test_an_invented_next_turn_answers_another_question(
    verifier: Any, response: str, gold: str, expected: float
) -> None:
    assert _score(verifier, response, gold) == expected


def test_own_turn_ends_at_a_turn_for_someone_else() -> None:
    assert _final.own_turn("So 12.\nUser: next?\nAssistant: 7") == "So 12.\n"
    assert _final.own_turn("So 12.<|eot_id|>\n<|start_header_id|>user<|end_header_id|>\n\nq") == (
        "So 12."
    )  # a mark the policy spelled and wrote on after: tests/verifiers/test_invented_turns.py
    assert (
        _final.own_turn("The user: says 7. So 12.") == "The user: says 7. So 12."
    )  # not at a line start
    assert _final.own_turn("x" * 100_000 + "\nUser: q\nAssistant: a") == "x" * 100_000 + "\n"
    assert _final.own_turn("x\nUser:" * 10_000) == "x\nUser:" * 10_000  # labels: no dialogue
    assert _final.own_turn("x\nUser: q\nAssistant: a" * 10_000) == "x\n"


def test_a_multi_turn_trajectory_goes_on_after_a_tool_turn() -> None:
    """An agent loop's trajectory decoded with its special tokens: the tool's response
    and the assistant's next turn are the trajectory, not an invented turn."""
    trajectory = (
        'I will look it up.<tool_call>{"name": "calc", "arguments": {}}</tool_call><|im_end|>\n'
        "<|im_start|>user\n<tool_response>\n3\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\nSo the answer is $\\boxed{3}$.<|im_end|>"
    )
    tool_output = "<tool_response>\n3\n</tool_response>"  # no word of the policy's: blank
    kept = trajectory.removesuffix("<|im_end|>")
    assert _final.own_turn(trajectory, earlier_turns=True) == kept.replace(
        tool_output, " " * len(tool_output)
    )
    final_turn = kept.index(tool_output) + len(tool_output)  # what it answers in
    assert _final.own_turn(trajectory) == " " * final_turn + kept[final_turn:]
    assert _score(MATH, trajectory, "3") == 1.0
    llama = "Calling.<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n3<|eot_id|>"
    assert (
        _final.own_turn(llama + "<|start_header_id|>assistant<|end_header_id|>\n\n3") != "Calling."
    )
