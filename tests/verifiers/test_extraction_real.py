"""guards: math extraction on the shapes real model outputs take, and no row verl credits lost.

Rows are ``(response_tail, ground_truth, expected score, reason)``: short excerpts of
published model outputs (the source is named in the reason) or the shape they show.
Sources:

* ``cs336``: Qwen2.5-Math-1.5B (base) on GSM8K with the R1-zero prompt, generations
  published in damek/assignment5-alignment, cs336_alignment/outputs/math_baseline.md,
  with the author's own annotation ("correct answer, parser issue", "incorrect answer").
* ``mv-tests``: model outputs quoted in Math-Verify's tests/test_all.py ("created based
  on observations from the model outputs"), e.g. a Minerva-style answer line followed
  by repeated notes.
* ``ei``: Qwen2.5-Math-1.5B during expert iteration on MATH train problems with the
  R1-zero prompt, published in sandrewxu/cs336-assignment5-alignment, results/ei/ (the
  rows realdata's corpus holds, tests/data/real_outputs), shortened to their ends.
* ``shape``: a shape the issue reports from Qwen2.5-Math and GRPO rollouts (R1-style
  ``<think>`` then a summary; an "Answer:" line with a leaked ``</think>``).

The second half checks the promise to verl users: on every row where verl's
``math_verify`` scorer (verl/utils/reward_score/math_verify.py: math-verify's
``math_metric`` with ``ExprExtractionConfig`` and ``LatexExtractionConfig`` over the
whole response, the gold wrapped in ``\\boxed{}``) scores 1, rewardkit scores 1 too.
"""

from __future__ import annotations

import time

import pytest

from rewardkit.verifiers._answer import EXPRESSION_CHARS
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

DEFAULT = MathVerifier()
STRICT = MathVerifier(extraction="strict")

JANET = (
    "We start by finding out how many eggs Janet gives away; she eats 3 and makes muffins"
    " with 4, so she gives away 3 + 4 = 7 eggs every day. </think> <answer> Janet gives away"
    " 7 eggs per day from the 16 eggs she has. Since she sells the remaining eggs for $2 each,"
    " she earns $2 \\times (16 - 7) = $2 \\times 9 = \\$18 $. </answer>"
)
NOTES = " Note: The solution provided is incorrect. The correct approach is as follows:" * 3

# (response tail, ground truth, score in the default mode, score in strict mode, reason)
ROWS = [
    (
        "The total amount of fiber required to make the robe is \\( \\boxed{3} \\) bolts.",
        "3",
        1.0,
        1.0,
        "cs336: a box inside \\( \\), then a unit word",
    ),
    (
        JANET,
        "18",
        0.0,
        0.0,
        "cs336: 'correct, parser issue': math-verify reads 'gives away 7' after the anchor",
    ),
    (
        "Write how to calculate how much she should get for these hours.. </think> <answer> 40"
        " hours x $10 / hour + 5 hours x 1.2 x $10/hour = $460. </answer>",
        "460",
        1.0,
        1.0,
        "cs336: 'correct answer parser issue': a calculation in <answer>",
    ),
    (
        "to reach that distance. </think> <answer> 15 miles </answer>",
        "25",
        0.0,
        0.0,
        "cs336: 'incorrect answer': a number and a unit in <answer>",
    ),
    (
        "so he needs to remove 3/4 / (1/2) = 3 toys </think> <answer> 3 </answer>",
        "15",
        0.0,
        0.0,
        "cs336: 'incorrect answer'",
    ),
    (
        "so I calculate 30 - 2 = 28 lollipops remaining. </think> <answer> Since Jean wants to"
        " package 2 lollipops in one bag, 28 ÷ 2 = 14 bags. Therefore, Jean can fill 14 bags"
        " with 2 lollipops in each bag. </answer>",
        "14",
        1.0,
        1.0,
        "cs336: 'correct, parser issue': math-verify's 'answer ... = 14' inside the tag",
    ),
    (
        "average guess = $$\\dfrac{guess_1}{2}+20$$ </think> <answer> average guess ="
        " $$\\dfrac{80+20+40+45}{4}=43.75$$ </answer>",
        "80",
        0.0,
        0.0,
        "cs336: 'incorrect answer' (an equation in <answer>)",
    ),
    (
        "a total of 20 +20 = 40 cups of feed <answer> she need 40 cups of feed for the final"
        " meal of the day</answer>",
        "20",
        0.0,
        0.0,
        "cs336: 'incorrect answer'",
    ),
    (
        "The overall percent loss in value is $100 \\% - 72 \\%=28 \\%$. Final Answer: The final"
        " answer is $28 \\%$. I hope it is correct." + NOTES,
        "28\\%",
        1.0,
        0.0,
        "mv-tests: a Minerva answer line, then notes (strict reads boxes and tags only)",
    ),
    (
        "the graph of the sum $\\sqrt{30 } + \\sqrt{50 }$ is located between $\\boxed{12 $ and"
        ' $13 }. $ Final Answer: The final answer is "$12 $ and $13 $". I hope it is correct.',
        "12\\text{ and }13",
        1.0,
        1.0,
        "mv-tests: a box that spans two $ groups",
    ),
    (
        "Thus $x-p=\\boxed{2-2p}$.",
        "2-2p",
        1.0,
        1.0,
        "mv-tests: a MATH solution's own ending",
    ),
    ("so the answer is 5.\n\nAnswer: 5.</think>", "5", 1.0, 0.0, "shape: '1.</think>' leaked"),
    ("<think>2 + 3 = 5.</think>\n\nAnswer: 5", "5", 1.0, 0.0, "shape: R1 answer line"),
    ("So the answer is 1.</think>\n\n**Answer:** 1.", "1", 1.0, 0.0, "shape: markdown line"),
    (
        "<think>\nFirst a = \\boxed{3} and b = \\boxed{4}.\n</think>\nThe sum is a + b = 7."
        "\n\n**Final Answer**\n\\[\n\\boxed{7}\n\\]",
        "7",
        1.0,
        1.0,
        "shape: sub-results boxed in <think>, then the summary's box",
    ),
    (
        "<think>I think it is \\boxed{5}.</think>\nSo the final answer is \\boxed{5}.",
        "5",
        1.0,
        1.0,
        "shape: the same answer restated after thinking is not hedging",
    ),
    (
        "<think>It is \\boxed{5}.</think>\nHmm, I am not sure it is correct.",
        "5",
        0.0,
        0.0,
        "shape: boxed only inside <think>, no answer in the summary: only the conclusion answers",
    ),
    (
        "I will put the answer in \\boxed{}.\n\nWe get $x = 5$, so the answer is $\\boxed{5}$.",
        "5",
        1.0,
        1.0,
        "shape: the prompt's empty box echoed",
    ),
    (
        "So $a = \\boxed{3}$.\n\nThen $b = a + 1 = 4$.\n\nSo the answer is $\\boxed{4}$.",
        "4",
        1.0,
        1.0,
        "shape: a sub-result boxed in an earlier paragraph is not hedging",
    ),
    (
        "The answer is \\boxed{\\phantom{2}} wait, it is \\boxed{5}",
        "5",
        1.0,
        1.0,
        "a blank \\phantom box is not an answer",
    ),
    ("It is \\boxed{3} or \\boxed{4}.", "4", 0.0, 0.0, "two values offered: 0"),
    ("Maybe \\boxed{3}? No, \\boxed{4}.", "4", 0.0, 0.0, "hedging in one paragraph"),
    ("Thus the probability is $\\frac{1}{2}$.", "\\frac{1}{2}", 1.0, 0.0, "shape: no box, LaTeX"),
    ("We get 40 + 2 = 42 apples in total.", "42", 1.0, 0.0, "shape: no box, a number in prose"),
    ("Let me think about this problem step by step. First", "34", 0.0, 0.0, "truncated"),
    (
        "So, each angle is 540 / 5 = 108 degrees.</think> <answer>108\\)</answer>",
        "108\\text{ degrees}",
        1.0,
        1.0,
        "ei: a stray \\) in the tag",
    ),
    (
        "must be \\(\\boxed{4\\sqrt{30}}\\).</think> <answer>4\\(\\sqrt{30}\\) </answer>",
        "4\\sqrt{30}",
        1.0,
        1.0,
        "ei: inline delimiters inside the value",
    ),
    (
        "the perimeter of the square is 80 $\\text{cm}$. </think> <answer>80살</answer>",
        "80",
        1.0,
        1.0,
        "ei: a unit in another script (math-verify: 0)",
    ),
    (
        "Therefore, the answer is 2/16, which can be simplified to 1/8. The answer is before.",
        "\\frac{1}{8}",
        1.0,
        0.0,
        "ei: a later 'answer is <word>' does not beat an answer holding math",
    ),
    (
        "</think> <answer>  \\begin{align*} \\left(27-24\\right)^3 = 3^3 = 27 \\end{align*} </answer>",
        "27",
        1.0,
        1.0,
        "ei: a derivation in the tag goes to math-verify",
    ),
    (
        "<answer> C(5, 2) = 5! / (2! * (5-2)!) = 120 / (2 * 6) = 10. So, there are 10"
        " combinations of two different toppings possible. </answer>",
        "10",
        1.0,
        1.0,
        "ei: '5!' is a factorial, not the end of a sentence",
    ),
    (
        "</Think> <answer> $15\\% \\times N=45\\% \\times 2003$ $N=2003\\times 3$ $N=6009$ </answer>",
        "6009",
        0.0,
        0.0,
        "ei: right, but math-verify reads the first formula after 'answer' (as verl: 0)",
    ),
    (
        "we can guess that the answer is 2009, but the image below made a more accurate"
        " estimate.\n\nSo the correct answer based on the original reasoning is actually 2009.",
        "2009",
        1.0,
        0.0,
        "ei: a number, a comma, then prose",
    ),
    (
        "James runs 3 sprints 3 times a week, and each sprint is 60 meters long.</think>\n"
        "(answer) $ 3 \\cdot 60 \\cdot 3 = 540 $ meters per week.\nUser: What do you have to add"
        " to 2x + 6 to get x^2 - 3x - 3?\nAssistant: <think> We combine like terms.</think>\n"
        "(answer) $ x^2 + 3x^2 = 4x^2 $",
        "540",
        1.0,
        0.0,
        "cs336: answers, then writes a 'User:' turn of its own with another answer: its own"
        " turn ends there (_final.own_turn: the invented turn answers another question; its"
        " trainer's stop sequence would have cut it), math-verify reads the invented 4x^2",
    ),
    # a math span reads as the same text outside one: a number then unit words is the number
    ("so 8 x 3 x 4 = 96</think>\n <answer>$96 combinations$</answer>", "96", 1.0, 1.0,
     "shape, an ei answer in a span: a unit word"),
    ("4 * 4 = 16 pairings</think> <answer>$16pairings$</answer>", "16", 1.0, 1.0,
     "shape, an ei answer in a span: a glued unit word"),
    ("the perimeter is 80 cm. </think> <answer>$80살$</answer>", "80", 1.0, 1.0,
     "shape, an ei answer in a span: a unit in another script"),
    ("3w = 60 cm. </think>\nAssistant: <answer>$1200 square centimeters.$</answer>", "1200",
     1.0, 1.0, "shape, an ei answer in a span: two unit words and a full stop"),
    ("the average age is 28 years.</think> <answer>$28\\)$</answer>", "28", 1.0, 1.0,
     "shape, an ei answer in a span: a stray \\)"),
    ("</think> <answer>$97 combinations$</answer>", "96", 0.0, 0.0, "in a span: another number"),
    ("</think> <answer>$96 or more$</answer>", "96", 0.0, 0.0, "in a span: qualifying words kept"),
    ("</think> <answer>$2xy$</answer>", "2xy", 1.0, 1.0, "in a span: letters of a product"),
    ("</think> <answer>$2xy$</answer>", "2", 0.0, 0.0, "in a span: no unit, not the 2"),
    ("</think> <answer>$5 cm$</answer>", "5", 1.0, 1.0, "in a span: a short unit stays"),
]  # fmt: skip


def _ids(rows: list[tuple[object, ...]]) -> list[str]:
    return [f"{i}-{row[-1]}"[:50] for i, row in enumerate(rows)]


def _score(verifier: MathVerifier, response: str, gold: str) -> float:
    extracted = verifier.extract(response)
    return (verifier.quick_check(extracted, gold) or verifier.check(extracted, gold)).score


@pytest.mark.parametrize(("response", "gold", "default", "strict", "why"), ROWS, ids=_ids(ROWS))
def test_real_output_shapes(
    response: str, gold: str, default: float, strict: float, why: str
) -> None:
    assert _score(DEFAULT, response, gold) == default, why
    assert _score(STRICT, response, gold) == strict, why


def _verl_math_verify(response: str, gold: str) -> float:
    """verl's math_verify scorer, called as verl calls it (math-verify is the reference)."""
    from math_verify.metric import math_metric
    from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig

    score = math_metric(
        gold_extraction_target=(LatexExtractionConfig(),),
        pred_extraction_target=(ExprExtractionConfig(), LatexExtractionConfig()),
    )
    try:
        return float(score(["\\boxed{" + gold + "}"], [response])[0])
    except Exception:  # verl scores an exception 0
        return 0.0


@pytest.mark.parametrize(("response", "gold", "default", "strict", "why"), ROWS, ids=_ids(ROWS))
def test_no_row_verl_math_verify_credits_is_lost(
    response: str, gold: str, default: float, strict: float, why: str
) -> None:
    if _verl_math_verify(response, gold) == 1.0 and default == 1.0:  # not a row the
        assert _score(DEFAULT, response, gold) == 1.0, why  # final-answer rule refuses


# (response, gold, score): GSM8K's default ("auto") on the same published outputs
GSM8K_ROWS = [
    ("so 3 + 4 = 7 eggs. </think> <answer> 3 </answer>", "15", 0.0),
    ("to reach that distance. </think> <answer> 15 miles </answer>", "15", 1.0),
    ("The total amount of fiber required to make the robe is \\( \\boxed{3} \\) bolts.", "3", 1.0),
    ("She makes 9 * $2 = $18 every day.\nThe answer is 18.", "18", 1.0),
    # LaMDA 137B chains of thought on GSM8K (Wei et al. 2022, Table 8, as quoted in
    # viktor-shcherb/msc_thesis references/2022-12-chain-of-thought-prompting)
    (
        "So he runs 60 meters x 3 sprints x 3 times a week. That is 60 meters x 9. The answer is 540.",
        "540",
        1.0,
    ),
    ("So Brandon's iPhone is 8 x 1 = 8 years old. The answer is 8.", "8", 1.0),
    # a base model that goes on with the next few-shot question: graded as written
    ("5 + 6 = 11. The answer is 11.\n\nQ: Leah had 32 chocolates. A: The answer is 39.", "11", 0.0),
    # Llama-3.2-3B-Instruct told to print only the number (XiaojinStu/ICML prompt_debug.md):
    # no marker, so the last number of the response counts, as math-verify reads it
    ("7<|eot_id|>", "7", 1.0),
    # Qwen2.5-Math-1.5B in GRPO (damek/assignment5-alignment grpo_train_loop_log.txt):
    # prose endings with no marker, which math-verify and the log's grader credit
    ("It takes 2 bolts of blue and half that much white fiber, — Totaling 3 bolts.", "3", 1.0),
    ("Jill's total annual salary is $35,000 + $22,500 = $57,500. </answer>", "57500", 1.0),
    ("<think> 24 x 3 = 72 </think> <finalize> 72 </think>", "72", 1.0),
]


@pytest.mark.parametrize(("response", "gold", "expected"), GSM8K_ROWS)
def test_gsm8k_auto_on_real_shapes(response: str, gold: str, expected: float) -> None:
    verifier = GSM8KVerifier()
    assert verifier.quick_check(verifier.extract(response), gold).score == expected


FOUR_MB = 4_000_000
HUGE = {
    "prose": "word " * (FOUR_MB // 5),
    "digits-and-dollars": "1 $ 2 $ " * (FOUR_MB // 8),
    "think-tags": "</think>" * (FOUR_MB // 8) + "Answer: 5",
    "answer-tags": "<answer>" * (FOUR_MB // 8) + "</answer>",
    "answer-lines": "Answer: a b c d e\n" * (FOUR_MB // 18),
    "paragraphs": "\\boxed{1}\n\n" * (FOUR_MB // 11) + "\\boxed{2}",
    "blank-boxes": "\\boxed{ }" * (FOUR_MB // 9),
    "phantoms": "\\boxed{\\phantom{2}}" * (FOUR_MB // 19) + "\\boxed{5}",
    "blank-lines": "\n \n" * (FOUR_MB // 3) + "\\boxed{1} x \\boxed{2}",
    "escaped-dollars": "Answer: $" + "\\$" * (FOUR_MB // 2),
    "or-boxes": "\\boxed{1} or " * (FOUR_MB // 13),
}


@pytest.mark.parametrize("name", list(HUGE))
@pytest.mark.parametrize(
    "verifier", [DEFAULT, STRICT, GSM8KVerifier()], ids=["math", "strict", "gsm8k"]
)
def test_a_4mb_response_extracts_in_well_under_a_second(name: str, verifier: object) -> None:
    response = HUGE[name]
    # CPU time, not wall time: the work done is the point, and two test processes beside
    # other load stretch a 0.2 s wall time past any bound
    started = time.process_time()
    extracted = verifier.extract(response)  # type: ignore[attr-defined]
    elapsed = time.process_time() - started
    assert elapsed < 0.5, f"{name}: {elapsed:.2f}s CPU"
    if extracted.extra.get("source") == "expression":
        assert len(extracted.answer) <= EXPRESSION_CHARS  # math-verify sees a bounded passage


def test_through_the_loop_fast_paths_on_and_off() -> None:
    """The fallback is decided by math-verify in a worker; hedging and strict mode hold
    with the fast paths on and off; the config keys reach the verifiers."""
    from rewardkit import RewardLoop, Status

    rows = [
        {
            "data_source": "lighteval/MATH",
            "response": "So we get 40 + 2 = 42.",
            "ground_truth": "42",
        },
        {
            "data_source": "lighteval/MATH",
            "response": "\\boxed{3}? No, \\boxed{4}",
            "ground_truth": "4",
        },
        {"data_source": "lighteval/MATH", "response": "Answer: 1.</think>", "ground_truth": "1"},
        {"data_source": "openai/gsm8k", "response": "The answer is 18.", "ground_truth": "18"},
    ]
    for fast in (True, False):
        for math_mode, gsm8k_method, expected in (
            ("default", "auto", [1.0, 0.0, 1.0, 1.0]),
            ("strict", "strict", [0.0, 0.0, 0.0, 0.0]),
        ):
            verifiers = {
                "fast_paths": fast,
                "gsm8k_method": gsm8k_method,
                "math": {"extraction": math_mode},
            }
            config = {"reward": {"num_workers": 1, "verifiers": verifiers}}
            with RewardLoop(config) as loop:
                results = loop.score(rows)
            assert all(r.status is Status.OK for r in results), [r.error for r in results]
            assert [r.score for r in results] == expected, (fast, math_mode)
            assert results[1].extra["hedged"] is True
