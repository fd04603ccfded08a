"""guards: every model's thinking markup is thinking (rewardkit.verifiers._final.as_think_tags).

Only the conclusion answers, and an answer boxed only inside ``<think>`` is no answer
(the "boxes only in <think>" family). ``<thinking>...</thinking>`` and the other markups
below were read as prose: "<thinking>\\boxed{7}</thinking> I'm not able to determine the
answer." was credited 7. The markups are those of published models and formats:
``<thinking>``, the GRPO tutorials' ``<reasoning>...</reasoning><answer>...</answer>``,
Bespoke's and OpenThoughts' ``<|begin_of_thought|>``, Seed's ``<seed:think>``, Kimi's
``◁think▷``. The audit's ``think_only`` family writes each of them.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import score
from rewardkit.verifiers import _final
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

MATH, GSM8K, CHOICE = MathVerifier(), GSM8KVerifier(), ChoiceVerifier()
MARKUPS = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("<seed:think>", "</seed:think>"),
    ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
]


@pytest.mark.parametrize(("opener", "closer"), MARKUPS)
@pytest.mark.parametrize(
    ("verifier", "inside", "outside", "gold"),
    [
        (MATH, "3 + 4 = \\boxed{7}", "The answer is $\\boxed{7}$.", "7"),
        (GSM8K, "3 + 4 = 7\n#### 7", "#### 7", "7"),
        (CHOICE, "The answer is (B).", "The answer is (B).", "B"),
    ],
    ids=["math", "gsm8k", "choice"],
)
def test_an_answer_only_inside_thinking_is_no_answer(
    verifier: object, inside: str, outside: str, gold: str, opener: str, closer: str
) -> None:
    thought = f"{opener}\n{inside}\n{closer}"
    assert score(verifier, thought, gold) == 0.0  # type: ignore[arg-type]
    assert score(verifier, f"{thought}\n\nI could not finish.", gold) == 0.0  # type: ignore[arg-type]
    assert score(verifier, f"{thought}\n\n{outside}", gold) == 1.0  # type: ignore[arg-type]


@pytest.mark.parametrize(("opener", "closer"), MARKUPS)
def test_the_conclusion_after_the_markup_answers(opener: str, closer: str) -> None:
    response = f"{opener}3 + 4 = \\boxed{{7}}{closer}\n\n<|begin_of_solution|>The answer is 8."
    assert score(MATH, response, "7") == 0.0
    assert score(MATH, response, "8") == 1.0


def test_the_markups_are_rewritten_one_character_for_one() -> None:
    for opener, closer in MARKUPS:
        text = f"{opener} x {closer} y"
        rewritten = _final.as_think_tags(text)
        assert len(rewritten) == len(text) and rewritten.endswith("</think> y")
        assert rewritten.strip().startswith("<think>")
    assert _final.as_think_tags("no markup <thinker> here") == "no markup <thinker> here"
