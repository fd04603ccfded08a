"""guards: rewardkit's verdicts against verl 0.9.1's default_compute_score, source by source.

verl's own ``default_compute_score`` side by side with rewardkit, on every data source it ships.

The table is facts: for each row, what verl 0.9.1 scores and what rewardkit scores, both
on verl's scale (math_dapo / math / aime*: +1/-1). Where they differ, ``why`` says why
rewardkit's verdict is the right one; a row without ``why`` must agree exactly. Both
scorers run for real here: verl's function in this process, rewardkit through a
RewardLoop with its default configuration.

Sources verl ships (verl/utils/reward_score/__init__.py, default_compute_score):
openai/gsm8k; lighteval/MATH, DigitalLearningGmbH/MATH-lighteval, HuggingFaceH4/MATH-500;
math_dapo, math, math_dapo_reasoning, aime*; the six numina_* names; codecontests, apps,
codeforces, taco (verl's prime_code without a sandbox URL); hiyouga/geometry3k; the seven
searchR1_* names.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rewardkit import RewardLoop
from rewardkit.config import VerifierOptions

# rewardkit's default GSM8K mode: "auto" (boxed and "The answer is n" accepted) once the
# extraction change lands; before it, "strict" (verl's rule). Rows below say which differs.
AUTO_GSM8K = VerifierOptions().gsm8k_method == "auto"

CODE_TESTS = json.dumps({"inputs": ["3\n", "5\n"], "outputs": ["6\n", "10\n"]})
DOUBLE = "```python\nprint(int(input())*2)\n```"
TRIPLE = "```python\nprint(int(input())*3)\n```"

# (data_source, response, ground_truth, verl's score, rewardkit's score, why they differ)
TABLE: list[tuple[str, str, Any, float, float, str]] = [
    ("openai/gsm8k", "so #### 72", "72", 1.0, 1.0, ""),
    ("openai/gsm8k", "#### 7", "72", 0.0, 0.0, ""),
    ("openai/gsm8k", "#### 1,000", "1000", 1.0, 1.0, ""),
    ("openai/gsm8k", "no number", "72", 0.0, 0.0, ""),
    (
        "openai/gsm8k", "#### 72.00", "72", 0.0, 1.0,
        "72.00 is 72: rewardkit compares numbers exactly as fractions, verl compares strings",
    ),
    (
        "openai/gsm8k", "The answer is \\boxed{72}", "72", 0.0, 1.0 if AUTO_GSM8K else 0.0,
        "rewardkit's default GSM8K mode (auto) reads a boxed final number; "
        "reward.verifiers.gsm8k_method=strict keeps verl's '#### n' rule",
    ),
    ("lighteval/MATH", "so \\boxed{\\frac{1}{2}}", "\\frac{1}{2}", 1.0, 1.0, ""),
    ("lighteval/MATH", "so \\boxed{0.5}", "\\frac{1}{2}", 1.0, 1.0, ""),
    ("DigitalLearningGmbH/MATH-lighteval", "\\boxed{3}", "4", 0.0, 0.0, ""),
    ("HuggingFaceH4/MATH-500", "\\boxed{\\dfrac{1}{2}}", "\\frac12", 1.0, 1.0, ""),
    (
        "lighteval/MATH", "\\boxed{3} or \\boxed{4}", "4", 1.0, 0.0,
        "boxing two different answers is hedging: verl credits the last box, rewardkit gives none",
    ),
    ("math_dapo", "Answer: 42", "42", 1.0, 1.0, ""),
    ("math_dapo", "Answer: 41", "42", -1.0, -1.0, ""),
    ("math_dapo", "\\boxed{42}", "42", 1.0, 1.0, ""),
    (
        "math_dapo", "\\boxed{3} or \\boxed{4}", "4", 1.0, -1.0,
        "hedging (two different boxed answers) scores as wrong, on verl's -1 scale",
    ),
    ("math", "no answer", "42", -1.0, -1.0, ""),
    ("math_dapo_reasoning", "Answer: 42", "42", 1.0, 1.0, ""),
    ("aime2024", "Answer: 42", "42", 1.0, 1.0, ""),
    (
        "aime2024", "\\boxed{042}", "42", -1.0, 1.0,
        "042 is the integer 42 (AIME answers are written with three digits); verl compares strings",
    ),
    ("aime25", "Answer: 7", "42", -1.0, -1.0, ""),
    ("numina_olympiads", "\\boxed{2\\sqrt{7}}", "\\sqrt{28}", 1.0, 1.0, ""),
    ("numina_cn_k12", "\\boxed{3}", "4", 0.0, 0.0, ""),
    ("numina_aops_forum", "\\boxed{5}", "5", 1.0, 1.0, ""),
    ("numina_synthetic_math", "\\boxed{x^2+10x+21}", "(x+3)(x+7)", 1.0, 1.0, ""),
    ("numina_amc_aime", "\\boxed{12}", "12", 1.0, 1.0, ""),
    ("numina_synthetic_amc", "\\boxed{\\textbf{(C)}}", "C", 1.0, 1.0, ""),
    ("codecontests", DOUBLE, CODE_TESTS, 1.0, 1.0, ""),
    ("apps", TRIPLE, CODE_TESTS, 0.0, 0.0, ""),
    ("taco", DOUBLE, CODE_TESTS, 1.0, 1.0, ""),
    ("codeforces", TRIPLE, CODE_TESTS, 0.0, 0.0, ""),
    ("hiyouga/geometry3k", "<think>angles</think> \\boxed{30}", "30", 1.0, 1.0, ""),
    ("hiyouga/geometry3k", "\\boxed{30}", "30", 0.9, 0.9, ""),
    ("hiyouga/geometry3k", "<think>x</think> \\boxed{31}", "30", 0.1, 0.1, ""),
    ("hiyouga/geometry3k", "<think>x</think> \\boxed{2\\sqrt{3}}", "\\sqrt{12}", 1.0, 1.0, ""),
    ("hiyouga/geometry3k", "<think>x</think> 30", "30", 0.0, 0.0, ""),
    ("searchR1_nq", "<answer>Paris</answer>", {"target": ["Paris"]}, 1.0, 1.0, ""),
    ("searchR1_triviaqa", "<answer>The Paris.</answer>", {"target": ["paris"]}, 1.0, 1.0, ""),
    ("searchR1_popqa", "<answer>Lyon</answer>", {"target": ["Paris"]}, 0.0, 0.0, ""),
    ("searchR1_hotpotqa", "Paris", {"target": ["Paris"]}, 0.0, 0.0, ""),
    (
        "searchR1_2wikimultihopqa", "<answer>x</answer>" * 11 + "<answer>Paris</answer>",
        {"target": ["Paris"]}, 0.25, 0.0,
        "two different answers are hedging (0) unless reward.verifiers.search_qa.answers=last",
    ),
    (
        "searchR1_2wikimultihopqa", "<answer>Paris</answer>" * 12,
        {"target": ["Paris"]}, 0.25, 0.25, "",
    ),
    ("searchR1_musique", "<answer>Rome</answer>", {"target": ["Paris", "Rome"]}, 1.0, 1.0, ""),
    ("searchR1_bamboogle", "<answer>Paris is big</answer>", {"target": ["Paris"]}, 0.0, 0.0, ""),
    (
        "searchR1_nq", "<answer>the</answer>", {"target": ["A"]}, 1.0, 0.0,
        "both normalise to '' (articles dropped): verl credits an article for blood type A",
    ),
    (
        "searchR1_nq", "<answer>Vitamin</answer>", {"target": ["Vitamin A"]}, 1.0, 0.0,
        "SQuAD drops the last-word 'a' as an article; rewardkit keeps it (a letter)",
    ),
]  # fmt: skip

VERL_SOURCES = {
    "openai/gsm8k", "lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval",
    "HuggingFaceH4/MATH-500", "math_dapo", "math", "math_dapo_reasoning", "aime2024", "aime25",
    "numina_aops_forum", "numina_synthetic_math", "numina_amc_aime", "numina_synthetic_amc",
    "numina_cn_k12", "numina_olympiads", "codecontests", "apps", "codeforces", "taco",
    "hiyouga/geometry3k", "searchR1_nq", "searchR1_triviaqa", "searchR1_popqa",
    "searchR1_hotpotqa", "searchR1_2wikimultihopqa", "searchR1_musique", "searchR1_bamboogle",
}  # fmt: skip


@pytest.fixture(scope="module")
def rewardkit_scores() -> list[Any]:
    rows = [{"data_source": s, "response": r, "ground_truth": g} for s, r, g, *_ in TABLE]
    with RewardLoop({"reward": {"num_workers": 1, "timeout_s": 30}}) as loop:
        return loop.score(rows)


def test_the_table_covers_every_data_source_verl_ships():
    assert {row[0] for row in TABLE} == VERL_SOURCES


@pytest.mark.parametrize(
    "index", range(len(TABLE)), ids=[f"{r[0]}-{i}" for i, r in enumerate(TABLE)]
)
def test_side_by_side(index: int, rewardkit_scores: list[Any]):
    from verl.utils.reward_score import default_compute_score

    source, response, ground_truth, verl_expected, ours_expected, why = TABLE[index]
    theirs = default_compute_score(source, response, ground_truth)
    theirs = theirs["score"] if isinstance(theirs, dict) else float(theirs)
    result = rewardkit_scores[index]
    assert result.status.value == "ok", result.error
    assert theirs == pytest.approx(verl_expected), "verl's verdict is not what the table says"
    assert result.score == pytest.approx(ours_expected)
    if why == "":
        assert result.score == pytest.approx(theirs), "an unexplained difference from verl"
    else:
        assert why and (result.score != pytest.approx(theirs) or not AUTO_GSM8K)
