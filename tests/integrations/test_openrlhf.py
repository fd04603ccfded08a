"""guards: the OpenRLHF adapter (rewardkit.integrations.openrlhf).

The OpenRLHF adapter against OpenRLHF master's request/response contract.

OpenRLHF cannot be installed here (it pins vLLM and DeepSpeed), so its contract is
restated from its source, at OpenRLHF/OpenRLHF master 3c3be62 (2026-08-13):

* ``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor.__init__``: a ``--reward.remote_url``
  ending in ``.py`` is loaded with ``spec_from_file_location("reward_func", path)`` and its
  ``reward_func`` attribute is used (:func:`load_like_openrlhf`).
* ``SingleTurnAgentExecutor.execute`` / ``_fetch_rewards_via_func``: one rollout per call,
  ``asyncio.to_thread(reward_func, [query], [prompt], [label])``; ``_fetch_rewards_via_http``
  posts ``{"query", "prompts", "labels"}`` and reads ``scores`` (else ``rewards``),
  ``rewards`` and ``extra_logs`` from the answer.
* ``openrlhf/trainer/ppo_utils/samples_generator.py``,
  ``SamplesGenerator._process_response_into_experience``: ``torch.tensor([reward])``,
  ``torch.tensor([score])``, and every ``extra_logs`` value becomes
  ``torch.tensor([value])`` (a tensor first through ``.flatten()[0].item()``)
  (:func:`tensorize_like_openrlhf`).
* ``openrlhf/datasets/prompts_dataset.py``, ``preprocess_data``: the label is
  ``data[--data.label_key]`` as stored in the dataset: a string, or a mapping.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from pathlib import Path
from typing import Any

import pytest
import torch

import rewardkit.integrations.openrlhf as adapter
from rewardkit.integrations._backend import ENV_CONFIG
from rewardkit.integrations.openrlhf import make_reward_func, split_response

EXAMPLES = Path(__file__).parents[2] / "examples" / "integrations"
PROMPT = "<|im_start|>user\nWhat is 36 + 36?<|im_end|>\n<|im_start|>assistant\n"


def load_like_openrlhf(path: Path) -> Any:
    """What OpenRLHF's SingleTurnAgentExecutor does with a ``--reward.remote_url`` ending in .py."""
    spec = importlib.util.spec_from_file_location("reward_func", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


def tensorize_like_openrlhf(answer: dict[str, Any]) -> dict[str, torch.Tensor]:
    """SamplesGenerator._process_response_into_experience's tensors for one rollout's answer."""
    reward, score = answer.get("rewards"), answer.get("scores")
    if score is None:
        score = reward
    info = {"reward": torch.tensor([reward]), "score": torch.tensor([score])}
    for key, value in (answer.get("extra_logs") or {}).items():
        if isinstance(value, torch.Tensor):
            value = value.flatten()[0].item()
        info[key] = torch.tensor([value])
    return info


def test_the_documented_example_file():
    reward_func = load_like_openrlhf(EXAMPLES / "openrlhf_reward.py")
    queries = [PROMPT + "36 + 36 = 72\n#### 72<|im_end|>", PROMPT + "#### 7<|im_end|>"]
    out = reward_func(queries, [PROMPT, PROMPT], ["72", "72"])
    assert torch.equal(out["rewards"], torch.tensor([1.0, 0.0]))
    assert torch.equal(out["scores"], out["rewards"])
    assert torch.equal(out["extra_logs"]["rewardkit_ok"], torch.tensor([1.0, 1.0]))


def test_openrlhf_calls_it_one_row_at_a_time_from_threads():
    """OpenRLHF offloads each rollout's call with asyncio.to_thread, many at once."""
    reward_func = load_like_openrlhf(EXAMPLES / "openrlhf_reward.py")

    async def rollouts() -> list[dict[str, Any]]:
        calls = [
            asyncio.to_thread(reward_func, [PROMPT + f"#### {n}</s>"], [PROMPT], ["72"])
            for n in (72, 7, 72, 70)
        ]
        return await asyncio.gather(*calls)

    rewards = [out["rewards"].tolist() for out in asyncio.run(rollouts())]
    assert rewards == [[1.0], [0.0], [1.0], [0.0]]


def test_labels_may_carry_the_data_source():
    config = EXAMPLES / "reward.yaml"  # default_data_source: openai/gsm8k
    labels = ["72", {"ground_truth": "72", "data_source": "openai/gsm8k", "extra_info": {"k": 1}}]
    out = make_reward_func(config)(["q #### 72", "q #### 72"], ["q", "q"], labels)
    assert out["rewards"].tolist() == [1.0, 1.0]
    # a label's own data source wins over the default
    label = {"ground_truth": "72", "data_source": "no/such-source"}
    out = make_reward_func(config, on_failure="fill")(["q #### 72"], ["q"], [label])
    assert out["extra_logs"]["rewardkit_ok"].tolist() == [0.0]


def test_failures_raise_and_are_logged(rk_config, caplog):
    reward_func = make_reward_func(rk_config)
    with caplog.at_level(logging.ERROR, logger="rewardkit.integrations"):
        with pytest.raises(
            adapter.StopTraining, match=r"1 of 2 rows failed to score \(invalid: 1\)"
        ):
            labels = [{"ground_truth": "72", "data_source": "openai/gsm8k"}, "72"]
            reward_func(["q #### 72", "q #### 72"], ["q", "q"], labels)
    assert "field 'data_source' is missing" in caplog.text


def test_fill_reports_failures_in_extra_logs(rk_config):
    reward_func = make_reward_func(rk_config, on_failure="fill", fill_score=0.0)
    out = reward_func(
        ["q #### 72"], ["q"], [{"ground_truth": "72", "data_source": "no/such-source"}]
    )
    assert out["rewards"].tolist() == [0.0]
    assert out["extra_logs"]["rewardkit_ok"].tolist() == [0.0]


def test_mismatched_lengths_are_an_error(rk_config):
    with pytest.raises(ValueError, match=r"differ in length \(2, 1, 1\)"):
        make_reward_func(rk_config)(["a", "b"], ["a"], ["1"])


@pytest.mark.parametrize(
    ("query", "prompt", "response"),
    [
        (PROMPT + "#### 72<|im_end|>", PROMPT, "#### 72"),
        (PROMPT + "#### 72<|im_end|>\n<|endoftext|>", PROMPT, "#### 72"),
        ("<s> Q: 1+1? A: #### 2</s>", "Q: 1+1? A:", " #### 2"),  # re-decoding added a prefix
        ("no markers", "", "no markers"),
        ("x" * 10_000 + "<|im_end|>", "", "x" * 10_000),
    ],
)
def test_split_response(query, prompt, response):
    assert split_response(query, prompt) == response


def test_module_file_itself_reads_the_environment(monkeypatch):
    monkeypatch.setenv(ENV_CONFIG, str(EXAMPLES / "reward.yaml"))
    monkeypatch.setattr(adapter, "_DEFAULT", [])
    reward_func = load_like_openrlhf(Path(adapter.__file__))
    assert reward_func([PROMPT + "#### 72<|im_end|>"], [PROMPT], ["72"])["rewards"].tolist() == [
        1.0
    ]


MIXED_LABELS = [
    "72",  # a plain label: the ground truth, scored with reward.default_data_source
    {"ground_truth": "72", "data_source": "openai/gsm8k"},
    {"ground_truth": "\\frac{1}{2}", "data_source": "lighteval/MATH"},
]
MIXED_QUERIES = ["q #### 72", "q #### 72", "q so \\boxed{0.5}"]


def test_file_answer_tensorizes_as_openrlhf_does():
    reward_func = load_like_openrlhf(EXAMPLES / "openrlhf_reward.py")
    for query, label in zip(MIXED_QUERIES, MIXED_LABELS, strict=True):
        answer = reward_func([query], ["q"], [label])  # one rollout per call, as OpenRLHF
        info = tensorize_like_openrlhf(answer)
        assert info["reward"].flatten().tolist() == [1.0]
        assert info["rewardkit_ok"].tolist() == [1.0] and info["rewardkit_invalid"].tolist() == [
            0.0
        ]


def test_get_reward_reads_mapping_labels_like_the_file_adapter():
    """One conversion (rows_from_request) for both: a mapping label over HTTP is not a ground truth."""
    import httpx

    from _support.serving import running_server
    from rewardkit.config import load_config

    config = load_config(EXAMPLES / "reward.yaml")
    with running_server(config) as base:
        answers = [
            httpx.post(
                f"{base}/get_reward",
                json={"query": [query], "prompts": ["q"], "labels": [label]},
                timeout=30,
            ).json()
            for query, label in zip(MIXED_QUERIES, MIXED_LABELS, strict=True)
        ]
    for answer in answers:
        assert answer["rewards"] == [1.0] and answer["scores"] == [1.0]
        info = tensorize_like_openrlhf(answer)  # would raise on a null reward or a text log
        assert info["rewardkit_ok"].tolist() == [[1.0]]
    file_rows = adapter.rows_from_request(MIXED_QUERIES, ["q"] * 3, MIXED_LABELS)
    assert [row.get("data_source") for row in file_rows] == [None, "openai/gsm8k", "lighteval/MATH"]
    assert [row["ground_truth"] for row in file_rows] == ["72", "72", "\\frac{1}{2}"]


def test_rows_from_request_without_prompts_or_labels():
    rows = adapter.rows_from_request(["#### 72<|im_end|>"], None, None)
    assert rows == [{"prompt": "", "response": "#### 72", "ground_truth": None}]
    with pytest.raises(ValueError, match=r"differ in length \(1, 2, 1\)"):
        adapter.rows_from_request(["a"], ["a", "b"], ["1"])


def test_readme_commands_use_openrlhf_masters_flags():
    """train_ppo_ray.py on master defines --reward.remote_url and --data.label_key."""
    import re

    readme = (EXAMPLES.parents[1] / "README.md").read_text()
    section = readme[readme.index("## Use with OpenRLHF") :]
    section = section[: section.index("\n## ", 1)]
    commands = "".join(re.findall(r"```\w*\n(.*?)```", section, re.DOTALL))
    assert commands.count("--reward.remote_url") == 2 and commands.count("--data.label_key") == 2
    assert "--remote_rm_url" not in commands and "--label_key " not in commands
