"""guards: a TRL dataset whose columns rewardkit cannot read warns once, naming the fix."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from rewardkit.integrations.trl import areward_func, reward_func

# GSM8K as TRL users load it: its own "answer" column, no data_source.
PROMPTS = ["Natalia sold 48 clips in April and half as many in May. How many in all?"] * 2
COMPLETIONS = ["48 + 24 = 72\n#### 72", "#### 70"]
ANSWERS = ["Natalia sold 48/2 = 24 clips in May.\n#### 72"] * 2


def test_gsm8ks_own_answer_column_warns_once_naming_the_mapping(rk_config: Any) -> None:
    function = reward_func(rk_config)
    with pytest.warns(RuntimeWarning) as caught:
        assert function(PROMPTS, COMPLETIONS, answer=ANSWERS) == [None, None]
    [warning] = caught
    message = str(warning.message)
    assert "all 2 rows of this step failed to score" in message
    assert "no ground_truth column (its columns: answer)" in message
    assert "fields={'ground_truth': 'answer'}" in message
    assert (
        "reward.default_data_source" in message and "default_data_source='openai/gsm8k'" in message
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: a second all-failed step is quiet
        assert function(PROMPTS, COMPLETIONS, answer=ANSWERS) == [None, None]


def test_the_fix_the_warning_names_scores_the_rows() -> None:
    function = reward_func(
        fields={"ground_truth": "answer"}, default_data_source="openai/gsm8k", num_workers=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert function(PROMPTS, COMPLETIONS, answer=ANSWERS) == [1.0, 0.0]


def test_a_dataset_with_ground_truth_but_no_data_source_is_told_so(rk_config: Any) -> None:
    function = areward_func(rk_config)
    with pytest.warns(
        RuntimeWarning, match=r"no data_source column and reward.default_data_source is not set"
    ):
        asyncio.run(function(PROMPTS, COMPLETIONS, ground_truth=["72", "72"]))


def test_fields_are_checked(rk_config: Any) -> None:
    with pytest.raises(
        ValueError, match=r"'ground_truht' is not a Sample field \(did you mean 'ground_truth'\?\)"
    ):
        reward_func(rk_config, fields={"ground_truht": "answer"})
    function = reward_func(rk_config, fields={"ground_truth": "solution"})
    with pytest.raises(
        ValueError,
        match=r"column 'solution', which the dataset does not have \(its columns: answer\)",
    ):
        function(PROMPTS, COMPLETIONS, answer=ANSWERS)
