"""guards: the gsm8k verifier's verdicts (verifiers.gsm8k_method auto and strict) on the
answer formats real models write, scored through RewardLoop."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardkit import RewardLoop

# (response, why it is a real model's way of giving 18)
GSM8K_FORMATS = [
    ("She has 10 + 8 = 18 apples.\nThe answer is 18", "Llama and Mistral few-shot style"),
    ("She has 10 + 8 = 18 apples. So $\\boxed{18}$", "Qwen-Math and R1 style"),
    ("She has 10 + 8 = 18 apples.\nA: 18", "the Q:/A: few-shot style"),
    ("She has 10 + 8 = 18 apples.\n#### 18", "the dataset's own format"),
]


@pytest.mark.parametrize("method", ["auto", "strict"])
def test_gsm8k_formats_score_one_in_auto_and_only_hashes_in_strict(method: str) -> None:
    rows = [{"data_source": "openai/gsm8k", "response": r, "ground_truth": "18"}
            for r, _ in GSM8K_FORMATS]  # fmt: skip
    config = {"reward": {"num_workers": 1, "verifiers": {"gsm8k_method": method}}}
    with RewardLoop(config) as loop:
        scores = [r.score for r in loop.score(rows)]
    assert scores == ([1.0] * 4 if method == "auto" else [0.0, 0.0, 0.0, 1.0])


def test_gsm8k_strict_reads_only_the_end_as_verl_does() -> None:
    row = {"data_source": "openai/gsm8k", "response": "#### 18" + " and so on" * 40,
           "ground_truth": "18"}  # fmt: skip
    config = {"reward": {"num_workers": 1, "verifiers": {"gsm8k_method": "strict"}}}
    with RewardLoop(config) as loop:
        [result] = loop.score([row])
    assert result.score == 0.0


# (response, ground truth, why it must score 0): in the default `auto` mode a LaTeX
# expression after an answer cue is read as one of its numbers, which credits a wrong
# answer whenever that number is the ground truth.
GSM8K_EXPRESSIONS = [
    (r"The answer is \frac{1}{2}", "2", "one half read as its denominator (verl's flexible too)"),
    (r"#### \frac{1}{2}", "2", "the same after '####' (verl's strict rule finds no answer)"),
    (r"The answer is $\frac{3}{4}$.", "4", "three quarters read as 4"),
    (r"<answer>\frac{1}{2}</answer>", "2", "an answer tag holding a fraction"),
    (r"The answer is \sqrt{4}", "4", "sqrt(4) is 2, read as 4"),
    (r"The answer is 2^{2}", "2", "2^2 is 4, read as its exponent"),
    (r"The answer is $5 \times 4$", "5", "5 x 4 is 20, read as 5: verl's flexible rule gives 0"),
    (r"The answer is $18 \div 2$", "18", "18 / 2 is 9, read as 18: verl's flexible rule gives 0"),
]


# and the numbers next to LaTeX that are still the answer (response, why it is 18)
GSM8K_NOT_EXPRESSIONS = [
    (r"\textbf{Answer:} 18", "a bold label before the number"),
    (r"The answer is \textbf{18}.", "a bold number: a text wrapper, not an argument"),
    (r"Total: $3 \times 6 = 18$", "the result of a product"),
    (r"$\frac{36}{2} = 18$ dollars", "the result of a fraction"),
    (r"<think>so 17</think> The answer is 18!", "an exclamation mark is no factorial here"),
]


@pytest.fixture(scope="module")
def default_loop() -> Iterator[RewardLoop]:
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        yield loop


@pytest.mark.parametrize(("response", "ground_truth", "why"), GSM8K_EXPRESSIONS)
def test_gsm8k_auto_does_not_credit_one_number_read_out_of_an_expression(
    default_loop: RewardLoop, response: str, ground_truth: str, why: str
) -> None:
    row = {"data_source": "openai/gsm8k", "response": response, "ground_truth": ground_truth}
    [result] = default_loop.score([row])
    assert (result.status.value, result.score) == ("ok", 0.0), why


@pytest.mark.parametrize(("response", "why"), GSM8K_NOT_EXPRESSIONS)
def test_gsm8k_auto_still_reads_a_number_beside_latex(
    default_loop: RewardLoop, response: str, why: str
) -> None:
    row = {"data_source": "openai/gsm8k", "response": response, "ground_truth": "18"}
    [result] = default_loop.score([row])
    assert (result.status.value, result.score) == ("ok", 1.0), why


def test_gsm8k_auto_reads_only_the_conclusion(default_loop: RewardLoop) -> None:
    """README's "Data sources": only the conclusion answers, the text after the last
    ``</think>``; a response closing its thinking twice (``<think> 24 x 3 = 72 </think>
    72 </think>``, tests/verifiers/test_extraction_real.py) concludes with the text
    between the closers. A number only in the thinking is no answer."""
    rows = [
        ("<think>so 18</think> I cannot answer.", 0.0),
        ("<think> 6 x 3 = 18 </think> 18 </think>", 1.0),
    ]
    results = default_loop.score(
        [{"data_source": "openai/gsm8k", "response": r, "ground_truth": "18"} for r, _ in rows]
    )
    assert [(r.status.value, r.score) for r in results] == [("ok", want) for _, want in rows]
