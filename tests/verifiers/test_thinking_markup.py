"""guards: every model's thinking markup is thinking (rewardkit.verifiers._final.as_think_tags).

Only the conclusion answers, and an answer boxed only inside ``<think>`` is no answer
(the "boxes only in <think>" family). ``<thinking>...</thinking>`` and the other markups
below were read as prose: "<thinking>\\boxed{7}</thinking> I'm not able to determine the
answer." was credited 7. The markups are those of published models and formats, as
the text a reward function reads holds them (verl decodes with ``skip_special_tokens=True``,
so a markup made of special tokens arrives without them). Where each was read:

- ``<think>``: DeepSeek-R1, Qwen3, GLM-4.5, Phi-4-reasoning (vllm-project/vllm
  ``vllm/reasoning/deepseek_r1_reasoning_parser.py``); in other cases and spacing too.
- ``<thinking>``, the GRPO tutorials' ``<reasoning>...</reasoning><answer>...</answer>``;
  Bespoke's and OpenThoughts' ``<|begin_of_thought|>`` (NovaSky-AI/SkyThought
  ``skythought/tools/util/model_utils.py``).
- ``<seed:think>`` (vLLM ``vllm/reasoning/seedoss_reasoning_parser.py``), ``◁think▷``
  (Kimi-VL; sgl-project/sglang ``python/sglang/srt/parser/reasoning_parser.py``,
  KimiDetector), ``<mm:think>`` (MiniMax-M3, its MiniMaxM3Detector), ``<longcat_think>``
  (vLLM ``vllm/reasoning/longcat_reasoning_parser.py``), ``<thought>`` (EXAONE Deep, whose
  template opens it in the prompt: the response holds only the closer).
- ``[THINK]...[/THINK]`` (Magistral 2507+; vLLM ``tests/reasoning/test_mistral_reasoning_parser.py``),
  ``<|START_THINKING|>`` (Cohere, SGLang's CohereCommand4Detector), ``<|inner_prefix|>``
  (Apertus, its Apertus2509Detector): rendered with their special tokens.
- gpt-oss's harmony channels (openai/harmony ``docs/format.md``): ``<|channel|>analysis
  <|message|>...<|end|><|start|>assistant<|channel|>final<|message|>...``; with the
  special tokens stripped, ``analysis...assistantfinal...`` (a real output so decoded:
  oobabooga/text-generation-webui issue 7374).

The audit's ``think_only`` family writes several of them.
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
    ("<Thinking>", "</Thinking>"),
    ("<THINK>", "</THINK>"),
    ("<thinking >", "</ thinking>"),
    ("<thought>", "</thought>"),
    ("<mm:think>", "</mm:think>"),
    ("<longcat_think>", "</longcat_think>"),
    ("[THINK]", "[/THINK]"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|inner_prefix|>", "<|inner_suffix|>"),
    ("<|channel|>analysis<|message|>", "<|end|><|start|>assistant<|channel|>final<|message|>"),
    ("analysis", "assistantfinal"),  # gpt-oss's channels, special tokens stripped
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


# A template that opens the thinking in the prompt: the response holds only the closer,
# read as ``</think>`` alone is (answering_texts: the conclusion, else what it ended on)
CLOSERS = ["</thought>", "</longcat_think>", "[/THINK]", "</Think>", "<|END_THINKING|>"]


@pytest.mark.parametrize("closer", CLOSERS)
@pytest.mark.parametrize(
    "after", ["I could not finish.", "The answer is $\\boxed{8}$.", "", "\n\nSo the answer is"]
)
def test_a_closer_without_its_opener_reads_as_think_end_does(closer: str, after: str) -> None:
    thought = "So 3 + 4 = \\boxed{7}.\n"
    for gold in ("7", "8"):
        expected = score(MATH, f"{thought}</think>{after}", gold)
        assert score(MATH, f"{thought}{closer}{after}", gold) == expected, (closer, after, gold)


def test_gpt_oss_stripped_of_its_special_tokens() -> None:
    # the shape a real output took once decoded without the special tokens (issue 7374)
    seen = (
        'analysisUser says "Hello World!" Probably greeting. Should respond politely.'
        "assistantfinalHello! How can I help you today?"
    )
    assert _final.thinking_split(seen)[1] == "Hello! How can I help you today?"
    assert score(MATH, "analysisWe need 3 + 4 = \\boxed{7}.assistantfinalNot sure.", "7") == 0.0
    assert score(MATH, "analysis\n3 + 4 = \\boxed{7}\nassistantfinal\n\nNot sure.", "7") == 0.0
    assert score(MATH, "analysisWe need 3 + 4 = 7.assistantfinal$\\boxed{7}$", "7") == 1.0
    # cut off in the analysis channel: what it thought is no answer it gave
    assert score(MATH, "analysisWe need 3 + 4 = \\boxed{7}", "7") == 0.0
    assert score(MATH, "analysis1. 3 + 4 = \\boxed{7}", "7") == 0.0


@pytest.mark.parametrize(
    "prose",
    [
        "analysis of the sum: 3 + 4 = \\boxed{7}",
        "analysis: 3 + 4 = \\boxed{7}",
        "analysis\n\\boxed{7}",
    ],
)
def test_a_response_that_starts_with_the_word_analysis_is_prose(prose: str) -> None:
    assert _final.as_think_tags(prose) == prose
    assert score(MATH, prose, "7") == 1.0
