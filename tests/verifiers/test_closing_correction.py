"""guards: a final answer taken back is no answer, in every family, however the corrected value is written (_final.closing_correction, ALSO_OFFERED).

Two rules, stated in ``_final``'s docstring:
- a conclusion whose last sentence opens with a correction cue and gives a value ends on
  that value, however far its answer form is; a family that cannot read the value takes
  it as another answer (fail closed);
- a final answer offered beside the one found that cannot be told the same or different
  at extraction (``ALSO_OFFERED``) must be right too: the check credits the row only if
  each of them is the gold.
The rows come from ``rewardkit audit``'s retraction family on real outputs (the answer
far above a code block, in an ``<answer>`` passage, in ``\\$`` money, bare LaTeX).
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import score
from rewardkit import RewardLoop
from rewardkit.verifiers._final import closing_correction
from rewardkit.verifiers.base import ALSO_OFFERED
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier
from rewardkit.verifiers.search_qa import SearchQAVerifier

MATH, GSM8K, CHOICE, SEARCH = MathVerifier(), GSM8KVerifier(), ChoiceVerifier(), SearchQAVerifier()
MATH_EXACT_CHECK = MathVerifier(fast_paths=False)

CODE_TAIL = "\n\nSome notes.\n\n```python\nx = 45\nprint(x)\n```"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("So \\boxed{3}.\n\nActually, on reflection, $4$.", "$4$"),
        ("So \\boxed{3}. Actually, I think it's \\frac{3}{3}.", "\\frac{3}{3}"),
        ("Answer: B\n\nActually, C.", "C"),
        ("<answer>Paris</answer> Actually, I think it's $none of these$.", "$none of these$"),
        ("print(x)\n``` Actually, I think it's $19$.", "$19$"),
        ("x\n\n**Wait, it's 20.**", "20"),
        # a cut-off sentence running into the cue: the capital opens a sentence
        ("So 2009. The problem might be asking for Actually, I think it's $2010$.", "$2010$"),
        ("Since \\(\\tan 80^\\circ = \\cot 10 Actually, I think it's $19$.", "$19$"),  # a number
        ("So we have 18 Actually, on reflection, 19.", "19"),
        ("So 18 Actually here is why it holds.", None),  # no value after the cue
        ("So it is 18 Wait.", None),
        ("So 3.\n\nActually, on reflection, I get $x = 4$ in the end.", "$x = 4$"),
        # no value, or not a sentence opened by the cue: nothing is taken back
        ("So 3.\n\nActually, this checks out.", None),
        ("No correction here 3.", None),
        ("Hmm, so the answer is 3.", None),  # a sentence, not a value given
        ("I said 3 (actually 4).", None),
        ("As Euler showed, 3.", None),  # a capital after a word, but no cue
        ("So 2009, which is actually 2009 after all.", None),  # a lower-case cue mid-sentence
        ("So 3.\n\nActually, on reflection, the result follows from the lemma above.", None),
    ],
)
def test_closing_correction_reads_the_value_given(text: str, value: str | None) -> None:
    """The cue rules (``any_lead=False``); with any lead, a last sentence of a few words
    and a value gives that value whatever its words (ANY_WORDS below)."""
    assert closing_correction(text, any_lead=False) == value


FAR = "Simplify the next expression. " * 20 + "\n\n"  # the answer far above the end

MATH_ROWS = [
    # (response, gold, score): hacks first, then restatements that keep their credit
    (
        "So the answer is $\\boxed{\\$ 85.39}$.\n\nActually, on reflection, $\\$86.39$.",
        "\\$85.39",
        0.0,
    ),
    (
        "So the answer is $\\boxed{\\$ 85.39}$.\n\nActually, I think it's $\\$85.39$.",
        "\\$85.39",
        1.0,
    ),
    (
        "Hence \\boxed{105\\text{ degrees}}.\n\nActually, on reflection, $106^\\circ$.",
        "105^\\circ",
        0.0,
    ),
    (
        "Hence \\boxed{105\\text{ degrees}}.\n\nActually, on reflection, $105^\\circ$.",
        "105^\\circ",
        1.0,
    ),
    ("<answer>2 + 11 = 13</answer>\n\nActually, on reflection, $14$.", "13", 0.0),
    ("<answer>2 + 11 = 13</answer>\n\nActually, on reflection, $13$.", "13", 1.0),
    ("<answer> The area is $50$. </answer>\n\nActually, on reflection, $51$.", "50", 0.0),
    ("<answer> The area is $50$. </answer> So the answer is 50.", "50", 1.0),
    ("Answer: \\frac{2}{3}\n\nActually, on reflection, \\frac{3}{3}.", "\\frac{2}{3}", 0.0),
    ("Answer: \\frac{2}{3} Actually, I think it's \\frac{3}{3}.", "\\frac{2}{3}", 0.0),
    ("Answer: \\frac{2}{3}\n\nActually, on reflection, \\frac{2}{3}.", "\\frac{2}{3}", 1.0),
    ("So \\(\\boxed{45}\\)." + CODE_TAIL + "\n\nActually, on reflection, $46$.", "45", 0.0),
    ("So \\(\\boxed{45}\\)." + CODE_TAIL + " Actually, I think it's $46$.", "45", 0.0),
    ("So \\(\\boxed{45}\\)." + CODE_TAIL + "\n\nActually, on reflection, $45$.", "45", 1.0),
    ("So \\(\\boxed{45}\\)." + CODE_TAIL, "45", 1.0),
    ("It simplifies to \\(5\\).\n\nActually, on reflection, 6.", "5", 0.0),
    # a second final answer that cannot be told the same inline must be right too
    ("So $\\boxed{x^2+1}$.\n\nAnswer: $1+x^2$", "x^2+1", 1.0),
    ("So $\\boxed{\\sqrt{2}}$.\n\nAnswer: 1.41", "\\sqrt{2}", 0.0),
    ("So $\\boxed{5}$.\n\nThe answer is $2 + 3 = 5$.", "5", 1.0),
]


@pytest.mark.parametrize(("response", "gold", "expected"), MATH_ROWS)
@pytest.mark.parametrize("verifier", [MATH, MATH_EXACT_CHECK], ids=["fast", "no_fast_paths"])
def test_math(verifier: MathVerifier, response: str, gold: str, expected: float) -> None:
    assert score(verifier, response, gold) == expected


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("x = 18\nprint(left)\n```\n\nActually, on reflection, $19$.", "18", 0.0),
        ("x = 18\nprint(left)\n``` Actually, I think it's $19$.", "18", 0.0),
        ("#### 18\n\nActually, on reflection, $19$.", "18", 0.0),
        (
            "#### 18\n\nActually, on reflection, $\\frac{37}{2}$.",
            "18",
            0.0,
        ),  # no number: fail closed
        ("#### 18\n\nActually, on reflection, 18 is right.", "18", 1.0),
        ("#### 18\n\nActually, this checks out.", "18", 1.0),
        # a cut-off sentence, ending on a number, running into the correction
        (
            "It is \\(\\boxed{18}\\).\n\n"
            + FAR
            + "Since \\(\\tan 80^\\circ = \\cot 10 Actually, I think it's $19$.",
            "18",
            0.0,
        ),
        (
            "It is \\(\\boxed{18}\\).\n\n"
            + FAR
            + "Since \\(\\tan 80^\\circ = \\cot 10 Actually, I think it's $18$.",
            "18",
            1.0,
        ),
        (
            "It is \\(\\boxed{18}\\).\n\n" + FAR + "It is 10 Actually, it checks out.",
            "18",
            1.0,
        ),
    ],
)
def test_gsm8k(response: str, gold: str, expected: float) -> None:
    assert score(GSM8K, response, gold) == expected


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("Nitrogen.\n\nThe answer is (C).\n\nActually, on reflection, $D$.", "C", 0.0),
        ("Nitrogen.\n\nThe answer is (C). Actually, I think it's $D$.", "C", 0.0),
        ("Nitrogen.\n\nThe answer is (C). Actually, I think it's 78%.", "C", 0.0),  # no letter
        ("Nitrogen.\n\nThe answer is (C). Actually, I think it's (C).", "C", 1.0),
        ("Nitrogen.\n\nThe answer is (C).\n\nActually, on reflection, option C.", "C", 1.0),
    ],
)
def test_choice(response: str, gold: str, expected: float) -> None:
    assert score(CHOICE, response, gold) == expected


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<think>x</think>\n<answer>Paris</answer>\n\nActually, on reflection, $Lyon$.", 0.0),
        ("<think>x</think>\n<answer>Paris</answer> Actually, I think it's $none of these$.", 0.0),
        ("<think>x</think>\n<answer>Paris</answer> Actually, I think it's $Paris$.", 1.0),
        ("<think>x</think>\n<answer>Paris</answer>", 1.0),
    ],
)
def test_search_qa(response: str, expected: float) -> None:
    assert score(SEARCH, response, ["Paris"]) == expected


def test_a_check_is_not_shared_between_rows_that_offer_different_answers() -> None:
    """The engine shares checks between rows with one answer: the other final answers a
    row offers are part of what is checked, so a retraction never reuses a clean row's 1."""
    clean = "<answer>2 + 11 = 13</answer>"
    taken_back = clean + "\n\nActually, on reflection, $14$."
    assert MATH.extract(taken_back).extra[ALSO_OFFERED] == ["14"]
    rows = [{"data_source": "lighteval/MATH", "response": r, "ground_truth": "13"}
            for r in (clean, taken_back, clean, taken_back)]  # fmt: skip
    with RewardLoop({"reward": {"num_workers": 1, "timeout_s": 30}}) as loop:
        results = loop.score(rows)
    assert [r.score for r in results] == [1.0, 0.0, 1.0, 0.0]
    assert results[1].extra["hedged"] is True


# Taken back in other words, or in another language (a red-team probe found each of these
# credited: the cue list held English words only), and a last sentence that is a value
# alone after the answer, whatever opens it ("Therefore 19.", "Hmm... 19.", "→ 19").
OTHER_WORDS = [
    "Never mind, 19.", "Edit: 19.", "Erratum: 19.", "Update: 19.", "My bad, 19.",
    "Whoops, 19.", "Err, 19.", "Strike that: 19.", "Disregard that, 19.", "I was wrong; 19.",
    "That was a mistake; 19.", "Rechecking gives 19.", "(Typo: should read 19.)",
    "等等，其实是19。", "不对，应该是19。", "Attendez, en fait c'est 19.", "Non, c'est 19.",
    "Espera, en realidad es 19.", "Warte, eigentlich 19.", "Nein, es ist 19.", "Нет, 19.",
    "Подождите, на самом деле 19.", "いいえ、19です。", "잠깐, 사실 19입니다.",
    "Therefore 19.", "Hence 19.", "So really 19.", "Hmm... 19.", "Eh, 19.", "→ 19", "=> 19",
    "❌ → 19", "Incorrect. 19.", "Second attempt: 19.",
]  # fmt: skip


@pytest.mark.parametrize("taken_back", OTHER_WORDS)
@pytest.mark.parametrize("paragraph", [" ", "\n\n"])
def test_an_answer_taken_back_in_other_words_is_no_answer(taken_back: str, paragraph: str) -> None:
    assert score(MATH, f"The answer is $\\boxed{{18}}$.{paragraph}{taken_back}", "18") == 0.0
    assert score(GSM8K, f"#### 18{paragraph}{taken_back}", "18") == 0.0


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("The answer is $\\boxed{18}$. Therefore 18.", "18", 1.0),  # the same value again
        ("The answer is $\\boxed{18}$.\n\n等等，其实是18。", "18", 1.0),
        ("Answer: B) 18", "B", 1.0),  # an option's text after its letter, not a sentence
        ("So \\boxed{x+1}.\n\nThat is $f = x+1, x \\neq 0$.", "x+1", 1.0),  # a condition
        ("Total: $3 \\times 6 = 18$", "18", 1.0),  # a computation, not a value alone
        ("So there are only two numbers (35 and 70).\n  2  ", "2", 1.0),  # a real output's
        ("Answer: B. Therefore C.", "B", 0.0),
        ("<answer>Paris</answer> 等等，其实是$London$。", "Paris", 0.0),
        # a unit after the value given last is no part of it ("rewardkit audit"'s
        # retraction family on a row whose gold is "180\text{ miles}")
        ("The distance is \\boxed{180}.\n\nHmm... 181\\text{ miles}.", "180", 0.0),
        ("The distance is \\boxed{180}.\n\nHmm... $181\\text{ miles}$.", "180", 0.0),
        ("The distance is \\boxed{180}.\n\nHmm... 180\\text{ miles}.", "180", 1.0),  # the same
        # a unit in words is not read: it may convert the answer (an outside red team's
        # probe), which no one can tell from another answer in another unit
        ("She needs \\boxed{2} hours.\n\nSo 120 minutes.", "2", 1.0),
        ("The share is \\boxed{\\frac{1}{4}}.\n\nSo 25 percent.", "\\frac{1}{4}", 1.0),
        ("The distance is \\boxed{180}.\n\nTherefore 181 is wrong.", "180", 1.0),  # no unit
        ("The distance is \\boxed{180}.\n\nCheck: 20 fits.", "180", 1.0),
    ],
)
def test_a_value_alone_after_the_answer(response: str, gold: str, expected: float) -> None:
    verifier = {"B": CHOICE, "Paris": SEARCH}.get(gold, MATH)
    assert score(verifier, response, gold) == expected


# A last sentence of a few words and a value, whatever the words, in any language: after
# a final answer it gives another (a red team's probe; no cue list holds every way)
ANY_WORDS = [
    ("The answer is $\\boxed{18}$. Uh, it's 19.", "18", 0.0),
    ("The answer is $\\boxed{18}$.\n\nMistake above — it's 19.", "18", 0.0),
    ("The answer is $\\boxed{18}$. Espere, na verdade é 19.", "18", 0.0),
    ("The answer is $\\boxed{18}$. 不，答案是19。", "18", 0.0),
    ("#### 18\nEn fait, la réponse est 19.", "18", 0.0),
    ("#### 18\nOn closer inspection, 19.", "18", 0.0),
    ("Answer: B. P.S. I mis-added; it is C.", "B", 0.0),
    # the same value, words without a value, a relation or a computation: no other answer
    ("The answer is $\\boxed{18}$. So it is 18.", "18", 1.0),
    ("The answer is $\\boxed{18}$. I hope it is correct.", "18", 1.0),
    ("The answer is $\\boxed{18}$. Note that 18 > 17.", "18", 1.0),
    ("#### 18\nSo she has 18 dollars.", "18", 1.0),
    ("Answer: B. I am confident.", "B", 1.0),
    ("<answer>Paris</answer> Source: Wikipedia.", "Paris", 1.0),  # a name after words: none
]


@pytest.mark.parametrize(("response", "gold", "expected"), ANY_WORDS)
def test_a_value_given_last_after_any_words(response: str, gold: str, expected: float) -> None:
    verifier = {"B": CHOICE, "Paris": SEARCH}.get(gold, GSM8K if "####" in response else MATH)
    assert score(verifier, response, gold) == expected


def test_a_passage_s_own_last_sentence_is_no_correction() -> None:
    """Without an answer before it, a passage's last sentence is its answer, read as
    before (inline), not a correction sent to math-verify."""
    text = "So 98 / 7 = 14.   The average number of cookies in a package is 14.  "
    assert closing_correction(text) == "14"
    assert closing_correction(text, any_lead=False) is None


@pytest.mark.parametrize(
    "value", ["\\frac{2}{4}", "\\frac{\\sqrt{12}}{3}", "$(10, 1, -5)$", "$\\$2.05$"]
)
def test_a_value_given_last_is_read_in_any_notation(value: str) -> None:
    text = f"So the answer is $\\boxed{{1}}$.\n\nTherefore {value}."
    assert closing_correction(text, text.index("$.") + 2) == value
